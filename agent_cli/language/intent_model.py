"""The intent model: multinomial logistic regression (softmax) over character n-grams and words
weighted by tf-idf, in pure Python (no numpy: start-up and install size matter), deterministic,
trained on the labelled corpus (language/intent_corpus.py) when the package is built, shipped
with it, and trained again and cached (language/intent_cache.py) only for a shop's own examples.
A message's probabilities are the regression's mixed with a fifth of multinomial naive Bayes's
over the same features (`NB_WEIGHT`): alone, naive Bayes read held-out messages four points worse;
mixed in, it corrects the regression where a message's words are rare (chosen by 4-fold
cross-validation of the lines learnt: English 93.6 -> 94.2%, Japanese 93.2 -> 94.2%).

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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from typing import cast

from agent_cli.domain.intents import NAMES, UNKNOWN, Intent

THRESHOLD = 0.3  # below it the model says it is unsure (`unknown`); 4.5 times a blind guess
EPOCHS = 5  # passes of stochastic gradient descent over the examples
RATE = 2.0  # the first pass's step; pass n steps RATE / n
PRUNE = 0.1  # weights smaller than this are dropped: a third of the size, no accuracy lost
SEED = 7  # the order the examples are shown in, the same on every machine
NB_WEIGHT = 0.2  # naive Bayes's share of a message's probabilities
NB_ALPHA = 0.05  # naive Bayes's smoothing: a feature never seen with an intent counts this much
VERSION = 4  # bump when the features or the training change: the cache is keyed by it
SETTINGS = (VERSION, EPOCHS, RATE, PRUNE, SEED, NB_WEIGHT, NB_ALPHA)

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


@dataclass(frozen=True, slots=True)
class NaiveBayes:
    """Multinomial naive Bayes's per-intent terms: the log prior, and the log of the intent's
    feature count smoothed over the vocabulary (each feature's own counts are in its row)."""

    prior: tuple[float, ...]
    denominator: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class _Row:
    idf: float
    weights: tuple[tuple[int, float], ...]  # the regression's, pruned: may be none
    counts: tuple[tuple[int, float], ...]  # naive Bayes's: log((count + alpha) / alpha)


class IntentModel:
    """Softmax regression over `features`: a message is the tf-idf weights of its known
    features, scaled to length one, and each intent's score is its bias plus the weights of
    those features; mixed with naive Bayes over the same features. Each feature keeps its idf,
    the intents whose weight survived pruning and the intents it was seen with (how often), as
    a text row ("2.31|3:0.412 7:-0.105|3:12 7:1") so the shipped model loads in milliseconds
    and rows are parsed only when read."""

    def __init__(
        self,
        intents: Sequence[Intent],
        bias: Sequence[float],
        rows: Mapping[str, str],
        bayes: NaiveBayes,
    ):
        if not intents or len(intents) != len(bias):
            raise ValueError("an intent model needs one bias per intent")
        if not len(bayes.prior) == len(bayes.denominator) == len(intents):
            raise ValueError("an intent model needs naive Bayes's terms for each intent")
        self.intents = tuple(intents)
        self._bias = tuple(bias)
        self._rows = rows
        self._bayes = bayes
        self._parsed: dict[str, _Row] = {}

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
        counts, bayes = _count(grams, [index[intent] for _, intent in data], len(intents))
        idf = _idf(counts, len(grams))
        vectors = [
            (_weighted(g, idf), index[intent]) for g, (_, intent) in zip(grams, data, strict=True)
        ]
        weights, bias = _descend(vectors, len(intents))
        rows = {}
        for gram in sorted(counts):
            row = weights.get(gram, {})
            kept = " ".join(f"{k}:{w:.4f}" for k, w in sorted(row.items()) if abs(w) >= PRUNE)
            seen = " ".join(f"{k}:{n}" for k, n in sorted(counts[gram].items()))
            rows[gram] = f"{idf[gram]:.4f}|{kept}|{seen}"
        return cls(intents, [round(b, 6) for b in bias], rows, bayes)

    def read(self, text: str) -> Reading:
        """The intent of one message, with every intent's probability; a message of codes,
        emails and digits alone asks for nothing yet, so it is `unknown` whatever it scores."""
        grams = features(text)
        known = [self._row(g) for g in grams if g in self._rows]
        bayes = self._bayes_floor(len(known))
        norm = 0.0  # the squared length of the regression's features (those it kept weights of)
        for row in known:
            for k, gain in row.counts:
                bayes[k] += gain
            if row.weights:
                norm += row.idf * row.idf
        if not norm:
            return Reading(UNKNOWN, 0.0, dict.fromkeys(self.intents, 0.0))
        length = math.sqrt(norm)
        scores = list(self._bias)
        for row in known:
            scale = row.idf / length
            for k, weight in row.weights:
                scores[k] += weight * scale
        mixed = [
            (1 - NB_WEIGHT) * regression + NB_WEIGHT * naive
            for regression, naive in zip(_softmax(scores), _softmax(bayes), strict=True)
        ]
        chances = dict(zip(self.intents, mixed, strict=True))
        best = max(self.intents, key=chances.__getitem__)
        sure = chances[best] >= THRESHOLD and _has_words(grams)
        return Reading(best if sure else UNKNOWN, chances[best], chances)

    def _bayes_floor(self, known: int) -> list[float]:
        """Naive Bayes's scores before the message's features' own counts: each intent's log
        prior, and for each of the `known` features the log of a count never seen with it
        (alpha) over the intent's smoothed total; a feature seen with an intent then adds its
        `_gain`."""
        unseen = math.log(NB_ALPHA)
        return [
            prior + known * (unseen - denominator)
            for prior, denominator in zip(self._bayes.prior, self._bayes.denominator, strict=True)
        ]

    def _row(self, gram: str) -> _Row:
        row = self._parsed.get(gram)
        if row is None:
            idf, weights, counts = self._rows[gram].split("|")
            row = _Row(
                float(idf),
                tuple((int(k), float(w)) for k, _, w in map(_pair, weights.split())),
                tuple((int(k), _gain(int(n))) for k, _, n in map(_pair, counts.split())),
            )
            self._parsed[gram] = row
        return row

    def state(self) -> dict[str, object]:
        """What the model is, as JSON-ready data (the shipped file's and the cache's)."""
        return {
            "intents": list(self.intents),
            "bias": list(self._bias),
            "bayes": {
                "prior": list(self._bayes.prior),
                "denominator": list(self._bayes.denominator),
            },
            "rows": dict(self._rows),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, object]) -> IntentModel:
        """The model `state` describes; ValueError when it is not one (a damaged cache)."""
        intents, bias, rows, bayes = (state.get(k) for k in ("intents", "bias", "rows", "bayes"))
        if not (isinstance(intents, list) and all(i in NAMES for i in intents)):
            raise ValueError("the model names an unknown intent")
        if not (isinstance(bias, list) and isinstance(rows, dict) and isinstance(bayes, dict)):
            raise ValueError("the model is not a model")
        if not _rows_of_text(rows):
            raise ValueError("the model's rows are not rows")
        prior, denominator = bayes.get("prior"), bayes.get("denominator")
        if not (isinstance(prior, list) and isinstance(denominator, list)):
            raise ValueError("the model's naive Bayes is not one")
        terms = NaiveBayes(tuple(map(float, prior)), tuple(map(float, denominator)))
        return cls(cast(list[Intent], intents), [float(b) for b in bias], rows, terms)


