"""Traces read back: every event round-trips, and `agent replay` shows what `agent ask` showed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.core.decisions import AskUser, CallTool, FinalAnswer, Usage
from agent_cli.core.events import (
    EVENT_TYPES,
    ApprovalDecided,
    ApprovalRequested,
    Event,
    ModelCalled,
    ModelDecided,
    QuestionAsked,
    QueueDecided,
    RepairRequested,
    RunFinished,
    RunStarted,
    ToolObserved,
)
from agent_cli.record.replay import event_from_record
from agent_cli.record.tracing import event_record

runner = CliRunner()
STAMP = {"run_id": "r1", "ts": 1_790_000_000.25}

SAMPLES: list[Event] = [
    RunStarted(
        **STAMP,
        goal="q",
        provider="openai",
        model="m",
        max_steps=8,
        timeout_s=120.0,
        today="2026-10-13",
        tools=("lookup_order",),
        remembered_turns=1,
    ),
    ModelCalled(
        **STAMP, step=1, attempt=1, status=503, latency_ms=12.5, retry_in_s=0.5, error="HTTP 503"
    ),
    ModelDecided(
        **STAMP,
        step=1,
        decision=CallTool(tool="lookup_order", args={"order_code": "A1"}, call_id="c1"),
        usage=Usage(3, 4),
        latency_ms=1.5,
    ),
    ModelDecided(**STAMP, step=2, decision=AskUser(question="Which?")),
    ModelDecided(**STAMP, step=3, decision=FinalAnswer(answer="Yes.")),
    RepairRequested(**STAMP, step=1, problem="bad", repairs=1, cause="reply"),
    QuestionAsked(**STAMP, step=2, question="Which?"),
    ApprovalRequested(**STAMP, step=2, tool="issue_refund", args={"amount": 5}, summary="refund"),
    ApprovalDecided(**STAMP, step=2, tool="issue_refund", approved=False, by="rule", reason="no"),
    ApprovalDecided(
        **STAMP,
        step=2,
        tool="issue_refund",
        approved=False,
        by="policy",
        reason="rule 'r': queue",
        queued=7,
        rule="r",
    ),
    QueueDecided(**STAMP, item=7, status="approved", decided_by="lead", outcome="ok", refund_id=3),
    ToolObserved(
        **STAMP,
        step=1,
        tool="t",
        args={},
        observation="o",
        is_error=False,
        duration_ms=0.5,
        detail=None,
    ),
    RunFinished(
        **STAMP,
        status="max_steps",
        answer="Maybe.",
        steps=8,
        usage=Usage(1, 2),
        elapsed_ms=99.5,
        error="Max steps (8) exceeded",
        cost=0.01,
        incomplete=True,
        findings=[{"step": 1, "tool": "t", "args": {}, "observation": "o"}],
    ),
]


def test_every_kind_of_event_is_sampled() -> None:
    assert {type(e) for e in SAMPLES} == set(EVENT_TYPES.values())


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: type(e).__name__)
def test_every_event_round_trips_through_its_record(event: Event) -> None:
    record = json.loads(json.dumps(event_record(event)))
    assert event_from_record(record) == event


def test_unknown_kinds_are_passed_over_and_malformed_ones_refused() -> None:
    assert event_from_record({"event": "from_the_future", "run_id": "r", "ts": "x"}) is None
    with pytest.raises(ValueError):
        event_from_record(
            {"event": "observation", "run_id": "r", "ts": "2026-01-01T00:00:00+00:00"}
        )


def normalised(text: str) -> str:
    return re.sub(r"\d+ ms", "N ms", text)


def test_replay_shows_what_ask_showed(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    live = runner.invoke(
        app,
        [
            "ask",
            "Are A100 and A101 refundable?",
            "--dry-run",
            "--today",
            "2026-10-13",
            "--trace",
            str(trace),
        ],
    )
    again = runner.invoke(app, ["replay", str(trace)])
    assert again.exit_code == 0, again.stderr
    header, *shown = again.stdout.splitlines(keepends=True)
    assert header.startswith("── run ") and "· answered · Are A100 and A101 refundable?" in header
    assert normalised("".join(shown)) == normalised(live.stdout)


def test_replay_picks_a_run_and_skips_a_torn_line(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    for question in ("Is A100 refundable?", "Is A101 refundable?"):
        runner.invoke(
            app, ["ask", question, "--dry-run", "--today", "2026-10-13", "--trace", str(trace)]
        )
    second = [json.loads(line) for line in trace.read_text().splitlines()][-1]["run_id"]
    with trace.open("a") as handle:
        handle.write('{"event": "run_started", "run_id": "torn')
    result = runner.invoke(app, ["replay", str(trace), "--run", second[:8], "--quiet"])
    assert result.exit_code == 0
    assert result.stdout.startswith("Order A101 is not refundable")
    assert "A100" not in result.stdout
    assert "is incomplete or not JSON; skipped" in result.stderr


def test_replay_errors(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["replay", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2 and "No trace file" in missing.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = runner.invoke(app, ["replay", str(empty)])
    assert result.exit_code == 2 and "is not a trace" in result.stderr


def test_a_file_that_is_not_a_trace_is_one_error_not_a_warning_per_line(tmp_path: Path) -> None:
    readme = tmp_path / "notes.jsonl"
    readme.write_text("\n".join(f"line {n} of prose" for n in range(500)))
    result = runner.invoke(app, ["replay", str(readme)])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"agent: error: {readme} is not a trace: no line in it is a trace event (see --trace)"
    )


def test_list_and_a_bad_run_id_name_the_runs(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    for question in ("Is A100 refundable?", "Is A101 refundable?"):
        argv = ["ask", question, "--dry-run", "--trace", str(trace), "-q"]
        assert runner.invoke(app, argv).exit_code == 0
    ids = [json.loads(line)["run_id"] for line in trace.read_text().splitlines()]
    first, second = dict.fromkeys(ids)
    listed = runner.invoke(app, ["replay", str(trace), "--list"], env={"COLUMNS": "200"})
    assert listed.exit_code == 0
    for run_id, question in ((first, "Is A100 refundable?"), (second, "Is A101 refundable?")):
        (row,) = [line for line in listed.stdout.splitlines() if run_id[:8] in line]
        assert question in row and "answered" in row and " UTC" in row
    bad = runner.invoke(app, ["replay", str(trace), "--run", "zz"])
    assert bad.exit_code == 2
    assert f"its runs are {first[:8]}, {second[:8]} (see --list)" in bad.stderr


def test_warnings_about_torn_lines_are_bounded(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    argv = ["ask", "Is A100 refundable?", "--dry-run", "--trace", str(trace), "-q"]
    assert runner.invoke(app, argv).exit_code == 0
    with trace.open("a") as handle:
        handle.write("{torn\n" * 20)
    result = runner.invoke(app, ["replay", str(trace), "-q"])
    assert result.exit_code == 0
    warnings = result.stderr.strip().splitlines()
    assert len(warnings) == 4 and warnings[-1].endswith("17 more lines skipped")
