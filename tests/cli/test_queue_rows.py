"""What outside reviews broke in the approval queue: ids a user can type, and rows nobody
should have written (a store moved in from elsewhere: tests/contract/test_store_move.py)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from tests.cli.test_approval_queue import queue_a_refund
from tests.helpers import json_lines

runner = CliRunner()
TOO_LARGE = str(2**63)


def queue_two(tmp_path: Path) -> None:
    assert "awaiting approval" in queue_a_refund(tmp_path, amount=1000, reason="damaged").stdout
    assert (
        "awaiting approval"
        in queue_a_refund(tmp_path, amount=2000, reason="lost in transit").stdout
    )


def tamper(sql: str, params: tuple[Any, ...] = ()) -> None:
    """Write to the test's order store behind the agent's back, as a careless hand would."""
    db = sqlite3.connect(os.environ["AGENT_DB"])
    try:
        db.execute(sql, params)
        db.commit()
    finally:
        db.close()


@pytest.mark.parametrize("item", [TOO_LARGE, str(10**30), "0"])
@pytest.mark.parametrize("command", ["show", "approve", "deny"])
def test_any_id_a_user_can_type_is_no_such_item(command: str, item: str) -> None:
    result = runner.invoke(app, ["approvals", command, item])
    assert result.exit_code == 1, result.stderr
    assert "internal error" not in result.stderr
    assert f"#{item}" in result.stderr
    assert "no such item" in result.stderr or f"No approval #{item}" in result.stderr


BAD_ROWS = [
    ("expires_at = 'soon'", "expires_at 'soon' is not a timestamp"),
    ("judged = '{not json'", "judged is not JSON"),
    ("judged = '[1, 2]'", "judged is not a JSON object"),
    ("amount = 'much'", "amount 'much' is not a positive whole amount"),
    ("amount = 900", "names another refund than 900 on A100"),
    ("created_at = '2026-10-13T10:00:00'", "created_at '2026-10-13T10:00:00' has no time zone"),
    ("order_code = '../x'", "order_code '../x' is not an order code"),
]


@pytest.mark.parametrize(("change", "problem"), BAD_ROWS)
def test_one_unreadable_row_never_takes_the_queue_down(
    tmp_path: Path, change: str, problem: str
) -> None:
    queue_two(tmp_path)
    tamper(f"UPDATE approvals SET {change} WHERE id = 1")
    listed = runner.invoke(app, ["approvals", "list", "--json"])
    assert listed.exit_code == 0, listed.stderr
    first, second = json_lines(listed.stdout)
    assert first == {"id": 1, "state": "unreadable", "problem": first["problem"]}
    assert problem in first["problem"]
    assert (second["id"], second["state"], second["amount"]) == (2, "pending", 2000)
    table = runner.invoke(app, ["approvals", "list"])
    assert (
        table.exit_code == 0 and "unreadable" in table.stdout and "cannot be read" in table.stdout
    )
    shown = runner.invoke(app, ["approvals", "show", "1"])
    assert shown.exit_code == 1 and "internal error" not in shown.stderr
    assert "#1: cannot be read" in shown.stderr and problem in shown.stderr
    approved = runner.invoke(app, ["approvals", "approve", "1", "2", "--as", "lead"])
    assert approved.exit_code == 1, approved.stderr
    assert "#1: cannot be read" in approved.stderr and "nothing done" in approved.stderr
    assert "#2: approved: refund #2 of 2,000 JPY recorded" in approved.stdout
    order = json.loads(runner.invoke(app, ["orders", "show", "A100", "--json"]).stdout)
    assert [refund["amount"] for refund in order["refunds"]] == [2000]  # never the bad row's
    states = {item["id"]: item["state"] for item in order["approvals"]}
    assert states[2] == "approved" and states.get(1, "unreadable") == "unreadable"


def test_a_row_naming_an_amount_its_key_does_not_is_never_paid(tmp_path: Path) -> None:
    """Someone raised the amount of a queued item: its key still names the old one."""
    queue_two(tmp_path)
    tamper("UPDATE approvals SET amount = 40000 WHERE id = 1")
    approved = runner.invoke(app, ["approvals", "approve", "1", "--as", "lead"])
    assert approved.exit_code == 1
    assert "names another refund than 40,000 on A100" in approved.stderr
    order = json.loads(runner.invoke(app, ["orders", "show", "A100", "--json"]).stdout)
    assert order["refunds"] == []
