"""JSON Lines traces: complete lines in order, safe values, owner-only append, tolerant reading."""

from __future__ import annotations

import io
import json
import math
import stat
from datetime import date
from pathlib import Path

import pytest

from agent_cli.core.decisions import Usage
from agent_cli.core.events import RunFinished, ToolObserved
from agent_cli.errors import TraceFileError
from agent_cli.record.tracing import (
    TraceWriter,
    dumps_event,
    event_record,
    open_trace_file,
    read_trace,
)
from agent_cli.store.sqlite import OrderStore
from tests.helpers import call, final, scripted_run


def test_a_run_traces_every_event_in_order(store: OrderStore) -> None:
    _, events = scripted_run(store, call("lookup_order", "look", order_code="A100"), final("yes"))
    buffer = io.StringIO()
    writer = TraceWriter(buffer)
    for event in events:
        writer.write(event)
    records = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert [r["event"] for r in records] == [
        "run_started",
        "decision",
        "observation",
        "decision",
        "run_finished",
    ]
    for record in records:
        assert {"event", "run_id", "ts"} <= record.keys()
        assert record["ts"].endswith("+00:00")
    started, decision, observation, _, finished = records
    assert started["schema"] == 1
    assert (started["goal"], started["provider"], started["max_steps"]) == (
        "Is order A100 refundable?",
        "scripted",
        8,
    )
    assert decision["decision"] == {
        "type": "tool",
        "tool": "lookup_order",
        "args": {"order_code": "A100"},
        "thought": "look",
    }
    assert decision["step"] == 1
    assert observation["tool"] == "lookup_order" and observation["args"] == {"order_code": "A100"}
    assert observation["is_error"] is False and "status=DELIVERED" in observation["observation"]
    assert observation["duration_ms"] >= 0
    assert (
        finished["status"] == "answered" and finished["answer"] == "yes" and finished["steps"] == 2
    )
    assert finished["usage"] == {"input_tokens": 0, "output_tokens": 0}
    assert finished["error"] is None and finished["elapsed_ms"] >= 0


def _observed(**args: object) -> ToolObserved:
    return ToolObserved(
        run_id="r",
        ts=0.0,
        step=1,
        tool="t",
        args=dict(args),
        observation="o",
        is_error=False,
        duration_ms=1.0,
    )


def test_values_json_cannot_hold_are_converted() -> None:
    record = json.loads(
        dumps_event(_observed(nan=math.nan, inf=math.inf, day=date(2026, 1, 2), raw=b"\xff"))
    )
    assert record["args"] == {"nan": "nan", "inf": "inf", "day": "2026-01-02", "raw": "\\xff"}


def test_lone_surrogates_and_emoji_give_valid_utf8_lines() -> None:
    line = dumps_event(_observed(text="bad \udc80 ok 😀 مرحبا"))
    line.encode("utf-8")  # would raise if not valid UTF-8
    assert json.loads(line)["args"]["text"] == "bad \udc80 ok 😀 مرحبا"


def test_japanese_is_kept_readable() -> None:
    assert "返金" in dumps_event(_observed(text="返金"))


def test_trace_file_is_owner_only_and_appended(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    for _ in range(2):
        with open_trace_file(path) as handle:
            TraceWriter(handle).write(_observed())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(path.read_text().splitlines()) == 2


def test_unwritable_trace_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(
        TraceFileError, match=r"Cannot write the trace file .*choose another --trace"
    ):
        open_trace_file(tmp_path / "missing-dir" / "run.jsonl")


def test_reader_skips_a_torn_last_line_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    good = dumps_event(_observed())
    path.write_text(good + "\n" + good[: len(good) // 2])
    warnings: list[str] = []
    records = list(read_trace(path, warn=warnings.append))
    assert len(records) == 1
    assert warnings == [f"{path}: line 2 is incomplete or not JSON; skipped"]


def test_run_finished_record_carries_usage_and_error() -> None:
    event = RunFinished(
        run_id="r",
        ts=1.5,
        status="max_steps",
        answer=None,
        steps=8,
        usage=Usage(3, 4),
        elapsed_ms=12.3456,
        error="Max steps (8) exceeded",
    )
    record = event_record(event)
    assert record["usage"] == {"input_tokens": 3, "output_tokens": 4}
    assert record["elapsed_ms"] == 12.346
    assert record["ts"] == "1970-01-01T00:00:01.500+00:00"


def test_a_trace_file_or_run_log_left_readable_by_others_is_made_private(tmp_path: Path) -> None:
    import os
    import stat

    from typer.testing import CliRunner

    from agent_cli.cli import app

    trace, log = tmp_path / "t.jsonl", tmp_path / "runs.db"
    trace.write_text("")
    trace.chmod(0o644)
    argv = ["ask", "Is A100 refundable?", "--script", str(tmp_path / "s.json")]
    (tmp_path / "s.json").write_text('[{"type": "final", "answer": "Nothing to look up."}]')
    first = CliRunner().invoke(app, [*argv, "--trace", str(trace)], env={"AGENT_LOG": str(log)})
    assert first.exit_code == 0, first.stderr
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600
    log.chmod(0o644)
    again = CliRunner().invoke(app, argv, env={"AGENT_LOG": str(log)})
    assert again.exit_code == 0, again.stderr
    assert stat.S_IMODE(os.stat(log).st_mode) == 0o600


def test_a_trace_is_never_written_through_a_link_or_into_a_fifo(tmp_path: Path) -> None:
    import os

    from typer.testing import CliRunner

    from agent_cli.cli import app

    victim = tmp_path / "orders.csv"
    victim.write_text("keep me")
    link = tmp_path / "link.jsonl"
    link.symlink_to(victim)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    for target, says in ((link, "a symbolic link"), (fifo, "not a regular file")):
        argv = ["ask", "Is A100 refundable?", "--dry-run", "--trace", str(target)]
        result = CliRunner().invoke(app, argv)
        assert result.exit_code == 2, result.stderr
        assert f"Cannot write the trace file {target}: {says}" in result.stderr
    assert victim.read_text() == "keep me"
    db = Path(os.environ["AGENT_DB"])  # the order store: lines appended would break it
    before = db.read_bytes()
    result = CliRunner().invoke(app, ["ask", "A100?", "--dry-run", "--trace", str(db)])
    assert result.exit_code == 2 and "it is a SQLite database" in result.stderr
    assert db.read_bytes() == before
