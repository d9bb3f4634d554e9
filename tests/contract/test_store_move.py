"""A desk moves whole (issue 50, section 2): `agent orders import --from-sqlite FILE` copies
every table of a store, the desk's and the queue's and the help centre's, into an empty store
(PostgreSQL or another SQLite file), in one transaction, and counts and sums both sides."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from datetime import timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.domain.records import Article
from agent_cli.domain.tickets import NewTicket
from agent_cli.errors import OrderFileError, StoreError
from agent_cli.store import approval_queue, copy_store, tickets
from agent_cli.store.bulk_writes import save_desk
from agent_cli.store.copy_store import TABLES, StoreNotEmpty, held_rows, move_store
from agent_cli.store.formats.tau2 import read_tau2
from agent_cli.store.help_articles import save_articles, search
from agent_cli.store.samples import SAMPLE_SHOP
from agent_cli.store.sqlite import OrderStore
from agent_cli.store.write_commits import Target, commit, propose

runner = CliRunner()
Opener = Callable[[], OrderStore]
B200 = Target("kaito_yamamoto_1007", "B200")
TAU2_DB = Path(str(resources.files("agent_cli.evaluation") / "tau2_retail" / "db.json"))


def full_store(store: OrderStore) -> None:
    """The sample shop, τ²'s db.json, a refund, a queued refund and a decided write, a
    committed change, a ticket claimed and one open: a store a team would move."""
    save_desk(store, read_tau2(TAU2_DB))
    store.record_refund("A100", 1000, "late", key="k-late")
    order = store.get("A105")
    assert order is not None
    approval_queue.queue(
        store,
        approval_queue.RefundProposal(
            order=order,
            amount=1500,
            reason="dented",
            run_id="run-1",
            question="refund?",
            proposed_by="bot",
            expires_in=timedelta(hours=1),
        ),
    )
    args = {"order_id": "B200", "reason": "no longer needed"}
    commit(
        store, propose(store, "cancel_pending_order", args, B200), args, B200, by="op", run_id="r"
    )
    first = tickets.open_ticket(
        store, NewTicket("angry", "where is it?", "run-2", "kaito_yamamoto_1007", "B200")
    )
    tickets.claim(store, first.id, by="mika")
    tickets.open_ticket(store, NewTicket("help", "a person please", "run-3"))


@pytest.fixture
def origin(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "old.db"
    store = OrderStore.open(path, seed=SAMPLE_SHOP)
    try:
        full_store(store)
    finally:
        store.close()
    yield path


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """An empty store of either backend, opened anew each call."""
    if request.param == "sqlite":
        path = tmp_path / "new.db"
        OrderStore.open(path, seed=()).close()
        yield lambda: OrderStore.open(path, create=False)
        return
    from agent_cli.store.postgres import PostgresStore

    url = request.getfixturevalue("pg_server").database()
    PostgresStore.connect(url).close()
    yield lambda: PostgresStore.connect(url)


def dump(store: OrderStore) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, as comparable values (a flag as a bool)."""
    rows = {}
    for table in TABLES:
        found = store.query(f"SELECT {', '.join(table.columns)} FROM {table.name} ORDER BY 1, 2")
        flags = [table.columns.index(c) for c in table.flags]
        rows[table.name] = [
            tuple(bool(v) if i in flags else v for i, v in enumerate(row)) for row in found
        ]
    rows["articles"] = store.query("SELECT id, title, body, updated_at FROM articles ORDER BY id")
    return rows


