"""The tool registry: name -> tool, argument validation, and failures turned into observations.

A tool's input comes from the model and is untrusted: it is validated before the tool runs
(strict types, no extra fields, never coerced), against the tool's pydantic model for ours and
its JSON schema for an MCP server's (tools/mcp_servers.py). Whatever goes wrong becomes an
`ERROR: ...` observation the model can read and correct, never a crash.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from agent_cli.core.decisions import describe_validation_error
from agent_cli.core.seams import ApprovalNeeded, Observation, ToolSpec
from agent_cli.core.tool_outcomes import Denied as NotAllowed
from agent_cli.core.tool_outcomes import Failed
from agent_cli.errors import StoreBusy, StoreError
from agent_cli.store.sqlite import busy_wait_at_most
from agent_cli.text import mask_secrets

MAX_NAME_IN_MESSAGE = 60


class ToolArgs(BaseModel):
    """Base of every tool's argument model: strict, closed, immutable."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class NoArgs(ToolArgs):
    """For tools that take no arguments."""


class ToolFailure(Exception):
    """A tool could not do its job; the message is written for the model to read and act on."""


class NothingToChange(ToolFailure):
    """A write asked for what the store holds already: nothing was done, nothing needed."""


class NeedsPerson(ToolFailure):
    """Nothing more can be tried in this conversation: a person must take over."""


class Denied(ToolFailure):
    """A rule in code forbids the action (policy, caps); the message says which rule."""


class InvalidArguments(Exception):
    """The model's arguments do not fit the tool; the message says how, for the model."""


Action = Callable[[], "str | Observation | ApprovalNeeded"]


class RegisteredTool(Protocol):
    """What the registry needs of a tool: ours (`Tool`) or an MCP server's."""

    @property
    def name(self) -> str: ...

    def spec(self) -> ToolSpec: ...

    def signature(self) -> str:
        """`lookup_order(order_code: string)`: the expected arguments, for error messages."""
        ...

    def bind(self, args: Mapping[str, Any], *, time_left: float) -> Action:
        """The call with these arguments, ready to run; InvalidArguments if they do not fit."""
        ...


A = TypeVar("A", bound=ToolArgs)


@dataclass(frozen=True, slots=True)
class Tool(Generic[A]):
    """A named capability the model may call. The description is all the model knows of it."""

    name: str
    description: str
    args_model: type[A]
    execute: Callable[[A], str | Observation | ApprovalNeeded]
    after: tuple[str, ...] = ()  # offered once one of these has answered (see ToolSpec)
    statuses: tuple[str, ...] = ()  # ...once an order read has one of these statuses
    until: tuple[str, ...] = ()  # ...until one of these has answered
    kind: str = "read"  # "write": proposed, then made after the customer's yes (see ToolSpec)

    def spec(self) -> ToolSpec:
        schema = copy.deepcopy(_schema(self.args_model))
        gates = (self.after, self.statuses, self.until, self.kind)
        return ToolSpec(self.name, self.description, schema, *gates)

    def signature(self) -> str:
        return signature(self.name, _schema(self.args_model))

    def bind(self, args: Mapping[str, Any], *, time_left: float) -> Action:
        try:
            parsed = self.args_model.model_validate(dict(args))
        except ValidationError as exc:
            raise InvalidArguments(describe_validation_error(exc)) from None

        def action() -> str | Observation | ApprovalNeeded:
            with busy_wait_at_most(time_left):
                return self.execute(parsed)

        return action


@functools.cache
def _schema(args_model: type[ToolArgs]) -> dict[str, Any]:
    """An argument model's JSON schema, built once per process: pydantic builds it anew on
    every call (a quarter of a millisecond, paid by every run for every tool)."""
    schema = args_model.model_json_schema()
    schema.pop("title", None)
    schema.pop("description", None)
    return schema


def signature(name: str, schema: Mapping[str, Any]) -> str:
    """`name(arg: type, ...)` from a JSON schema's properties."""
    properties = schema.get("properties", {})
    params = ", ".join(f"{key}: {prop.get('type', 'any')}" for key, prop in properties.items())
    return f"{name}({params})"


