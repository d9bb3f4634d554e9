"""The customer's explicit yes, read in code (desk.md, rule 3): a change is proposed in words,
and only a next message that is a plain yes, in English or Japanese, lets it go on.

Conservative by design: a message is a yes only when every word of it is a yes, a politeness or
a restatement of the act ("Yes, please cancel it"); a question, a negation, a condition or any
other detail ("yes, but to my office", "yes, the blue one") is not, and the proposal is dropped
rather than guessed at.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

_YES = frozenset(
    ("yes", "yeah", "yep", "yup", "y", "sure", "ok", "okay", "confirm", "confirmed", "correct",
     "proceed", "agree", "agreed", "affirmative")
)  # fmt: skip
_ALLOWED = _YES | frozenset(
    ("please", "go", "ahead", "do", "it", "that", "this", "is", "right", "fine", "sounds",
     "good", "i", "thank", "thanks", "you", "that's", "cancel", "change", "return", "exchange",
     "swap", "update", "modify", "make", "the", "order", "items", "item", "address", "payment")
)  # fmt: skip
_NO_EN = re.compile(r"\?|\b(?:no|not|don't|dont|never|wait|but|stop|cancel\s+that)\b")

_JA_YES = ("お願いします", "お願い致します", "おねがいします", "お願い", "はい", "ええ", "うん",
           "了解です", "了解", "承知しました", "大丈夫です", "問題ありません", "構いません",
           "それでいいです", "いいです", "オッケー", "ok", "確定してください",
           "進めてください")  # fmt: skip
_JA_ALSO = ("それで", "では", "じゃあ", "ください", "下さい", "キャンセルして", "変更して",
            "返品して", "交換して", "してください", "します", "ね", "よ")  # fmt: skip
_JA_NO = re.compile(r"[?？]|いいえ|いや|違|ない|待って|まって|やめ|でも|けど|ちょっと|ダメ|だめ")
_SPACE_AND_MARKS = re.compile(r"[\s、。,.!！~〜ー…]+")


def explicit_yes(message: str) -> bool:
    """True only when the whole message is an unconditional yes (English or Japanese)."""
    text = unicodedata.normalize("NFKC", message).strip().lower()
    if not text or len(text) > 200:
        return False
    if re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text):
        return _japanese_yes(text)
    if _NO_EN.search(text):
        return False
    words = re.findall(r"[a-z']+|\d+|[^\sa-z'\d.,!]", text)
    return bool(words) and all(w in _ALLOWED for w in words) and any(w in _YES for w in words)


def _japanese_yes(text: str) -> bool:
    if _JA_NO.search(text):
        return False
    rest = _SPACE_AND_MARKS.sub("", text)
    said_yes = False
    for phrase in _JA_YES:
        if phrase in rest:
            said_yes = True
            rest = rest.replace(phrase, "")
    for phrase in sorted(_JA_ALSO, key=len, reverse=True):
        rest = rest.replace(phrase, "")
    return said_yes and not rest


@dataclass(slots=True)
class Consent:
    """A conversation's proposals and the customer's answers to them."""

    waiting: dict[str, str] = field(default_factory=dict)  # key -> the change in words
    given: set[str] = field(default_factory=set)
    dropped: dict[str, str] = field(default_factory=dict)  # key -> the message that was no yes

    def heard(self, message: str) -> str | None:
        """The customer's next message: a yes to what waits, or the end of it. What the model
        is told about it (None: nothing waited)."""
        if not self.waiting:
            return None
        waiting, self.waiting = self.waiting, {}
        if explicit_yes(message):
            self.given |= set(waiting)
            return f"(desk: the customer confirmed: {'; '.join(waiting.values())})"
        self.dropped |= dict.fromkeys(waiting, message)
        return (
            "(desk: that is not an explicit yes, so the proposed change was dropped and nothing "
            "was changed; ask what the customer wants instead)"
        )
