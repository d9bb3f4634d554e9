"""A store made by the release before the desk (schema 3 on SQLite, 1 on PostgreSQL) upgrades in
place: nothing is lost, every amount moves to minor units together, and what was queued can
still be approved."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.store.approval_items import Approval, read_item
from agent_cli.store.sqlite import OrderStore

FIXTURE = Path(__file__).parents[1] / "fixtures" / "orders-v3.db"  # made by make_orders_v3.py


def _upgraded(tmp_path: Path) -> OrderStore:
    assert FIXTURE.is_file(), f"{FIXTURE} is missing: it is committed with the tests"
    path = tmp_path / "old.db"
    shutil.copy(FIXTURE, path)
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone() == (3,)
    return OrderStore.open(path, create=False)


def test_an_old_sqlite_store_keeps_everything_in_minor_units(tmp_path: Path) -> None:
    store = _upgraded(tmp_path)
    a100, c300 = store.get("A100"), store.get("C300")
    assert a100 is not None and (a100.total, a100.note) == (250_000, "Please gift-wrap.")
    assert c300 is not None and (c300.total, c300.currency) == (12_900, "USD")  # was 129
    assert [(r.order_code, r.amount) for r in store.refunds("A100")] == [("A100", 55_000)]
    assert [(r.order_code, r.amount) for r in store.refunds("C300")] == [("C300", 2_900)]
    # the refund keys name the new amounts, so the same refund is still the same refund
    assert store.find_refund(store.query("SELECT idempotency_key FROM refunds")[1][0])
    keys = [key for (key,) in store.query("SELECT idempotency_key FROM refunds ORDER BY id")]
    assert keys[0].startswith("A100:55000:") and keys[1].startswith("C300:2900:")
    _the_queue_reads_whole(store)
    reopened = OrderStore.open(store.path, create=False)  # a second open changes nothing more
    assert reopened.get("C300") == c300 and reopened.refunded_total("C300") == 2_900


def _the_queue_reads_whole(store: Any) -> None:
    items = [read_item(row) for row in store.query("SELECT * FROM approvals ORDER BY id")]
    assert all(isinstance(item, Approval) for item in items), items
    usd, jpy = items
    assert isinstance(usd, Approval) and isinstance(jpy, Approval)
    assert (usd.order_code, usd.amount, usd.currency) == ("C300", 4_000, "USD")
    assert '"total": 12900' in usd.judged
    assert (jpy.order_code, jpy.amount, jpy.currency) == ("A104", 2_000, "JPY")
    # the refund's columns are named for any item now (kind, summary, key), their values kept
    named = store.query("SELECT kind, summary, key FROM approvals ORDER BY id")
    assert [(kind, summary) for kind, summary, _ in named] == [
        ("issue_refund", "scratched"),
        ("issue_refund", "missing part"),
    ]
    assert str(named[0][2]).startswith("C300:4000:")


def test_an_item_queued_before_the_upgrade_is_approved_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _upgraded(tmp_path)
    store.close()
    monkeypatch.setenv("AGENT_DB", str(store.path))
    monkeypatch.setenv("AGENT_TODAY", "2026-10-13")  # inside C300's window
    result = CliRunner().invoke(app, ["approvals", "approve", "1", "--as", "lead"])
    assert result.exit_code == 0, result.output
    assert "refund #3 of 40.00 USD recorded" in result.stdout
    again = OrderStore.open(store.path, create=False)
    assert again.refunded_total("C300") == 6_900


def test_an_old_postgres_store_upgrades_likewise(pg_server: Any) -> None:
    import psycopg

    from agent_cli.store import postgres

    assert FIXTURE.is_file(), f"{FIXTURE} is missing: it is committed with the tests"
    url = pg_server.database()
    with psycopg.connect(url, autocommit=True) as raw:  # the schema of the release before
        for statement in postgres._MIGRATIONS[0]:
            raw.execute(statement)  # type: ignore[call-overload]
        raw.execute("CREATE TABLE agent_schema (version INT NOT NULL)")
        raw.execute("INSERT INTO agent_schema VALUES (1)")
        with sqlite3.connect(FIXTURE) as old:
            for table in ("orders", "refunds", "approvals"):
                rows = old.execute(f"SELECT * FROM {table}").fetchall()
                marks = ", ".join(["%s"] * len(rows[0]))
                for row in rows:
                    raw.execute(f"INSERT INTO {table} VALUES ({marks})", row)  # type: ignore[call-overload]
    store = postgres.PostgresStore.connect(url)
    c300 = store.get("C300")
    assert c300 is not None and c300.total == 12_900
    assert store.refunded_total("C300") == 2_900 and store.refunded_total("A100") == 55_000
    _the_queue_reads_whole(store)
    assert store.query("SELECT MAX(version) FROM agent_schema") == [(postgres.SCHEMA_VERSION,)]
    store.close()
    reopened = postgres.PostgresStore.connect(url)  # the upgrade ran once
    assert reopened.refunded_total("C300") == 2_900
    reopened.close()
