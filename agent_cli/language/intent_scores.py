"""How well the intent model reads messages it never trained on: accuracy, macro-F1 and the
confusion matrix of a model over labelled examples, per language. Read by benchmarks/intents.py
(which prints them), the tests (which fail below a floor) and `agent doctor` (the held-out
score beside the shop's examples)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from agent_cli.domain.intents import NAMES, UNKNOWN
from agent_cli.language.intent_corpus import Example
from agent_cli.language.intent_model import IntentModel


@dataclass(frozen=True, slots=True)
class Scores:
    """One model's reading of labelled examples: how many, how many right, and each
    (expected, read) pair's count, `unknown` included as a reading."""

    total: int
    right: int
    confusion: Counter[tuple[str, str]]

    @property
    def accuracy(self) -> float:
        return self.right / self.total if self.total else 0.0

    @property
    def unknown(self) -> int:
        return sum(n for (_, read), n in self.confusion.items() if read == UNKNOWN)

    def f1(self, intent: str) -> float:
        hits = self.confusion[(intent, intent)]
        read_as = sum(n for (_, read), n in self.confusion.items() if read == intent)
        meant = sum(n for (expected, _), n in self.confusion.items() if expected == intent)
        return 2 * hits / (read_as + meant) if read_as + meant else 0.0

    @property
    def macro_f1(self) -> float:
        present = [name for name in NAMES if any(e == name for e, _ in self.confusion)]
        return sum(self.f1(name) for name in present) / len(present) if present else 0.0


def score(model: IntentModel, examples: Iterable[Example]) -> Scores:
    confusion: Counter[tuple[str, str]] = Counter()
    for example in examples:
        confusion[(example.intent, str(model.read(example.text).intent))] += 1
    total = sum(confusion.values())
    right = sum(n for (expected, read), n in confusion.items() if expected == read)
    return Scores(total, right, confusion)


def held_out(examples: Iterable[Example], language: str) -> list[Example]:
    return [e for e in examples if e.held_out and e.language == language]
