"""What a tool did, as data: a closed union every reader matches exhaustively, and the one
place each kind is put into the words the model reads (`render`).

A tool's text is for the model; what the desk, the judge, the scorer, the run log and the
playbook need to know ("was an order cancelled in this run?") is read from the outcome, never
from the text. So a customer record whose name reads like an outcome line stays a record, and
rewording what the model is told changes no decision. The markers below (`CHANGED:`, ...) are
written here and nowhere else (a test holds every other module to it).

Kinds: `Read` (a record or an answer; nothing changed), `NotFound` (no such order),
`Proposed` (a change put forward, nothing changed), `Changed` (a change committed),
`Refunded` (money recorded as going back), `Queued` (waiting in the approval queue),
`Simulated` (a dry run's would-be change), `Denied` (a rule or a person said no),
`Transferred` (a ticket opened for a person), `Failed` (the call could not be done),
`Replied` (a person's answer to the agent's question), and `Opaque` (a step read back from a
trace written before outcomes were recorded: its text only, which proves nothing was done).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal, assert_never

from pydantic import Field


@dataclass(frozen=True, slots=True)
class Read:
    """A tool's answer: a record, a list, a computed fact. Nothing changed. A read of an order
    says which, its status and what had gone back of it: facts the store showed, which an
    answer may state (an order refunded last week is no claim of this run's)."""

    order: str | None = None
    status: str | None = None
    refunded: int = 0  # minor units
    refundable: Literal["yes", "no", "unknown"] | None = None  # as `lookup_order` computed it
    why: str = ""  # the rule that decided `refundable`
    kind: Literal["read"] = "read"


@dataclass(frozen=True, slots=True)
class NotFound:
    """No order with the code asked for; `nearest`: the codes it may have meant that the asker
    may be told of; `theirs`: none of the identified customer's (another's reads the same)."""

    asked: str
    nearest: tuple[str, ...] = ()
    theirs: bool = False
    kind: Literal["not_found"] = "not_found"


@dataclass(frozen=True, slots=True)
class Proposed:
    """A change worked out and put forward; nothing changed until the customer's yes.
    `proposal`: its id, which the question putting it to the customer carries."""

    tool: str
    summary: str
    order: str | None = None
    proposal: str = ""
    again: bool = False  # proposed before, and the answer then was no yes
    kind: Literal["proposed"] = "proposed"


@dataclass(frozen=True, slots=True, kw_only=True)
class Changed:
    """A change committed to the store (`change_id`: its row in `order_changes`)."""

    change_id: int
    tool: str
    summary: str
    order: str | None = None
    refund: int = 0  # minor units this change sends back to the customer (0: none)
    currency: str = ""
    kind: Literal["changed"] = "changed"


@dataclass(frozen=True, slots=True, kw_only=True)
class Refunded:
    """A refund recorded by `issue_refund`; `earlier`: the same refund existed already."""

    refund_id: int
    order: str
    amount: int  # minor units
    currency: str
    what: str  # the amount and the order in words, as the model is told
    earlier: bool = False
    kind: Literal["refunded"] = "refunded"


@dataclass(frozen=True, slots=True)
class Queued:
    """Waiting in the approval queue as item `item` until `until`; nothing changed yet."""

    item: int
    tool: str
    summary: str
    until: str
    order: str | None = None
    kind: Literal["queued"] = "queued"


@dataclass(frozen=True, slots=True)
class Simulated:
    """What a dry run would have done; nothing written."""

    tool: str
    summary: str
    kind: Literal["simulated"] = "simulated"


@dataclass(frozen=True, slots=True)
class Denied:
    """The shop's rules or a person said no; nothing changed."""

    reason: str
    kind: Literal["denied"] = "denied"


@dataclass(frozen=True, slots=True)
class Transferred:
    """A hand-over ticket opened for a person to follow up; `reach`: how the person can reach
    the customer: `here` (the conversation is kept, and a person answers in it), `email` (the
    customer's record, or their own words, hold an email address), `unknown` (neither)."""

    ticket: int
    reach: Literal["here", "email", "unknown"] = "unknown"
    kind: Literal["transferred"] = "transferred"


@dataclass(frozen=True, slots=True)
class Failed:
    """The call could not be done (bad arguments, a rule, an unknown tool, a server down);
    `hand_over`: nothing more can be tried here, a person must take over."""

    message: str
    hand_over: bool = False
    unchanged: bool = False  # a write asked for what the store holds already: a no-op
    kind: Literal["failed"] = "failed"


@dataclass(frozen=True, slots=True)
class Replied:
    """A person's answer to the agent's question: their words, without any note of the desk."""

    words: str = ""
    kind: Literal["replied"] = "replied"


@dataclass(frozen=True, slots=True)
class Opaque:
    """A step from a trace that recorded no outcome: text only, which shows nothing done."""

    kind: Literal["opaque"] = "opaque"


Outcome = Annotated[
    Read
    | NotFound
    | Proposed
    | Changed
    | Refunded
    | Queued
    | Simulated
    | Denied
    | Transferred
    | Failed
    | Replied
    | Opaque,
    Field(discriminator="kind"),
]

# Outcomes the model is shown as errors. NotFound is an answer: "no such order" is a fact.
ERRORS = (Failed, Denied)
READ = Read()  # a plain tool result's outcome (a default needs no call)
OPAQUE = Opaque()


_REACH = {
    "here": "a person will answer the customer here, in this conversation",
    "email": "a person will follow up with the customer by email",
    "unknown": "a person will follow up, but the customer has left no way to reach them (no "
    "email on record or in their words): ask for their email address",
}


def render(outcome: Outcome, record: str = "") -> str:  # noqa: C901, PLR0911, PLR0912 - a case a kind
    """The words the model reads for `outcome`; `record`: a read's (or a reply's) own text."""
    match outcome:
        case Read() | Opaque():
            return record
        case Replied(words=words):
            return record or words
        case NotFound(asked=asked, nearest=nearest, theirs=theirs):
            meant = f"; did you mean {', '.join(nearest)}?" if nearest else ""
            whose = "the identified customer has no" if theirs else "no"
            return f"NOT_FOUND: {whose} order with code {asked}{meant}"
        case Proposed(tool=tool, summary=summary, proposal=proposal, again=again):
            asked_before = " (ask afresh: it was not confirmed as it now stands)" if again else ""
            return (
                f"PROPOSED (nothing is changed yet) as change {proposal}: {summary}. Ask the "
                f"customer about this change alone, quoting it exactly (or naming {proposal}), "
                f"to confirm with yes or no{asked_before}; if they say yes, call {tool} again "
                "with the same arguments."
            )
        case Changed(change_id=change_id, summary=summary):
            return f"CHANGED: change #{change_id}: {summary}"
        case Refunded(refund_id=refund_id, what=what, earlier=earlier):
            if earlier:
                return f"ALREADY DONE: refund #{refund_id} of {what} exists"
            return f"REFUNDED: refund #{refund_id} of {what} recorded"
        case Queued(item=item, tool=tool, summary=summary, until=until):
            if tool == "issue_refund":
                then = "nothing is refunded yet. Tell the customer it is pending."
            else:
                then = "nothing is changed yet. Tell the customer it is waiting for approval."
            return (
                f"QUEUED: {summary} awaits a person's approval as #{item} (until {until}); {then}"
            )
        case Simulated(summary=summary):
            return f"DRY RUN: would {summary}; nothing was written"
        case Denied(reason=reason):
            return f"DENIED: {reason}"
        case Transferred(ticket=ticket, reach=reach):
            return (
                f"TRANSFERRED: ticket #{ticket} is open; {_REACH[reach]}. Tell the customer so, "
                "and that nothing else was done; promise no other way of contact."
            )
        case Failed(message=message):
            return f"ERROR: {message}"
        case _:
            assert_never(outcome)


def acted(outcome: Outcome) -> bool:
    """Whether the call changed something in this run: a change committed, a refund recorded
    now (not found recorded before), a ticket opened."""
    match outcome:
        case Changed() | Transferred():
            return True
        case Refunded(earlier=earlier):
            return not earlier
        case (
            Read()
            | NotFound()
            | Proposed()
            | Queued()
            | Simulated()
            | Denied()
            | Failed()
            | Replied()
            | Opaque()
        ):
            return False
        case _:
            assert_never(outcome)
