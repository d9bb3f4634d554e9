"""What the loop yields: one event per thing that happened, in order.

Edges consume them: `ui/` renders them, `record/tracing.py` writes them as JSON Lines. Every event
carries the run id and a wall-clock timestamp so a trace line stands on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from agent_cli.core.decisions import Decision, Usage
from agent_cli.core.tool_outcomes import OPAQUE, Outcome

TRACE_SCHEMA_VERSION = 1

RunStatus = Literal[
    "answered",
    "pending_approval",  # answered, with an action waiting in the approval queue
    "handed_over",  # answered, and a ticket opened for a person to follow up
    "needs_input",
    "max_steps",
    "timeout",
    "token_budget",
    "cost_budget",
    "no_progress",
    "ungrounded",
    "error",
    "interrupted",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Fields every event has."""

    kind: ClassVar[str] = "event"
    run_id: str
    ts: float  # seconds since the epoch (UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted(Event):
    kind: ClassVar[str] = "run_started"
    goal: str
    remembered_turns: int  # earlier exchanges of the conversation shown to the model
    provider: str
    model: str
    max_steps: int
    timeout_s: float
    today: str
    tools: tuple[str, ...]
    grounding: bool = False  # answers must name only orders looked up in this run
    instructions_sha256: str | None = None  # the shop's instructions in use (none: null)
    instructions_chars: int = 0
    customer_identified: bool = False  # the conversation had identified its customer before
    # An eval case's run: the orders the case put over the samples (its throwaway store, which
    # a replay rebuilds); None: the run used the configured order database.
    case_orders: tuple[dict[str, Any], ...] | None = None
    schema: int = TRACE_SCHEMA_VERSION


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelDecided(Event):
    kind: ClassVar[str] = "decision"
    step: int
    decision: Decision
    usage: Usage = field(default_factory=Usage)
    latency_ms: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCalled(Event):
    """One HTTP attempt at a model call; failed attempts that were retried show up here too."""

    kind: ClassVar[str] = "model_call"
    step: int
    attempt: int
    status: int | None  # the HTTP status, None when no response came (connection error)
    latency_ms: float
    usage: Usage = field(default_factory=Usage)
    retry_in_s: float | None = None  # set when this attempt failed and will be retried
    error: str | None = None
    fallback: str | None = None  # the server refused part of the request: what is sent instead


# An unusable reply; a rejected tool call; more calls in one reply than may run; an answer that
# names an order no tool looked up.
RepairCause = Literal["reply", "call", "calls", "answer"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RepairRequested(Event):
    """The model's output could not be used; it is told why and may try again."""

    kind: ClassVar[str] = "repair"
    step: int
    problem: str
    repairs: int  # how many so far in this run, this one included
    cause: RepairCause


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionAsked(Event):
    """The model asks the person at the keyboard. The consumer answers by sending the reply
    into the generator (`events.send(reply)`); sending None (or plain iteration) means nobody
    can answer, and the run ends with status `needs_input`. The reply then comes back as the
    `observation` of tool `ask_user`."""

    kind: ClassVar[str] = "question"
    step: int
    question: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequested(Event):
    """A call passed every check in code and now needs a person's yes. The consumer answers by
    sending a `ApprovalVerdict` into the generator; anything else is a denial (fail closed)."""

    kind: ClassVar[str] = "approval_requested"
    step: int
    tool: str
    args: dict[str, Any]
    summary: str  # the exact action: order, amount, reason


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalDecided(Event):
    kind: ClassVar[str] = "approval_decided"
    step: int
    tool: str
    approved: bool
    by: Literal["operator", "rule", "policy"]
    reason: str
    queued: int | None = None  # the approval queue's item, when it waits there
    rule: str | None = None  # the refund policy's rule, when it decided


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolObserved(Event):
    kind: ClassVar[str] = "observation"
    step: int
    tool: str
    args: dict[str, Any]
    observation: str
    is_error: bool
    duration_ms: float
    detail: str | None = None  # internal error detail: for the trace only, never the model
    ticket: int | None = None  # the hand-over ticket this call opened
    # What the call did, as data; a trace written before outcomes were recorded reads Opaque.
    outcome: Outcome = OPAQUE
    # A read's record as data, for `agent tools call --json`; not written to traces (the text
    # holds the same facts), so never read back from one.
    record: Mapping[str, Any] | None = field(default=None, metadata={"trace": False})


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished(Event):
    kind: ClassVar[str] = "run_finished"
    status: RunStatus
    answer: str | None
    steps: int
    usage: Usage
    elapsed_ms: float
    error: str | None = None
    cost: float | None = None  # when the model's price is known
    incomplete: bool = False  # the answer was asked for after a limit stopped the run
    findings: list[dict[str, Any]] = field(default_factory=list)  # what was learned, at a stop


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueDecided(Event):
    """Added to a run's log after it ended: a person decided the refund it queued."""

    kind: ClassVar[str] = "queue_decided"
    item: int
    status: str  # approved, denied, expired or failed
    decided_by: str
    outcome: str
    refund_id: int | None = None


# Every event type by its trace name, for reading traces back.
EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        RunStarted,
        ModelCalled,
        ModelDecided,
        RepairRequested,
        QuestionAsked,
        ApprovalRequested,
        ApprovalDecided,
        ToolObserved,
        RunFinished,
        QueueDecided,
    )
}
