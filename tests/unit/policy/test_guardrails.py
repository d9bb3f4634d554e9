"""Limits that cannot be talked around, bounded history, and traces that survive."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_cli.core.budget import Limits, Price
from agent_cli.core.decisions import AskUser
from agent_cli.core.events import RunFinished, ToolObserved
from agent_cli.core.loop import run
from agent_cli.core.seams import Observation, ToolSpec
from agent_cli.errors import NoProgress
from agent_cli.providers.scripted import ScriptedModel
from agent_cli.store.samples import SAMPLE_ORDERS
from agent_cli.store.sqlite import OrderStore
from tests.fakellm import FakeLLM, Reply, openai_calls, openai_text
from tests.helpers import TODAY, call, collect, converse, final, json_lines, registry

KEY = "sk-test-0123456789abcdef"


def test_a_call_made_again_after_the_customer_answered_is_not_a_loop() -> None:
    """A change proposed, a "no", proposed again, a "yes", made: the same call three times,
    each after the customer said something; only calls with no answer between them repeat."""
    lookup = call("lookup_order", order_code="A100")
    asked, again = AskUser(question="Shall I?"), AskUser(question="Then?")
    model = ScriptedModel([lookup, asked, lookup, again, lookup, final("ok")])
    store = OrderStore.in_memory(SAMPLE_ORDERS)
    events = converse(
        run("A100?", model, registry(store), limits=Limits(max_steps=8), today=TODAY), "no", "yes"
    )
    observed = [e.observation for e in events if isinstance(e, ToolObserved)]
    assert len(observed) == 5
    assert not any(text.startswith("ERROR: repeated call") for text in observed), observed
    assert [e.status for e in events if isinstance(e, RunFinished)] == ["answered"]


def test_two_identical_calls_in_a_row_and_one_round_of_a_cycle_are_allowed() -> None:
    model = ScriptedModel(
        [
            call("refund_policy"),
            call("refund_policy"),
            call("lookup_order", order_code="A100"),
            call("refund_policy"),
            final("ok"),
        ]
    )
    events = collect(
        run("A100?", model, registry(OrderStore.in_memory(SAMPLE_ORDERS)), today=TODAY)
    )
    observed = [e.observation for e in events if isinstance(e, ToolObserved)]
    assert len(observed) == 4 and not any(text.startswith("ERROR") for text in observed)


class _Flood:
    """A toolbox whose one tool returns a huge observation."""

    def __init__(self, size: int) -> None:
        self.size = size

    def specs(self) -> tuple[ToolSpec, ...]:
        return (ToolSpec("dump", "d", {}),)

    def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float = 0.0) -> Observation:
        return Observation(str(args.get("n", "")) + "x" * self.size)


def test_a_huge_observation_is_cut_with_a_marker() -> None:
    model = ScriptedModel([call("dump"), final("ok")])
    events = collect(
        run("q", model, _Flood(1_000_000), limits=Limits(max_observation_chars=2_000), today=TODAY)
    )
    observed = next(e for e in events if isinstance(e, ToolObserved))
    assert len(observed.observation) < 2_100
    assert observed.observation.endswith("[... 998,000 more characters cut]")
    assert model.requests[1].history[0].observation == observed.observation


def test_old_observations_are_elided_first_newest_stay_whole() -> None:
    model = ScriptedModel([call("dump", n=i) for i in range(6)] + [final("ok")])
    limits = Limits(max_steps=10, max_observation_chars=4_000, history_tokens=2_500)
    collect(run("the goal", model, _Flood(3_000), limits=limits, today=TODAY))
    last = model.requests[-1]
    assert last.goal == "the goal"
    shown = [step.observation for step in last.history]
    assert shown[0].startswith("[elided to keep the history short: 3,001 characters]")
    assert shown[-1].startswith("5x") and shown[-2].startswith("4x")  # the newest, whole
    assert sum(len(text) for text in shown) <= 2_500 * 4


def test_price_arithmetic() -> None:
    from agent_cli.core.decisions import Usage

    assert Price(0.15, 0.60).of(Usage(1_000_000, 500_000)) == pytest.approx(0.45)


def test_limit_errors_name_a_run_status() -> None:
    assert NoProgress.status == "no_progress"


def spawn_agent(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agent_cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )


def wait_for(condition: Any, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def start_a_slow_run(fake_llm: FakeLLM, trace: Path) -> subprocess.Popen[str]:
    """`agent ask` in its own process, one step done, waiting on a reply that takes 20 s."""
    fake_llm.queue(openai_calls(("refund_policy", {})), Reply(body=openai_text("late"), delay=20))
    process = ask_over_openai(fake_llm, trace)
    wait_for(lambda: len(fake_llm.requests) == 2)
    return process


def ask_over_openai(fake_llm: FakeLLM, trace: Path) -> subprocess.Popen[str]:
    """`agent ask q` in its own process, over the fake server, its trace written to `trace`."""
    return spawn_agent(
        "ask",
        "q",
        "--provider",
        "openai",
        "--base-url",
        fake_llm.url,
        "--trace",
        str(trace),
        env={"OPENAI_API_KEY": KEY},
    )


def test_sigterm_during_a_slow_response_is_recorded_and_exits_143(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    trace = tmp_path / "t.jsonl"
    process = start_a_slow_run(fake_llm, trace)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 143
    assert "Terminated (SIGTERM)" in stderr and "Traceback" not in stderr
    lines = json_lines(trace.read_text())
    assert lines[-1]["event"] == "run_finished"
    assert lines[-1]["status"] == "interrupted"
    assert any(r["event"] == "observation" for r in lines)


def test_a_killed_run_leaves_only_complete_lines(fake_llm: FakeLLM, tmp_path: Path) -> None:
    from agent_cli.record.tracing import read_trace

    trace = tmp_path / "t.jsonl"
    process = start_a_slow_run(fake_llm, trace)
    process.kill()
    process.wait(timeout=60)
    warnings: list[str] = []
    kept = list(read_trace(trace, warn=warnings.append))
    assert [r["event"] for r in kept] == ["run_started", "model_call", "decision", "observation"]
    assert warnings == []
    assert trace.read_text().endswith("\n")


def test_two_runs_on_one_trace_file_never_interleave_inside_a_line(tmp_path: Path) -> None:
    trace = tmp_path / "shared.jsonl"
    question = "Are " + ", ".join(f"A10{n}" for n in range(6)) + " refundable?"
    runs = [
        spawn_agent(
            "ask", question, "--dry-run", "--max-steps", "20", "--trace", str(trace), env={}
        )
        for _ in range(4)
    ]
    for process in runs:
        process.communicate(timeout=60)
        assert process.returncode == 0
    lines = json_lines(trace.read_text())  # every line parses
    by_run: dict[str, list[str]] = {}
    for line in lines:
        by_run.setdefault(line["run_id"], []).append(line["event"])
    assert len(by_run) == 4
    assert all(
        events[0] == "run_started" and events[-1] == "run_finished" for events in by_run.values()
    )


def test_ctrl_c_during_a_retry_wait_stops_at_once(fake_llm: FakeLLM, tmp_path: Path) -> None:
    from tests.fakellm import error

    fake_llm.queue(error(503, "busy", headers={"retry-after": "30"}))
    trace = tmp_path / "t.jsonl"
    process = ask_over_openai(fake_llm, trace)
    wait_for(lambda: len(fake_llm.requests) == 1)
    time.sleep(0.5)  # now sleeping in the 30 s retry wait
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert time.monotonic() - started < 20  # at once, not after the 30 s wait
    assert process.returncode == 130
    assert "Interrupted" in stderr and "Traceback" not in stderr
    lines = json_lines(trace.read_text())
    assert any(r["event"] == "model_call" and r["retry_in_s"] == 30 for r in lines)
    assert lines[-1]["event"] == "run_finished" and lines[-1]["status"] == "interrupted"


def test_the_newest_two_steps_are_never_elided_however_small_the_budget() -> None:
    model = ScriptedModel([call("dump", n=i) for i in range(5)] + [final("ok")])
    limits = Limits(max_steps=10, max_observation_chars=4_000, history_tokens=1)
    collect(run("the goal", model, _Flood(3_000), limits=limits, today=TODAY))
    shown = [step.observation for step in model.requests[-1].history]
    assert all(text.startswith("[elided") for text in shown[:3]), shown
    assert shown[3] == "3" + "x" * 3_000 and shown[4] == "4" + "x" * 3_000


class _Slow:
    """A toolbox whose `slow` tool moves the run's clock past any deadline."""

    def __init__(self, now: list[float], takes: float = 1_000.0) -> None:
        self.now = now
        self.takes = takes
        self.called: list[str] = []

    def specs(self) -> tuple[ToolSpec, ...]:
        return (ToolSpec("slow", "s", {}), ToolSpec("fast", "f", {}))

    def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float = 0.0) -> Observation:
        self.called.append(name)
        if name == "slow":
            self.now[0] += self.takes
        return Observation(f"{name} done")


