"""The intent model's labelled corpus: the package's own (`corpus/en.txt`, `corpus/ja.txt`) and
a shop's (a file its config names), in one format: a `[intent]` line, then one customer message
per line; `#` starts a comment line. A fifth of the package's lines, chosen by a hash of their
text (stable across runs and machines), is held out: the model never trains on it, and
benchmarks/intents.py and the tests measure the model on it."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from agent_cli.domain.intents import NAMES, Intent
from agent_cli.errors import ConfigError
from agent_cli.files import FileRefused, read_file_bytes

Language = Literal["en", "ja"]
LANGUAGES: tuple[Language, ...] = ("en", "ja")
HELD_OUT_ONE_IN = 5
MAX_EXAMPLES_BYTES = 8 * 2**20  # a shop's examples: thousands of lines, not more


@dataclass(frozen=True, slots=True)
class Example:
    text: str
    intent: Intent
    language: Language
    held_out: bool


def parse(text: str, language: Language, *, source: str) -> list[Example]:
    """The examples of one corpus file; a line under no section or an unknown intent is the
    file's error, named with its line number."""
    examples: list[Example] = []
    intent: Intent | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            intent = _intent(line[1:-1].strip(), source, number)
            continue
        if intent is None:
            raise ConfigError(f"{source}:{number}: a message before any [intent] line; start it")
        examples.append(Example(line, intent, language, held_out=_held_out(line)))
    return examples


def _intent(name: str, source: str, number: int) -> Intent:
    for intent in NAMES:
        if intent == name:
            return intent
    known = ", ".join(NAMES)
    raise ConfigError(f"{source}:{number}: unknown intent [{name}]; use one of: {known}")


# What a customer adds to say who they are does not change what they ask: a third of the lines
# learnt are learnt again with an email after them, so the email is read as no intent's word.
_WHO = {
    "en": (" My email is {mail}", " {mail}", ". It's under {mail}."),
    "ja": ("メールは{mail}です。", " {mail}", "。登録は{mail}です。"),
}


def with_who(examples: list[Example]) -> list[Example]:
    """`examples` and, for a third of those learnt, the same line with the customer's email
    after it (deterministic: chosen by the line's CRC); held-out lines stay as written."""
    more = []
    for e in examples:
        crc = zlib.crc32(e.text.encode("utf-8"))
        if e.held_out or crc % 3:
            continue
        endings = _WHO[e.language]
        ending = endings[(crc // 3) % len(endings)].format(mail=f"customer{crc % 97}@example.com")
        more.append(Example(e.text + ending, e.intent, e.language, held_out=False))
    return [*examples, *more]


def learnt(examples: list[Example]) -> list[tuple[str, Intent]]:
    """What a model trains on: the lines not held out, a third again with an email."""
    return [(e.text, e.intent) for e in with_who(examples) if not e.held_out]


def _held_out(text: str) -> bool:
    return zlib.crc32(text.encode("utf-8")) % HELD_OUT_ONE_IN == 0


def builtin_files() -> list[bytes]:
    """The package's corpus files, as stored (English, then Japanese)."""
    folder = resources.files("agent_cli.language") / "corpus"
    return [(folder / f"{language}.txt").read_bytes() for language in LANGUAGES]


def builtin() -> list[Example]:
    """The package's corpus, both languages, in file order."""
    examples: list[Example] = []
    for language, raw in zip(LANGUAGES, builtin_files(), strict=True):
        examples += parse(raw.decode("utf-8"), language, source=f"corpus/{language}.txt")
    return examples


def shop_file(path: Path) -> bytes:
    """A shop's examples file as stored; a file that cannot be read is the shop's error."""
    try:
        return read_file_bytes(path.expanduser(), MAX_EXAMPLES_BYTES)
    except FileRefused as refused:
        raise ConfigError(f"the intent examples {path} {refused}") from None
    except OSError as error:
        reason = error.strerror or error
        raise ConfigError(
            f"cannot read the intent examples {path}: {reason}; fix the path"
        ) from None


def shop_examples(path: Path, raw: bytes) -> list[Example]:
    """A shop's own labelled examples (never held out: the shop wrote them to be learnt), each
    line's language read from its script."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(
            f"the intent examples {path} are not UTF-8 text; save them as UTF-8"
        ) from None
    return [
        Example(e.text, e.intent, language_of(e.text), held_out=False)
        for e in parse(text, "en", source=str(path))
    ]


def language_of(text: str) -> Language:
    """Japanese when the text holds kana or kanji, else English."""
    return "ja" if any(_japanese(ch) for ch in text) else "en"


def _japanese(ch: str) -> bool:
    code = ord(ch)
    return 0x3040 <= code <= 0x30FF or 0x4E00 <= code <= 0x9FFF or 0xFF66 <= code <= 0xFF9D
