"""Train the intent model on the package's corpus and ship it in the package.

    python scripts/train_intents.py

Run it after changing `agent_cli/language/corpus/` or the model's settings: the package ships
the model of its own corpus (`agent_cli/language/trained/`), so no user waits for training, and
tests/unit/language/test_intent_model.py fails while the shipped model is not the corpus's.
Prints the held-out scores of the model it wrote.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent_cli.language import intent_corpus
from agent_cli.language.intent_cache import ship
from agent_cli.language.intent_model import IntentModel
from agent_cli.language.intent_scores import held_out, score
from agent_cli.language.intents import shipped_folder


def main() -> None:
    corpus = intent_corpus.builtin()
    started = time.perf_counter()
    model = IntentModel.trained_on(intent_corpus.learnt(corpus))
    took = time.perf_counter() - started
    path = ship(intent_corpus.builtin_files(), model, shipped_folder())
    print(f"trained in {took:.1f} s, wrote {path} ({path.stat().st_size // 1024} KiB)")
    for language in intent_corpus.LANGUAGES:
        scores = score(model, held_out(corpus, language))
        print(f"{language}: held-out accuracy {scores.accuracy:.1%} of {scores.total}")


if __name__ == "__main__":
    main()
