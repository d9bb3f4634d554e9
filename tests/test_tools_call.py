"""`agent tools call NAME [JSON]`: an operator runs one tool by hand, as staff, through the
same validation and, for a write, the same approval path; every call in the run log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from agent_cli.cli import app

from .helpers import delivered_recently

runner = CliRunner()


def call(*argv: str, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(app, ["tools", "call", *argv], env=env or {})


def test_a_read_prints_the_record_without_identifying_anyone() -> None:
    result = call("get_order_details", '{"order_id": "A101"}')
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("order_id=A101 user_id=aoi_suzuki_1002 status=SHIPPING")
    assert result.stderr == ""
    as_json = call("track_order", '{"order_id": "A101"}', "--json", "--yes")  # --yes: no change
    payload = json.loads(as_json.stdout)
    assert as_json.exit_code == 0 and payload["tool"] == "track_order"
    assert payload["args"] == {"order_id": "A101"} and "Yamato Transport" in payload["observation"]
    assert call("list_all_product_types").exit_code == 0  # no arguments at all


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["get_order_detail", "{}"],
            "no tool 'get_order_detail' (did you mean 'get_order_details'?)",
        ),
        (["get_order_details", '{"order_id": 5}'], "invalid arguments for get_order_details"),
        (["get_order_details", "{}"], "order_id: Field required"),
        (["get_order_details", '{"order_id": "A1", "x": 1}'], "x: Extra inputs"),
        (["get_order_details", "[1]"], "must be a JSON object"),
        (["get_order_details", "{bad"], "are not JSON"),
        (["calculate", '{"expression": "2 ** 3 ; 1"}'], "invalid arguments for calculate"),
    ],
)
def test_bad_input_is_a_usage_error_before_anything_runs(argv: list[str], said: str) -> None:
    result = call(*argv)
    assert result.exit_code == 2 and said in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1
    logged = runner.invoke(app, ["logs", "list", "--kind", "tool"])
    assert "agent tools call" not in logged.stdout  # nothing ran, nothing logged


def test_a_refusal_is_exit_1_with_the_observation() -> None:
    result = call("get_order_details", '{"order_id": "Z9"}', "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "tool": "get_order_details",
        "args": {"order_id": "Z9"},
        "error": "ERROR: no order Z9; check the order id (e.g. #W0000000)",
    }


def _refunds_on(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "c.toml"
    config.write_text("[refunds]\nenabled = true\nmax_amount = 50000\nqueue_hours = 48\n")
    return {"AGENT_CONFIG": str(config)}


REFUND = '{"order_code": "A100", "amount": 1000, "reason": "late delivery"}'


def test_a_write_with_yes_is_approved_by_the_operator_and_logged(tmp_path: Path) -> None:
    delivered_recently("A100", days=3)
    env = _refunds_on(tmp_path)
    result = call("issue_refund", REFUND, "--yes", "--as", "lead", env=env)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("REFUNDED: refund #2 of 1,000 JPY on order A100")
    logged = runner.invoke(app, ["logs", "show", "--json"], env=env)
    events = [json.loads(line) for line in logged.stdout.splitlines()]
    decided = next(e for e in events if e["event"] == "approval_decided")
    assert decided["approved"] and decided["by"] == "operator"
    assert decided["reason"] == "approved by lead (--yes)"
    again = call("issue_refund", REFUND, "--yes", env=env)  # the same refund: never twice
    assert again.exit_code == 1 and "already issued" in again.stdout


def test_a_write_with_nobody_at_a_terminal_waits_in_the_queue(tmp_path: Path) -> None:
    delivered_recently("A100", days=3)
    env = _refunds_on(tmp_path)
    result = call("issue_refund", REFUND, "--json", env=env)
    assert result.exit_code == 5, result.output
    payload = json.loads(result.stdout)
    assert payload["queued"] == 1 and payload["observation"].startswith("QUEUED:")
    assert "agent approvals approve 1" in result.stderr
    listed = runner.invoke(app, ["approvals", "list", "--json"], env=env)
    assert json.loads(listed.stdout.splitlines()[0])["order_code"] == "A100"


def test_a_write_the_rules_refuse_is_refused_even_with_yes(tmp_path: Path) -> None:
    env = _refunds_on(tmp_path)
    too_much = '{"order_code": "A100", "amount": 60000, "reason": "late delivery"}'
    result = call("issue_refund", too_much, "--yes", env=env)
    assert result.exit_code == 1 and "above the cap of 50,000 JPY" in result.stdout


def test_every_call_is_in_the_run_log() -> None:
    call("get_item_details", '{"item_id": "1002002"}')
    logged = runner.invoke(app, ["logs", "list", "--kind", "tool"]).stdout
    assert 'agent tools call get_item_details {"item_id": "1002002"}' in logged
    assert runner.invoke(app, ["tools", "list", "--json"]).exit_code == 0


def test_a_ticket_opened_by_hand_names_its_run() -> None:
    result = call("transfer_to_human_agents", '{"summary": "Called in: wants a person."}')
    assert result.exit_code == 0, result.output  # done: the operator opened it
    ticket = json.loads(runner.invoke(app, ["tickets", "show", "1", "--json"]).stdout)
    logged = runner.invoke(app, ["logs", "list", "--kind", "tool", "--json"]).stdout
    (run,) = [json.loads(line) for line in logged.splitlines()]
    assert ticket["run_id"] == run["run_id"] and ticket["question"] == run["question"]
    assert ticket["question"].startswith("agent tools call transfer_to_human_agents")
