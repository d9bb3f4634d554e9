"""The intent model: multinomial logistic regression (softmax) over character n-grams and words
weighted by tf-idf, in pure Python (no numpy: start-up and install size matter), deterministic,
trained on the labelled corpus (language/intent_corpus.py) when the package is built, shipped
with it, and trained again and cached (language/intent_cache.py) only for a shop's own examples.
It replaced naive Bayes, which read the same features four points worse on held-out messages.

Character n-grams read Japanese, which has no spaces, and survive typos ("cancle", "retrun");
words and word pairs carry English. Codes, emails and digits are folded to one token each
("#code", "@mail", "0"), so the model learns "cancel #code", not "cancel B200". Each message
gets a probability per intent; below `THRESHOLD` the reading is `unknown`, and the desk says
what it can do instead of guessing."""

from __future__ import annotations

import math
import random
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import cast

from agent_cli.domain.intents import NAMES, UNKNOWN, Intent

THRESHOLD = 0.3  # below it the model says it is unsure (`unknown`); 4.5 times a blind guess
EPOCHS = 5  # passes of stochastic gradient descent over the examples
RATE = 2.0  # the first pass's step; pass n steps RATE / n
PRUNE = 0.1  # weights smaller than this are dropped: a third of the size, no accuracy lost
SEED = 7  # the order the examples are shown in, the same on every machine
VERSION = 3  # bump when the features or the training change: the cache is keyed by it
SETTINGS = (VERSION, EPOCHS, RATE, PRUNE, SEED)

EMAIL = re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)+")  # policy/verdicts.py reads it too
_CODE = re.compile(r"#?(?<![a-z0-9])[a-z]{1,3}[0-9]{2,9}(?![a-z0-9])|#[0-9]{4,}")
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
    folded = normalise(text)
    padded = f" {folded} "
    grams = {padded[i : i + n] for n in (1, 2, 3, 4) for i in range(len(padded) - n + 1)}
    grams.discard(" ")
    words = _WORD.findall(folded)
    grams.update(f"w:{w}" for w in words)
    grams.update(f"p:{a} {b}" for a, b in pairwise(words))
    return grams


class IntentModel:
    """Softmax regression over `features`: a message is the tf-idf weights of its known
    features, scaled to length one, and each intent's score is its bias plus the weights of
    those features. Each feature keeps its idf and only the intents whose weight survived
    pruning, as a text row ("2.31|3:0.412 7:-0.105") so the shipped model loads in
    milliseconds and rows are parsed only when read."""

    def __init__(self, intents: Sequence[Intent], bias: Sequence[float], rows: Mapping[str, str]):
        if not intents or len(intents) != len(bias):
            raise ValueError("an intent model needs one bias per intent")
        self.intents = tuple(intents)
        self._bias = tuple(bias)
        self._rows = rows
        self._parsed: dict[str, tuple[float, tuple[tuple[int, float], ...]]] = {}

    @classmethod
    def trained_on(cls, examples: Iterable[tuple[str, Intent]]) -> IntentModel:
        """Trained by stochastic gradient descent on the log-loss; the examples are sorted
        first, so the model does not depend on the order they came in."""
        data = sorted(examples)
        intents = [name for name in NAMES if any(intent == name for _, intent in data)]
        if not intents:
            raise ValueError("an intent model needs at least one example")
        index = {name: k for k, name in enumerate(intents)}
        grams = [features(text) for text, _ in data]
        idf = _idf(grams)
        vectors = [
            (_weighted(g, idf), index[intent]) for g, (_, intent) in zip(grams, data, strict=True)
        ]
        weights, bias = _descend(vectors, len(intents))
        rows = {
            gram: f"{idf[gram]:.4f}|{kept}"
            for gram, row in sorted(weights.items())
            if (kept := " ".join(f"{k}:{w:.4f}" for k, w in sorted(row.items()) if abs(w) >= PRUNE))
        }
        return cls(intents, [round(b, 6) for b in bias], rows)

    def read(self, text: str) -> Reading:
        """The intent of one message, with every intent's probability; a message of codes,
        emails and digits alone asks for nothing yet, so it is `unknown` whatever it scores."""
        grams = features(text)
        known = [self._row(g) for g in grams if g in self._rows]
        if not known:
            return Reading(UNKNOWN, 0.0, dict.fromkeys(self.intents, 0.0))
        length = math.sqrt(sum(idf * idf for idf, _ in known))
        scores = list(self._bias)
        for idf, row in known:
            for k, weight in row:
                scores[k] += weight * idf / length
        chances = dict(zip(self.intents, _softmax(scores), strict=True))
        best = max(self.intents, key=chances.__getitem__)
        sure = chances[best] >= THRESHOLD and _has_words(grams)
        return Reading(best if sure else UNKNOWN, chances[best], chances)

    def _row(self, gram: str) -> tuple[float, tuple[tuple[int, float], ...]]:
        row = self._parsed.get(gram)
        if row is None:
            idf, _, rest = self._rows[gram].partition("|")
            pairs = (pair.partition(":") for pair in rest.split())
            row = float(idf), tuple((int(k), float(w)) for k, _, w in pairs)
            self._parsed[gram] = row
        return row

    def state(self) -> dict[str, object]:
        """What the model is, as JSON-ready data (the shipped file's and the cache's)."""
        return {"intents": list(self.intents), "bias": list(self._bias), "rows": dict(self._rows)}

    @classmethod
    def from_state(cls, state: Mapping[str, object]) -> IntentModel:
        """The model `state` describes; ValueError when it is not one (a damaged cache)."""
        intents, bias, rows = (state.get(k) for k in ("intents", "bias", "rows"))
        if not (isinstance(intents, list) and all(i in NAMES for i in intents)):
            raise ValueError("the model names an unknown intent")
        if not (isinstance(bias, list) and isinstance(rows, dict)):
            raise ValueError("the model is not a model")
        if not all(isinstance(v, str) and "|" in v for v in rows.values()):
            raise ValueError("the model's rows are not rows")
        return cls(cast(list[Intent], intents), [float(b) for b in bias], rows)


