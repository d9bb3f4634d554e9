"""The observe-reason-act loop: the design's three essential tests, limits, events, interrupts."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from typing import Any

import pytest

from agent_cli.core.budget import Limits
from agent_cli.core.decisions import Usage
from agent_cli.core.events import ModelDecided, RunFinished, RunStarted, RunStatus, ToolObserved
from agent_cli.core.loop import run
from agent_cli.core.seams import ModelReply, ModelRequest, Observation, ToolSpec
from agent_cli.errors import (
    Interrupted,
    LimitReached,
    MaxStepsExceeded,
    RunTimedOut,
    ScriptExhausted,
)
from agent_cli.store.sqlite import OrderStore
from tests.helpers import TODAY, call, collect, final, registry, scripted_run


def test_observation_reaches_the_next_model_call(store: OrderStore) -> None:
    model, _ = scripted_run(store, call("lookup_order", order_code="A100"), final("yes"))
    first, second = model.requests
    assert first.history == ()
    assert len(second.history) == 1
    assert "status=DELIVERED" in second.history[0].observation
    assert second.history[0].call.tool == "lookup_order"


def test_max_steps_stops_a_model_that_never_answers(store: OrderStore) -> None:
    looping = [call("lookup_order", order_code=f"A10{n}") for n in range(10)]
    model, events = scripted_run(store, *looping, max_steps=3)
    assert len(model.requests) == 4  # three steps, then one tool-less call for an answer
    assert [r.final for r in model.requests] == [False, False, False, True]
    error = events[-1]
    assert isinstance(error, MaxStepsExceeded)
    assert "Max steps (3) exceeded" in str(error)
    finished = events[-2]
    assert isinstance(finished, RunFinished)
    assert (finished.status, finished.steps, finished.answer) == ("max_steps", 3, None)


def test_unknown_tool_becomes_an_error_observation(store: OrderStore) -> None:
    model, events = scripted_run(store, call("delete_everything"), final("sorry"))
    observed = [e for e in events if isinstance(e, ToolObserved)]
    assert observed[0].is_error
    assert observed[0].observation.startswith("ERROR: Unknown tool 'delete_everything'")
    assert "lookup_order, refund_policy" in observed[0].observation
    assert model.requests[1].history[0].is_error
    assert isinstance(events[-1], RunFinished) and events[-1].status == "answered"


def test_events_come_in_order_with_one_run_id(store: OrderStore) -> None:
    _, events = scripted_run(
        store, call("lookup_order", order_code="A100"), call("refund_policy"), final("ok")
    )
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "RunStarted",
        "ModelDecided",
        "ToolObserved",
        "ModelDecided",
        "ToolObserved",
        "ModelDecided",
        "RunFinished",
    ]
    assert len({e.run_id for e in events}) == 1  # type: ignore[attr-defined]
    started, finished = events[0], events[-1]
    assert isinstance(started, RunStarted) and started.tools == ("lookup_order", "refund_policy")
    assert isinstance(finished, RunFinished)
    assert (finished.status, finished.answer, finished.steps) == ("answered", "ok", 3)
    assert [e.step for e in events if isinstance(e, ModelDecided)] == [1, 2, 3]


def test_history_handed_to_the_model_is_immutable(store: OrderStore) -> None:
    model, _ = scripted_run(
        store, call("lookup_order", order_code="A100"), call("refund_policy"), final("ok")
    )
    history = model.requests[2].history
    assert isinstance(history, tuple)
    with pytest.raises(AttributeError):
        history[0].observation = "tampered"  # type: ignore[misc]
    assert len(model.requests[1].history) == 1  # later steps did not grow an earlier view


def test_model_error_is_recorded_then_raised(store: OrderStore) -> None:
    _, events = scripted_run(store, call("refund_policy"))
    assert isinstance(events[-1], ScriptExhausted)
    finished = events[-2]
    assert isinstance(finished, RunFinished)
    assert finished.status == "error"
    assert finished.error is not None and "ran out after 1 decisions" in finished.error


class _SlowClock:
    """A monotonic clock that advances 10 s every time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 10.0
        return self.now


