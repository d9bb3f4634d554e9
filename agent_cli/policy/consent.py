"""The customer's consent, read in code (desk.md, rules 3 and 6): a change is proposed in words
with an id, put to the customer in a question that carries it, and only an explicit yes to that
question, in their next message, lets that one change go on, once, while the store still
matches what they were shown.

Conservative by design: a message is a yes only when every word of it is a yes, a politeness or
a restatement of the act ("Yes, please cancel it"); a question, a negation, a condition or any
other detail ("yes, but to my office", "yes, the blue one") is not, and the proposal is
withdrawn rather than guessed at. Words that may mean either (「大丈夫です」, 「いいです」,
"fine", "ok I guess") are never a yes: the customer is asked again in plain words.

A proposal is withdrawn by anything but that yes: a no, another message, a question that does
not put it to the customer, another proposal, a new customer (`/reset`) or the end of the
conversation. A yes stands until the customer speaks again.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

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


def _plain(message: str) -> str:
    return unicodedata.normalize("NFKC", message).strip().lower()


def _japanese(text: str) -> bool:
    return re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text) is not None


def explicit_yes(message: str) -> bool:
    """True only when the whole message is an unconditional yes (English or Japanese)."""
    text = _plain(message)
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
    text = _plain(message).replace("\u2019", "'")
    if _japanese(text):
        return _REFUSED_JA.fullmatch(text) is not None
    return _REFUSED_EN.fullmatch(text) is not None


def ambiguous(message: str) -> bool:
    """Words that may mean yes or no, and no plain no: the customer is asked again."""
    text = _plain(message)
    if not text or len(text) > 200:
        return False
    if _japanese(text):
        return _JA_EITHER.search(text) is not None and _JA_NO.search(text) is None
    return _EITHER_EN.search(text) is not None and _NO_EN.search(text) is None


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


@dataclass(frozen=True, slots=True)
class Proposal:
    """One change put to the customer: its id (`P1`), the call that makes it (tool and exact
    arguments), a digest of the change as the store held it when they were shown it, and the
    change in words."""

    id: str
    key: str
    digest: str
    summary: str


def call_key(tool: str, values: dict[str, Any]) -> str:
    """One proposal's call: the tool and its exact arguments."""
    return f"{tool} {json.dumps(values, sort_keys=True)}"


def shown_digest(*shown: object) -> str:
    """A digest of what the customer is shown, as the store held it: a yes is to this."""
    text = json.dumps(shown, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _folded(text: str) -> str:
    return " ".join(_plain(text).split())


def carries(question: str, proposal: Proposal) -> bool:
    """Whether a question puts this proposal to the customer: it names its id, or quotes the
    change exactly."""
    named = re.search(rf"(?<![A-Za-z0-9]){re.escape(proposal.id)}(?![0-9])", question)
    return named is not None or _folded(proposal.summary) in _folded(question)


@dataclass(slots=True)
class Consent:
    """A conversation's proposal waiting for the customer's answer, and the one they said yes
    to (good for one call, until they speak again)."""

    pending: Proposal | None = None
    given: Proposal | None = None
    dropped: dict[str, str] = field(default_factory=dict)  # a call's key -> the answer, no yes
    proposed: int = 0  # proposals so far: the next one's id

    def propose(self, key: str, digest: str, summary: str) -> Proposal:
        """A new proposal; any other, waiting or confirmed, is withdrawn (a second change needs
        its own question)."""
        self.proposed += 1
        self.pending = Proposal(f"P{self.proposed}", key, digest, summary)
        self.given = None
        return self.pending

    def allows(self, key: str, digest: str) -> bool:
        """Whether this call may go on: the customer's yes was to exactly this change, and the
        store still holds what they were shown."""
        given = self.given
        return given is not None and given.key == key and given.digest == digest

    def use(self) -> None:
        """The yes is spent: one yes, one write."""
        self.given = None

    def settle(self, key: str, digest: str, summary: str) -> tuple[Proposal, bool] | None:
        """A call that needs the customer's yes: None when they gave it to exactly this change
        as shown (spent now: one yes, one write); else the change proposed to them, and
        whether it was put before and not confirmed as it now stands."""
        if self.allows(key, digest):
            self.use()
            return None
        again = key in self.dropped or (self.given is not None and self.given.key == key)
        return self.propose(key, digest, summary), again

    def heard(self, asked: str, message: str) -> str | None:
        """The customer's next message, in answer to `asked` (the agent's question, or its last
        answer before a chat turn). What the model is told of the proposal (None: none)."""
        spent, self.given = self.given, None  # a yes stands until the customer speaks again
        proposal, self.pending = self.pending, None
        if proposal is None:
            if spent is None:
                return None
            return (
                f"(desk: the customer's yes to change {spent.id} no longer stands; nothing was "
                "changed)"
            )
        if not carries(asked, proposal):
            self.dropped[proposal.key] = message
            return (
                f"(desk: change {proposal.id} is withdrawn: the question answered did not put it "
                "to the customer; nothing was changed. To make it, propose it again and ask "
                "about exactly that change)"
            )
        if ambiguous(message):
            self.pending = proposal  # still waiting, for a plain answer
            return (
                f"(desk: that is neither a plain yes nor a no to change {proposal.id}; nothing "
                f"was changed. Ask again in plain words, naming {proposal.id}: "
                f"{proposal.summary}, yes or no?)"
            )
        if explicit_yes(message):
            self.given = proposal
            return f"(desk: the customer confirmed change {proposal.id}: {proposal.summary})"
        self.dropped[proposal.key] = message
        return (
            f"(desk: that is not an explicit yes, so change {proposal.id} was dropped and nothing "
            "was changed; ask what the customer wants instead)"
        )

    def state(self) -> dict[str, Any]:
        """What the consent holds, as JSON-ready data (a conversation kept in the store)."""
        return {
            "pending": _proposal_state(self.pending),
            "given": _proposal_state(self.given),
            "dropped": dict(self.dropped),
            "proposed": self.proposed,
        }

    @classmethod
    def from_state(cls, state: object) -> Consent:
        """The consent `state` describes; an empty one for anything else (a damaged row must
        never make a yes: it can only lose one)."""
        if not isinstance(state, dict):
            return cls()
        dropped = state.get("dropped")
        proposed = state.get("proposed")
        return cls(
            pending=_proposal(state.get("pending")),
            given=_proposal(state.get("given")),
            dropped={str(k): str(v) for k, v in dropped.items()}
            if isinstance(dropped, dict)
            else {},
            proposed=proposed if isinstance(proposed, int) and proposed >= 0 else 0,
        )


def _proposal_state(proposal: Proposal | None) -> dict[str, str] | None:
    if proposal is None:
        return None
    return {"id": proposal.id, "key": proposal.key, "digest": proposal.digest,
            "summary": proposal.summary}  # fmt: skip


def _proposal(state: object) -> Proposal | None:
    if not isinstance(state, dict):
        return None
    fields = [state.get(name) for name in ("id", "key", "digest", "summary")]
    if not all(isinstance(value, str) for value in fields):
        return None
    return Proposal(*(str(value) for value in fields))
