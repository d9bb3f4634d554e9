"""Limits that cannot be talked around, bounded history, and traces that survive."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.core.budget import Limits, Price
from agent_cli.core.decisions import AskUser
from agent_cli.core.events import RunFinished, ToolObserved
from agent_cli.core.loop import run
from agent_cli.core.seams import Observation, ToolSpec
from agent_cli.errors import NoProgress
from agent_cli.providers.scripted import ScriptedModel
from agent_cli.store.samples import SAMPLE_ORDERS
from agent_cli.store.sqlite import OrderStore
from tests.fakellm import FakeLLM, Reply, anthropic_calls, anthropic_text, openai_calls, openai_text
from tests.helpers import TODAY, call, collect, converse, final, registry

runner = CliRunner()
KEY = "sk-test-0123456789abcdef"


def records(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def write_script(tmp_path: Path, decisions: list[dict[str, Any]]) -> str:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(decisions))
    return str(path)


LOOKUP = {"type": "tool", "tool": "lookup_order", "args": {"order_code": "A100"}}


def test_the_same_call_three_times_is_refused_then_the_run_stops(tmp_path: Path) -> None:
    script = write_script(tmp_path, [LOOKUP] * 6)
    result = runner.invoke(app, ["ask", "A100?", "--script", script, "--json"])
    assert result.exit_code == 3
    assert (
        "No progress: the model called lookup_order with the same arguments 4 times"
        in result.stderr
    )
    observed = [r["observation"] for r in records(result.stdout) if r["event"] == "observation"]
    assert len(observed) == 3
    assert observed[2].startswith("ERROR: repeated call: lookup_order with the same arguments 3")
    done = records(result.stdout)[-1]
    assert done["status"] == "no_progress"
    assert done["findings"][0]["tool"] == "lookup_order"
    assert "status=DELIVERED" in done["findings"][0]["observation"]


POLICY = {"type": "tool", "tool": "refund_policy", "args": {}}


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


def test_an_alternating_cycle_is_refused_then_the_run_stops(tmp_path: Path) -> None:
    script = write_script(tmp_path, [LOOKUP, POLICY] * 4)
    result = runner.invoke(app, ["ask", "A100?", "--script", script, "--json"])
    assert result.exit_code == 3
    observed = [r["observation"] for r in records(result.stdout) if r["event"] == "observation"]
    assert len(observed) == 4  # A, B, A run; the B closing the second round is refused
    assert "status=DELIVERED" in observed[2]
    assert observed[3].startswith(
        "ERROR: repeated call: the same 2 calls (lookup_order, refund_policy) in a cycle"
    )
    assert "went round the same calls (refund_policy, lookup_order) for 5 calls" in result.stderr
    assert records(result.stdout)[-1]["status"] == "no_progress"


def test_a_cycle_of_three_is_caught_and_other_arguments_break_it(tmp_path: Path) -> None:
    other = {"type": "tool", "tool": "lookup_order", "args": {"order_code": "A101"}}
    cycle = write_script(tmp_path, [LOOKUP, POLICY, other] * 2 + [final_decision("done")])
    observed = observations(cycle)
    assert observed[-1].startswith("ERROR: repeated call: the same 3 calls")
    varied = write_script(tmp_path, [LOOKUP, POLICY, other, POLICY] * 2 + [final_decision("ok")])
    assert not any(text.startswith("ERROR") for text in observations(varied, "--max-steps", "9"))


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


def final_decision(answer: str) -> dict[str, Any]:
    return {"type": "final", "answer": answer}


def observations(script: str, *args: str) -> list[str]:
    result = runner.invoke(app, ["ask", "A100?", "--script", script, "--json", *args])
    return [r["observation"] for r in records(result.stdout) if r["event"] == "observation"]


def test_at_a_step_limit_one_tool_less_call_gives_an_incomplete_answer() -> None:
    result = runner.invoke(
        app,
        ["ask", "Is A100 refundable?", "--dry-run", "--max-steps", "1", "--today", "2026-10-13"],
    )
    assert result.exit_code == 3
    assert "Incomplete answer (max_steps)" in result.stdout
    assert "I could not check order A100: the refund policy could not be read" in result.stdout
    assert "Max steps (1) exceeded" in result.stderr


def test_the_answer_at_a_limit_can_be_turned_off(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[limits]\nanswer_at_limit = false\n")
    result = runner.invoke(
        app, ["ask", "A100?", "--dry-run", "--max-steps", "1", "--json", "--config", str(config)]
    )
    done = records(result.stdout)[-1]
    assert (done["answer"], done["incomplete"]) == (None, False)
    assert done["findings"] and done["findings"][0]["args"] == {"order_code": "A100"}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_last_call_sends_no_usable_tools(fake_llm: FakeLLM, provider: str) -> None:
    if provider == "openai":
        fake_llm.queue(
            openai_calls(("lookup_order", {"order_code": "A100"})),
            openai_text("Best guess: I cannot tell yet about order A100."),
        )
        base = fake_llm.url + "/v1"
    else:
        fake_llm.queue(
            anthropic_calls(("lookup_order", {"order_code": "A100"})),
            anthropic_text("Best guess: I cannot tell yet about order A100."),
        )
        base = fake_llm.url
    variable = "OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY"
    result = runner.invoke(
        app,
        ["ask", "A100?", "--provider", provider, "--base-url", base, "--max-steps", "1", "--json"],
        env={variable: KEY},
    )
    assert result.exit_code == 3
    done = records(result.stdout)[-1]
    assert (done["status"], done["answer"], done["incomplete"]) == (
        "max_steps",
        "Best guess: I cannot tell yet about order A100.",
        True,
    )
    last = fake_llm.bodies()[-1]
    assert last["tool_choice"] in ("none", {"type": "none"})
    assert "step limit is reached" in json.dumps(last["messages"][-1])
    assert fake_llm.violations == []


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


def test_a_cost_budget_stops_before_an_expensive_request(fake_llm: FakeLLM, tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[prices."gpt-4o-mini"]\ninput = 1.0\noutput = 2.0\n')
    fake_llm.queue(
        openai_calls(("refund_policy", {}), usage=(400_000, 10_000)), openai_text("never")
    )
    result = runner.invoke(
        app,
        [
            "ask",
            "q",
            "--provider",
            "openai",
            "--base-url",
            fake_llm.url,
            "--max-cost",
            "0.5",
            "--config",
            str(config),
            "--json",
        ],
        env={"OPENAI_API_KEY": KEY},
    )
    assert result.exit_code == 3
    assert "Cost budget (0.5000) would be exceeded: 0.4200 spent so far" in result.stderr
    done = records(result.stdout)[-1]
    assert done["status"] == "cost_budget" and done["cost"] == 0.42
    assert len(fake_llm.requests) == 1


def test_a_cost_budget_needs_a_price() -> None:
    result = runner.invoke(app, ["ask", "q", "--dry-run", "--max-cost", "1"])
    assert result.exit_code == 2
    assert "--max-cost needs a price for model 'playbook'" in result.stderr


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
    process = spawn_agent(
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
    wait_for(lambda: len(fake_llm.requests) == 2)
    return process


def test_sigterm_during_a_slow_response_is_recorded_and_exits_143(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    trace = tmp_path / "t.jsonl"
    process = start_a_slow_run(fake_llm, trace)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 143
    assert "Terminated (SIGTERM)" in stderr and "Traceback" not in stderr
    lines = records(trace.read_text())
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


def test_trace_files_are_fsynced_at_step_boundaries(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    trace = tmp_path / "t.jsonl"
    question = "Is A100 refundable?"
    result = runner.invoke(app, ["ask", question, "--dry-run", "--trace", str(trace)])
    assert result.exit_code == 0, result.output
    kinds = [r["event"] for r in records(trace.read_text())]
    assert len(synced) == kinds.count("observation") + kinds.count("run_finished") == 3


def test_a_full_disk_is_refused_before_the_first_model_call(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_cli.commands import ask as commands
    from tests.unit.record.test_trace_disk import FillingDisk

    full = lambda path: FillingDisk(path, b"run_started", short=False)  # noqa: E731
    monkeypatch.setattr(commands, "open_trace_file", full)
    trace = str(tmp_path / "t.jsonl")
    result = runner.invoke(
        app,
        ["ask", "q", "--provider", "openai", "--base-url", fake_llm.url, "--trace", trace],
        env={"OPENAI_API_KEY": KEY},
    )
    assert result.exit_code == 2
    assert "Cannot write the trace: No space left on device" in result.stderr
    assert fake_llm.requests == []


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_device_is_no_trace_file() -> None:
    result = runner.invoke(app, ["ask", "q", "--dry-run", "--trace", "/dev/full"])
    assert result.exit_code == 2
    assert "/dev/full: not a regular file (a FIFO or a device)" in result.stderr


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
    lines = records(trace.read_text())  # every line parses
    by_run: dict[str, list[str]] = {}
    for line in lines:
        by_run.setdefault(line["run_id"], []).append(line["event"])
    assert len(by_run) == 4
    assert all(
        events[0] == "run_started" and events[-1] == "run_finished" for events in by_run.values()
    )


def test_a_context_too_large_error_is_not_retried_and_says_why(fake_llm: FakeLLM) -> None:
    from tests.fakellm import error

    fake_llm.queue(
        error(
            400,
            "This model's maximum context length is 128000 tokens.",
            type_="invalid_request_error",
            code="context_length_exceeded",
        )
    )
    result = runner.invoke(
        app,
        ["ask", "q", "--provider", "openai", "--base-url", fake_llm.url],
        env={"OPENAI_API_KEY": KEY},
    )
    assert result.exit_code == 1
    assert "the conversation is too long for this model" in result.stderr
    assert len(fake_llm.requests) == 1


def test_ctrl_c_during_a_retry_wait_stops_at_once(fake_llm: FakeLLM, tmp_path: Path) -> None:
    from tests.fakellm import error

    fake_llm.queue(error(503, "busy", headers={"retry-after": "30"}))
    trace = tmp_path / "t.jsonl"
    process = spawn_agent(
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
    wait_for(lambda: len(fake_llm.requests) == 1)
    time.sleep(0.5)  # now sleeping in the 30 s retry wait
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert time.monotonic() - started < 20  # at once, not after the 30 s wait
    assert process.returncode == 130
    assert "Interrupted" in stderr and "Traceback" not in stderr
    lines = records(trace.read_text())
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
    kinds = [r["event"] for r in records(trace.read_text())]
    assert kinds.count("run_finished") == 1 and kinds[-1] == "run_finished"
    assert records(trace.read_text())[-1]["status"] == "interrupted"


def test_a_signal_caught_as_its_handler_is_set_to_ignore_it_is_not_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SIGINT and SIGTERM at once, on a busy machine: one landed between CPython's check and the
    SIG_IGN set as the run ended, and CPython printed "Signal 2 ignored due to race condition"
    with a traceback under the agent's one-line error (seen once under tests/stress.sh)."""
    from types import SimpleNamespace

    reported: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    runner.invoke(app, ["tools"])  # the boundary installs the filter, once however many commands
    runner.invoke(app, ["tools"])
    race = SimpleNamespace(exc_value=OSError("Signal 2 ignored due to race condition"))
    other = SimpleNamespace(exc_value=OSError("Signal 2 ignored, and something else"))
    broken = SimpleNamespace(exc_value=ValueError("Signal 15 ignored due to race condition"))
    for report in (race, other, broken):
        sys.unraisablehook(report)
    assert reported == [other, broken]
    assert getattr(sys.unraisablehook, "previous", None) == reported.append
