"""`agent replay --check` and `agent eval --replay`: recorded runs as regression tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.core.events import ToolObserved
from agent_cli.evaluation.regress import compare

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
        'verdict = { A100 = "refundable" }\n'
        '[[cases]]\nid = "two"\nquestion = "Is A101 refundable?"\ntoday = 2026-10-13\n'
        'verdict = { A101 = "not_refundable" }\n',
        encoding="utf-8",
    )
    runs = tmp_path / "runs"
    assert (
        runner.invoke(
            app, ["eval", "run", str(cases), "--dry-run", "--record", str(runs)]
        ).exit_code
        == 0
    )
    result = runner.invoke(app, ["eval", "replay", str(runs), "--json"])
    assert result.exit_code == 0, result.stderr
    checks = [json.loads(line) for line in result.stdout.splitlines()]
    assert [c["matches"] for c in checks] == [True, True]
    assert {Path(c["trace"]).name for c in checks} == {"one.jsonl", "two.jsonl"}
    cancel_a100(tmp_path)  # the user's database is not what eval cases ran on: no difference
    result = runner.invoke(app, ["eval", "replay", str(runs), "--json"])
    assert result.exit_code == 0, result.stdout
    policy = tmp_path / "shorter.toml"  # a change of today's tools is one
    policy.write_text("[policy]\nrefund_window_days = 10\n", encoding="utf-8")
    result = runner.invoke(app, ["eval", "replay", str(runs), "--json", "--config", str(policy)])
    assert result.exit_code == 3
    checks = [json.loads(line) for line in result.stdout.splitlines()]
    assert [c["matches"] for c in checks] == [False, False]  # both read the policy
    differences = [d for c in checks for d in c["differences"]]
    assert any(d["tool"] == "lookup_order" and "window 10 days" in d["now"] for d in differences)


def test_eval_replay_needs_a_folder_with_traces(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["eval", "replay", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "no such directory" in missing.stderr
    empty = runner.invoke(app, ["eval", "replay", str(tmp_path)])
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


def refund_trace(tmp_path: Path) -> tuple[Path, Path]:
    """A recorded run whose model asked for a refund (denied then: no terminal), and the config
    that enables refunds; A100 is recent, so the refund rules would allow it today."""
    from tests.helpers import delivered_recently

    delivered_recently("A100")
    config = tmp_path / "config.toml"
    config.write_text("[refunds]\nenabled = true\nqueue_hours = 0\n", encoding="utf-8")
    refund = {"order_code": "A100", "amount": 1000, "reason": "broken"}
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                {"type": "tool", "tool": "issue_refund", "args": refund},
                {"type": "final", "answer": "ok"},
            ]
        )
    )
    trace = tmp_path / "runs.jsonl"
    argv = ["ask", "Refund A100", "--script", str(script), "--config", str(config)]
    assert runner.invoke(app, [*argv, "--trace", str(trace), "-q"]).exit_code == 0
    return trace, config


def refunds_of_a100() -> list[object]:
    shown = runner.invoke(app, ["orders", "show", "A100", "--json"])
    return list(json.loads(shown.stdout)["refunds"])


def test_replay_check_runs_refunds_dry_even_if_someone_approved(
    tmp_path: Path, monkeypatch: Any
) -> None:
    from agent_cli.core.seams import ApprovalVerdict
    from agent_cli.evaluation import regress

    trace, config = refund_trace(tmp_path)
    monkeypatch.setattr(
        regress, "refuse", lambda _: ApprovalVerdict(True, "operator")
    )  # one defence off
    result = runner.invoke(app, ["replay", str(trace), "--check", "--config", str(config)])
    assert result.exit_code == 0, result.stderr
    assert refunds_of_a100() == []


def test_replay_check_refuses_refunds_even_if_they_were_not_dry(
    tmp_path: Path, monkeypatch: Any
) -> None:
    from agent_cli.evaluation import regress

    trace, config = refund_trace(tmp_path)
    real = regress.build_tools

    def not_dry(*args: Any, **kwargs: Any) -> Any:  # the other defence off
        return real(*args, **{**kwargs, "dry_run": False})

    monkeypatch.setattr(regress, "build_tools", not_dry)
    result = runner.invoke(app, ["replay", str(trace), "--check", "--config", str(config)])
    assert result.exit_code == 0, result.stderr
    assert refunds_of_a100() == []


def test_a_clarifying_question_is_answered_with_the_recorded_reply(tmp_path: Path) -> None:
    cases = tmp_path / "cases.toml"
    cases.write_text(
        '[[cases]]\nid = "which"\nquestion = "Is my order refundable?"\ntoday = 2026-10-13\n'
        'replies = ["It is A100"]\nverdict = { A100 = "refundable" }\n',
        encoding="utf-8",
    )
    runs = tmp_path / "runs"
    recorded = runner.invoke(app, ["eval", "run", str(cases), "--dry-run", "--record", str(runs)])
    assert recorded.exit_code == 0, recorded.stdout
    (trace,) = runs.rglob("which.jsonl")
    assert '"tool":"ask_user"' in trace.read_text()  # the run did ask
    result = runner.invoke(app, ["replay", str(trace), "--check"])
    assert result.exit_code == 0, result.stdout
    assert "1 run replayed, 0 with differences" in result.stdout
    checked = runner.invoke(app, ["eval", "replay", str(runs), "--json"])
    assert checked.exit_code == 0, checked.stdout
    (check,) = [json.loads(line) for line in checked.stdout.splitlines()]
    assert check["matches"] is True, check