def test_calls_of_one_reply_stop_once_the_deadline_has_passed() -> None:
    from agent_cli.core.events import RunFinished
    from agent_cli.core.seams import ModelReply, ModelRequest
    from agent_cli.errors import RunTimedOut

    class ThreeCalls:
        provider, model = "test", "three"

        def decide(self, request: ModelRequest) -> ModelReply:
            return ModelReply(call("fast"), call("slow"), call("fast", n=2))

    now = [0.0]
    tools = _Slow(now)
    events = collect(
        run(
            "q", ThreeCalls(), tools, limits=Limits(timeout_s=60), today=TODAY, clock=lambda: now[0]
        )
    )
    assert tools.called == ["fast", "slow"]  # the third call of the reply never ran
    assert isinstance(events[-1], RunTimedOut)
    finished = events[-2]
    assert isinstance(finished, RunFinished) and finished.status == "timeout"


class _Leaky:
    """A toolbox whose failure carries secrets in its internal detail."""

    def specs(self) -> tuple[ToolSpec, ...]:
        return (ToolSpec("crm", "c", {}),)

    def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float = 0.0) -> Observation:
        detail = (
            "connect postgresql://admin:s3cret-pw@db/shop failed; password=hunter2 sk-abcdef123456"
        )
        return Observation("ERROR: the CRM failed", is_error=True, detail=detail)


