"""What the model decides each step: a closed union of CallTool | AskUser | FinalAnswer.

The JSON wire form (used by --script files and the JSON mode of real providers):
    {"type": "tool", "tool": "lookup_order", "args": {"order_code": "A100"}, "thought": "..."}
    {"type": "ask_user", "question": "Which order code?"}
    {"type": "final", "answer": "...", "claims": [{"kind": "cancel", "order": "B200"}]}
(`claims`, optional: what the answer says was done, as data; checked as the text is.)
Code that consumes a Decision matches it exhaustively and ends in `assert_never`, so a new case
fails type checking everywhere it is not handled.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from agent_cli.core.tool_outcomes import OPAQUE, Failed, Outcome, render

MAX_THOUGHT_CHARS = 4_000
MAX_ANSWER_CHARS = 20_000
MAX_ECHOED_REPLY = 800  # characters of an unusable reply shown back to the model


class CallTool(BaseModel):
    """Run one tool with these arguments; `thought` says why (kept for debugging)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["tool"] = "tool"
    tool: str = Field(min_length=1, max_length=100)
    args: dict[str, Any] = Field(default_factory=dict)
    thought: str = Field(default="", max_length=MAX_THOUGHT_CHARS)
    call_id: str | None = None  # the provider's id for this call, echoed back with its result
    invalid: str | None = None  # why the model's arguments could not be read: never run


ASK_USER_TOOL = "ask_user"  # the built-in tool through which tools-mode models ask a question


class AskUser(BaseModel):
    """Ask the person at the keyboard a clarifying question; their reply is the observation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["ask_user"] = "ask_user"
    question: str = Field(min_length=1, max_length=2_000)
    call_id: str | None = None  # the provider's id when it came as an ask_user tool call

    def as_call(self) -> CallTool:
        """How the question sits in the history: a call of the built-in ask_user tool."""
        return CallTool(tool=ASK_USER_TOOL, args={"question": self.question}, call_id=self.call_id)


# The acts an answer may say were done (policy/claims.py reads the same kinds from its text).
ClaimKind = Literal[
    "cancel", "refund", "address", "account_address", "payment", "items", "return", "exchange",
    "handover",
]  # fmt: skip


class StatedClaim(BaseModel):
    """An act a final answer says was done, given as data (JSON mode): its kind and the order
    it was done on (none: the account, or a hand-over)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: ClaimKind
    order: str | None = Field(default=None, min_length=1, max_length=32)


class FinalAnswer(BaseModel):
    """Stop and give this answer to the customer; `claims`: what it says was done, as data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["final"] = "final"
    answer: str = Field(min_length=1, max_length=MAX_ANSWER_CHARS)
    claims: tuple[StatedClaim, ...] | None = Field(default=None, max_length=20)


Decision = Annotated[CallTool | AskUser | FinalAnswer, Field(discriminator="type")]


@functools.cache
def _decision_adapter() -> TypeAdapter[Decision]:
    """Built on first use: only script files and JSON mode parse decisions from JSON."""
    return TypeAdapter(Decision)


_TAGS = ("tool", "ask_user", "final")


class DecisionError(ValueError):
    """A payload is not a valid decision; the message names the field and the problem."""


def describe_validation_error(error: ValidationError) -> str:
    """One line naming each bad field, without echoing the (possibly huge) input."""
    parts = []
    for item in error.errors(include_url=False, include_input=False):
        loc = item["loc"]
        if len(loc) > 1 and loc[0] in _TAGS:  # drop the union tag pydantic puts first
            loc = loc[1:]
        where = ".".join(str(part) for part in loc) or "decision"
        parts.append(f"{where}: {item['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


def parse_decision(payload: object) -> Decision:
    """Validate one decision in its wire form (already decoded from JSON)."""
    if isinstance(payload, dict) and "type" not in payload:
        raise DecisionError('type: missing; expected "tool", "ask_user" or "final"')
    try:
        return _decision_adapter().validate_python(payload)
    except ValidationError as exc:
        raise DecisionError(describe_validation_error(exc)) from None


def parse_decisions(payload: object) -> list[Decision]:
    """Validate a JSON array of decisions, naming the 1-based number of a bad one."""
    if not isinstance(payload, list):
        raise DecisionError(f"expected a JSON array of decisions, got {type(payload).__name__}")
    decisions: list[Decision] = []
    for number, item in enumerate(payload, start=1):
        try:
            decisions.append(parse_decision(item))
        except DecisionError as exc:
            raise DecisionError(f"decision {number}: {exc}") from None
    return decisions


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens a model call consumed; zero for offline models."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )


@dataclass(frozen=True, slots=True)
class Step:
    """One entry of the history: an action and its observation, or an unusable reply and why.

    Steps that share a `number` came from one model reply (parallel tool calls).
    """

    number: int
    call: CallTool | None  # None: the reply held no usable decision (see `reply`)
    observation: str
    is_error: bool
    reply: str | None = None  # the unusable reply as the model wrote it (see `unusable`)
    outcome: Outcome = OPAQUE  # what the call did, as data (core/tool_outcomes.py)
    # A read's record as data (tools/records.py), for code that reads it (the offline
    # playbook); a model reads `observation`, and a trace does not keep it.
    record: Mapping[str, Any] | None = field(default=None, compare=False)

    @classmethod
    def unusable(cls, number: int, problem: str, reply: str) -> Step:
        """A reply that could not be used, and why. The model is shown its first
        MAX_ECHOED_REPLY characters again: enough to see what went wrong, not a 1,024-token
        ramble paid again on every later step (seconds of prompt on a small local model)."""
        if len(reply) > MAX_ECHOED_REPLY:
            more = len(reply) - MAX_ECHOED_REPLY
            reply = f"{reply[:MAX_ECHOED_REPLY]}… [{more:,} more characters not repeated]"
        return cls(number, None, problem, True, reply)


def not_run(skipped: tuple[Decision, ...], number: int, limit: int) -> list[Step]:
    """One ERROR result for each call past the per-reply limit, so every call id gets one
    (the loop runs at most `limit` calls of a reply)."""
    failed = Failed(
        f"not run: the reply held {limit + len(skipped)} calls and at most {limit} run "
        "per reply; make the remaining calls in your next reply"
    )
    text = render(failed)
    calls = [d.as_call() if isinstance(d, AskUser) else d for d in skipped]
    return [
        Step(number, call, text, True, outcome=failed)
        for call in calls
        if isinstance(call, CallTool)
    ]
