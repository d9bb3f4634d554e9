"""The customer's language, from their message: Japanese when it holds kana (hiragana or
katakana), Chinese when it holds Chinese characters and no kana (Chinese never writes kana, so
it is never taken for Japanese), Korean for Hangul, another language for other scripts or for
Latin-script text whose common words are not English's; else English. The offline playbook
answers in English or Japanese, and says so in one line when the customer wrote in another
language; a real model is told to answer in the customer's language."""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

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
