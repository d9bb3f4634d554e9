"""Every field of an approval row is checked as it is read: a row that is not what the queue
holds becomes Unreadable, naming the field and its value, short and on one line."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agent_cli.domain.orders import refund_key
from agent_cli.store.approval_items import MAX_ID, Approval, Unreadable, item_json, read_item

JUDGED = '{"currency": "JPY", "delivered_at": "2026-10-01", "status": "DELIVERED", "total": 250000}'
GOOD: dict[str, Any] = {
    "id": 7,
    "kind": "issue_refund",
    "order_code": "A100",
    "amount": 1000,
    "summary": "damaged",
    "key": refund_key("A100", 1000, "damaged"),
    "judged": JUDGED,
    "run_id": "run",
    "question": "Refund A100?",
    "proposed_by": "bot",
    "created_at": "2026-10-13T10:00:00+00:00",
    "expires_at": "2026-10-16T10:00:00+00:00",
    "status": "pending",
    "decided_by": None,
    "decided_at": None,
    "outcome": None,
    "refund_id": None,
}


def row(**changes: Any) -> tuple[Any, ...]:
    return tuple({**GOOD, **changes}.values())


def problem(**changes: Any) -> str:
    item = read_item(row(**changes))
    assert isinstance(item, Unreadable), item
    assert item.id == changes.get("id", 7)
    return item.problem


def test_a_good_row_is_an_approval() -> None:
    item = read_item(row())
    assert isinstance(item, Approval) and item.amount == 1000 and item.currency == "JPY"
    decided = {"status": "approved", "decided_by": "lead", "outcome": "refund #2 of 1,000"}
    done = read_item(row(**decided, decided_at="2026-10-14T09:00:00+00:00", refund_id=1))
    assert isinstance(done, Approval) and done.refund_id == 1


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"kind": "cancel_order"}, "kind 'cancel_order' is not issue_refund"),
        ({"kind": 5}, "kind 5 is not text"),
        ({"summary": None}, "summary None is not text"),
        ({"question": b"x"}, "question b'x' is not text"),
        ({"order_code": "a/b"}, "order_code 'a/b' is not an order code"),
        ({"order_code": 100}, "order_code 100 is not an order code"),
        ({"amount": 0}, "amount 0 is not a positive whole amount"),
        ({"amount": MAX_ID + 1}, f"amount {MAX_ID + 1} is not a positive whole amount"),
        ({"amount": True}, "amount True is not a positive whole amount"),
        ({"amount": 1.5}, "amount 1.5 is not a positive whole amount"),
        ({"judged": "nope"}, "judged is not JSON"),
        ({"judged": "[1]"}, "judged is not a JSON object"),
        (
            {"judged": JUDGED.replace("DELIVERED", "GONE")},
            "judged.status 'GONE' is not an order status",
        ),
        ({"judged": JUDGED.replace("250000", "-1")}, "judged.total -1 is not a whole amount"),
        (
            {"judged": JUDGED.replace("250000", '"lots"')},
            "judged.total 'lots' is not a whole amount",
        ),
        (
            {"judged": JUDGED.replace('"JPY"', '"jpy"')},
            "judged.currency 'jpy' is not a currency code",
        ),
        ({"judged": JUDGED.replace('"JPY"', "7")}, "judged.currency 7 is not a currency code"),
        (
            {"judged": JUDGED.replace("2026-10-01", "soon")},
            "judged.delivered_at 'soon' is not a date",
        ),
        ({"created_at": "soon"}, "created_at 'soon' is not a timestamp"),
        ({"expires_at": 5}, "expires_at 5 is not a timestamp"),
        (
            {"expires_at": "2026-10-16T10:00:00"},
            "expires_at '2026-10-16T10:00:00' has no time zone",
        ),
        (
            {"status": "waiting"},
            "status 'waiting' is not one of pending, approved, denied, expired, failed",
        ),
        ({"decided_by": 3}, "decided_by 3 is not text"),
        ({"outcome": 3}, "outcome 3 is not text"),
        ({"decided_at": "later"}, "decided_at 'later' is not a timestamp"),
        ({"refund_id": 0}, "refund_id 0 is not a refund's id"),
        ({"refund_id": "1"}, "refund_id '1' is not a refund's id"),
        ({"summary": "x" * 100}, "names another refund than 1,000 on A100 for its reason"),
    ],
)
def test_each_field_is_checked_and_named(changes: dict[str, Any], said: str) -> None:
    assert said in problem(**changes)


def test_a_judged_order_without_a_delivery_date_is_readable() -> None:
    judged = JUDGED.replace('"2026-10-01"', "null")
    assert isinstance(read_item(row(judged=judged)), Approval)


def test_a_key_naming_another_amount_says_so() -> None:
    assert problem(amount=900) == (
        f"key {GOOD['key']!r} names another refund than 900 on A100 for its reason"
    )


def test_a_row_whose_id_is_no_number_is_unreadable_as_item_0() -> None:
    item = read_item(row(id="seven"))
    assert item == Unreadable(0, "id 'seven' is not a number")


def test_values_are_quoted_short() -> None:
    assert problem(kind="t" * 38) == f"kind '{'t' * 38}' is not issue_refund"  # 40: whole
    assert problem(kind="t" * 39) == f"kind '{'t' * 36}... is not issue_refund"  # 41: cut


def test_an_item_is_expired_from_the_moment_it_expires() -> None:
    item = read_item(row())
    assert isinstance(item, Approval)
    expires = datetime(2026, 10, 16, 10, 0, tzinfo=UTC)
    assert item.state(expires.replace(second=0, microsecond=0)) == "expired"
    assert item.state(datetime(2026, 10, 16, 9, 59, 59, tzinfo=UTC)) == "pending"
    done = read_item(row(status="denied"))
    assert isinstance(done, Approval) and done.state(expires) == "denied"
    assert Unreadable(1, "x").state(expires) == "unreadable"


def test_the_smallest_and_largest_amounts_are_whole_amounts() -> None:
    for amount in (1, MAX_ID):
        key = refund_key("A100", amount, "damaged")
        assert isinstance(read_item(row(amount=amount, key=key)), Approval)


def test_an_order_judged_at_a_total_of_zero_is_readable() -> None:
    assert isinstance(read_item(row(judged=JUDGED.replace("250000", "0"))), Approval)


WRITE: dict[str, Any] = {
    **GOOD,
    "kind": "cancel_pending_order",
    "order_code": "#W2378156",
    "amount": 60891,
    "summary": "cancel #W2378156 (2 items): refund 608.91 USD to paypal_5716091",
    "key": "cancel_pending_order:0123456789abcdef",
    "judged": '{"args": {"order_id": "#W2378156", "reason": "no longer needed"}, '
    '"currency": "USD", "customer_id": "sara_doe_496", "version": "abc"}',
}


def write_problem(**changes: Any) -> str:
    item = read_item(tuple({**WRITE, **changes}.values()))
    assert isinstance(item, Unreadable), item
    return item.problem


def test_a_desk_write_s_row_is_read_as_one() -> None:
    item = read_item(tuple(WRITE.values()))
    assert isinstance(item, Approval) and item.is_write and item.currency == "USD"
    assert item.write["args"] == {"order_id": "#W2378156", "reason": "no longer needed"}
    address = read_item(tuple({**WRITE, "order_code": None, "amount": 0}.values()))
    assert isinstance(address, Approval) and address.order_code == "" and address.amount == 0


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"judged": "{not json"}, "judged is not JSON"),
        ({"judged": '{"currency": "USD", "customer_id": "x", "version": "v"}'}, "no call's"),
        ({"judged": '{"args": {}, "currency": "USD", "version": "v"}'}, "judged.customer_id None"),
        ({"amount": -1}, "amount -1 is not a whole amount"),
        ({"amount": True}, "amount True is not a whole amount"),
        ({"order_code": "../etc"}, "order_code '../etc' is not an order id"),
        ({"expires_at": "soon"}, "expires_at 'soon' is not a timestamp"),
        ({"status": "done"}, "status 'done' is not one of"),
    ],
)
def test_a_desk_write_s_bad_row_is_named_never_acted_on(changes: dict[str, Any], said: str) -> None:
    assert said in write_problem(**changes)


def test_an_item_s_json_keeps_the_names_its_readers_know() -> None:
    """The columns are named for any item (kind, summary, key); `approvals --json` and the API
    still say tool, reason and refund_key, so a script reading them does not break."""
    now = datetime(2026, 10, 14, tzinfo=UTC)
    for fields in (GOOD, WRITE):
        item = read_item(tuple(fields.values()))
        shown = item_json(item, now)
        assert (shown["tool"], shown["reason"], shown["refund_key"]) == (
            fields["kind"],
            fields["summary"],
            fields["key"],
        )
        assert not {"kind", "summary", "key", "status"} & shown.keys()
        assert shown["state"] == "pending"
