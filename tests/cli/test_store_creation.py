"""The order store on first use: created where it is configured (or not, when the path is
misspelt or the run is a dry run), `orders init` with or without the sample shop on both
backends, a broken file named with exit 1, and the first answer on a fresh machine the
README's."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.store.samples import SAMPLE_ORDERS

runner = CliRunner()
ASK = ["ask", "Is order A100 refundable?", "--dry-run"]


def test_a_broken_database_ends_the_run_with_exit_1_naming_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"this is not a database" * 100)
    trace = tmp_path / "t.jsonl"
    result = runner.invoke(app, [*ASK, "--trace", str(trace)], env={"AGENT_DB": str(broken)})
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("agent: error: Cannot open the order database ") and str(broken) in line
    last = json.loads(trace.read_text().splitlines()[-1])
    assert last["event"] == "run_finished" and last["status"] == "error"
    assert "could not check" not in result.stdout  # no answer pretends to the customer


def test_a_misspelled_path_is_an_error_not_a_new_sample_database(tmp_path: Path) -> None:
    typo = tmp_path / "nonexistent" / "x" / "orders.db"
    for argv in (ASK, ["orders", "list"]):
        result = runner.invoke(app, argv, env={"AGENT_DB": str(typo)})
        assert result.exit_code == 1, argv
        assert f"No order database at {typo}" in result.stderr
        assert "agent orders init" in result.stderr
    assert not (tmp_path / "nonexistent").exists()


def test_orders_init_creates_a_private_database_empty_or_with_samples(tmp_path: Path) -> None:
    empty, sample = tmp_path / "empty.db", tmp_path / "sample.db"
    result = runner.invoke(app, ["orders", "init"], env={"AGENT_DB": str(empty)})
    assert result.exit_code == 0 and "(0 orders)" in result.stdout
    result = runner.invoke(app, ["orders", "init", "--sample"], env={"AGENT_DB": str(sample)})
    assert result.exit_code == 0 and f"({len(SAMPLE_ORDERS)} orders)" in result.stdout
    for path in (empty, sample):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = runner.invoke(app, ["orders", "init"], env={"AGENT_DB": str(sample)})
    assert again.exit_code == 2 and "exists already" in again.stderr
    listed = runner.invoke(app, ["orders", "list", "--json"], env={"AGENT_DB": str(empty)})
    assert listed.exit_code == 0 and listed.stdout == ""  # no orders: no lines


def test_orders_init_sample_fills_an_empty_database_and_leaves_a_full_one(tmp_path: Path) -> None:
    path = tmp_path / "shop.db"
    env = {"AGENT_DB": str(path)}
    assert runner.invoke(app, ["orders", "init"], env=env).exit_code == 0
    filled = runner.invoke(app, ["orders", "init", "--sample"], env=env)
    assert filled.exit_code == 0, filled.stderr
    assert f"Added {len(SAMPLE_ORDERS)} sample orders to the empty order database" in filled.stdout
    listed = runner.invoke(app, ["orders", "list", "--json"], env=env)
    assert len(listed.stdout.splitlines()) == len(SAMPLE_ORDERS)
    again = runner.invoke(app, ["orders", "init", "--sample"], env=env)
    assert again.exit_code == 2 and "with orders exists already" in again.stderr
    assert "agent orders import FILE" in again.stderr
    assert runner.invoke(app, ["orders", "list", "--json"], env=env).stdout == listed.stdout


def test_the_first_answer_on_a_fresh_machine_is_the_readmes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENT_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    result = runner.invoke(app, ["ask", "Is order A100 refundable?", "-q"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("Order A100 is refundable:")
    assert "12 days ago" in result.stdout
    created = tmp_path / "data" / "agent-cli" / "orders.db"
    assert stat.S_IMODE(created.stat().st_mode) == 0o600
    assert os.environ.get("AGENT_DB") is None


def test_a_dry_run_on_a_fresh_machine_writes_no_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENT_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    result = runner.invoke(app, [*ASK, "-q"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("Order A100 is refundable:") and "12 days ago" in result.stdout
    assert not (tmp_path / "data").exists()  # the samples were read from memory
    runner.invoke(app, ["ask", "Is order A100 refundable?", "-q"])  # a real run makes it
    assert (tmp_path / "data" / "agent-cli" / "orders.db").exists()


def test_orders_init_makes_the_sample_shop_with_its_desk_data(tmp_path: Path) -> None:
    from agent_cli.store import record_reads
    from agent_cli.store.sqlite import OrderStore

    path = tmp_path / "shop.db"
    made = runner.invoke(app, ["orders", "init", "--sample"], env={"AGENT_DB": str(path)})
    assert made.exit_code == 0, made.output
    store = OrderStore.open(path, create=False)
    a101 = record_reads.desk_order(store, "A101")
    assert a101 is not None and a101.shipments[0].carrier == "Yamato Transport"
    assert record_reads.customer_by_email(store, "haruki.sato@example.com") == "haruki_sato_1001"
    assert record_reads.customer_orders(store, "haruki_sato_1001") == ["A100", "A106"]
    assert store.refunded_total("A106") == 20_000


def test_orders_init_honours_a_postgresql_store(
    pg_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_DB_URL", pg_server.database())
    monkeypatch.setenv("AGENT_DB", str(tmp_path / "never.db"))
    ready = runner.invoke(app, ["orders", "init"])
    assert ready.exit_code == 0 and "is ready (0 orders)" in ready.stdout, ready.output
    filled = runner.invoke(app, ["orders", "init", "--sample", "--today", "2026-10-13"])
    assert filled.exit_code == 0, filled.output
    assert f"Added {len(SAMPLE_ORDERS)} sample orders to the empty order database" in filled.stdout
    assert "postgresql://" in filled.stdout and not (tmp_path / "never.db").exists()
    asked = runner.invoke(app, [*ASK, "--today", "2026-10-13"])
    assert asked.exit_code == 0 and "Order A100 is refundable: delivered 2026-10-01" in asked.stdout
    again = runner.invoke(app, ["orders", "init", "--sample"])
    assert again.exit_code == 2 and "with orders exists already" in again.stderr
