"""The intent model: a multinomial naive Bayes classifier over character n-grams and words,
in pure Python (no numpy: start-up and install size matter), deterministic, trained on the
labelled corpus (language/intent_corpus.py) and cached (language/intent_cache.py).

Character n-grams read Japanese, which has no spaces, and survive typos ("cancle", "retrun");
words and word pairs carry English. Codes, emails and digits are folded to one token each
("#code", "@mail", "0"), so the model learns "cancel #code", not "cancel B200". Each message
gets a probability per intent; below `THRESHOLD` the reading is `unknown`, and the desk says
what it can do instead of guessing."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import cast

from agent_cli.domain.intents import NAMES, UNKNOWN, Intent

THRESHOLD = 0.5  # below it the model says it is unsure (`unknown`)
SMOOTHING = 0.1  # additive smoothing of every feature's count
SHARPNESS = 6.0  # a message's mean log-likelihood per feature, scaled into a probability
VERSION = 2  # bump when the features or the training change: the cache is keyed by it

EMAIL = re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)+")  # policy/verdicts.py reads it too
_CODE = re.compile(r"#?\b[a-z]{1,3}[0-9]{2,9}\b|#[0-9]{4,}")
_DIGITS = re.compile(r"[0-9]+")
_WORD = re.compile(r"[a-z0-9#@']+|[\u3000-\u9fff\uff00-\uffef]+")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Reading:
    """What the model read: the likeliest intent (or `unknown`) and every intent's probability."""

    intent: Intent | str  # an Intent, or UNKNOWN
    probability: float  # the likeliest intent's, even when it is below the threshold
    probabilities: Mapping[Intent, float]

    @property
    def sure(self) -> bool:
        return self.intent != UNKNOWN

    def likely(self, at_least: float) -> list[Intent]:
        """The intents at least this probable, the likeliest first (recall before precision)."""
        ranked = sorted(self.probabilities.items(), key=lambda kv: -kv[1])
        return [intent for intent, p in ranked if p >= at_least]

    def top(self) -> Intent:
        """The likeliest intent, sure or not."""
        return max(self.probabilities, key=self.probabilities.__getitem__)


def normalise(text: str) -> str:
    """The text as the model reads it: NFKC, lower case, codes/emails/digits folded."""
    folded = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'")
    folded = EMAIL.sub(" @mail ", folded)
    folded = _CODE.sub(" #code ", folded)
    folded = _DIGITS.sub("0", folded)
    return _SPACE.sub(" ", folded).strip()


def features(text: str) -> set[str]:
    """The message's features: character 1- to 4-grams (spaces as boundaries), its words and
    its pairs of adjacent words."""
    said = normalise(text)
    padded = f" {said} "
    grams = {padded[i : i + n] for n in (1, 2, 3, 4) for i in range(len(padded) - n + 1)}
    grams.discard(" ")
    words = _WORD.findall(said)
    grams.update(f"w:{w}" for w in words)
    grams.update(f"p:{a} {b}" for a, b in pairwise(words))
    return grams


class IntentModel:
    """Naive Bayes over `features`. A known feature's log-likelihood under an intent that never
    saw it is one number per intent (`unseen`), so the model keeps, per feature, only what the
    intents that saw it gain over that: a sparse table, quick to score, and kept as text rows
    ("3:2.398 7:1.099") so the cache loads in milliseconds and rows are parsed only when read."""

    def __init__(
        self,
        intents: Sequence[Intent],
        base: Sequence[float],  # per intent: its log prior
        unseen: Sequence[float],  # per intent: a known feature's log-likelihood, unseen there
        rows: Mapping[str, str],  # feature -> "index:gain index:gain"
    ) -> None:
        if not intents or not len(intents) == len(base) == len(unseen):
            raise ValueError("an intent model needs one prior and one floor per intent")
        self.intents = tuple(intents)
        self._base = tuple(base)
        self._unseen = tuple(unseen)
        self._rows = rows
        self._parsed: dict[str, tuple[tuple[int, float], ...]] = {}

    @classmethod
    def trained_on(cls, examples: Iterable[tuple[str, Intent]]) -> IntentModel:
        counts: dict[Intent, Counter[str]] = {name: Counter() for name in NAMES}
        messages: Counter[Intent] = Counter()
        for text, intent in examples:
            counts[intent].update(features(text))
            messages[intent] += 1
        intents = [name for name in NAMES if messages[name]]
        if not intents:
            raise ValueError("an intent model needs at least one example")
        vocabulary = len(set().union(*(counts[name] for name in intents)))
        total = sum(messages.values())
        base = [math.log(messages[name] / total) for name in intents]
        unseen: list[float] = []
        gains: dict[str, list[str]] = {}
        for k, name in enumerate(intents):
            denominator = math.log(sum(counts[name].values()) + SMOOTHING * vocabulary)
            unseen.append(math.log(SMOOTHING) - denominator)
            for gram, n in sorted(counts[name].items()):
                gains.setdefault(gram, []).append(
                    f"{k}:{math.log((n + SMOOTHING) / SMOOTHING):.4f}"
                )
        rows = {gram: " ".join(row) for gram, row in sorted(gains.items())}
        return cls(intents, base, unseen, rows)

    def read(self, text: str) -> Reading:
        """The intent of one message, with every intent's probability."""
        known = [self._row(g) for g in features(text) if g in self._rows]
        if not known:
            return Reading(UNKNOWN, 0.0, dict.fromkeys(self.intents, 0.0))
        n = len(known)
        scores = [b + n * u for b, u in zip(self._base, self._unseen, strict=True)]
        for row in known:
            for k, gain in row:
                scores[k] += gain
        probabilities = _softmax([s * SHARPNESS / n for s in scores])
        chances = dict(zip(self.intents, probabilities, strict=True))
        best = max(self.intents, key=chances.__getitem__)
        intent: Intent | str = best if chances[best] >= THRESHOLD else UNKNOWN
        return Reading(intent, chances[best], chances)

    def _row(self, gram: str) -> tuple[tuple[int, float], ...]:
        row = self._parsed.get(gram)
        if row is None:
            pairs = (pair.partition(":") for pair in self._rows[gram].split())
            row = tuple((int(k), float(gain)) for k, _, gain in pairs)
            self._parsed[gram] = row
        return row

    def state(self) -> dict[str, object]:
        """What the model is, as JSON-ready data (the cache's)."""
        return {
            "intents": list(self.intents),
            "base": list(self._base),
            "unseen": list(self._unseen),
            "rows": dict(self._rows),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, object]) -> IntentModel:
        """The model `state` describes; ValueError when it is not one (a damaged cache)."""
        intents, base, unseen, rows = (state.get(k) for k in ("intents", "base", "unseen", "rows"))
        if not (isinstance(intents, list) and all(i in NAMES for i in intents)):
            raise ValueError("the cached model names an unknown intent")
        if not (isinstance(base, list) and isinstance(unseen, list) and isinstance(rows, dict)):
            raise ValueError("the cached model is not a model")
        if not all(isinstance(v, str) for v in rows.values()):
            raise ValueError("the cached model's rows are not text")
        floats = [float(b) for b in base], [float(u) for u in unseen]
        return cls(cast(list[Intent], intents), *floats, rows)


def _softmax(scores: Sequence[float]) -> list[float]:
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]
