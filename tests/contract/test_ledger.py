"""Money goes back once (issue 48, point 4), on both backends: one ledger per order, read by
every write that sends money back, inside its transaction; returns and exchanges follow the
shop's window from delivery, and the approver sees the order's age."""

from __future__ import annotations

import threading
from datetime import date, timedelta
from typing import Any

import pytest

from agent_cli.core.seams import ApprovalNeeded, Observation
from agent_cli.core.tool_outcomes import Changed
from agent_cli.domain import ledger
from agent_cli.domain.orders import RefundRefused
from agent_cli.store.sqlite import OrderStore
from agent_cli.store.write_commits import Target, commit, propose
from agent_cli.tools import ToolRegistry
from agent_cli.tools.desk_writes import WriteDesk, write_tools
from agent_cli.tools.identity import CustomerSession
from tests.contract.test_desk_queue import Opener, opener  # noqa: F401 - the fixture: a connection each

HARUKI = Target("haruki_sato_1001", "A106")  # A106: 60,000 JPY paid, 20,000 refunded


def delivered(store: OrderStore, code: str) -> date:
    order = store.get(code)
    assert order is not None and order.delivered_at is not None
    return order.delivered_at


def desk(store: OrderStore, *, days_after: int = 5, window: int | None = 30) -> ToolRegistry:
    """Staff's write tools, on a day `days_after` the order A106 was delivered."""
    today = delivered(store, "A106") + timedelta(days=days_after)
    writes = WriteDesk(
        open_store=lambda: store,
        session=CustomerSession(staff=True),
        dry_run=False,
        by="lead",
        window_days=window,
    )
    from dataclasses import replace

    return ToolRegistry(write_tools(replace(writes, clock=lambda: today)))


def made(tools: ToolRegistry, name: str, **args: Any) -> Observation:
    result = tools.invoke(name, args, time_left=30)
    return result.commit() if isinstance(result, ApprovalNeeded) else result


RETURN_A106 = {"order_id": "A106", "item_ids": ["1010001"], "payment_method_id": "credit_card_1001"}
RETURN_A100 = {
    "order_id": "A100",
    "item_ids": ["1001001", "1002001", "1002001"],
    "payment_method_id": "credit_card_1001",
}


def test_the_ledger_of_an_order_holds_every_path_money_went_back_by(
    either_store: OrderStore,
) -> None:
    assert ledger.read(either_store, "A106", 60_000) == ledger.Ledger(60_000, 20_000, 40_000)
    assert either_store.refunded_total("A106") == 20_000
    assert ledger.read(either_store, "A100", 250_000).left == 250_000


def test_a_return_after_a_partial_refund_sends_back_only_what_is_left(
    either_store: OrderStore,
) -> None:
    done = made(desk(either_store), "return_delivered_order_items", **RETURN_A106)
    assert isinstance(done.outcome, Changed), done.text
    assert "40,000 JPY back to credit_card_1001" in done.text  # not the item's 60,000
    assert "20,000 JPY of the order was refunded already" in done.text


def test_a_full_return_after_an_issue_refund_of_part_is_capped(either_store: OrderStore) -> None:
    either_store.record_refund("A100", 50_000, "late", key="part")
    tools = desk(either_store, days_after=5)
    either_store.import_orders(  # A100 delivered the same day as A106, for the window
        [_redated(either_store, "A100", delivered(either_store, "A106"))]
    )
    done = made(tools, "return_delivered_order_items", **RETURN_A100)
    assert isinstance(done.outcome, Changed), done.text
    assert "200,000 JPY back" in done.text and "250,000 JPY back" not in done.text
    assert ledger.read(either_store, "A100", 250_000).back == 50_000


def _redated(store: OrderStore, code: str, day: date) -> Any:
    from dataclasses import replace

    order = store.get(code)
    assert order is not None
    return replace(order, delivered_at=day)


