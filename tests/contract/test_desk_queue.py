"""The desk's writes in the approval queue, on both backends: queued when nobody here can
approve, committed once by a person later (on the records as they are then), denied or expired
changing nothing, and concurrent approvers, of one item or of two that conflict, changing the
store once."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.store import approval_queue, record_reads
from agent_cli.store.approval_items import Approval
from agent_cli.store.approval_queue import Decided, WriteProposal
from agent_cli.store.samples import SAMPLE_SHOP
from agent_cli.store.sqlite import OrderStore
from agent_cli.store.write_commits import Target, propose

Opener = Callable[[], OrderStore]
B200 = Target("kaito_yamamoto_1007", "B200")
CANCEL = ("cancel_pending_order", {"order_id": "B200", "reason": "no longer needed"})
MOVE = (
    "modify_pending_order_address",
    {"order_id": "B200", "address1": "1-1 Umeda", "address2": "", "city": "Osaka",
     "state": "Osaka", "country": "Japan", "zip": "530-0001"},
)  # fmt: skip


@pytest.fixture(params=["sqlite", "postgres"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Connections to one store: each approver has its own, as two processes would."""
    if request.param == "sqlite":
        path = tmp_path / "orders.db"
        OrderStore.open(path).close()
        yield lambda: OrderStore.open(path, create=False)
        return
    from agent_cli.store.postgres import PostgresStore

    url = request.getfixturevalue("pg_server").database()
    PostgresStore.connect(url, seed=SAMPLE_SHOP).close()
    yield lambda: PostgresStore.connect(url)


def queued(
    store: OrderStore, call: tuple[str, dict[str, Any]], expires_in: timedelta = timedelta(hours=1)
) -> Approval:
    tool, args = call
    plan = propose(store, tool, args, B200)
    proposal = WriteProposal(
        plan=plan,
        args=args,
        target=B200,
        run_id="run-1",
        question="Please cancel B200",
        proposed_by="bot",
        expires_in=expires_in,
    )
    return approval_queue.queue(store, proposal)


def approve(store: OrderStore, item: int, by: str = "lead") -> Decided:
    def no_refund_rules(*_: object) -> None:  # refunds only: a write plans again itself
        raise AssertionError("a write is not checked as a refund")

    decided = approval_queue.approve(store, item, by=by, recheck=no_refund_rules)
    assert decided is not None
    return decided


def status(opener: Opener) -> str:
    store = opener()
    try:
        order = record_reads.desk_order(store, "B200")
        assert order is not None
        return order.status
    finally:
        store.close()


def test_a_queued_write_is_committed_once_by_a_person_later(opener: Opener) -> None:
    store = opener()
    item = queued(store, CANCEL)
    assert item.is_write and item.order_code == "B200" and item.amount == 5400
    assert item.summary.startswith("cancel B200 (1 item; reason: no longer needed)")
    assert queued(store, CANCEL).id == item.id  # the same call waits once
    assert status(opener) == "PENDING"
    decided = approve(store, item.id)
    assert decided.changed and isinstance(decided.item, Approval)
    assert decided.item.status == "approved"
    assert decided.item.outcome is not None
    assert decided.item.outcome.startswith("change #1 made: cancel B200")
    again = approve(store, item.id)
    assert not again.changed  # closed: nothing more
    assert status(opener) == "CANCELLED"
    (change,) = record_reads.changes(store, order="B200")
    assert change.made_by == "lead" and change.run_id == "run-1"
    store.close()


def test_a_write_whose_records_changed_since_it_was_queued_fails(opener: Opener) -> None:
    store = opener()
    item = queued(store, CANCEL)
    tool, args = MOVE
    from agent_cli.store.write_commits import commit

    commit(store, propose(store, tool, args, B200), args, B200, by="x", run_id="r")
    decided = approve(store, item.id)
    assert isinstance(decided.item, Approval) and decided.item.status == "failed"
    assert "the records changed since this was proposed" in (decided.item.outcome or "")
    assert status(opener) == "PENDING"
    store.close()