def test_timeout_ends_the_run_with_status_timeout(store: OrderStore) -> None:
    from agent_cli.providers.scripted import ScriptedModel

    model = ScriptedModel([call("refund_policy")] * 5)
    events = collect(
        run(
            "q",
            model,
            registry(store),
            limits=Limits(max_steps=8, timeout_s=25.0),
            today=TODAY,
            clock=_SlowClock(),
        )
    )
    assert isinstance(events[-1], RunTimedOut)
    assert "timed out after 25 s" in str(events[-1])
    finished = events[-2]
    assert isinstance(finished, RunFinished) and finished.status == "timeout"


def test_model_is_given_the_deadline_and_today(store: OrderStore) -> None:
    model, _ = scripted_run(store, final("ok"))
    request = model.requests[0]
    assert request.today == TODAY
    assert request.deadline > 0
    assert [t.name for t in request.tools] == ["lookup_order", "refund_policy"]


class _InterruptingModel:
    provider = "test"
    model = "interrupt"

    def decide(self, request: ModelRequest) -> ModelReply:
        if request.history:
            raise KeyboardInterrupt
        return ModelReply(call("refund_policy"), usage=Usage(10, 5))


def test_ctrl_c_during_a_model_call_is_recorded_as_interrupted(store: OrderStore) -> None:
    events = collect(run("q", _InterruptingModel(), registry(store), today=TODAY))
    assert isinstance(events[-1], Interrupted)
    finished = events[-2]
    assert isinstance(finished, RunFinished)
    assert (finished.status, finished.steps) == ("interrupted", 2)  # step 2 had begun
    assert finished.usage == Usage(10, 5)


def test_ctrl_c_thrown_in_while_an_event_is_consumed(store: OrderStore) -> None:
    from agent_cli.providers.scripted import ScriptedModel

    events = run("q", ScriptedModel([call("refund_policy"), final("x")]), registry(store))
    assert isinstance(next(events), RunStarted)
    finished = events.throw(KeyboardInterrupt())
    assert isinstance(finished, RunFinished) and finished.status == "interrupted"
    with pytest.raises(Interrupted):
        next(events)


class _ExplodingToolbox:
    def specs(self) -> tuple[ToolSpec, ...]:
        return ()

    def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float = 0.0) -> Observation:
        return Observation("ERROR: boom", is_error=True, detail="secret path /srv/db")


def test_observation_detail_goes_to_the_event_not_the_model() -> None:
    from agent_cli.providers.scripted import ScriptedModel

    model = ScriptedModel([call("x"), final("done")])
    events = collect(run("q", model, _ExplodingToolbox(), today=TODAY))
    observed = next(e for e in events if isinstance(e, ToolObserved))
    assert observed.detail == "secret path /srv/db"
    assert "secret" not in model.requests[1].history[0].observation


def test_every_limit_status_is_a_run_status() -> None:
    from typing import get_args

    for limit in LimitReached.__subclasses__():
        assert limit.status in get_args(RunStatus)


