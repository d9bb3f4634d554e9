"""The observe-reason-act loop, and the two seams it depends on: the model and the toolbox.

`run()` is a generator of events. It never prints, never logs and imports no Typer, Rich or
httpx: the edges (CLI, UI, tracing) decide what to do with each event. Limits are enforced here,
in code, whatever the model says. When a run ends for any reason other than an answer, the loop
first yields a `RunFinished` with the matching status and then raises, so every consumer sees
the final record before the error reaches the CLI's error boundary.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Protocol, assert_never, cast

from agent_cli.decisions import CallTool, FinalAnswer, Step, Usage
from agent_cli.errors import AgentError, Interrupted, LimitReached, MaxStepsExceeded, RunTimedOut
from agent_cli.events import Event, ModelDecided, RunFinished, RunStarted, RunStatus, ToolObserved


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What a model is told about a tool: its name, description and JSON schema of arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Observation:
    """The result of one tool call, as the model will read it."""

    text: str
    is_error: bool = False
    detail: str | None = None  # internal detail for the trace; never shown to the model


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Everything the model may look at to make one decision. The history is a tuple: immutable."""

    goal: str
    today: date
    tools: tuple[ToolSpec, ...]
    history: tuple[Step, ...]
    deadline: float  # on the loop's monotonic clock; a model must not wait past it


@dataclass(frozen=True, slots=True)
class ModelReply:
    decision: CallTool | FinalAnswer
    usage: Usage = field(default_factory=Usage)


class ReasoningModel(Protocol):
    """Anything that can decide the next step: a real LLM provider or a scripted stand-in."""

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    def decide(self, request: ModelRequest) -> ModelReply: ...


class Toolbox(Protocol):
    """The tools a run may use. `invoke` never raises for a tool's own failure."""

    def specs(self) -> tuple[ToolSpec, ...]: ...

    def invoke(self, name: str, args: Mapping[str, Any]) -> Observation: ...


@dataclass(frozen=True, slots=True)
class Limits:
    """Circuit breakers for one run."""

    max_steps: int = 8
    timeout_s: float = 120.0


@dataclass(slots=True)
class _Run:
    """The mutable bookkeeping of one run, kept out of the history the model sees."""

    run_id: str
    limits: Limits
    clock: Callable[[], float]
    wall: Callable[[], float]
    started: float
    steps: int = 0
    usage: Usage = field(default_factory=Usage)

    @property
    def deadline(self) -> float:
        return self.started + self.limits.timeout_s

    def check_deadline(self) -> None:
        if self.clock() > self.deadline:
            raise RunTimedOut(self.limits.timeout_s)

    def elapsed_ms(self) -> float:
        return (self.clock() - self.started) * 1000

    def finish(
        self, status: RunStatus, *, answer: str | None = None, error: str | None = None
    ) -> RunFinished:
        return RunFinished(
            run_id=self.run_id,
            ts=self.wall(),
            status=status,
            answer=answer,
            steps=self.steps,
            usage=self.usage,
            elapsed_ms=self.elapsed_ms(),
            error=error,
        )


def run(
    goal: str,
    model: ReasoningModel,
    toolbox: Toolbox,
    *,
    limits: Limits | None = None,
    today: date | None = None,
    run_id: str | None = None,
    clock: Callable[[], float] = time.monotonic,
    wall: Callable[[], float] = time.time,
) -> Generator[Event, None, None]:
    """Run the loop on `goal`, yielding an event for everything that happens."""
    limits = limits or Limits()
    state = _Run(run_id or uuid.uuid4().hex, limits, clock, wall, started=clock())
    specs = toolbox.specs()
    today = today or date.today()
    try:
        yield RunStarted(
            run_id=state.run_id,
            ts=wall(),
            goal=goal,
            provider=model.provider,
            model=model.model,
            max_steps=limits.max_steps,
            timeout_s=limits.timeout_s,
            today=today.isoformat(),
            tools=tuple(spec.name for spec in specs),
        )
        answer = yield from _react(goal, model, toolbox, specs=specs, today=today, state=state)
    except KeyboardInterrupt:
        error = Interrupted()
        yield state.finish("interrupted", error=str(error))
        raise error from None
    except LimitReached as exc:
        # Every LimitReached subclass names a RunStatus (a test checks it).
        yield state.finish(cast(RunStatus, exc.status), error=str(exc))
        raise
    except AgentError as exc:
        yield state.finish("error", error=str(exc))
        raise
    yield state.finish("answered", answer=answer)


def _react(
    goal: str,
    model: ReasoningModel,
    toolbox: Toolbox,
    *,
    specs: tuple[ToolSpec, ...],
    today: date,
    state: _Run,
) -> Generator[Event, None, str]:
    history: tuple[Step, ...] = ()
    for number in range(1, state.limits.max_steps + 1):
        state.check_deadline()
        asked = state.clock()
        reply = model.decide(ModelRequest(goal, today, specs, history, state.deadline))
        state.steps = number
        state.usage += reply.usage
        yield ModelDecided(
            run_id=state.run_id,
            ts=state.wall(),
            step=number,
            decision=reply.decision,
            usage=reply.usage,
            latency_ms=(state.clock() - asked) * 1000,
        )
        match reply.decision:
            case FinalAnswer(answer=answer):
                return answer
            case CallTool() as call:
                state.check_deadline()
                step, event = _act(call, number, toolbox, state)
                yield event
                history = (*history, step)
            case _ as unreachable:
                assert_never(unreachable)
    raise MaxStepsExceeded(state.limits.max_steps)


def _act(call: CallTool, number: int, toolbox: Toolbox, state: _Run) -> tuple[Step, ToolObserved]:
    started = state.clock()
    observation = toolbox.invoke(call.tool, dict(call.args))
    event = ToolObserved(
        run_id=state.run_id,
        ts=state.wall(),
        step=number,
        tool=call.tool,
        args=dict(call.args),
        observation=observation.text,
        is_error=observation.is_error,
        duration_ms=(state.clock() - started) * 1000,
        detail=observation.detail,
    )
    return Step(number, call, observation.text, observation.is_error), event