def test_nothing_goes_back_twice_when_the_order_was_refunded_in_full(
    either_store: OrderStore,
) -> None:
    from dataclasses import replace

    either_store.record_refund("A106", 40_000, "the rest", key="rest")  # now REFUNDED
    a106 = either_store.get("A106")
    assert a106 is not None and a106.status == "REFUNDED"
    either_store.import_orders([replace(a106, status="DELIVERED")])  # a status set back by hand
    refused = made(desk(either_store), "return_delivered_order_items", **RETURN_A106)
    assert refused.is_error and "refunded in full already (60,000 JPY)" in refused.text


@pytest.mark.parametrize(("days_after", "allowed"), [(30, True), (31, False), (120, False)])
def test_returns_follow_the_window_from_delivery(
    either_store: OrderStore, days_after: int, allowed: bool
) -> None:
    done = made(
        desk(either_store, days_after=days_after), "return_delivered_order_items", **RETURN_A106
    )
    assert isinstance(done.outcome, Changed) is allowed, done.text
    if not allowed:
        assert f"{days_after} days ago" in done.text and "within 30 days of delivery" in done.text


def test_exchanges_follow_the_window_and_a_shop_may_set_its_own(either_store: OrderStore) -> None:
    exchange = {
        "order_id": "A100",
        "item_ids": ["1001001"],
        "new_item_ids": ["1001002"],
        "payment_method_id": "credit_card_1001",
    }
    either_store.import_orders([_redated(either_store, "A100", delivered(either_store, "A106"))])
    late = desk(either_store, days_after=8, window=7)
    refused = made(late, "exchange_delivered_order_items", **exchange)
    assert refused.is_error and "within 7 days of delivery" in refused.text
    in_time = desk(either_store, days_after=7, window=7)
    assert isinstance(made(in_time, "exchange_delivered_order_items", **exchange).outcome, Changed)
    never = desk(either_store, days_after=400, window=None)
    anytime = made(never, "return_delivered_order_items", **RETURN_A106)
    assert isinstance(anytime.outcome, Changed)  # no window set: as before


def test_the_approver_sees_the_orders_age(either_store: OrderStore) -> None:
    asked = desk(either_store, days_after=12).invoke(
        "return_delivered_order_items", RETURN_A106, time_left=30
    )
    assert isinstance(asked, ApprovalNeeded)
    day = delivered(either_store, "A106").isoformat()
    assert asked.summary.endswith(f"[order delivered {day}, 12 days ago]")


def test_a_refund_made_between_a_returns_proposal_and_its_commit_stops_the_return(
    either_store: OrderStore,
) -> None:
    from agent_cli.domain.writes import Refused, ReturnWindow

    window = ReturnWindow(30, delivered(either_store, "A106") + timedelta(days=3))
    planned = propose(either_store, "return_delivered_order_items", RETURN_A106, HARUKI, window)
    either_store.record_refund("A106", 40_000, "meanwhile", key="meanwhile")
    with pytest.raises(Refused):
        commit(either_store, planned, RETURN_A106, HARUKI, by="b", run_id="r", window=window)
    assert ledger.read(either_store, "A106", 60_000).back == 60_000  # the refund alone


def test_a_return_made_first_stops_a_refund_of_the_same_money(either_store: OrderStore) -> None:
    made(desk(either_store), "return_delivered_order_items", **RETURN_A106)
    with pytest.raises(RefundRefused):
        either_store.record_refund("A106", 40_000, "again", key="again", check=_delivered_only)


def _delivered_only(order: Any, refunded: int) -> None:
    """issue_refund's status rule (the refund policy's statuses), as its commit runs it."""
    if order.status != "DELIVERED":
        raise RefundRefused(f"status {order.status}")


