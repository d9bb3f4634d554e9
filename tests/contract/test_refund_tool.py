"""issue_refund on both backends: every rule holds in code, approval is per exact call, refunds
happen once, the window and the cap at their edges."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.core.budget import Limits, RefundCounter
from agent_cli.core.events import ApprovalDecided, ApprovalRequested, Event, ToolObserved
from agent_cli.core.loop import run
from agent_cli.core.seams import ApprovalVerdict
from agent_cli.providers.scripted import ScriptedModel
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools import ToolRegistry
from agent_cli.tools.orders import RefundPolicy, order_tools
from agent_cli.tools.refunds import (
    IssueRefundArgs,
    RefundDesk,
    RefundLimits,
    refund_key,
    refund_tool,
)
from tests.helpers import (
    TODAY,
    call,
    final,
)

runner = CliRunner()


@pytest.fixture
def store(either_store: OrderStore) -> OrderStore:
    """Every test here runs on both backends, SQLite and PostgreSQL (conftest's either_store)."""
    return either_store


LIMITS = RefundLimits(max_amount=50_000, max_per_run=1, max_per_session=2)


def toolbox(
    store: OrderStore,
    *,
    limits: RefundLimits = LIMITS,
    counter: RefundCounter | None = None,
    dry_run: bool = False,
) -> ToolRegistry:
    desk = RefundDesk(
        open_store=lambda: store,
        policy=RefundPolicy(),
        limits=limits,
        counter=counter or RefundCounter(),
        dry_run=dry_run,
        clock=lambda: TODAY,
    )
    return ToolRegistry([*order_tools(lambda: store, RefundPolicy()), refund_tool(desk)])


def drive(
    store: OrderStore, decisions: list[Any], verdicts: list[ApprovalVerdict], **kw: Any
) -> list[Event]:
    """Run a script, answering each approval with the next verdict."""
    events = run(
        "q",
        ScriptedModel(decisions),
        toolbox(store, **kw),
        limits=Limits(max_steps=10),
        today=TODAY,
    )
    seen: list[Event] = []
    reply: Any = None
    try:
        while True:
            event = events.send(reply)
            seen.append(event)
            reply = verdicts.pop(0) if isinstance(event, ApprovalRequested) else None
    except StopIteration:
        pass
    return seen


def refund(code: str, amount: int, reason: str = "damaged on arrival") -> Any:
    return call("issue_refund", order_code=code, amount=amount, reason=reason)


def observations(events: list[Event]) -> list[str]:
    return [e.observation for e in events if isinstance(e, ToolObserved)]


AS_PROPOSED = "reason: 'damaged on arrival'; delivered 2026-10-01, judged on 2026-10-13"


YES = ApprovalVerdict(True, "operator")


NO = ApprovalVerdict(False, "operator", "the operator said no")


def test_an_approved_refund_is_recorded_once(store: OrderStore) -> None:
    events = drive(store, [refund("A100", 20_000), final("done")], [YES])
    (requested,) = [e for e in events if isinstance(e, ApprovalRequested)]
    assert requested.summary == f"refund 20,000 JPY on order A100 ({AS_PROPOSED})"
    (decided,) = [e for e in events if isinstance(e, ApprovalDecided)]
    assert (decided.approved, decided.by) == (True, "operator")
    assert observations(events)[0].startswith("REFUNDED: refund #2 of 20,000 JPY on order A100")
    assert [(r.amount, r.reason) for r in store.refunds("A100")] == [(20_000, "damaged on arrival")]


def test_a_denied_refund_writes_nothing(store: OrderStore) -> None:
    events = drive(store, [refund("A100", 20_000), final("ok")], [NO])
    assert observations(events)[0].startswith("DENIED: refund 20,000 JPY on order A100")
    assert "the operator said no" in observations(events)[0]
    assert store.refunds("A100") == []


def test_no_answer_is_a_denial_by_rule(store: OrderStore) -> None:
    events = drive(store, [refund("A100", 20_000), final("ok")], [None])  # type: ignore[list-item]
    (decided,) = [e for e in events if isinstance(e, ApprovalDecided)]
    assert (decided.approved, decided.by) == (False, "rule")
    assert store.refunds("A100") == []


def test_changed_arguments_need_a_new_approval(store: OrderStore) -> None:
    big = RefundLimits(max_amount=50_000, max_per_run=5, max_per_session=5)
    events = drive(
        store,
        [refund("A100", 1_000), refund("A100", 2_000), final("ok")],
        [YES, NO],
        limits=big,
    )
    summaries = [e.summary for e in events if isinstance(e, ApprovalRequested)]
    assert summaries == [
        f"refund 1,000 JPY on order A100 ({AS_PROPOSED})",
        f"refund 2,000 JPY on order A100 ({AS_PROPOSED})",
    ]
    assert [r.amount for r in store.refunds("A100")] == [1_000]


@pytest.mark.parametrize(
    ("decision", "reason"),
    [
        (refund("A100", 10_000_000), "10,000,000 JPY is above the cap of 50,000 JPY per refund"),
        (refund("A101", 1_000), "order A101 is SHIPPING; only DELIVERED orders qualify"),
        (refund("A103", 1_000), "outside the 30-day window"),
        (refund("A104", 1_000), "order A104 is REFUNDED"),
        (refund("Z999", 1_000), "no order with code Z999"),
        (refund("C300", 500), "only 129.00 USD of order C300 is still refundable"),
    ],
)
def test_rules_deny_before_anyone_is_asked(store: OrderStore, decision: Any, reason: str) -> None:
    events = drive(store, [decision, final("ok")], [])
    assert not any(isinstance(e, ApprovalRequested) for e in events)
    (text,) = observations(events)
    assert text.startswith("DENIED:") and reason in text
    assert store.refunds(decision.args["order_code"]) == []


def test_the_same_refund_cannot_happen_twice(store: OrderStore) -> None:
    roomy = RefundLimits(max_amount=50_000, max_per_run=5, max_per_session=5)
    events = drive(
        store, [refund("A100", 5_000), refund("A100", 5_000), final("ok")], [YES], limits=roomy
    )
    assert "this exact refund was already issued (refund #2)" in observations(events)[1]
    assert len(store.refunds("A100")) == 1


@pytest.mark.parametrize("again", ["damaged  box", "DAMAGED BOX", " Damaged\tbox "])
def test_the_same_reason_in_other_case_or_spacing_is_the_same_refund(
    store: OrderStore, again: str
) -> None:
    roomy = RefundLimits(max_amount=50_000, max_per_run=5, max_per_session=5)
    decisions = [refund("A100", 5_000, "Damaged box"), refund("A100", 5_000, again), final("ok")]
    events = drive(store, decisions, [YES, YES], limits=roomy)
    assert "this exact refund was already issued (refund #2)" in observations(events)[1]
    assert len(store.refunds("A100")) == 1


def test_another_reason_amount_or_order_is_another_refund() -> None:
    def key(code: str = "A100", amount: int = 5_000, reason: str = "Damaged box") -> str:
        return refund_key(IssueRefundArgs(order_code=code, amount=amount, reason=reason), amount)

    assert len({key(), key(reason="Damaged lid"), key(amount=5_001), key(code="A105")}) == 4


def test_the_store_is_idempotent_for_a_retried_refund(store: OrderStore) -> None:
    key = refund_key(IssueRefundArgs(order_code="A100", amount=5_000, reason="late"), 5_000)
    first = store.record_refund("A100", 5_000, "late", key=key)
    again = store.record_refund("A100", 5_000, "late", key=key)
    assert first.created and not again.created and again.refund == first.refund
    assert store.refunded_total("A100") == 5_000


def test_a_full_refund_marks_the_order_refunded(store: OrderStore) -> None:
    store.record_refund("C300", 12_900, "lost", key="k")  # 129.00 USD, in cents
    order = store.get("C300")
    assert order is not None and order.status == "REFUNDED"


def test_per_run_and_per_session_caps(store: OrderStore) -> None:
    counter = RefundCounter()
    events = drive(
        store, [refund("A100", 1_000), refund("A100", 2_000), final("ok")], [YES], counter=counter
    )
    assert "the limit of 1 refund(s) per run is reached" in observations(events)[1]
    counter.new_run()
    drive(store, [refund("A100", 3_000), final("ok")], [YES], counter=counter)
    counter.new_run()
    events = drive(store, [refund("A100", 4_000), final("ok")], [], counter=counter)
    assert "the limit of 2 refund(s) per session is reached" in observations(events)[0]
    assert [r.amount for r in store.refunds("A100")] == [1_000, 3_000]


def test_dry_run_says_what_it_would_do_and_writes_nothing(store: OrderStore) -> None:
    events = drive(store, [refund("A100", 1_000), final("ok")], [YES], dry_run=True)
    assert observations(events)[0] == (
        "DRY RUN: would refund 1,000 JPY on order A100; nothing was written"
    )
    assert store.refunds("A100") == []


def test_lookup_shows_what_was_refunded(store: OrderStore) -> None:
    store.record_refund("A100", 1_000, "late", key="k1")
    text = toolbox(store).invoke("lookup_order", {"order_code": "A100"}).text  # type: ignore[union-attr]
    assert "refunded=1000" in text


def test_refund_arguments_are_validated(store: OrderStore) -> None:
    for bad in (
        {"order_code": "A100", "amount": "100", "reason": "x" * 5},
        {"order_code": "A100", "amount": -5, "reason": "broken"},
        {"order_code": "A100", "amount": 5, "reason": "x"},
        {"order_code": "A100", "amount": 5},
    ):
        result = toolbox(store).invoke("issue_refund", bad)
        assert result.is_error and "invalid arguments for issue_refund" in result.text  # type: ignore[union-attr]


def test_orders_show_lists_refunds(store: OrderStore, tmp_path: Path, monkeypatch: Any) -> None:
    url = getattr(store, "url", None)  # a PostgreSQL store's; the test URLs hold no password
    monkeypatch.setenv(*(("AGENT_DB_URL", url) if url else ("AGENT_DB", str(store.path))))
    store.record_refund("A100", 1_000, "late delivery", key="k")
    shown = runner.invoke(app, ["orders", "show", "A100"]).stdout
    assert "#2" in shown and "1,000 JPY" in shown and "late delivery" in shown  # #1: A106's
    data = json.loads(runner.invoke(app, ["orders", "show", "A100", "--json"]).stdout)
    assert [(r["amount"], r["reason"]) for r in data["refunds"]] == [(1000, "late delivery")]


def approve_after(change: Any) -> Any:
    """A verdict source that changes the world while the operator reads the prompt, then
    approves."""

    class Approver:
        def __init__(self) -> None:
            self.verdicts = [YES]

        def pop(self, index: int) -> ApprovalVerdict:
            change()
            return self.verdicts.pop(index)

    return Approver()


@pytest.mark.parametrize(
    ("changed", "reason"),
    [
        ({"status": "CANCELLED"}, "status DELIVERED -> CANCELLED"),
        ({"currency": "USD"}, "currency JPY -> USD"),
        ({"total": 10_000}, "total 250000 -> 10000"),
        ({"delivered_at": date(2026, 10, 5)}, "delivered_at 2026-10-01 -> 2026-10-05"),
    ],
)
def test_an_order_changed_while_the_prompt_waits_is_not_refunded(
    store: OrderStore, changed: dict[str, Any], reason: str
) -> None:
    from dataclasses import replace

    a100 = store.get("A100")
    assert a100 is not None
    events = drive(
        store,
        [refund("A100", 5_000), final("done")],
        approve_after(lambda: store.import_orders([replace(a100, **changed)])),  # type: ignore[arg-type]
    )
    (observed,) = observations(events)
    assert observed.startswith("DENIED: order A100 changed since the approval prompt")
    assert reason in observed and "nothing was refunded" in observed
    assert store.refunds("A100") == []


def test_a_refund_recorded_meanwhile_is_counted_at_commit(store: OrderStore) -> None:
    def elsewhere() -> None:  # another process refunds most of A100 first
        store.record_refund("A100", 240_000, "other desk", key="elsewhere")

    events = drive(store, [refund("A100", 20_000), final("done")], approve_after(elsewhere))  # type: ignore[arg-type]
    (observed,) = observations(events)
    assert observed.startswith("DENIED: only 10,000 JPY of order A100 is still refundable")
    assert [r.amount for r in store.refunds("A100")] == [240_000]


def test_the_window_is_judged_again_at_commit(store: OrderStore) -> None:
    days = iter([date(2026, 10, 31), date(2026, 11, 1)])  # day 30 at the prompt, 31 at commit
    desk = RefundDesk(
        open_store=lambda: store,
        policy=RefundPolicy(),
        limits=LIMITS,
        counter=RefundCounter(),
        dry_run=False,
        clock=lambda: next(days),
    )
    needed = desk.propose(IssueRefundArgs(order_code="A100", amount=1000, reason="damaged"))
    assert "judged on 2026-10-31" in needed.summary
    observed = needed.commit()
    assert observed.is_error and "31 days before 2026-11-01" in observed.text
    assert store.refunds("A100") == []


def _desk(store: OrderStore, today: date = TODAY, **limits: int) -> RefundDesk:
    roomy = {"max_amount": 50_000, "max_per_run": 5, "max_per_session": 5, **limits}
    return RefundDesk(
        open_store=lambda: store,
        policy=RefundPolicy(),
        limits=RefundLimits(**roomy),
        counter=RefundCounter(),
        dry_run=False,
        clock=lambda: today,
    )


def _denial(desk: RefundDesk, code: str, amount: int) -> str | None:
    """Why the rules refuse this refund before anyone is asked, or None when they allow it."""
    from agent_cli.tools.refunds import Denied

    try:
        desk.propose(IssueRefundArgs(order_code=code, amount=amount, reason="damaged"))
    except Denied as exc:
        return str(exc)
    return None


def test_the_cap_allows_exactly_the_cap_and_nothing_more(store: OrderStore) -> None:
    desk = _desk(store, max_amount=50_000)
    assert _denial(desk, "A100", 50_000) is None
    assert "50,001 JPY is above the cap of 50,000 JPY per refund" in str(
        _denial(desk, "A100", 50_001)
    )


def test_exactly_what_is_left_may_be_refunded_and_not_one_more(store: OrderStore) -> None:
    store.record_refund("A100", 240_000, "most of it", key="earlier")
    desk = _desk(store, max_amount=1_000_000)
    assert _denial(desk, "A100", 10_000) is None
    assert "only 10,000 JPY of order A100 is still refundable" in str(_denial(desk, "A100", 10_001))


def test_an_order_whose_refunds_reach_its_total_is_refunded_in_full(store: OrderStore) -> None:
    from dataclasses import replace

    store.record_refund("A100", 5_000, "part", key="earlier")
    a100 = store.get("A100")
    assert a100 is not None
    store.import_orders([replace(a100, total=5_000)])  # corrected down to what was refunded
    assert _denial(_desk(store), "A100", 1) == "order A100 is already refunded in full"


def test_the_window_runs_from_delivery_to_its_last_day_not_before(store: OrderStore) -> None:
    delivered = date(2026, 10, 1)  # A100
    assert _denial(_desk(store, today=date(2026, 10, 31)), "A100", 1_000) is None  # day 30
    assert "31 days before" in str(_denial(_desk(store, today=date(2026, 11, 1)), "A100", 1_000))
    before = _denial(_desk(store, today=date(2026, 9, 30)), "A100", 1_000)  # delivered tomorrow
    assert before is not None and "-1 days before 2026-09-30" in before
    assert delivered.isoformat() in before


@pytest.mark.parametrize(
    ("line", "approved"),
    [
        ("y", True),
        ("Y", True),
        (" yes \n", True),
        ("YES", True),
        ("yep", False),
        ("ye", False),
        ("yes please", False),
        ("n", False),
        ("", False),
        ("\n", False),
        (None, False),
    ],
)
def test_only_y_or_yes_approves(line: str | None, approved: bool) -> None:
    from agent_cli.runtime.answerers import verdict_from

    assert verdict_from(line).approved is approved