Vector = dict[str, float]
_FOLDED = {"#code", "@mail"}


def _has_words(grams: set[str]) -> bool:
    """Whether the message (its `features`) holds a word besides codes, emails and digits."""
    words = (g[2:] for g in grams if g.startswith("w:"))
    return any(w not in _FOLDED and not w.isdigit() for w in words)


def _idf(grams: Sequence[set[str]]) -> dict[str, float]:
    """Each feature's inverse document frequency (smoothed): rare features weigh more."""
    counts: Counter[str] = Counter()
    for message in grams:
        counts.update(message)
    n = len(grams)
    return {gram: math.log((1 + n) / (1 + d)) + 1 for gram, d in counts.items()}


def _weighted(grams: set[str], idf: Mapping[str, float]) -> Vector:
    """A message's known features weighted by idf, scaled to length one (a long message
    does not outvote a short one)."""
    known = {g: idf[g] for g in sorted(grams) if g in idf}  # sorted: sums in the same order
    # on every run (a set's order changes with the process's string hashing)
    length = math.sqrt(sum(v * v for v in known.values())) or 1.0
    return {g: v / length for g, v in known.items()}


def _descend(
    vectors: list[tuple[Vector, int]], intents: int
) -> tuple[dict[str, dict[int, float]], list[float]]:
    """Stochastic gradient descent on the softmax log-loss. An intent whose gradient is
    negligible for a message is not updated: most rows stay sparse, and training takes
    seconds, not minutes."""
    weights: dict[str, dict[int, float]] = {}
    bias = [0.0] * intents
    order = list(range(len(vectors)))
    shuffle = random.Random(SEED).shuffle
    for epoch in range(EPOCHS):
        shuffle(order)
        step = RATE / (1 + epoch)
        for i in order:
            vector, label = vectors[i]
            gradient = _softmax(_scores(vector, weights, bias))
            gradient[label] -= 1.0
            for k, g in enumerate(gradient):
                if abs(g) < 1e-3:
                    continue
                bias[k] -= step * g
                for gram, value in vector.items():
                    row = weights.setdefault(gram, {})
                    row[k] = row.get(k, 0.0) - step * g * value
    return weights, bias


def _scores(vector: Vector, weights: dict[str, dict[int, float]], bias: list[float]) -> list[float]:
    scores = list(bias)
    for gram, value in vector.items():
        row = weights.get(gram)
        if row:
            for k, weight in row.items():
                scores[k] += weight * value
    return scores


def _softmax(scores: Sequence[float]) -> list[float]:
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]
