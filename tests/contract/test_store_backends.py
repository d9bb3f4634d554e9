"""One store contract, two backends: every test here runs on the SQLite file and on a real
PostgreSQL server (started by the tests themselves, tests/postgres.py)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.domain.orders import Order, RefundRefused
from agent_cli.errors import StoreError
from agent_cli.store import approval_queue
from agent_cli.store.samples import SAMPLE_ORDERS
from agent_cli.store.sqlite import OrderStore

runner = CliRunner()
Opener = Callable[[], OrderStore]  # a new connection to the same database


@pytest.fixture(params=["sqlite", "postgres"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    if request.param == "sqlite":
        path = tmp_path / "orders.db"
        OrderStore.open(path, seed=SAMPLE_ORDERS).close()
        yield lambda: OrderStore.open(path, create=False)
        return
    from agent_cli.store.postgres import PostgresStore

    url = request.getfixturevalue("pg_server").database()
    PostgresStore.connect(url, seed=SAMPLE_ORDERS).close()
    yield lambda: PostgresStore.connect(url)


@pytest.fixture
def store(opener: Opener) -> Iterator[OrderStore]:
    opened = opener()
    yield opened
    opened.close()


def test_orders_read_the_same(store: OrderStore) -> None:
    assert [o.code for o in store.all()] == sorted(o.code for o in SAMPLE_ORDERS)
    assert store.get("A100") == next(o for o in SAMPLE_ORDERS if o.code == "A100")
    assert store.get("Z999") is None
    delivered = store.orders(status="DELIVERED", limit=2)
    assert [o.code for o in delivered] == ["A100", "A103"]
    assert store.count(status="DELIVERED") == 5 and store.count() == len(SAMPLE_ORDERS)


def test_import_adds_and_replaces_and_keeps_refunds(store: OrderStore) -> None:
    store.record_refund("A100", 1000, "late", key="k1")
    changed = Order("A100", "DELIVERED", 260_000, date(2026, 10, 2), customer="Sato")
    result = store.import_orders([changed, Order("N1", "PENDING", 10)])
    assert (result.added, result.updated) == (1, 1)
    assert store.get("A100") == changed and store.get("N1") is not None
    assert store.refunded_total("A100") == 1000


def test_a_refund_is_recorded_once_per_key_and_never_past_the_total(store: OrderStore) -> None:
    first = store.record_refund("A105", 5000, "late", key="k1")
    again = store.record_refund("A105", 5000, "late", key="k1")
    assert first.created and not again.created and again.refund.id == first.refund.id
    with pytest.raises(RefundRefused, match="only 10,800 JPY"):
        store.record_refund("A105", 20_000, "more", key="k2")
    store.record_refund("A105", 10_800, "the rest", key="k3")
    assert store.get("A105").status == "REFUNDED"  # type: ignore[union-attr]
    assert [r.amount for r in store.refunds("A105")] == [5000, 10_800]


def test_many_processes_refunding_one_order_make_one_refund(opener: Opener) -> None:
    """Each of 8 connections at once asks for the whole of A100 under its own key: the order's
    row lock (PostgreSQL) or the write lock (SQLite) lets exactly one through."""
    outcomes: list[str] = []
    barrier = threading.Barrier(8)

    def refund(number: int) -> None:
        store = opener()
        try:
            barrier.wait(timeout=30)
            store.record_refund("A100", 250_000, "all of it", key=f"k{number}")
            outcomes.append("refunded")
        except RefundRefused:
            outcomes.append("refused")
        finally:
            store.close()

    threads = [threading.Thread(target=refund, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes) == ["refunded"] + ["refused"] * 7
    check = opener()
    try:
        assert [r.amount for r in check.refunds("A100")] == [250_000]
    finally:
        check.close()


def queued(store: OrderStore) -> approval_queue.Approval:
    order = store.get("A105")
    assert order is not None
    proposal = approval_queue.RefundProposal(
        order=order,
        amount=1000,
        reason="damaged",
        run_id="run",
        question="refund?",
        proposed_by="bot",
        expires_in=timedelta(hours=1),
    )
    return approval_queue.queue(store, proposal)


def test_the_approval_queue_decides_once(opener: Opener) -> None:
    store = opener()
    item = queued(store).id
    store.close()
    results: list[bool] = []

    def approve() -> None:
        mine = opener()
        try:
            decided = approval_queue.approve(mine, item, by="lead", recheck=lambda *_: None)
            assert decided is not None
            results.append(decided.changed and decided.item.status == "approved")
        finally:
            mine.close()

    threads = [threading.Thread(target=approve) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(results) == [False, False, False, True]
    check = opener()
    try:
        assert [r.amount for r in check.refunds("A105")] == [1000]
        assert approval_queue.get(check, item).status == "approved"  # type: ignore[union-attr]
    finally:
        check.close()


def test_connecting_again_does_not_migrate_or_seed_again(opener: Opener) -> None:
    first, second = opener(), opener()
    try:
        assert len(first.all()) == len(second.all()) == len(SAMPLE_ORDERS)
    finally:
        first.close()
        second.close()


# -- PostgreSQL only: the commands, and its failures ------------------------------------------


def test_every_order_command_works_on_postgresql(
    pg_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_DB_URL", pg_server.database())
    orders = tmp_path / "orders.csv"
    orders.write_text("code,status,total,delivered_at\nA100,DELIVERED,250000,2026-10-01\n")
    empty = runner.invoke(app, ["orders", "list"])
    assert empty.exit_code == 0 and empty.stdout.splitlines()[1:] == []  # a team's data is its own
    imported = runner.invoke(app, ["orders", "import", str(orders)])
    assert imported.exit_code == 0, imported.stderr
    listed = runner.invoke(app, ["orders", "list"])
    assert "A100\tDELIVERED\t250000\tJPY\t2026-10-01" in listed.stdout
    shown = json.loads(runner.invoke(app, ["orders", "show", "A100", "--json"]).stdout)
    assert shown["total"] == 250000 and shown["refunds"] == []
    argv = ["ask", "Is order A100 refundable?", "--dry-run", "--today", "2026-10-13", "-q"]
    answered = runner.invoke(app, argv)
    assert answered.exit_code == 0 and "A100" in answered.stdout and "refundable" in answered.stdout


def test_a_server_that_is_down_is_a_clear_error_and_the_password_is_never_shown(
    pg_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nowhere = tmp_path / "no-server"
    nowhere.mkdir()
    monkeypatch.setenv("AGENT_DB_URL", f"postgresql://agent:S3CRET-pw@/db?host={nowhere}")
    result = runner.invoke(app, ["orders", "list"])
    assert result.exit_code == 1
    assert "Cannot connect to the order database postgresql://agent:***@/db" in result.stderr
    assert "S3CRET" not in result.stderr and "Traceback" not in result.stderr


def test_a_password_reference_comes_from_the_environment(
    pg_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_cli.store.postgres import PostgresStore

    url = pg_server.database().replace("agent@", "agent:${DB_PASSWORD}@")
    with pytest.raises(StoreError, match=r"\$\{DB_PASSWORD\}, which is not set"):
        PostgresStore.connect(url)
    monkeypatch.setenv("DB_PASSWORD", "any")  # trust authentication: any password is accepted
    PostgresStore.connect(url).close()


def test_import_takes_a_file_or_a_database_not_both(tmp_path: Path) -> None:
    both = runner.invoke(app, ["orders", "import", "x.csv", "--from-sqlite", "y.db"])
    neither = runner.invoke(app, ["orders", "import"])
    assert both.exit_code == neither.exit_code == 2
    assert "one of them" in both.stderr


def test_doctor_checks_the_server_the_schema_and_the_privileges(
    pg_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    from agent_cli.store.postgres import PostgresStore

    url = pg_server.database()
    PostgresStore.connect(url).close()  # the agent's own user made the tables
    monkeypatch.setenv("AGENT_DB_URL", url)
    owner = runner.invoke(app, ["doctor"])
    assert "✓ order store: postgresql://agent@/" in owner.stdout
    from agent_cli.store.postgres import SCHEMA_VERSION

    assert "PostgreSQL 1" in owner.stdout and f"schema version {SCHEMA_VERSION}" in owner.stdout
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("CREATE ROLE clerk LOGIN")
        admin.execute("GRANT SELECT ON agent_schema, orders, refunds, approvals TO clerk")
    monkeypatch.setenv("AGENT_DB_URL", url.replace("agent@", "clerk@"))
    clerk = runner.invoke(app, ["doctor"])
    assert clerk.exit_code == 1
    assert "✗ order store" in clerk.stdout
    assert "missing: INSERT on orders, UPDATE on orders, INSERT on refunds" in clerk.stdout
    monkeypatch.setenv("AGENT_DB_URL", url.replace("agent@", "nobody@"))
    unknown = runner.invoke(app, ["doctor"])  # a user the server does not know
    assert "✗ order store: Cannot connect to the order database" in unknown.stdout


def test_a_dropped_connection_is_a_clear_error_and_leaves_no_half_refund(pg_server: Any) -> None:
    import psycopg

    from agent_cli.store.postgres import PostgresStore

    url = pg_server.database()
    store = PostgresStore.connect(url, seed=SAMPLE_ORDERS)

    def dropped(order: Order, refunded: int) -> None:  # the server goes away mid-refund
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )

    with pytest.raises(StoreError, match=r"failed: .*check that the server is up"):
        store.record_refund("A105", 1000, "late", key="k1", check=dropped)
    store.close()
    again = PostgresStore.connect(url)
    try:
        assert again.refunds("A105") == []  # nothing half-written
    finally:
        again.close()


def test_a_refund_waits_for_a_held_order_only_as_long_as_the_run_may(
    opener: Opener, request: pytest.FixtureRequest
) -> None:
    """Another process holds the order (SQLite: the database's write lock; PostgreSQL: the
    order's row): the refund gives up when the run's time is up, as StoreBusy, not after the
    10 s default."""
    import time

    from agent_cli.errors import StoreBusy
    from agent_cli.store.sqlite import busy_wait_at_most

    held, release = threading.Event(), threading.Event()

    def hold() -> None:  # SQLite: BEGIN IMMEDIATE, the write lock; PostgreSQL: the row
        holder = opener()
        sql = "SELECT code FROM orders WHERE code = ?" + holder.FOR_UPDATE
        holder.atomically(lambda: (holder.query(sql, ("A100",)), held.set(), release.wait(60)))
        holder.close()

    holding = threading.Thread(target=hold)
    holding.start()
    assert held.wait(60)
    store = opener()
    try:
        began = time.monotonic()
        with busy_wait_at_most(1.0), pytest.raises(StoreBusy):
            store.record_refund("A100", 1000, "late", key="k1")
        assert time.monotonic() - began < 8  # the run's 1 s (wide: a busy machine), not 10 s
    finally:
        store.close()
        release.set()
        holding.join(60)


def test_agents_starting_together_on_a_new_database_migrate_once(pg_server: Any) -> None:
    from agent_cli.store.postgres import PostgresStore

    url = pg_server.database()
    stores: list[OrderStore] = []
    errors: list[BaseException] = []

    def connect() -> None:
        try:
            stores.append(PostgresStore.connect(url))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=connect) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == [] and len(stores) == 4
    versions = stores[0].query("SELECT version FROM agent_schema")
    from agent_cli.store.postgres import SCHEMA_VERSION

    assert versions == [(SCHEMA_VERSION,)]
    for store in stores:
        store.close()


@pytest.mark.parametrize("conflicts", [1, 2])
def test_a_refund_rolled_back_by_a_serialization_failure_is_run_again_once(
    pg_server: Any, conflicts: int
) -> None:
    """The server rolls the refund's transaction back as it would for a serialization failure
    or a deadlock (SQLSTATE 40001, raised by a trigger for the first `conflicts` attempts; a
    sequence counts them, untouched by the rollbacks). Once: the refund runs again from the
    start and is recorded once. Twice: one clear error, and nothing written."""
    import psycopg

    from agent_cli.store.postgres import PostgresStore

    url = pg_server.database()
    PostgresStore.connect(url, seed=SAMPLE_ORDERS).close()
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("CREATE SEQUENCE attempts")
        admin.execute(
            "CREATE FUNCTION conflict() RETURNS trigger AS $$ BEGIN"
            f" IF nextval('attempts') <= {conflicts} THEN RAISE EXCEPTION"
            " 'could not serialize access due to concurrent update'"
            " USING ERRCODE = 'serialization_failure'; END IF; RETURN NEW; END $$"
            " LANGUAGE plpgsql"
        )
        admin.execute(
            "CREATE TRIGGER conflicting BEFORE INSERT ON refunds"
            " FOR EACH ROW EXECUTE FUNCTION conflict()"
        )
    store = PostgresStore.connect(url)
    try:
        if conflicts == 1:
            recorded = store.record_refund("A100", 1000, "late", key="k1")
            assert recorded.created and recorded.refund.amount == 1000
            assert [(r.amount, r.reason) for r in store.refunds("A100")] == [(1000, "late")]
        else:
            with pytest.raises(StoreError, match=r"rolled the change back.*nothing was written"):
                store.record_refund("A100", 1000, "late", key="k1")
            assert store.refunds("A100") == []
    finally:
        store.close()


def test_the_docs_name_every_privilege_the_agent_needs_on_postgresql() -> None:
    """docs/orders.md's table of privileges is the code's (`_NEEDED`), every table of it."""
    pytest.importorskip("psycopg")
    from agent_cli.store.postgres import _NEEDED

    text = (Path(__file__).parents[2] / "docs" / "orders.md").read_text()
    rows = {}
    for line in text.splitlines():
        if line.startswith("| `") and line.count("|") == 3:
            tables, privileges = line.strip("|").split("|")
            for table in tables.replace("`", "").split(","):
                rows[table.strip()] = tuple(p.strip() for p in privileges.split(","))
    assert {t: tuple(sorted(p)) for t, p in rows.items()} == {
        t: tuple(sorted(p)) for t, p in _NEEDED.items()
    }


def test_a_user_who_may_not_create_the_tables_is_told_which_grant_it_needs(
    pg_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL 15 no longer lets every user CREATE in `public`: the first connection of a
    user without it names the schema grant (the old message pointed at doctor, which could not
    connect to list anything); a user with it but no table privileges is told where they are
    listed."""
    import psycopg

    url = pg_server.database()
    name = url.split("?")[0].rsplit("/", 1)[1]
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(
            "DO $$ BEGIN CREATE ROLE clerk LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$"
        )
        admin.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        admin.execute(f"GRANT CONNECT ON DATABASE {name} TO clerk")  # type: ignore[call-overload]
    monkeypatch.setenv("AGENT_DB_URL", url.replace("agent@", "clerk@"))
    result = runner.invoke(app, ["orders", "list"])
    assert result.exit_code == 1
    assert "permission denied for schema public" in result.stderr
    assert "GRANT USAGE, CREATE ON SCHEMA public" in result.stderr
    assert "agent orders init" in result.stderr and "Traceback" not in result.stderr
