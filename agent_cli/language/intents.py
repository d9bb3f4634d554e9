"""The desk's reading of a customer's message: `read(text)` names its intent (or `unknown`) with
every intent's probability, from the package's corpus and the shop's own labelled examples
when its config names a file (`agent.intent_examples`). One model per process and examples
file: the package's own is shipped with it (`trained/`), a shop's is trained once on first use
(a few seconds) and cached on disk (language/intent_cache.py)."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

from agent_cli.config import cache_dir
from agent_cli.language import intent_corpus
from agent_cli.language.intent_cache import load_or_train
from agent_cli.language.intent_model import IntentModel, Reading
from agent_cli.language.intent_scores import held_out, score

_configured: list[Path | None] = [None]  # the shop's examples file, set once settings are read


def use_examples(path: Path | None) -> None:
    """Read with the shop's examples from now on (None: the package's corpus alone); a file
    that cannot be read or holds a bad line is the caller's ConfigError, raised here."""
    if path is not None:
        model_for(path)
    _configured[0] = path


@cache
def model_for(examples: Path | None) -> IntentModel:
    """The model trained on the package's corpus and, when given, a shop's examples file
    (checked whole before anything is trained or read from the cache)."""
    sources = intent_corpus.builtin_files()
    shop: list[intent_corpus.Example] = []
    if examples is not None:
        raw = intent_corpus.shop_file(examples)
        shop = intent_corpus.shop_examples(examples, raw)
        sources.append(raw)

    def train() -> IntentModel:
        return IntentModel.trained_on(intent_corpus.learnt([*intent_corpus.builtin(), *shop]))

    return load_or_train(sources, train, cache_dir(), shipped=shipped_folder())


def shipped_folder() -> Path:
    """Where the package keeps the model of its own corpus."""
    return Path(str(resources.files("agent_cli.language") / "trained"))


def read(text: str) -> Reading:
    """What `text` asks for, by the configured model."""
    return model_for(_configured[0]).read(text)


def measured(examples: Path | None) -> tuple[int, dict[str, float]]:
    """How many examples the shop added (0 with none), and the model's held-out accuracy per
    language with them (`agent doctor`): what the shop's lines did to what it already read."""
    shop = 0
    if examples is not None:
        shop = len(intent_corpus.shop_examples(examples, intent_corpus.shop_file(examples)))
    model, corpus = model_for(examples), intent_corpus.builtin()
    accuracy: dict[str, float] = {
        language: score(model, held_out(corpus, language)).accuracy
        for language in intent_corpus.LANGUAGES
    }
    return shop, accuracy
