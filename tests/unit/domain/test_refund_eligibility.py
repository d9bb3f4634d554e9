"""Refund eligibility is decided once (domain/refunds.py): its rules at their edges, and the three
places that read it (the lookup's computed fact, the refund tool's checks, the offline
playbook's verdict) agreeing on every order and day."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

import pytest

from agent_cli.core.budget import RefundCounter
from agent_cli.core.tool_outcomes import Read
from agent_cli.domain.orders import Order
from agent_cli.domain.refunds import Eligibility, eligibility
from agent_cli.providers.playbook.facts import Policy
from agent_cli.providers.playbook.model import _judge
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools import Denied
from agent_cli.tools.orders import AsOf, LookupOrderArgs, RefundPolicy, order_tools
from agent_cli.tools.refunds import IssueRefundArgs, RefundDesk, RefundLimits

DELIVERED = date(2026, 10, 1)
STATUSES = ("DELIVERED",)


def rule(
    status: str = "DELIVERED",
    delivered: date | None = DELIVERED,
    *,
    today: date = DELIVERED + timedelta(days=10),
    left: int | None = None,
) -> Eligibility:
    return eligibility(status, delivered, today, statuses=STATUSES, window_days=30, left=left)


@pytest.mark.parametrize(
    ("after", "kind", "answer"),
    [(0, "refundable", "yes"), (30, "refundable", "yes"), (31, "expired", "no"),
     (-1, "future", "unknown")],
)  # fmt: skip
def test_the_window_runs_from_the_delivery_day_to_its_last_day(
    after: int, kind: str, answer: str
) -> None:
    got = rule(today=DELIVERED + timedelta(days=after))
    assert (got.kind, got.answer, got.days) == (kind, answer, after)


def test_the_rules_are_checked_in_order_status_first() -> None:
    assert rule(status="SHIPPING", delivered=None, left=0).kind == "wrong_status"
    assert rule(delivered=None, left=0).kind == "refunded_in_full"
    assert rule(delivered=None, left=1).kind == "no_date"
    assert rule(left=None).kind == "refundable"
    assert rule(left=-5).kind == "refunded_in_full"


CASES = [
    # (status, delivered days before today or None, refunded of 10,000)
    ("DELIVERED", 0, 0), ("DELIVERED", 30, 0), ("DELIVERED", 31, 0), ("DELIVERED", -2, 0),
    ("DELIVERED", None, 0), ("SHIPPING", 5, 0), ("CANCELLED", 5, 0), ("DELIVERED", 5, 4_000),
    ("DELIVERED", 5, 10_000), ("DELIVERED", 45, 10_000),
]  # fmt: skip
TODAY = date(2026, 10, 20)


@pytest.mark.parametrize(("status", "before", "refunded"), CASES)
def test_the_lookup_the_refund_tool_and_the_playbook_agree(
    status: str, before: int | None, refunded: int
) -> None:
    delivered = None if before is None else TODAY - timedelta(days=before)
    store = OrderStore.in_memory()
    store.import_orders([Order("Z900", status, 10_000, delivered_at=delivered, currency="USD")])
    if refunded:
        store.record_refund("Z900", refunded, "earlier", key="earlier")
    policy = RefundPolicy(window_days=30)
    lookup = order_tools(lambda: store, policy, AsOf(TODAY))[0]
    read = lookup.execute(LookupOrderArgs(order_code="Z900")).outcome  # type: ignore[union-attr]
    assert isinstance(read, Read)
    desk = RefundDesk(
        open_store=lambda: store,
        policy=policy,
        limits=RefundLimits(max_amount=1_000_000, max_per_run=5, max_per_session=5),
        counter=RefundCounter(),
        dry_run=False,
        clock=lambda: TODAY,
    )
    try:
        desk.propose(IssueRefundArgs(order_code="Z900", amount=1, reason="damaged"))
        allowed = True
    except Denied:
        allowed = False
    assert allowed == (read.refundable == "yes"), read.why
    fields = {"status": status, "delivered_at": str(delivered or "none")}
    verdict = _judge("Z900", fields, Policy(30, ("DELIVERED",)), TODAY).verdict
    if not refunded:  # the playbook reads no refunds: the lookup's words carry them
        assert (verdict == "refundable") == allowed, verdict
    store.close()


@pytest.mark.parametrize("before", [5, 90])
def test_an_order_refunded_in_full_is_refused_by_the_lookup_and_the_tool(before: int) -> None:
    """Whatever its window says (5 days: within, 90: past), what is refused first is that
    nothing is left to refund."""
    store = OrderStore.in_memory()
    old = Order("Z901", "DELIVERED", 5_000, delivered_at=TODAY - timedelta(days=before))
    store.import_orders([replace(old, currency="USD")])
    store.record_refund("Z901", 3_000, "part", key="k")
    store.import_orders([replace(old, total=3_000, currency="USD")])  # corrected down to it
    policy = RefundPolicy()
    lookup = order_tools(lambda: store, policy, AsOf(TODAY))[0]
    read = lookup.execute(LookupOrderArgs(order_code="Z901")).outcome  # type: ignore[union-attr]
    assert isinstance(read, Read)
    assert (read.refundable, read.why) == ("no", "already refunded in full")
    desk = RefundDesk(
        open_store=lambda: store,
        policy=policy,
        limits=RefundLimits(max_amount=1_000_000, max_per_run=5, max_per_session=5),
        counter=RefundCounter(),
        dry_run=False,
        clock=lambda: TODAY,
    )
    with pytest.raises(Denied, match=r"^order Z901 is already refunded in full$"):
        desk.propose(IssueRefundArgs(order_code="Z901", amount=1, reason="damaged"))
    store.close()
