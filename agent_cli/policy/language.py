"""The customer's language, from their message: Japanese when it holds kana (hiragana or
katakana), Chinese when it holds Chinese characters and no kana (Chinese never writes kana, so
it is never taken for Japanese), Korean for Hangul, another language for other scripts or for
Latin-script text whose common words are not English's; else English. The offline playbook
answers in English or Japanese, and says so in one line when the customer wrote in another
language; a real model is told to answer in the customer's language."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Literal

from agent_cli.core.seams import ModelRequest

Language = Literal["en", "ja", "zh", "ko", "other"]

_KANA = re.compile(r"[\u3040-\u30ff\uff66-\uff9f]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff]")
_OTHER_SCRIPT = re.compile(r"[\u0370-\u03ff\u0400-\u04ff\u0590-\u06ff\u0900-\u0dff\u0e00-\u0e7f]")
# Words common in Spanish, French, German, Portuguese and Italian questions, and rare in English.
_NOT_ENGLISH = re.compile(
    r"(?i)[¿¡ñßãõç]|\b(?:el|los|las|del|que|pedido|puedo|quiero|devolver|reembolso|est|"
    r"je|mon|ma|mes|une|commande|rembourser|remboursement|est-ce|ich|meine|mein|bestellung|"
    r"ist|und|nicht|rückerstattung|não|posso|meu|minha|reembolsar|il|mio|ordine|rimborso|"
    r"posso|della|sono)\b"
)


def language_of(text: str) -> Language:
    folded = unicodedata.normalize("NFKC", text)
    if _KANA.search(folded):
        return "ja"
    if _HAN.search(folded):
        return "zh"
    if _HANGUL.search(folded):
        return "ko"
    if _OTHER_SCRIPT.search(folded) or _NOT_ENGLISH.search(folded):
        return "other"
    return "en"


_LATIN_WORD = re.compile(r"\b[^\W\d_]{3,}\b")  # three letters or more, not part of a code
_ADDRESS = re.compile(r"\S+@\S+")


def has_words(text: str) -> bool:
    """Whether `text` shows a language: a word of some script, not only an order code, an
    email address, a number, "ok" or an emoji."""
    folded = unicodedata.normalize("NFKC", text)
    if any(s.search(folded) for s in (_KANA, _HAN, _HANGUL, _OTHER_SCRIPT)):
        return True
    return _LATIN_WORD.search(_ADDRESS.sub(" ", folded)) is not None


def customer_language(texts: Sequence[str], default: str | None = None) -> Language:
    """The customer's language: that of the first of `said` (their message now, then their
    earlier ones, latest first) whose words show one; else `default` (the channel's), else
    English."""
    for text in texts:
        if has_words(text):
            return language_of(text)
    return "ja" if default == "ja" else "en"


def speaks_japanese(request: ModelRequest) -> bool:
    """Whether to answer in Japanese: the customer's words now, else their earlier messages',
    else the channel's language (a LINE conversation's "B200" is answered in Japanese)."""
    earlier = [turn.question for turn in reversed(request.conversation)]
    return customer_language([request.goal, *earlier], request.language) == "ja"