def test_the_loop_imports_no_typer_rich_or_httpx() -> None:
    code = (
        "import sys, agent_cli.core.loop, agent_cli.tools.orders, agent_cli.providers.playbook;"
        "bad = [m for m in ('typer', 'rich', 'httpx', 'click') if m in sys.modules];"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_a_reply_is_one_final_answer_or_tool_calls() -> None:
    with pytest.raises(ValueError, match="at least one decision"):
        ModelReply()
    with pytest.raises(ValueError, match="only decision"):
        ModelReply(call("refund_policy"), final("x"))


class _ParallelModel:
    provider = "test"
    model = "parallel"

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def decide(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        if request.history:
            return ModelReply(final("done"))
        return ModelReply(
            call("lookup_order", order_code="A100"), call("lookup_order", order_code="A101")
        )


def test_parallel_calls_share_a_step_and_all_reach_the_history(store: OrderStore) -> None:
    model = _ParallelModel()
    events = collect(run("q", model, registry(store), today=TODAY))
    observed = [e for e in events if isinstance(e, ToolObserved)]
    assert [e.step for e in observed] == [1, 1]
    history = model.requests[1].history
    assert [s.number for s in history] == [1, 1]
    assert "A101" in history[1].observation
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.steps == 2


class _MalformedThenFine:
    provider = "test"
    model = "malformed"

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def decide(self, request: ModelRequest) -> ModelReply:
        from agent_cli.errors import MalformedReply

        self.requests.append(request)
        if not request.history:
            raise MalformedReply("no JSON", raw="hello", usage=Usage(5, 1))
        return ModelReply(final("ok"), usage=Usage(5, 1))


def test_a_malformed_reply_becomes_a_history_entry_and_a_repair_event(store: OrderStore) -> None:
    from agent_cli.core.events import RepairRequested

    model = _MalformedThenFine()
    events = collect(run("q", model, registry(store), today=TODAY))
    (repair,) = [e for e in events if isinstance(e, RepairRequested)]
    assert (repair.cause, repair.problem, repair.repairs) == ("reply", "no JSON", 1)
    (entry,) = model.requests[1].history
    assert (entry.call, entry.reply, entry.is_error) == (None, "hello", True)
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.usage == Usage(10, 2)


class _Late:
    provider = "test"
    model = "late"

    def decide(self, request: ModelRequest) -> ModelReply:
        from agent_cli.core.seams import DeadlineExceeded, ModelCall

        request.on_call(ModelCall(1, None, 1000.0, error="ReadTimeout"))
        raise DeadlineExceeded


def test_a_model_past_the_deadline_ends_the_run_as_timeout(store: OrderStore) -> None:
    from agent_cli.core.events import ModelCalled

    events = collect(run("q", _Late(), registry(store), limits=Limits(timeout_s=7), today=TODAY))
    assert isinstance(events[-1], RunTimedOut)
    assert any(isinstance(e, ModelCalled) and e.error == "ReadTimeout" for e in events)
    finished = events[-2]
    assert isinstance(finished, RunFinished) and finished.status == "timeout"


class _ManualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_time_a_person_takes_to_answer_does_not_count_against_the_timeout(
    store: OrderStore,
) -> None:
    from agent_cli.core.decisions import AskUser
    from agent_cli.core.events import QuestionAsked
    from agent_cli.providers.scripted import ScriptedModel

    clock = _ManualClock()
    model = ScriptedModel([AskUser(question="Which order?"), call("refund_policy"), final("ok")])
    events = run("q", model, registry(store), limits=Limits(timeout_s=30), clock=clock)
    event = next(events)
    while not isinstance(event, QuestionAsked):
        event = next(events)
    clock.now += 600  # the operator went for coffee
    rest = [events.send("A100"), *events]
    finished = rest[-1]
    assert isinstance(finished, RunFinished) and finished.status == "answered"


@pytest.mark.parametrize("steps", [4, 32])
def test_each_step_of_the_history_is_measured_once_however_long_the_run(
    store: OrderStore, monkeypatch: pytest.MonkeyPatch, steps: int
) -> None:
    """Loop work per model call stays flat as the run grows: a counter, not a timer."""
    from agent_cli.core import budget

    measured: list[int] = []
    real = budget._size
    monkeypatch.setattr(budget, "_size", lambda step: measured.append(step.number) or real(step))
    lookups = [call("lookup_order", order_code=f"Z{n:03d}") for n in range(steps)]
    model, events = scripted_run(store, *lookups, final("done"), max_steps=steps + 1)
    assert isinstance(events[-1], RunFinished) and events[-1].status == "answered"
    assert len(model.requests) == steps + 1
    assert sorted(measured) == list(range(1, steps + 1))  # once per step, not once per call
