"""A delivered order's items returned within the window: what they cost refunded to the original
method or a gift card, at most what is left of the order."""

from __future__ import annotations

import dataclasses
from typing import Any

from agent_cli.domain.currencies import money
from agent_cli.domain.orders import ReturnRequest
from agent_cli.domain.writes.item_rules import back_at_most, items_held, priced, within_window
from agent_cli.domain.writes.rules import (
    DELIVERED_ONLY,
    Plan,
    Records,
    Refused,
    counted,
    method_of,
    order_of,
    status_is,
)


def return_items(args: dict[str, Any], records: Records) -> Plan:
    order = order_of(records)
    status_is(order, "DELIVERED", DELIVERED_ONLY)
    method = method_of(records.customer, args["payment_method_id"])
    if method.source != "gift_card":
        if not order.payments:
            raise Refused(
                f"order {order.code} has no payment on record to refund to; a return can be "
                "refunded to a gift card of the customer's, or a person can help"
            )
        if method.id != (original := order.payments[0].payment_method_id):
            raise Refused(
                f"a return is refunded to the original payment method ({original}) or a gift "
                f"card, not {method.id}; ask the customer which of those"
            )
    item_ids = list(args["item_ids"])
    items_held(order, item_ids)
    within_window(order, records)
    currency = order.currency
    amount, already = back_at_most(order, records, sum(priced(order, item_ids)))
    after = dataclasses.replace(
        order,
        status="RETURN_REQUESTED",
        returned=ReturnRequest(tuple(sorted(item_ids)), method.id),
    )
    summary = (
        f"return {counted(item_ids)} of {order.code} ({', '.join(item_ids)}): "
        f"{money(amount, currency)} back to {method.id} once they arrive{already}; the "
        "customer gets an email saying how to send them"
    )
    return Plan(
        "return_delivered_order_items",
        summary,
        records.version,
        records.customer,
        after,
        (),
        amount,
        currency,
    )