def test_denied_and_expired_writes_change_nothing(opener: Opener) -> None:
    store = opener()
    denied = queued(store, CANCEL)
    approval_queue.deny(store, denied.id, by="lead", reason="customer called back")
    expired = queued(store, MOVE, expires_in=timedelta(seconds=-1))
    decided = approve(store, expired.id)
    assert isinstance(decided.item, Approval) and decided.item.status == "expired"
    assert approve(store, denied.id).changed is False
    order = record_reads.desk_order(store, "B200")
    assert order is not None and order.status == "PENDING"
    assert order.address is not None and order.address.city != "Osaka"
    assert record_reads.changes(store, order="B200") == []
    store.close()


def _at_once(opener: Opener, items: list[int]) -> list[Decided]:
    """Each item approved from its own connection, all released together."""
    start = threading.Barrier(len(items))
    results: list[Any] = [None] * len(items)

    def approver(n: int) -> None:
        store = opener()  # in its thread: a SQLite connection stays in the one that made it
        start.wait(timeout=30)
        try:
            results[n] = approve(store, items[n], by=f"approver-{n}")
        except Exception as exc:  # reported below, with the others
            results[n] = exc
        finally:
            store.close()

    threads = [threading.Thread(target=approver, args=(n,)) for n in range(len(items))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert all(isinstance(r, Decided) for r in results), results
    return results


def test_two_approvers_of_one_write_commit_it_once(opener: Opener) -> None:
    store = opener()
    item = queued(store, CANCEL)
    store.close()
    decided = _at_once(opener, [item.id, item.id])
    assert sorted(d.changed for d in decided) == [False, True]
    check = opener()
    assert len(record_reads.changes(check, order="B200")) == 1
    order = record_reads.desk_order(check, "B200")
    assert order is not None and [p.kind for p in order.payments] == ["payment", "refund"]
    check.close()


def test_two_conflicting_writes_approved_at_once_commit_one(opener: Opener) -> None:
    store = opener()
    items = [queued(store, CANCEL).id, queued(store, MOVE).id]
    store.close()
    decided = _at_once(opener, items)
    states = sorted(d.item.status for d in decided if isinstance(d.item, Approval))
    assert states == ["approved", "failed"]
    check = opener()
    assert len(record_reads.changes(check, order="B200")) == 1
    check.close()


def test_the_queue_shows_and_decides_a_write_from_the_command_line() -> None:
    runner = CliRunner()
    args = '{"order_id": "B200", "reason": "no longer needed"}'
    assert runner.invoke(app, ["tools", "call", "cancel_pending_order", args]).exit_code == 5
    shown = runner.invoke(app, ["approvals", "show", "1"])
    assert "change    cancel B200 (1 item; reason: no longer needed)" in shown.stdout
    decided = runner.invoke(app, ["approvals", "approve", "1"])
    assert decided.exit_code == 0, decided.output
    assert decided.stdout.startswith("#1: approved: change #1 made: cancel B200")
    history = runner.invoke(app, ["orders", "show", "B200"]).stdout
    assert "cancelled no longer needed" in history and "change #1 " in history


def _with_rules(tmp_path: Path, rules: str) -> dict[str, str]:
    config = tmp_path / "rules.toml"
    config.write_text("[refunds]\nqueue_hours = 48\n" + rules)
    return {"AGENT_CONFIG": str(config)}


CANCEL_ARGS = '{"order_id": "B200", "reason": "no longer needed"}'


def test_a_shop_rule_naming_a_write_approves_or_denies_it(tmp_path: Path) -> None:
    runner = CliRunner()
    env = _with_rules(
        tmp_path,
        '[[refunds.rules]]\nname = "small cancels"\ndecision = "auto"\n'
        'tools = ["cancel_pending_order"]\nstatuses = ["PENDING"]\nbelow = { JPY = 10000 }\n'
        '[[refunds.rules]]\nname = "no moves by bots"\ndecision = "deny"\n'
        'tools = ["modify_user_address"]\n',
    )
    cancel = ["tools", "call", "cancel_pending_order", CANCEL_ARGS, "--json"]
    result = runner.invoke(app, cancel, env=env)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["observation"].startswith("CHANGED: change #1: cancel B200")
    where = {k: v for k, v in MOVE[1].items() if k != "order_id"}
    address = json.dumps({**where, "user_id": "aoi_suzuki_1002"})
    moved = runner.invoke(app, ["tools", "call", "modify_user_address", address], env=env)
    assert moved.exit_code == 1 and "no moves by bots" in moved.stdout, moved.output
    logged = runner.invoke(app, ["logs", "show", "--json"], env=env)
    decided = [json.loads(x) for x in logged.stdout.splitlines()]
    assert any(e["event"] == "approval_decided" and e["by"] == "policy" for e in decided)


def test_a_rule_naming_no_write_decides_refunds_only(tmp_path: Path) -> None:
    env = _with_rules(
        tmp_path,
        '[[refunds.rules]]\nname = "small refunds"\ndecision = "auto"\nbelow = { JPY = 100000 }\n',
    )
    result = CliRunner().invoke(
        app, ["tools", "call", "cancel_pending_order", CANCEL_ARGS], env=env
    )
    assert result.exit_code == 5 and result.stdout.startswith("QUEUED: cancel B200")


@pytest.mark.parametrize(
    ("rule", "said"),
    [
        ('decision = "auto"\ntools = ["cancel_pending_order"]', "state the amount it stays below"),
        ('decision = "ask"\ntools = ["cancel_order"]', "tools.0 (file"),
        ('decision = "deny"\ntools = ["return_delivered_order_items"]\nreasons = ["x"]',
         "reasons is for refunds, and this rule decides return_delivered_order_items"),
    ],
)  # fmt: skip
def test_a_write_rule_that_cannot_work_is_a_configuration_error(
    tmp_path: Path, rule: str, said: str
) -> None:
    env = _with_rules(tmp_path, f'[[refunds.rules]]\nname = "r"\n{rule}\n')
    result = CliRunner().invoke(
        app, ["tools", "call", "cancel_pending_order", CANCEL_ARGS], env=env
    )
    assert result.exit_code == 2 and said in result.stderr, result.output


def test_an_address_rule_may_approve_with_no_amount(tmp_path: Path) -> None:
    env = _with_rules(
        tmp_path,
        '[[refunds.rules]]\nname = "addresses"\ndecision = "auto"\n'
        'tools = ["modify_pending_order_address", "modify_user_address"]\n',
    )
    args = json.dumps(MOVE[1])
    result = CliRunner().invoke(
        app, ["tools", "call", "modify_pending_order_address", args], env=env
    )
    assert result.exit_code == 0 and result.stdout.startswith("CHANGED: change #1: ship B200")


def test_a_dropped_connection_mid_write_leaves_no_half_change(
    pg_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server goes away between the order's rows and the history's: nothing of the change
    is kept, and the error is one clear line."""
    import psycopg

    from agent_cli.errors import StoreError
    from agent_cli.store import write_commits
    from agent_cli.store.postgres import PostgresStore

    url = pg_server.database()
    store = PostgresStore.connect(url, seed=SAMPLE_SHOP)
    history = write_commits._history

    def dropped(*args: Any, **kwargs: Any) -> int:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        return history(*args, **kwargs)

    monkeypatch.setattr(write_commits, "_history", dropped)
    tool, args = CANCEL
    with pytest.raises(StoreError, match=r"check that the server is up"):
        write_commits.commit(
            store, propose(store, tool, args, B200), args, B200, by="x", run_id="r"
        )
    store.close()
    again = PostgresStore.connect(url)
    try:
        order = record_reads.desk_order(again, "B200")
        assert order is not None and order.status == "PENDING" and len(order.payments) == 1
        assert record_reads.changes(again, order="B200") == []
    finally:
        again.close()


def test_with_the_queue_off_a_write_nobody_approves_is_denied(tmp_path: Path) -> None:
    config = tmp_path / "off.toml"
    config.write_text("[refunds]\nqueue_hours = 0\n")
    env = {"AGENT_CONFIG": str(config)}
    result = CliRunner().invoke(
        app, ["tools", "call", "cancel_pending_order", CANCEL_ARGS], env=env
    )
    assert result.exit_code == 1 and result.stdout.startswith("DENIED: cancel B200"), result.output
    listed = CliRunner().invoke(app, ["approvals", "list", "--json"], env=env)
    assert listed.stdout.strip() == ""


def test_a_dry_run_never_queues_a_write(tmp_path: Path) -> None:
    script = [
        {"type": "tool", "tool": "find_user_id_by_email",
         "args": {"email": "kaito.yamamoto@example.com"}},
        {"type": "tool", "tool": "cancel_pending_order", "args": json.loads(CANCEL_ARGS)},
        {"type": "final", "answer": "Shall I make change P1 and cancel B200?"},
        {"type": "tool", "tool": "cancel_pending_order", "args": json.loads(CANCEL_ARGS)},
        {"type": "final", "answer": "It is not cancelled."},
    ]  # fmt: skip
    path = tmp_path / "s.json"
    path.write_text(json.dumps(script))
    trace = tmp_path / "t.jsonl"
    argv = ["chat", "--script", str(path), "--dry-run", "--trace", str(trace)]
    said = "Cancel B200 please, kaito.yamamoto@example.com\nyes\n"
    assert CliRunner().invoke(app, argv, input=said).exit_code == 0
    observed = [
        json.loads(line)["observation"]
        for line in trace.read_text().splitlines()
        if json.loads(line)["event"] == "observation"
    ]
    assert observed[-1].startswith("DENIED: cancel B200") and "QUEUED" not in trace.read_text()
    assert CliRunner().invoke(app, ["approvals", "list", "--json"]).stdout.strip() == ""


def test_a_write_rule_may_name_customers(tmp_path: Path) -> None:
    env = _with_rules(
        tmp_path,
        '[[refunds.rules]]\nname = "trusted"\ndecision = "auto"\nbelow = { JPY = 10000 }\n'
        'tools = ["cancel_pending_order"]\ncustomers = ["kaito_yamamoto_1007"]\n',
    )
    result = CliRunner().invoke(
        app, ["tools", "call", "cancel_pending_order", CANCEL_ARGS], env=env
    )
    assert result.exit_code == 0 and result.stdout.startswith("CHANGED:"), result.output


def test_a_held_order_makes_a_second_commit_wait_and_then_refuse(
    opener: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first commit holds the order (SQLite: the write lock; PostgreSQL: the order's row)
    while the second starts: the second reads the records only after the first is done, finds
    them changed, and writes nothing. Correct code passes however the threads are timed."""
    from agent_cli.store import write_commits

    first_in, second_started = threading.Event(), threading.Event()
    real_write = write_commits.write

    def slow_first(store: Any, planned: Any) -> None:
        if not first_in.is_set():
            first_in.set()
            second_started.wait(timeout=30)
            time.sleep(1.0)  # let the second reach its read (it must wait for the lock)
        real_write(store, planned)

    monkeypatch.setattr(write_commits, "write", slow_first)
    setup = opener()
    proposals = [(CANCEL, propose(setup, *CANCEL, B200)), (MOVE, propose(setup, *MOVE, B200))]
    setup.close()
    results: list[Any] = [None, None]

    def committer(n: int) -> None:
        store = opener()
        if n == 1:
            first_in.wait(timeout=30)
            second_started.set()
        (_, args), planned = proposals[n]
        try:
            results[n] = write_commits.commit(store, planned, args, B200, by=f"c{n}", run_id="r")
        except Exception as exc:
            results[n] = exc
        finally:
            store.close()

    threads = [threading.Thread(target=committer, args=(n,)) for n in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert isinstance(results[0], write_commits.Committed), results
    assert isinstance(results[1], write_commits.RecordsChanged), results
    check = opener()
    assert len(record_reads.changes(check, order="B200")) == 1
    check.close()


def test_each_different_write_waits_as_its_own_item(opener: Opener) -> None:
    """The queue's key for a write is the tool and its exact arguments: another write on the
    same order, or the same write with other arguments, waits as an item of its own; the
    same call again waits as the first."""
    store = opener()
    cancel = queued(store, CANCEL)
    move = queued(store, MOVE)
    elsewhere = queued(store, (MOVE[0], {**MOVE[1], "city": "Kyoto", "zip": "600-8001"}))
    assert len({cancel.id, move.id, elsewhere.id}) == 3
    assert queued(store, MOVE).id == move.id
    assert move.summary != elsewhere.summary and "Kyoto" in elsewhere.summary
    store.close()
