"""The store shared by processes: first use and migration race-free, a lock a bounded wait."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.store.samples import SAMPLE_ORDERS
from agent_cli.store.sqlite import OrderStore

runner = CliRunner()

OPEN_AT = """
import sys, time
from pathlib import Path
from agent_cli.store.sqlite import OrderStore
start = float(sys.argv[2])
while time.time() < start:
    pass
OrderStore.open(Path(sys.argv[1])).close()
"""


def test_a_new_database_opened_by_four_processes_at_once(tmp_path: Path) -> None:
    for round_ in range(3):
        path = tmp_path / f"orders-{round_}.db"
        start = time.time() + 1.5  # after every interpreter has started: they open together
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", OPEN_AT, str(path), str(start)], stderr=subprocess.PIPE
            )
            for _ in range(4)
        ]
        errors = [p.communicate(timeout=30)[1].decode() for p in processes]
        assert [p.returncode for p in processes] == [0, 0, 0, 0], errors
        store = OrderStore.open(path)
        assert len(store.all()) == len(SAMPLE_ORDERS)  # seeded once
        store.close()


def test_a_locked_database_is_a_tool_error_within_the_run_timeout(tmp_path: Path) -> None:
    db = tmp_path / "orders.db"  # AGENT_DB, set by conftest
    OrderStore.open(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process, mid-import
    try:
        started = time.monotonic()
        argv = ["ask", "Is order A100 refundable?", "--dry-run", "--json", "--timeout", "2"]
        result = runner.invoke(app, argv)
        elapsed = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert elapsed < 9  # the run's 2 s, not the 10 s busy timeout (wide: a busy machine)
    records = [json.loads(line) for line in result.stdout.splitlines()]
    observed = [r["observation"] for r in records if r["event"] == "observation"]
    assert observed and observed[0].startswith("ERROR: the order database is busy")
    assert records[-1]["event"] == "run_finished"
    assert result.exit_code in (0, 3), result.stderr  # answered "could not check", or timed out