def test_concurrent_approvers_of_a_refund_and_a_return_send_money_back_once(
    opener: Opener,  # noqa: F811 - the fixture imported above
) -> None:
    from agent_cli.domain.writes import Refused, ReturnWindow

    first = opener()
    window = ReturnWindow(30, delivered(first, "A106") + timedelta(days=3))
    planned = propose(first, "return_delivered_order_items", RETURN_A106, HARUKI, window)
    results: list[str] = []
    start = threading.Barrier(2)

    def refund() -> None:
        store = opener()
        start.wait()
        try:
            store.record_refund("A106", 40_000, "goodwill", key="k", check=_delivered_only)
            results.append("refunded")
        except RefundRefused:
            results.append("refund refused")
        finally:
            store.close()

    def returned() -> None:
        store = opener()
        start.wait()
        try:
            commit(store, planned, RETURN_A106, HARUKI, by="a", run_id="r", window=window)
            results.append("returned")
        except Refused:
            results.append("return refused")
        finally:
            store.close()

    threads = [threading.Thread(target=refund), threading.Thread(target=returned)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(results) in (["refunded", "return refused"], ["refund refused", "returned"])
    a106 = ledger.read(first, "A106", 60_000)
    assert a106.back == (60_000 if "refunded" in results else 20_000)  # one of them, once
    first.close()


class _Rows:
    """A store that answers the ledger's two sums (no database needed for its arithmetic)."""

    def __init__(self, recorded: int, paid: int, back: int) -> None:
        self.sums = {"refunds": [(recorded,)], "payments": [(paid, back)]}

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        return list(self.sums["refunds" if "FROM refunds" in sql else "payments"])


@pytest.mark.parametrize(
    ("recorded", "paid", "back", "total", "expected"),
    [
        (0, 0, 0, 9_000, (9_000, 0, 9_000)),  # no payment history: the total was paid
        (9_000, 0, 0, 9_000, (9_000, 9_000, 0)),  # and all of it went back
        (2_000, 0, 0, 9_000, (9_000, 2_000, 7_000)),
        (0, 10_000, 2_000, 8_000, (10_000, 2_000, 8_000)),  # a cheaper swap's difference back
        (3_000, 10_000, 0, 10_000, (10_000, 3_000, 7_000)),  # a refund not in the history
        (5_000, 250_000, 5_000, 5_000, (250_000, 5_000, 0)),  # a total corrected down
        (0, 5_000, 5_000, 5_000, (5_000, 5_000, 0)),  # cancelled
    ],
)
def test_what_is_left_is_the_least_of_what_was_paid_and_the_total(
    recorded: int, paid: int, back: int, total: int, expected: tuple[int, int, int]
) -> None:
    found = ledger.read(_Rows(recorded, paid, back), "X1", total)
    assert (found.paid, found.back, found.left) == expected


def test_a_difference_sent_back_earlier_counts_and_is_said(either_store: OrderStore) -> None:
    """B200's blue mug (5,400) swapped for the white (5,000): 400 went back by the item change,
    not by issue_refund; once delivered, a return says so and sends back what is left."""
    from dataclasses import replace

    swap = {
        "order_id": "B200",
        "item_ids": ["1002002"],
        "new_item_ids": ["1002001"],
        "payment_method_id": "credit_card_1007",
    }
    assert isinstance(
        made(desk(either_store), "modify_pending_order_items", **swap).outcome, Changed
    )
    assert ledger.read(either_store, "B200", 5_000) == ledger.Ledger(5_400, 400, 5_000)
    b200 = either_store.get("B200")
    assert b200 is not None
    day = delivered(either_store, "A106")
    either_store.import_orders([replace(b200, status="DELIVERED", delivered_at=day)])
    back = {"order_id": "B200", "item_ids": ["1002001"], "payment_method_id": "credit_card_1007"}
    done = made(desk(either_store), "return_delivered_order_items", **back)
    assert (
        "5,000 JPY back" in done.text and "400 JPY of the order was refunded already" in done.text
    )
    assert either_store.refunded_total("B200") == 400 and ledger.spent(either_store, "B200") == 0


def test_an_order_untouched_or_missing_has_nothing_gone_back(either_store: OrderStore) -> None:
    assert ledger.spent(either_store, "A100") == 0 and ledger.refunded(either_store, "A100") == 0
    assert ledger.spent(either_store, "NOPE1") == 0 and ledger.refunded(either_store, "NOPE1") == 0
