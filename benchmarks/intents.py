"""How well and how fast the intent model reads customers. Prints figures; asserts nothing.

    python benchmarks/intents.py [--runs N] [--confusion] [--cross-validate]

On the corpus's held-out part (a fifth of the lines, never trained on), per language: accuracy
(an `unknown` reading counts as wrong), macro-F1 over the intents, how many were read as
unknown, and with --confusion the confusion matrix (rows: the label, columns: the reading).
Then the time to train, to load the cached model, and to classify one message (the median over
the held-out messages, rows already parsed and on first sight). With --cross-validate, first
the accuracy of a 4-fold cross-validation of the lines learnt (the held-out lines left out
altogether): what a change of the model is chosen by, so the held-out lines stay unseen.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent_cli.domain.intents import NAMES, UNKNOWN
from agent_cli.language import intent_corpus
from agent_cli.language.intent_cache import load_or_train
from agent_cli.language.intent_model import IntentModel
from agent_cli.language.intent_scores import Scores, held_out, score


def train() -> IntentModel:
    return IntentModel.trained_on(intent_corpus.learnt(intent_corpus.builtin()))


def confusion_table(scores: Scores) -> str:
    columns = [*NAMES, UNKNOWN]
    lines = ["label \\ read".ljust(16) + " ".join(SHORT[c].rjust(4) for c in columns)]
    for row in NAMES:
        counts = [scores.confusion[(row, column)] for column in columns]
        lines.append(row.ljust(16) + " ".join((str(n) if n else ".").rjust(4) for n in counts))
    return "\n".join(lines)


SHORT = dict(
    zip(
        (*NAMES, UNKNOWN),
        (
            "rfd",
            "sts",
            "cnl",
            "adr",
            "acc",
            "itm",
            "pay",
            "ret",
            "exc",
            "rst",
            "ord",
            "hlp",
            "hnd",
            "gre",
            "fol",
            "oth",
            "unk",
        ),
        strict=True,
    )
)


def cross_validated(folds: int = 4) -> None:
    """Each language's lines learnt split in `folds` by a CRC of their text (not the held-out
    one); each part read by a model trained on the rest and on the other language's lines."""
    learnt = [e for e in intent_corpus.builtin() if not e.held_out]
    for language in intent_corpus.LANGUAGES:
        right = total = 0
        for fold in range(folds):

            def tested(
                e: intent_corpus.Example, language: str = language, fold: int = fold
            ) -> bool:
                crc = zlib.crc32(e.text.encode("utf-8")) // intent_corpus.HELD_OUT_ONE_IN
                return e.language == language and crc % folds == fold

            model = IntentModel.trained_on(
                intent_corpus.learnt([e for e in learnt if not tested(e)])
            )
            part = [e for e in learnt if tested(e)]
            right += sum(model.read(e.text).intent == e.intent for e in part)
            total += len(part)
        print(f"{language}: {folds}-fold cross-validation of the lines learnt {right / total:.1%}")


def timings(runs: int) -> None:
    started = time.perf_counter()
    model = train()
    print(f"train: {time.perf_counter() - started:.3f} s")
    with tempfile.TemporaryDirectory() as folder:
        sources = intent_corpus.builtin_files()
        load_or_train(sources, lambda: model, Path(folder))  # written
        loads = []
        for _ in range(runs):
            started = time.perf_counter()
            load_or_train(sources, train, Path(folder))
            loads.append(time.perf_counter() - started)
        print(f"load the cached model: {statistics.median(loads) * 1000:.1f} ms")
        fresh = load_or_train(sources, train, Path(folder))
    texts = [e.text for e in intent_corpus.builtin() if e.held_out]
    first = [_timed(fresh.read, text) for text in texts]
    again = [_timed(fresh.read, text) for text in texts]
    print(
        f"classify a message: {statistics.median(again) * 1000:.3f} ms (rows parsed), "
        f"{statistics.median(first) * 1000:.3f} ms on first sight"
    )


def _timed(read: object, text: str) -> float:
    started = time.perf_counter()
    read(text)  # type: ignore[operator]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--confusion", action="store_true")
    parser.add_argument("--cross-validate", action="store_true")
    args = parser.parse_args()
    if args.cross_validate:
        cross_validated()
    corpus = intent_corpus.builtin()
    model = train()
    for language in intent_corpus.LANGUAGES:
        part = held_out(corpus, language)
        trained = sum(1 for e in corpus if e.language == language and not e.held_out)
        scores = score(model, part)
        print(
            f"{language}: held out {scores.total} (trained on {trained}), "
            f"accuracy {scores.accuracy:.1%}, macro-F1 {scores.macro_f1:.3f}, "
            f"unknown {scores.unknown}"
        )
        if args.confusion:
            print(confusion_table(scores))
    timings(args.runs)


if __name__ == "__main__":
    main()