def test_the_loop_masks_a_tools_detail_whatever_the_tool_did() -> None:
    model = ScriptedModel([call("crm"), final("ok")])
    events = collect(run("q", model, _Leaky(), limits=Limits(), today=TODAY))
    (observed,) = [e for e in events if isinstance(e, ToolObserved)]
    assert observed.detail is not None and "postgresql://admin:***@db/shop" in observed.detail
    for secret in ("s3cret-pw", "hunter2", "abcdef123456"):
        assert secret not in observed.detail


def test_a_run_ends_as_soon_as_its_deadline_passes_not_later() -> None:
    from agent_cli.errors import RunTimedOut

    now = [0.0]
    tools = _Slow(now, takes=60.5)  # half a second past the 60 s timeout
    model = ScriptedModel([call("slow"), call("fast"), final("done")])
    limits = Limits(timeout_s=60)
    events = collect(run("q", model, tools, limits=limits, today=TODAY, clock=lambda: now[0]))
    assert tools.called == ["slow"] and len(model.requests) == 1
    assert isinstance(events[-1], RunTimedOut)


@pytest.mark.parametrize(("size", "whole"), [(2_000, True), (2_001, False)])
def test_an_observation_is_cut_only_past_its_limit(size: int, whole: bool) -> None:
    model = ScriptedModel([call("dump"), final("ok")])
    limits = Limits(max_observation_chars=2_000)
    events = collect(run("q", model, _Flood(size), limits=limits, today=TODAY))
    observed = next(e for e in events if isinstance(e, ToolObserved))
    if whole:
        assert observed.observation == "x" * 2_000
    else:
        assert observed.observation == "x" * 2_000 + "\n[... 1 more characters cut]"


@pytest.mark.parametrize(
    ("signals", "gap_s", "code"),
    [
        ((signal.SIGINT, signal.SIGINT), 0.0, 130),
        ((signal.SIGINT, signal.SIGINT), 0.005, 130),
        ((signal.SIGINT, signal.SIGINT, signal.SIGINT, signal.SIGINT), 0.001, 130),
        ((signal.SIGINT, signal.SIGTERM), 0.005, 143),
        ((signal.SIGTERM, signal.SIGINT), 0.005, 143),
    ],
)
def test_signals_in_quick_succession_leave_exactly_one_end_record(
    fake_llm: FakeLLM, tmp_path: Path, signals: tuple[int, ...], gap_s: float, code: int
) -> None:
    """The first signal ends the run; the rest wait until its end record is written."""
    trace = tmp_path / "t.jsonl"
    process = start_a_slow_run(fake_llm, trace)
    mixed = len(set(signals)) > 1
    if mixed:
        # A SIGTERM sent after the process exited 130 would change nothing: on a busy machine
        # the gap can outlast the whole ending. Sent while the process is stopped, every signal
        # is pending when it continues (a repeated one would merge: only mixed ones are).
        process.send_signal(signal.SIGSTOP)
    for number in signals:
        process.send_signal(number)
        time.sleep(gap_s)
    if mixed:
        process.send_signal(signal.SIGCONT)
    _, stderr = process.communicate(timeout=60)
    assert "Traceback" not in stderr
    # A signal after the interpreter began to exit kills it: a shell reports 128 + the signal,
    # the code the agent exits with itself.
    assert process.returncode in (code, 128 - code), stderr
    kinds = [r["event"] for r in json_lines(trace.read_text())]
    assert kinds.count("run_finished") == 1 and kinds[-1] == "run_finished"
    assert json_lines(trace.read_text())[-1]["status"] == "interrupted"
