"""`agent replay --check` and `agent eval --replay`: recorded runs as regression tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.evaluation.regress import compare
from agent_cli.events import ToolObserved

runner = CliRunner()
QUESTION = "Are orders A100 and A101 refundable?"


def record(tmp_path: Path) -> Path:
    trace = tmp_path / "runs.jsonl"
    argv = ["ask", QUESTION, "--dry-run", "--today", "2026-10-13", "--trace", str(trace), "-q"]
    assert runner.invoke(app, argv).exit_code == 0
    return trace


def cancel_a100(tmp_path: Path) -> None:
    orders = tmp_path / "changed.csv"
    orders.write_text("code,status,total\nA100,CANCELLED,250000\n", encoding="utf-8")
    assert runner.invoke(app, ["orders", "import", str(orders)]).exit_code == 0


def test_a_run_replayed_against_an_unchanged_store_matches(tmp_path: Path) -> None:
    result = runner.invoke(app, ["replay", str(record(tmp_path)), "--check"])
    assert result.exit_code == 0, result.stderr
    assert "3 observations match" in result.stdout
    assert "1 run replayed, 0 with differences" in result.stdout


def test_a_changed_order_is_reported_and_exits_3(tmp_path: Path) -> None:
    trace = record(tmp_path)
    cancel_a100(tmp_path)
    result = runner.invoke(app, ["replay", str(trace), "--check"])
    assert result.exit_code == 3
    assert "1 of 3 observations differ" in result.stdout
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("    #")]
    assert line.startswith('    #1 lookup_order {"order_code": "A100"}: recorded ')
    assert "status=DELIVERED" in line and "now 'order=A100 status=CANCELLED" in line
    assert "1 of 1 replayed runs observe something else today" in result.stderr


def test_eval_replay_checks_a_folder_of_traces(tmp_path: Path) -> None:
    cases = tmp_path / "cases.toml"
    cases.write_text(
        '[[cases]]\nid = "one"\nquestion = "Is A100 refundable?"\ntoday = 2026-10-13\n'
        '[[cases]]\nid = "two"\nquestion = "Is A101 refundable?"\ntoday = 2026-10-13\n',
        encoding="utf-8",
    )
    runs = tmp_path / "runs"
    assert (
        runner.invoke(app, ["eval", str(cases), "--dry-run", "--record", str(runs)]).exit_code == 0
    )
    result = runner.invoke(app, ["eval", "--replay", str(runs), "--json"])
    assert result.exit_code == 0, result.stderr
    checks = [json.loads(line) for line in result.stdout.splitlines()]
    assert [c["matches"] for c in checks] == [True, True]
    assert {Path(c["trace"]).name for c in checks} == {"one.jsonl", "two.jsonl"}
    cancel_a100(tmp_path)
    result = runner.invoke(app, ["eval", "--replay", str(runs), "--json"])
    assert result.exit_code == 3
    checks = [json.loads(line) for line in result.stdout.splitlines()]
    (changed,) = [c for c in checks if not c["matches"]]
    assert changed["differences"][0]["tool"] == "lookup_order"
    assert "CANCELLED" in changed["differences"][0]["now"]


def test_eval_replay_needs_a_folder_with_traces(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["eval", "--replay", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "no such directory" in missing.stderr
    empty = runner.invoke(app, ["eval", "--replay", str(tmp_path)])
    assert empty.exit_code == 2 and "no *.jsonl traces" in empty.stderr
    both = runner.invoke(app, ["eval", "--builtin", "--replay", str(tmp_path)])
    assert both.exit_code == 2 and "Give one of" in both.stderr


def observed(tool: str, observation: str, **args: Any) -> ToolObserved:
    return ToolObserved(
        run_id="r",
        ts=0.0,
        step=1,
        tool=tool,
        args=args,
        observation=observation,
        is_error=False,
        duration_ms=0.0,
    )


def test_compare_reports_changed_missing_and_extra_calls_but_not_refunds() -> None:
    recorded = (
        observed("lookup_order", "A", order_code="A100"),
        observed("issue_refund", "REFUNDED 100", order_code="A100"),
        observed("refund_policy", "30 days"),
    )
    now = (
        observed("lookup_order", "B", order_code="A100"),
        observed("issue_refund", "DRY RUN: would refund", order_code="A100"),
        observed("refund_policy", "30 days"),
        observed("lookup_order", "C", order_code="A101"),
    )
    differences = compare(recorded, now)
    assert [(d.number, d.recorded, d.now) for d in differences] == [(1, "A", "B"), (4, None, "C")]
    assert "recorded (no such call)" in differences[1].describe()
