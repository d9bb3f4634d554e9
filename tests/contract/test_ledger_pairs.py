"""Money goes back once, for every pair of money writes on one order (issue 48, point 4), on
both backends: two changes proposed on the same records, then committed one after the other or
by two approvers at the same moment (each with a connection of its own, as two processes): one
is made, the other is refused with nothing written, and what went back is the winner's alone,
never more than was paid."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from agent_cli.domain import ledger
from agent_cli.domain.orders import Order, RefundRefused
from agent_cli.domain.writes import Refused, ReturnWindow
from agent_cli.store import record_reads
from agent_cli.store.sqlite import OrderStore
from agent_cli.store.write_commits import Target, commit, propose
from tests.contract.test_desk_queue import Opener, opener  # noqa: F401 - the fixture: a connection each

KAITO = Target("kaito_yamamoto_1007", "B200")  # pending, 5,400 JPY paid by credit_card_1007
HARUKI = Target("haruki_sato_1001", "A100")  # delivered: 1001001, 1002001 x2
CARD = {"payment_method_id": "credit_card_1001"}


@dataclass(frozen=True)
class Act:
    """One money write: planned on the records as they are, then committed on a connection."""

    name: str
    status: str  # the order's status once it is made
    plan: Callable[[OrderStore], tuple[Callable[[OrderStore], None], int]]  # and what goes back


def write(tool: str, target: Target, args: dict[str, Any], status: str) -> Act:
    def planned(store: OrderStore) -> tuple[Callable[[OrderStore], None], int]:
        window = _window(store, target)
        made = propose(store, tool, args, target, window)

        def committed(on: OrderStore) -> None:
            commit(on, made, args, target, by="lead", run_id="r", window=window)

        return committed, sum(p.amount for p in made.added if p.kind == "refund")

    return Act(tool, status, planned)


def _window(store: OrderStore, target: Target) -> ReturnWindow | None:
    order = store.get(target.order_code or "")
    assert order is not None
    if order.delivered_at is None:
        return None
    return ReturnWindow(30, order.delivered_at + timedelta(days=3))


def issue_refund(code: str, amount: int) -> Act:
    """`issue_refund`'s commit: its rules run again inside the store's transaction."""

    def planned(store: OrderStore) -> tuple[Callable[[OrderStore], None], int]:
        def committed(on: OrderStore) -> None:
            on.record_refund(code, amount, "damaged", key=f"k{amount}", check=_still_refundable)

        return committed, amount

    return Act("issue_refund", "DELIVERED", planned)


def _still_refundable(order: Order, refunded: int) -> None:
    """The refund rules that two writes race on: the status, and what is left."""
    if order.status != "DELIVERED":
        raise RefundRefused(f"status {order.status}")
    if refunded >= order.total:
        raise RefundRefused("nothing left")


CANCEL_B200 = write(
    "cancel_pending_order", KAITO, {"order_id": "B200", "reason": "no longer needed"}, "CANCELLED"
)
SWAP_B200 = write(
    "modify_pending_order_items",
    KAITO,
    {"order_id": "B200", "item_ids": ["1002002"], "new_item_ids": ["1002001"],
     "payment_method_id": "credit_card_1007"},
    "PENDING_ITEM_MODIFIED",
)  # fmt: skip
RETURN_A100 = write(
    "return_delivered_order_items",
    HARUKI,
    {"order_id": "A100", "item_ids": ["1001001"], **CARD},
    "RETURN_REQUESTED",
)
EXCHANGE_A100 = write(
    "exchange_delivered_order_items",
    HARUKI,
    {"order_id": "A100", "item_ids": ["1002001"], "new_item_ids": ["1002002"], **CARD},
    "EXCHANGE_REQUESTED",
)
PAIRS = [
    ("B200", CANCEL_B200, SWAP_B200),
    ("A100", RETURN_A100, EXCHANGE_A100),
    ("A100", issue_refund("A100", 1_000), RETURN_A100),
    ("A100", issue_refund("A100", 1_000), EXCHANGE_A100),
]
IDS = [f"{a.name}+{b.name}" for _, a, b in PAIRS]
FAILED = (Refused, RefundRefused)


def _state(store: OrderStore, code: str) -> tuple[str, int, int, int]:
    """The order's status, what went back by any path, what was paid, and its history's
    length: what a second write would have to change to have been made."""
    order = record_reads.desk_order(store, code)
    assert order is not None
    book = ledger.read(store, code, order.total)
    changes = store.query("SELECT COUNT(*) FROM order_changes WHERE order_code = ?", (code,))
    return order.status, book.back, book.paid, int(str(changes[0][0]))


@pytest.mark.parametrize(("code", "first", "second"), PAIRS, ids=IDS)
def test_one_after_the_other_the_second_is_refused_and_writes_nothing(
    opener: Opener,  # noqa: F811 - the fixture imported above
    code: str,
    first: Act,
    second: Act,
) -> None:
    store = opener()
    try:
        before = _state(store, code)
        (make_first, first_back), (make_second, _) = first.plan(store), second.plan(store)
        make_first(store)  # both were proposed on the same records, then the first is made
        after_first = _state(store, code)
        with pytest.raises(FAILED):
            make_second(store)
        assert _state(store, code) == after_first  # nothing of the second was written
        status, back, paid, _ = after_first
        assert status == first.status and back == before[1] + first_back <= paid
    finally:
        store.close()


@pytest.mark.parametrize(("code", "first", "second"), PAIRS, ids=IDS)
def test_two_approvers_at_once_make_one_of_them(
    opener: Opener,  # noqa: F811 - the fixture imported above
    code: str,
    first: Act,
    second: Act,
) -> None:
    setup = opener()
    before = _state(setup, code)
    acts = {first.name: first.plan(setup), second.name: second.plan(setup)}  # name: (make, back)
    made: list[str] = []
    refused: list[str] = []
    start = threading.Barrier(2)

    def approve(name: str) -> None:
        store = opener()
        start.wait()
        try:
            acts[name][0](store)
            made.append(name)
        except FAILED:
            refused.append(name)
        finally:
            store.close()

    threads = [threading.Thread(target=approve, args=(name,)) for name in acts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(made) == 1 and len(refused) == 1, (made, refused)
    winner = first if made == [first.name] else second
    status, back, paid, changes = _state(setup, code)
    assert status == winner.status and back == before[1] + acts[winner.name][1] <= paid
    assert changes - before[3] == (0 if winner.name == "issue_refund" else 1)  # one write
    setup.close()
