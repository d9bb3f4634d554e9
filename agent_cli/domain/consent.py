"""The customer's consent as state (desk.md, rules 3 and 6): a change is proposed in words with
an id, put to the customer in a question that carries it, and only an explicit yes to that
question, in their next message, lets that one change go on, once, while the store still matches
what they were shown. What a message means (a yes, words that may mean either, anything else) is
read in `policy/consent.py`; this module decides what follows from it.

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
from typing import Any, Literal

# What the customer's message is, as policy/consent.py reads it: an explicit yes, words that may
# mean yes or no (asked again), or anything else (no yes).
Answer = Literal["yes", "either", "other"]


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


def plain(text: str) -> str:
    """A message as consent reads it: NFKC, trimmed, lower case (policy/consent.py too)."""
    return unicodedata.normalize("NFKC", text).strip().lower()


def _folded(text: str) -> str:
    return " ".join(plain(text).split())


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

    def heard(self, asked: str, message: str, answer: Answer) -> str | None:
        """The customer's next message, in answer to `asked` (the agent's question, or its last
        answer before a chat turn), and what it is (`answer`). What the model is told of the
        proposal (None: none)."""
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
        if answer == "either":
            self.pending = proposal  # still waiting, for a plain answer
            return (
                f"(desk: that is neither a plain yes nor a no to change {proposal.id}; nothing "
                f"was changed. Ask again in plain words, naming {proposal.id}: "
                f"{proposal.summary}, yes or no?)"
            )
        if answer == "yes":
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
