"""What a customer's reply to a proposed change means, read in code (desk.md, rules 3 and 6);
what follows from it is `domain/consent.py`'s `Consent`.

Conservative by design: a message is a yes only when every word of it is a yes, a politeness or
a restatement of the act ("Yes, please cancel it"); a question, a negation, a condition or any
other detail ("yes, but to my office", "yes, the blue one") is not, and the proposal is
withdrawn rather than guessed at. Words that may mean either (「大丈夫です」, 「いいです」,
"fine", "ok I guess") are never a yes: the customer is asked again in plain words. A plain no
(`refused`) asks for nothing else.
"""

from __future__ import annotations

import re

from agent_cli.domain.consent import Answer, Consent, plain

_YES = frozenset(
    ("yes", "yeah", "yep", "yup", "y", "sure", "ok", "okay", "confirm", "confirmed", "correct",
     "proceed", "agree", "agreed", "affirmative")
)  # fmt: skip
_ALLOWED = _YES | frozenset(
    ("please", "go", "ahead", "do", "it", "that", "this", "is", "right", "sounds",
     "good", "i", "thank", "thanks", "you", "that's", "cancel", "change", "return", "exchange",
     "swap", "update", "modify", "make", "the", "order", "items", "item", "address", "payment")
)  # fmt: skip
_NO_EN = re.compile(r"\?|\b(?:no|not|don't|dont|never|wait|but|stop|cancel\s+that)\b")
# Words that may mean yes or no ("fine" to end a talk, "I guess" unsure): asked again.
_EITHER_EN = re.compile(
    r"\b(?:fine|i guess|guess so|maybe|perhaps|probably|i think|whatever|if you say so|"
    r"not sure|i suppose|kind of|sort of)\b"
)

_JA_YES = ("お願いします", "お願い致します", "おねがいします", "お願い", "はい", "ええ", "うん",
           "了解です", "了解", "承知しました", "問題ありません", "構いません", "オッケー", "ok",
           "確定してください", "進めてください")  # fmt: skip
_JA_ALSO = ("それで", "では", "じゃあ", "ください", "下さい", "キャンセルして", "変更して",
            "返品して", "交換して", "してください", "します", "ね", "よ")  # fmt: skip
_JA_NO = re.compile(r"[?？]|いいえ|いや|違|ない|待って|まって|やめ|でも|けど|ちょっと|ダメ|だめ")
# 「大丈夫です」「いいです」「結構です」 decline as often as they accept: asked again.
_JA_EITHER = re.compile(r"大丈夫|いいです|良いです|いいよ|結構|たぶん|多分|かな")
_SPACE_AND_MARKS = re.compile(r"[\s、。,.!！~〜ー…]+")


def _japanese(text: str) -> bool:
    return re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text) is not None


def explicit_yes(message: str) -> bool:
    """True only when the whole message is an unconditional yes (English or Japanese)."""
    text = plain(message)
    if not text or len(text) > 200 or ambiguous(message):
        return False
    if _japanese(text):
        return _japanese_yes(text)
    if _NO_EN.search(text):
        return False
    words = re.findall(r"[a-z']+|\d+|[^\sa-z'\d.,!]", text)
    return bool(words) and all(w in _ALLOWED for w in words) and any(w in _YES for w in words)


_REFUSED_EN = re.compile(
    r"(?:no|nope|nah|no thanks|no thank you|never ?mind|not now|don't|do not|"
    r"no,? (?:please )?don't(?: do (?:it|that))?|please don't|no,? leave it)[\s.!]*"
)
_REFUSED_JA = re.compile(
    r"(?:いいえ|いや|やめます|やめてください|やめて|やっぱりやめます|しないでください|"
    r"キャンセルしないでください|今回はやめておきます)(?:です|ございます)?[\s。！!]*"
)


def refused(message: str) -> bool:
    """The whole message is a plain no ("no", "nope, leave it", 「いいえ」): the customer said no
    to what they were asked, and asked for nothing else."""
    text = plain(message).replace("\u2019", "'")
    if _japanese(text):
        return _REFUSED_JA.fullmatch(text) is not None
    return _REFUSED_EN.fullmatch(text) is not None


def ambiguous(message: str) -> bool:
    """Words that may mean yes or no, and no plain no: the customer is asked again."""
    text = plain(message)
    if not text or len(text) > 200:
        return False
    if _japanese(text):
        return _JA_EITHER.search(text) is not None and _JA_NO.search(text) is None
    return _EITHER_EN.search(text) is not None and _NO_EN.search(text) is None


def _japanese_yes(text: str) -> bool:
    if _JA_NO.search(text):
        return False
    rest = _SPACE_AND_MARKS.sub("", text)
    found_yes = False
    for phrase in _JA_YES:
        if phrase in rest:
            found_yes = True
            rest = rest.replace(phrase, "")
    for phrase in sorted(_JA_ALSO, key=len, reverse=True):
        rest = rest.replace(phrase, "")
    return found_yes and not rest


def answer_to(message: str) -> Answer:
    """What a reply to a proposal is: an explicit yes, words that may mean either, or no yes."""
    if ambiguous(message):
        return "either"
    return "yes" if explicit_yes(message) else "other"


def heard(consent: Consent, asked: str, message: str) -> str | None:
    """`consent` told of the customer's next message, read here (see `Consent.heard`)."""
    return consent.heard(asked, message, answer_to(message))