Vector = dict[str, float]
_FOLDED = {"#code", "@mail"}


def _has_words(grams: set[str]) -> bool:
    """Whether the message (its `features`) holds a word besides codes, emails and digits."""
    words = (g[2:] for g in grams if g.startswith("w:"))
    return any(w not in _FOLDED and not w.isdigit() for w in words)


def _rows_of_text(rows: Mapping[str, object]) -> bool:
    """Whether the rows are text holding two bars each, counted over them all at once: 50,000
    rows checked one by one would add milliseconds to every process that reads a message (a
    file that is ours and whole is already known by its checksum; this refuses what is not)."""
    try:
        return "".join(rows.values()).count("|") == 2 * len(rows)  # type: ignore[arg-type]
    except TypeError:
        return False  # a row that is not text


def _pair(text: str) -> tuple[str, str, str]:
    return text.partition(":")


@cache
def _gain(count: int) -> float:
    """What a feature seen `count` times with an intent adds to naive Bayes's score for it,
    beyond a feature never seen with it."""
    return math.log((count + NB_ALPHA) / NB_ALPHA)


def _count(
    grams: Sequence[set[str]], labels: Sequence[int], intents: int
) -> tuple[dict[str, dict[int, int]], NaiveBayes]:
    """Naive Bayes's counts: for each feature, the messages of each intent holding it; and each
    intent's prior and smoothed total."""
    counts: dict[str, dict[int, int]] = {}
    totals, messages = [0] * intents, [0] * intents
    for message, label in zip(grams, labels, strict=True):
        messages[label] += 1
        totals[label] += len(message)
        for gram in message:
            row = counts.setdefault(gram, {})
            row[label] = row.get(label, 0) + 1
    size = len(counts) * NB_ALPHA
    bayes = NaiveBayes(
        tuple(round(math.log(m / len(labels)), 6) for m in messages),
        tuple(round(math.log(t + size), 6) for t in totals),
    )
    return counts, bayes


def _idf(counts: Mapping[str, Mapping[int, int]], n: int) -> dict[str, float]:
    """Each feature's inverse document frequency (smoothed) over `n` messages, from naive
    Bayes's counts (the messages holding it, per intent): rare features weigh more."""
    return {gram: math.log((1 + n) / (1 + sum(seen.values()))) + 1 for gram, seen in counts.items()}


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
