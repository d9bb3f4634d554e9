"""The desk's writes where money and gift cards meet: a cancel refunded to a gift card at once,
a payment change moving balances both ways, a gift card that covers exactly (or a cent less,
or holds another currency), a cancel after a payment change refunding what was paid once, a
same-price swap, a return with no payment on record, and the shop's rules on a write's facts."""

from __future__ import annotations

import copy
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent_cli.config.rules import RefundRule
from agent_cli.core.seams import ApprovalNeeded
from agent_cli.store import record_reads
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools import ToolRegistry
from agent_cli.tools.desk_writes import WriteDesk, write_tools
from agent_cli.tools.identity import CustomerSession
from tests.contract.test_desk_gold import GOLD, _loaded, apply, exported


@pytest.fixture
def gold(tmp_path: Path) -> OrderStore:
    return _loaded(OrderStore.open(tmp_path / "gold.db"))


def balance(store: OrderStore, user: str, card: str) -> float:
    return float(exported(store)["users"][user]["payment_methods"][card]["balance"])


def test_a_cancel_paid_by_gift_card_refunds_it_at_once(gold: OrderStore) -> None:
    seen = apply(
        gold, "cancel_pending_order", {"order_id": "#W9300146", "reason": "no longer needed"}
    )
    assert "(1 item; reason: no longer needed): refund 153.23 USD to gift_card_7245904 at once" in (
        seen.text
    )
    assert balance(gold, "aarav_anderson_8794", "gift_card_7245904") == 170.23  # 17.00 + 153.23


def test_a_cancel_names_how_many_items(gold: OrderStore) -> None:
    seen = apply(
        gold, "cancel_pending_order", {"order_id": "#W9348897", "reason": "no longer needed"}
    )
    assert "cancel #W9348897 (5 items; reason" in seen.text


def _gift_card_of(db: dict[str, Any], user: str, card: str, value: float) -> dict[str, Any]:
    changed = copy.deepcopy(db)
    changed["users"][user]["payment_methods"][card]["balance"] = value
    return changed


@pytest.mark.parametrize(("held", "paid"), [(3131.10, True), (3131.09, False)])
def test_a_gift_card_pays_what_its_balance_covers_to_the_cent(
    tmp_path: Path, held: float, paid: bool
) -> None:
    db = _gift_card_of(GOLD["db"], "fatima_johnson_7581", "gift_card_1675628", held)
    store = _loaded(OrderStore.open(tmp_path / "gold.db"), db)
    args = {"order_id": "#W5199551", "payment_method_id": "gift_card_1675628"}
    seen = apply(store, "modify_pending_order_payment", args)
    if not paid:
        short = "gift card gift_card_1675628 holds 3,131.09 USD, less than the 3,131.10 USD to pay"
        assert seen.is_error and short in seen.text, seen.text
        return
    assert seen.text.startswith("CHANGED:") and "refund 3,131.10 USD to paypal_5364164" in seen.text
    assert balance(store, "fatima_johnson_7581", "gift_card_1675628") == 0
    order = exported(store)["orders"]["#W5199551"]
    assert [(p["transaction_type"], p["payment_method_id"]) for p in order["payment_history"]] == [
        ("payment", "paypal_5364164"),
        ("payment", "gift_card_1675628"),
        ("refund", "paypal_5364164"),
    ]
    again = apply(
        store, "modify_pending_order_payment", {**args, "payment_method_id": "paypal_5364164"}
    )
    assert again.is_error and "payment was changed already" in again.text
    # Cancelled now, each method gets back what it paid net: the gift card its 3,131.10, once
    # (τ²'s code refunds every entry of the history: paypal twice, the card once).
    cancel = apply(
        store, "cancel_pending_order", {"order_id": "#W5199551", "reason": "no longer needed"}
    )
    assert "refund 3,131.10 USD to gift_card_1675628 at once" in cancel.text, cancel.text
    assert "paypal" not in cancel.text.split("):", 1)[1]
    assert balance(store, "fatima_johnson_7581", "gift_card_1675628") == 3131.10


def test_a_payment_changed_away_from_a_gift_card_refunds_it_at_once(tmp_path: Path) -> None:
    db = copy.deepcopy(GOLD["db"])
    db["users"]["aarav_anderson_8794"]["payment_methods"]["paypal_0000001"] = {
        "source": "paypal",
        "id": "paypal_0000001",
    }
    store = _loaded(OrderStore.open(tmp_path / "gold.db"), db)
    args = {"order_id": "#W9300146", "payment_method_id": "paypal_0000001"}
    seen = apply(store, "modify_pending_order_payment", args)
    assert seen.text.startswith("CHANGED:"), seen.text
    assert balance(store, "aarav_anderson_8794", "gift_card_7245904") == 170.23