class ToolRegistry:
    """The toolbox handed to the loop."""

    def __init__(
        self, tools: Iterable[RegisteredTool], *, unavailable: Mapping[str, str] | None = None
    ) -> None:
        """`unavailable`: the MCP servers that could not be reached, each with why; a call of
        one of their tools is told so instead of "unknown tool"."""
        self._unavailable = dict(unavailable or {})
        self._tools: dict[str, RegisteredTool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"duplicate tool name {tool.name!r}")
            self._tools[tool.name] = tool
        self._specs = tuple(tool.spec() for tool in self._tools.values())
        self._offer: Callable[[], Iterable[str]] | None = None

    def __iter__(self) -> Any:
        return iter(self._tools.values())

    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def offering(self, offer: Callable[[], Iterable[str]]) -> ToolRegistry:
        """The same tools with only those `offer()` names offered to the model, asked again at
        every step (tools/offered.py: by the conversation's phase, so a reply can widen it).
        Every tool stays callable, under every rule: a call is judged by the tool, not by the
        offer."""
        offered = copy.copy(self)
        offered._offer = offer
        return offered

    def specs(self) -> tuple[ToolSpec, ...]:
        if self._offer is None:
            return self._specs
        wanted = set(self._offer())
        return tuple(spec for spec in self._specs if spec.name in wanted)

    def invoke(
        self, name: str, args: Mapping[str, Any], *, time_left: float = math.inf
    ) -> Observation | ApprovalNeeded:
        tool = self._tools.get(name)
        if tool is None:
            return self._unknown(name)
        try:
            action = tool.bind(args, time_left=time_left)
        except InvalidArguments as exc:
            return Observation.of(
                Failed(f"invalid arguments for {name}: {exc}. Expected {tool.signature()}"),
                rejected=True,
            )
        return _execute(tool.name, action)

    def _unknown(self, name: str) -> Observation:
        shown = name if len(name) <= MAX_NAME_IN_MESSAGE else name[:MAX_NAME_IN_MESSAGE] + "..."
        server, dot, _ = name.partition(".")
        if dot and server in self._unavailable:
            return Observation.of(
                Failed(
                    f"{shown!r} cannot be called: MCP server {server} "
                    f"{self._unavailable[server]}; answer without it or say it is unavailable"
                )
            )
        valid = ", ".join(self._tools)
        return Observation.of(
            Failed(f"Unknown tool {shown!r}; should be one of: {valid}"), rejected=True
        )


def _execute(name: str, action: Action) -> Observation | ApprovalNeeded:
    result = _guarded(name, action)
    if isinstance(result, ApprovalNeeded):  # its commit and queueing get the same protection
        commit, queue = result.commit, result.queue
        guarded_queue = None
        if queue is not None:
            guarded_queue = lambda run, question: _observation(  # noqa: E731
                _guarded(name, lambda: queue(run, question))
            )
        return ApprovalNeeded(
            result.summary,
            lambda: _observation(_guarded(name, commit)),
            guarded_queue,
            result.decided,
        )
    return result


def _observation(result: Observation | ApprovalNeeded) -> Observation:
    if isinstance(result, ApprovalNeeded):  # pragma: no cover - a commit never asks again
        raise TypeError("a commit must not ask for another approval")
    return result


def _guarded(
    name: str, action: Callable[[], str | Observation | ApprovalNeeded]
) -> Observation | ApprovalNeeded:
    """Run a tool's code; every failure becomes an observation, never a crash."""
    try:
        result = action()
    except Denied as exc:
        return Observation.of(NotAllowed(str(exc)))
    except StoreBusy as exc:  # another process holds the database: worth saying as it is
        return Observation.of(Failed(str(exc)))
    except StoreError:  # no usable database: the run cannot answer, and must say so (exit 1)
        raise
    except NeedsPerson as exc:
        return Observation.of(Failed(str(exc), hand_over=True))
    except ToolFailure as exc:  # asking for what is there already is no fault, but no change
        return Observation.of(Failed(str(exc), unchanged=isinstance(exc, NothingToChange)))
    except Exception as exc:
        # The model gets a short line; the details (paths, SQL) stay in the trace only.
        return Observation.of(
            Failed(f"{name} failed unexpectedly ({type(exc).__name__}); try another approach"),
            detail=mask_secrets(f"{type(exc).__name__}: {exc}"),
        )
    return Observation(result) if isinstance(result, str) else result