def test_every_table_a_store_holds_is_one_the_move_copies(tmp_path: Path) -> None:
    store = OrderStore.open(tmp_path / "s.db")
    try:
        names = {
            row[0]
            for row in store.query("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not str(row[0]).startswith("articles_fts")
        }
        for table in TABLES:  # and every column of each
            columns = {row[1] for row in store.query(f"PRAGMA table_info({table.name})")}
            assert columns == set(table.columns), table.name
    finally:
        store.close()
    assert names == {t.name for t in TABLES} | {"articles"}


def test_a_store_moves_whole_and_reads_back_the_same(origin: Path, target: Opener) -> None:
    old = OrderStore.open(origin, create=False)
    new = target()
    try:
        moved = move_store(old, new, source=str(origin))
        assert dump(new) == dump(old)
        assert moved.counts == held_rows(old) and moved.replaced == {}
        assert moved.counts["orders"] > 1000 and moved.counts["tickets"] == 2
        refunded = old.query("SELECT SUM(amount) FROM refunds")[0][0]
        assert moved.sums["refunds.amount"] == refunded and moved.sums["approvals.amount"] == 1500
    finally:
        old.close()
        new.close()


def test_the_moved_store_works_on_numbering_new_rows_after_the_old(
    origin: Path, target: Opener
) -> None:
    old = OrderStore.open(origin, create=False)
    new = target()
    try:
        move_store(old, new, source=str(origin))
        ticket = tickets.open_ticket(new, NewTicket("more", "again", "run-9"))
        late = old.find_refund("k-late")
        assert late is not None
        refund = new.record_refund("A101", 500, "once", key="k-new").refund
        assert ticket.id == 3 and refund.id == late.id + 1  # after the ids moved in, none reused
        again = new.record_refund("A100", 1000, "late", key="k-late")  # the key moved too
        assert (again.refund.id, again.created) == (late.id, False)
        assert [t.status for t in tickets.listed(new)] == ["claimed", "open", "open"]
        assert [h.id for h in copy_store.listed(new)] == [h.id for h in copy_store.listed(old)]
    finally:
        old.close()
        new.close()


def test_a_store_that_is_not_empty_is_refused_unless_replace(origin: Path, target: Opener) -> None:
    old = OrderStore.open(origin, create=False)
    new = target()
    try:
        tickets.open_ticket(new, NewTicket("there", "first", "run-0"))
        save_articles(new, [Article("old-faq", "Old FAQ", "Gone soon.")])
        before = dump(new)
        with pytest.raises(StoreNotEmpty) as raised:
            move_store(old, new, source=str(origin))
        assert str(raised.value).startswith(
            "the target store is not empty (tickets 1, articles 1); a move copies a store whole "
            "into an empty one: add --replace to empty the target first"
        )
        assert dump(new) == before
        moved = move_store(old, new, source=str(origin), replace=True)
        assert moved.replaced == {"tickets": 1, "articles": 1}
        assert search(new, "Old FAQ") == [] or all(h.id != "old-faq" for h in search(new, "FAQ"))
        assert dump(new) == dump(old)
    finally:
        old.close()
        new.close()


def test_a_copy_that_does_not_add_up_leaves_the_target_as_it_was(
    origin: Path, target: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = OrderStore.open(origin, create=False)
    new = target()
    real = copy_store._insert

    def drops_a_payment(store: OrderStore, table: Any, rows: list[Any], source: str) -> None:
        real(store, table, rows[1:] if table.name == "payments" else rows, source)

    monkeypatch.setattr(copy_store, "_insert", drops_a_payment)
    try:
        with pytest.raises(StoreError, match=r"payments has \d+ rows, \d+ were read") as raised:
            move_store(old, new, source=str(origin))
        assert str(raised.value).endswith(
            "nothing copied (the target was rolled back): report this"
        )
        assert not any(held_rows(new).values())
    finally:
        old.close()
        new.close()


@pytest.mark.parametrize(
    ("sql", "problem"),
    [
        ("UPDATE orders SET total = 'lots' WHERE code = 'A101'", "total 'lots' is not a number"),
        ("UPDATE refunds SET created_at = 'tuesday'", "created_at 'tuesday' is not a date"),
        ("UPDATE tickets SET summary = 'a' || char(0) || 'b' WHERE id = 2", "NUL character"),
        ("UPDATE variants SET available = 7 WHERE rowid = 1", "available 7 is not yes or no"),
        ("UPDATE approvals SET judged = 'broken'", "judged is not JSON"),
    ],
)
def test_a_bad_value_anywhere_is_one_line_and_nothing_is_copied(
    origin: Path, target: Opener, sql: str, problem: str
) -> None:
    db = sqlite3.connect(origin)
    with db:
        db.execute(sql)
    db.close()
    old = OrderStore.open(origin, create=False)
    new = target()
    try:
        with pytest.raises(OrderFileError) as raised:
            move_store(old, new, source=str(origin))
        said = str(raised.value)
        assert problem in said and said.startswith(f"{origin}: table ") and "\n" not in said
        assert said.endswith("nothing copied")
        assert not any(held_rows(new).values())
    finally:
        old.close()
        new.close()


def test_a_bad_value_is_named_by_its_table_row_and_first_column(origin: Path) -> None:
    db = sqlite3.connect(origin)
    with db:
        db.execute("UPDATE orders SET total = 'lots' WHERE code = 'A101'")
        codes = [row[0] for row in db.execute("SELECT code FROM orders ORDER BY 1")]
    db.close()
    old = OrderStore.open(origin, create=False)
    try:
        with pytest.raises(OrderFileError) as raised:
            copy_store.read_store(old, source="old.db")
    finally:
        old.close()
    row = codes.index("A101") + 1
    assert str(raised.value) == (
        f"old.db: table orders, row {row} (code 'A101'): total 'lots' is not a number; "
        "nothing copied"
    )


def test_a_number_too_large_for_the_target_is_one_line_naming_its_row(
    origin: Path, target: Opener
) -> None:
    """SQLite's INTEGER is 64 bits, PostgreSQL's 32: a position of 2**40 moves into a SQLite
    file, and is refused by PostgreSQL in one line naming the row, never an internal error."""
    db = sqlite3.connect(origin)
    with db:
        first = db.execute("SELECT id FROM customers ORDER BY 1 LIMIT 1").fetchone()[0]
        db.execute("UPDATE customers SET position = ? WHERE id = ?", (2**40, first))
    db.close()
    old = OrderStore.open(origin, create=False)
    new = target()
    try:
        if new.FULL_TEXT == "fts5":
            assert move_store(old, new, source=str(origin)).counts["customers"] > 500
        else:
            with pytest.raises(OrderFileError) as raised:
                move_store(old, new, source=str(origin))
            said = str(raised.value)
            assert said.startswith(f"{origin}: table customers, row 1 (id {first!r}): the store")
            assert "out of range" in said and "\n" not in said
            assert not any(held_rows(new).values())
    finally:
        old.close()
        new.close()


def test_a_copy_whose_money_does_not_add_up_is_rolled_back(
    origin: Path, target: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = OrderStore.open(origin, create=False)
    new = target()
    real = copy_store._insert

    def one_yen_more(store: OrderStore, table: Any, rows: list[Any], source: str) -> None:
        if table.name == "payments":
            at = table.columns.index("amount")
            rows = [(*rows[0][:at], rows[0][at] + 1, *rows[0][at + 1 :]), *rows[1:]]
        real(store, table, rows, source)

    monkeypatch.setattr(copy_store, "_insert", one_yen_more)
    try:
        with pytest.raises(StoreError) as raised:
            move_store(old, new, source=str(origin))
        said = str(raised.value)
        assert said.startswith("the copy does not add up: payments.amount sums to ")
        assert said.endswith("nothing copied (the target was rolled back): report this")
        assert not any(held_rows(new).values())
    finally:
        old.close()
        new.close()


def test_a_refund_over_an_order_the_target_refuses_is_named_by_row(
    origin: Path, target: Opener
) -> None:
    db = sqlite3.connect(origin)
    db.execute("PRAGMA ignore_check_constraints = ON")  # a store written by an older release
    with db:
        db.execute("UPDATE refunds SET amount = -5 WHERE idempotency_key = 'k-late'")
    db.close()
    old = OrderStore.open(origin, create=False)
    new = target()
    try:
        with pytest.raises(
            OrderFileError, match=r"table refunds, row 2 \(id 2\): the store refused"
        ) as raised:
            move_store(old, new, source=str(origin))
        said = str(raised.value)
        assert said.startswith(f"{origin}: ") and "check" in said.lower()  # the store's reason
        assert not any(held_rows(new).values())
    finally:
        old.close()
        new.close()


@pytest.mark.parametrize(("amount", "copied"), [(15_800, True), (15_801, False)])
def test_refunds_may_come_to_an_orders_total_and_never_past_it(
    origin: Path, target: Opener, amount: int, copied: bool
) -> None:
    db = sqlite3.connect(origin)  # A105 (15,800 JPY) refunded in full, or by one yen more
    with db:
        db.execute(
            "INSERT INTO refunds (order_code, amount, reason, created_at, idempotency_key)"
            " VALUES ('A105', ?, 'all', '2026-10-13T10:00:00+00:00', 'whole')",
            (amount,),
        )
    db.close()
    old = OrderStore.open(origin, create=False)
    new = target()
    try:
        if copied:
            move_store(old, new, source=str(origin))
        else:
            with pytest.raises(OrderFileError) as raised:
                move_store(old, new, source=str(origin))
            assert str(raised.value).startswith(
                f"{origin}: the refunds of order A105 come to 15,801 JPY, more than its total"
            )
        assert any(held_rows(new).values()) is copied
    finally:
        old.close()
        new.close()


def test_the_command_moves_a_store_into_postgresql_and_says_what_it_moved(
    origin: Path, pg_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_DB_URL", pg_server.database())
    moved = runner.invoke(app, ["orders", "import", "--from-sqlite", str(origin)])
    assert moved.exit_code == 0, moved.stderr
    assert f"Moved {origin} into postgresql://" in moved.stdout
    assert "orders 1,0" in moved.stdout and "tickets 2" in moved.stdout
    assert "articles 6" in moved.stdout and "all equal" in moved.stdout
    shown = json.loads(runner.invoke(app, ["orders", "show", "A100", "--json"]).stdout)
    assert [(r["amount"], r["reason"]) for r in shown["refunds"]] == [(1000, "late")]
    listed = runner.invoke(app, ["tickets", "list", "--json"]).stdout
    assert len(listed.splitlines()) == 2
    again = runner.invoke(app, ["orders", "import", "--from-sqlite", str(origin)])
    assert again.exit_code == 2 and "not empty" in again.stderr and "--replace" in again.stderr
    replaced = runner.invoke(app, ["orders", "import", "--from-sqlite", str(origin), "--replace"])
    assert replaced.exit_code == 0, replaced.stderr
    assert replaced.stdout.startswith("Emptied postgresql://")
    shown = json.loads(runner.invoke(app, ["orders", "show", "A100", "--json"]).stdout)
    assert len(shown["refunds"]) == 1  # replaced, not added to


def test_a_store_moves_back_from_postgresql_into_a_sqlite_file(
    origin: Path, pg_server: Any, tmp_path: Path
) -> None:
    from agent_cli.store.postgres import PostgresStore

    old = OrderStore.open(origin, create=False)
    team = PostgresStore.connect(pg_server.database())
    back = OrderStore.open(tmp_path / "back.db", seed=())
    try:
        move_store(old, team, source=str(origin))
        move_store(team, back, source="the team's store")
        assert dump(back) == dump(old)
    finally:
        for store in (old, team, back):
            store.close()


def test_replace_goes_with_a_move_or_tau2_only() -> None:
    result = runner.invoke(app, ["orders", "import", "x.csv", "--replace"])
    assert result.exit_code == 2 and "--replace goes with --format tau2 or --from-sqlite" in (
        result.stderr
    )
