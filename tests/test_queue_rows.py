"""What outside reviews broke in the approval queue and the store import: ids a user can type,
rows nobody should have written, and stores copied from elsewhere."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.store.samples import SAMPLE_ORDERS
from agent_cli.store.sqlite import OrderStore

from .helpers import json_lines
from .test_approval_queue import queue_a_refund

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


@pytest.fixture
def old_store(tmp_path: Path) -> Iterator[Path]:
    """A store made elsewhere, with the samples, one refund and one queued item."""
    path = tmp_path / "old.db"
    store = OrderStore.open(path, seed=SAMPLE_ORDERS)
    store.close()
    yield path


def import_from(path: Path) -> Any:
    return runner.invoke(app, ["orders", "import", "--from-sqlite", str(path)])


def write_old(path: Path, sql: str, params: tuple[Any, ...] = ()) -> None:
    db = sqlite3.connect(path)
    try:
        db.execute(sql, params)
        db.commit()
    finally:
        db.close()


@pytest.mark.parametrize(
    ("sql", "where", "problem"),
    [
        (
            "UPDATE orders SET delivered_at = 'yesterday-ish' WHERE code = 'A100'",
            "table orders, row 1 (code 'A100')",
            "delivered_at",
        ),
        (
            "UPDATE orders SET total = 'lots' WHERE code = 'A101'",
            "table orders, row 2 (code 'A101')",
            "total",
        ),
        (
            "INSERT INTO refunds (order_code, amount, reason, created_at, idempotency_key)"
            " VALUES ('A100', 'lots', 'x', '2026-10-13T10:00:00+00:00', 'k')",
            "table refunds, row 1 (id 1)",
            "amount 'lots'",
        ),
        (
            "INSERT INTO refunds (order_code, amount, reason, created_at, idempotency_key)"
            " VALUES ('A100', 100, 'x', 'tuesday', 'k')",
            "table refunds, row 1 (id 1)",
            "created_at 'tuesday' is not a timestamp",
        ),
    ],
)
def test_an_import_checks_every_row_and_writes_nothing_on_a_bad_one(
    old_store: Path, sql: str, where: str, problem: str
) -> None:
    write_old(old_store, sql)
    before = runner.invoke(app, ["orders", "show", "A100", "--json"]).stdout
    result = import_from(old_store)
    assert result.exit_code == 2, result.stderr
    line = result.stderr.strip()
    assert "\n" not in line and "internal error" not in line
    assert f"{old_store}: {where}" in line and problem in line and "nothing imported" in line
    assert runner.invoke(app, ["orders", "show", "A100", "--json"]).stdout == before


def test_an_import_refuses_an_unreadable_approval_row(old_store: Path, tmp_path: Path) -> None:
    queue_a_refund(tmp_path)  # an item in the test's store, to copy its row from
    db = sqlite3.connect(os.environ["AGENT_DB"])
    row = db.execute("SELECT * FROM approvals").fetchone()
    db.close()
    marks = ", ".join("?" * len(row))
    write_old(old_store, f"INSERT INTO approvals VALUES ({marks})", row)
    write_old(old_store, "UPDATE approvals SET judged = 'broken'")
    result = import_from(old_store)
    assert result.exit_code == 2
    assert f"{old_store}: table approvals, row 1 (id 1): judged is not JSON; nothing imported" in (
        result.stderr
    )
    assert len(json_lines(runner.invoke(app, ["approvals", "list", "--json"]).stdout)) == 1


def test_an_import_never_moves_an_order_backwards(old_store: Path) -> None:
    tamper("UPDATE orders SET status = 'REFUNDED' WHERE code = 'A100'")
    tamper(
        "UPDATE orders SET status = 'DELIVERED', delivered_at = '2026-10-11' WHERE code = 'A101'"
    )
    result = import_from(old_store)
    assert result.exit_code == 0, result.stderr
    assert f"Kept order A100 as the store has it (REFUNDED; {old_store} says DELIVERED)" in (
        result.stdout
    )
    orders = {
        o["code"]: o["status"]
        for o in json_lines(runner.invoke(app, ["orders", "list", "--json"]).stdout)
    }
    assert orders["A100"] == "REFUNDED"  # kept
    assert orders["A101"] == "DELIVERED"  # SHIPPING in the file: kept too
    assert "Kept order A101" in result.stdout
    assert orders["B200"] == "PENDING"


def test_an_import_never_refunds_more_than_an_order_is_worth(old_store: Path) -> None:
    store = OrderStore.open(Path(os.environ["AGENT_DB"]))
    store.record_refund("A100", 200_000, "damaged", key="here")
    store.close()
    write_old(
        old_store,
        "INSERT INTO refunds (order_code, amount, reason, created_at, idempotency_key)"
        " VALUES ('A100', 100000, 'lost', '2026-10-13T10:00:00+00:00', 'there')",
    )
    result = import_from(old_store)
    assert result.exit_code == 2
    assert (
        f"{old_store}: the refunds of order A100 would come to 300,000 JPY, more than its total"
        in (result.stderr)
    )
    order = json.loads(runner.invoke(app, ["orders", "show", "A100", "--json"]).stdout)
    assert [refund["amount"] for refund in order["refunds"]] == [200_000]


def test_an_import_keeps_an_ending_and_counts_what_it_moved(old_store: Path) -> None:
    tamper("UPDATE orders SET status = 'CANCELLED' WHERE code = 'B200'")  # A100..A105 equal
    write_old(old_store, "UPDATE orders SET status = 'REFUNDED' WHERE code = 'C300'")
    tamper("UPDATE orders SET status = 'CANCELLED' WHERE code = 'C300'")
    result = import_from(old_store)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"Moved {len(SAMPLE_ORDERS) - 2} orders, 0 refunds")
    assert "Kept order B200 as the store has it (CANCELLED" in result.stdout  # after equal ones
    assert "Kept order C300 as the store has it (CANCELLED; " in result.stdout  # an ending


def test_an_import_maps_refunds_the_target_has_already(old_store: Path) -> None:
    """Two refunds recorded in both stores (the same keys): counted there already, and an item
    approved with one points at the target's refund."""
    for store_path in (old_store, Path(os.environ["AGENT_DB"])):
        store = OrderStore.open(store_path)
        if store_path == old_store:
            store.record_refund("A105", 100, "first", key="k0")  # only in the file
        store.record_refund("A100", 1000, "damaged", key="k1")
        store.record_refund("A100", 2000, "late", key="k2")
        store.close()
    result = import_from(old_store)
    assert result.exit_code == 0, result.stderr
    assert "1 refunds (2 there already)" in result.stdout
    order = json.loads(runner.invoke(app, ["orders", "show", "A100", "--json"]).stdout)
    assert sorted(refund["amount"] for refund in order["refunds"]) == [1000, 2000]


