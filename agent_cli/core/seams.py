"""The seams of the loop: what a model and a toolbox must provide, and the data that crosses.

The loop depends only on these; providers and tools implement them. Nothing here imports a
framework, so a scripted fake can stand in for any of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, Protocol

from agent_cli.core.decisions import Decision, FinalAnswer, StatedClaim, Step, Usage
from agent_cli.core.tool_outcomes import ERRORS, READ, Outcome, Queued, Transferred, render


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What a model is told about a tool: its name, description and JSON schema of arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    # Offered only once one of these tools has answered (an order's details once the customer
    # is identified, an article once searched): before that a call could only fail, and the
    # tool costs its bytes in the request and a small model's attention. Empty: always.
    after: tuple[str, ...] = ()
    # Offered only once an order read in the run has one of these statuses (a pending order's
    # changes, a delivered order's returns): a write of another status could only be refused.
    statuses: tuple[str, ...] = ()
    # No longer offered once one of these has answered (the customer's identification, once
    # they are found: a conversation serves one customer).
    until: tuple[str, ...] = ()
    # "write": it changes something once the customer said yes; while one write's proposal
    # waits for that yes, the other writes and the catalogue are not offered.
    kind: str = "read"


@dataclass(frozen=True, slots=True)
class Observation:
    """The result of one tool call: what the tool did (`outcome`, data every reader matches)
    and the words the model reads (`text`: a read's record, else rendered from the outcome)."""

    text: str
    is_error: bool = False
    detail: str | None = None  # internal detail for the trace; never shown to the model
    rejected: bool = False  # the call itself was invalid (unknown tool, bad arguments): a repair
    outcome: Outcome = READ
    # A read's record as data (`agent tools call --json` prints its fields); never the model's.
    record: Mapping[str, Any] | None = None

    @classmethod
    def of(
        cls, outcome: Outcome, *, detail: str | None = None, rejected: bool = False
    ) -> Observation:
        """The observation of an outcome, in the words `render` gives it."""
        return cls(render(outcome), isinstance(outcome, ERRORS), detail, rejected, outcome)

    @property
    def queued(self) -> int | None:
        """The approval queue's item this call now waits as."""
        return self.outcome.item if isinstance(self.outcome, Queued) else None

    @property
    def ticket(self) -> int | None:
        """The hand-over ticket this call opened (transfer_to_human_agents)."""
        return self.outcome.ticket if isinstance(self.outcome, Transferred) else None


@dataclass(frozen=True, slots=True)
class ModelCall:
    """What a provider reports about one HTTP attempt (see `ModelCalled`)."""

    attempt: int
    status: int | None
    latency_ms: float
    usage: Usage = field(default_factory=Usage)
    retry_in_s: float | None = None
    error: str | None = None
    fallback: str | None = None  # the plainer request form used from now on, after a refusal


@dataclass(frozen=True, slots=True)
class ApprovalNeeded:
    """What a tool returns for an action that passed its checks but needs a person's yes:
    `summary` says exactly what would happen; `commit` does it (and checks again); `queue`, when
    the action can wait for a person elsewhere, records it as pending (given the run id and the
    question) and says so."""

    summary: str
    commit: Callable[[], Observation]
    queue: Callable[[str, str], Observation] | None = None
    decided: ApprovalVerdict | None = (
        None  # a rule decided already (refund policy): no one is asked
    )


@dataclass(frozen=True, slots=True)
class ApprovalVerdict:
    """A decision on an ApprovalNeeded: by the operator, or by a rule (no terminal, a cap)."""

    approved: bool
    by: Literal["operator", "rule", "policy"]
    reason: str = ""
    queue: bool = False  # not now: into the approval queue, when the action can wait
    rule: str | None = None  # the refund policy's rule that decided (by "policy")

    def cannot_wait(self) -> ApprovalVerdict:
        """This verdict for an action that cannot wait in the approval queue (a dry run, the
        queue off): denied, saying why (a rule's: nobody could be asked)."""
        if self.by == "rule":
            return FAIL_CLOSED
        why = "it cannot wait in the approval queue (a dry run, or the queue is off); denied"
        return ApprovalVerdict(False, self.by, why)


FAIL_CLOSED = ApprovalVerdict(False, "rule", "no one could be asked (no terminal); denied")
QUEUE = ApprovalVerdict(
    False, "rule", "no one at this terminal could approve it: queued", queue=True
)

# A check of a final answer (its text, and what it says was done as data, if any) against the
# run's history: None when it is acceptable, else the problem, which the model is told (the
# grounding check).
AnswerCheck = Callable[[str, tuple[Step, ...], tuple[StatedClaim, ...]], str | None]

# What a consumer sends back into a run: a reply to a question, a verdict, or nothing.
Reply = str | ApprovalVerdict | None


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Text of a reply as it streams in, for the screen only: the reply itself, and every
    record of it, comes whole when the model has decided. `restart`: the attempt failed part-way
    and is retried, so the text so far is void."""

    text: str
    restart: bool = False


def no_text(_: TextDelta) -> None:
    """Streamed text nobody shows."""
    return None


class DeadlineExceeded(Exception):
    """Raised by a model that could not answer before `ModelRequest.deadline`."""


def _ignore(_: ModelCall) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Exchange:
    """An earlier turn of a conversation: a question and the answer it got."""

    question: str
    answer: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRequest:
    """Everything the model may look at to make one decision. The history is a tuple: immutable."""

    goal: str
    today: date
    tools: tuple[ToolSpec, ...]
    history: tuple[Step, ...]
    deadline: float  # on time.monotonic(); a model must not wait past it
    on_call: Callable[[ModelCall], None] = _ignore  # providers report each HTTP attempt here
    conversation: tuple[Exchange, ...] = ()  # earlier turns of a chat, oldest first
    final: bool = False  # a limit stopped the run: answer now from what is known, call no tool
    on_text: Callable[[TextDelta], None] = no_text  # a streaming provider's text, as it comes
    instructions: str = ""  # the shop's own, placed before our rules in the system prompt
    # The customer's id when this conversation identified them before this run (an earlier
    # message, or a caller that vouched for them): the model need not ask who they are.
    customer: str | None = None
    # The channel's language ("ja" on LINE), for words that say none ("B200", "ok", an emoji):
    # the customer's own language, when their words show it, always comes first.
    language: str | None = None


@dataclass(frozen=True, slots=True, init=False)
class ModelReply:
    """One reply: a single FinalAnswer, or one or more calls and questions (parallel calls)."""

    decisions: tuple[Decision, ...]
    usage: Usage

    def __init__(self, *decisions: Decision, usage: Usage | None = None) -> None:
        if not decisions:
            raise ValueError("a reply needs at least one decision")
        if len(decisions) > 1 and any(isinstance(d, FinalAnswer) for d in decisions):
            raise ValueError("a final answer must be the only decision of its reply")
        object.__setattr__(self, "decisions", decisions)
        object.__setattr__(self, "usage", usage or Usage())


class ReasoningModel(Protocol):
    """Anything that can decide the next step: a real LLM provider or a scripted stand-in.

    `decide` raises MalformedReply for a reply with no usable decision, DeadlineExceeded when
    the deadline passes, and ModelError subclasses for failures that end the run.
    """

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    def decide(self, request: ModelRequest) -> ModelReply: ...


class Toolbox(Protocol):
    """The tools a run may use. `specs` is asked at every step: the tools offered may grow as
    the conversation goes (a customer identified). `invoke` never raises for a tool's own
    failure, and does not wait (for a lock, say) longer than `time_left` seconds, the run's
    remaining time."""

    def specs(self) -> tuple[ToolSpec, ...]: ...

    def invoke(
        self, name: str, args: Mapping[str, Any], *, time_left: float
    ) -> Observation | ApprovalNeeded: ...