def test_a_gift_card_of_another_currency_pays_nothing(either_store: OrderStore) -> None:
    either_store.atomically(
        lambda: either_store.execute(
            "INSERT INTO payment_methods (customer_id, id, position, source, balance, currency)"
            " VALUES ('haruki_sato_1001', 'gift_card_usd', 9, 'gift_card', 100000, 'USD')"
        )
    )
    args = {"order_id": "A100", "item_ids": ["1002001"], "new_item_ids": ["1002002"],
            "payment_method_id": "gift_card_usd"}  # fmt: skip
    seen = apply(either_store, "exchange_delivered_order_items", args)
    assert seen.is_error and "gift card gift_card_usd holds USD, and this order is in JPY" in (
        seen.text
    )


def test_a_same_price_swap_records_a_refund_of_nothing_as_tau2_does(
    either_store: OrderStore,
) -> None:
    either_store.atomically(
        lambda: either_store.execute(
            "UPDATE variants SET available = ? WHERE id = '1002003'", (True,)
        )
    )
    args = {"order_id": "B200", "item_ids": ["1002002"], "new_item_ids": ["1002003"],
            "payment_method_id": "credit_card_1007"}  # fmt: skip
    seen = apply(either_store, "modify_pending_order_items", args)
    assert "the same price, nothing to pay" in seen.text
    order = record_reads.desk_order(either_store, "B200")
    assert order is not None and (order.payments[-1].kind, order.payments[-1].amount) == (
        "refund",
        0,
    )


def test_a_return_with_no_payment_on_record_is_refused_in_words(either_store: OrderStore) -> None:
    either_store.atomically(
        lambda: either_store.execute("DELETE FROM payments WHERE order_code = 'A103'")
    )
    args = {"order_id": "A103", "item_ids": ["1005001"], "payment_method_id": "credit_card_1004"}
    seen = apply(either_store, "return_delivered_order_items", args)
    assert seen.is_error and "A103 has no payment on record to refund to" in seen.text


def test_refusals_say_what_is_left_to_do(either_store: OrderStore) -> None:
    cancelled = apply(
        either_store, "cancel_pending_order", {"order_id": "A102", "reason": "no longer needed"}
    )
    assert "nothing more can be done to a cancelled order" in cancelled.text
    swap = {
        "item_ids": ["1001001"],
        "new_item_ids": ["1001002"],
        "payment_method_id": "credit_card_1001",
    }
    delivered = apply(either_store, "modify_pending_order_items", {"order_id": "A100", **swap})
    assert "is delivered; only a pending order can be changed" in delivered.text
    other = apply(
        either_store,
        "modify_pending_order_payment",
        {"order_id": "B200", "payment_method_id": "paypal_9"},
    )
    assert "(theirs: credit_card_1007)" in other.text


def _ruled(store: OrderStore, rule: RefundRule, today: date, **args: Any) -> Any:
    desk = WriteDesk(
        open_store=lambda: store,
        session=CustomerSession(staff=True),
        dry_run=False,
        by="t",
        rules=(rule,),
        clock=lambda: today,
    )
    needed = ToolRegistry(write_tools(desk)).invoke("return_delivered_order_items", args)
    assert isinstance(needed, ApprovalNeeded)
    return needed.decided


def test_a_rule_judges_a_write_on_its_amount_status_and_days_since_delivery(
    either_store: OrderStore,
) -> None:
    order = either_store.get("A105")
    assert order is not None and order.delivered_at is not None
    rule = RefundRule.model_validate(
        {"name": "recent returns", "decision": "auto", "tools": ["return_delivered_order_items"],
         "statuses": ["DELIVERED"], "below": {"JPY": 11000}, "max_days_since_delivery": 10}
    )  # fmt: skip
    args = {"order_id": "A105", "item_ids": ["1009001"], "payment_method_id": "gift_card_1006"}
    soon = _ruled(either_store, rule, order.delivered_at + timedelta(days=10), **args)
    assert soon is not None and soon.approved and soon.rule == "recent returns"
    assert _ruled(either_store, rule, order.delivered_at + timedelta(days=11), **args) is None
    both = {**args, "item_ids": ["1009001", "1008001"]}  # 15,800 JPY: not below 11,000
    assert _ruled(either_store, rule, order.delivered_at, **both) is None