def test_refunds_coming_to_exactly_an_orders_total_are_imported(old_store: Path) -> None:
    write_old(
        old_store,
        "INSERT INTO refunds (order_code, amount, reason, created_at, idempotency_key)"
        " VALUES ('A105', 15800, 'all', '2026-10-13T10:00:00+00:00', 'whole')",
    )
    assert import_from(old_store).exit_code == 0


@pytest.mark.parametrize(
    ("sql", "said"),
    [
        (
            "UPDATE orders SET delivered_at = NULL WHERE code = 'A100'",
            "table orders, row 1 (code 'A100'): delivered_at: required when status is DELIVERED",
        ),
        (
            "INSERT INTO refunds (order_code, amount, reason, created_at, idempotency_key)"
            " VALUES ('', 5, 'x', '2026-10-13T10:00:00+00:00', 'k')",
            "table refunds, row 1 (id 1): order_code '' is not an order code",
        ),
        (
            "INSERT INTO refunds (order_code, amount, reason, created_at, idempotency_key)"
            " VALUES ('A100', 5, x'00', '2026-10-13T10:00:00+00:00', 'k')",
            "table refunds, row 1 (id 1): reason or idempotency_key is not text",
        ),
        (
            "INSERT INTO refunds (order_code, amount, reason, created_at, idempotency_key)"
            " VALUES ('A100', 5, 'x', '2026-10-13T10:00:00+00:00', '')",
            "table refunds, row 1 (id 1): reason or idempotency_key is not text",
        ),
    ],
)
def test_each_bad_row_is_named_with_its_file(old_store: Path, sql: str, said: str) -> None:
    write_old(old_store, sql)
    result = import_from(old_store)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"agent: error: {old_store}: {said}; nothing imported"


def test_an_empty_value_in_the_file_is_no_value(old_store: Path) -> None:
    write_old(old_store, "UPDATE orders SET delivered_at = '', customer = '' WHERE code = 'B200'")
    assert import_from(old_store).exit_code == 0
    shown = json.loads(runner.invoke(app, ["orders", "show", "B200", "--json"]).stdout)
    assert (shown["delivered_at"], shown["customer"]) == (None, None)


def test_a_refund_of_one_is_a_refund(old_store: Path) -> None:
    write_old(
        old_store,
        "INSERT INTO refunds (order_code, amount, reason, created_at, idempotency_key)"
        " VALUES ('A100', 1, 'x', '2026-10-13T10:00:00+00:00', 'one')",
    )
    assert import_from(old_store).exit_code == 0


def test_an_approved_item_points_at_the_targets_copy_of_its_refund(old_store: Path) -> None:
    from datetime import timedelta

    from agent_cli.store import approval_queue
    from agent_cli.store.models import refund_key

    origin = OrderStore.open(old_store)
    order = origin.get("A105")
    assert order is not None
    proposal = approval_queue.Proposal(order, 700, "torn", "run", "q", "bot", timedelta(hours=1))
    item = approval_queue.queue(origin, proposal)
    approval_queue.approve(origin, item.id, by="lead", recheck=lambda *_: None)
    origin.close()
    target = OrderStore.open(Path(os.environ["AGENT_DB"]))
    target.record_refund("A100", 5, "other", key="first")  # the target's ids run ahead
    there = target.record_refund("A105", 700, "torn", key=refund_key("A105", 700, "torn"))
    target.close()
    assert import_from(old_store).exit_code == 0
    (copied,) = json_lines(runner.invoke(app, ["approvals", "list", "--json"]).stdout)
    assert (copied["state"], copied["refund_id"]) == ("approved", there.refund.id)
