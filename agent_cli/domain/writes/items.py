"""A pending order's items swapped for other variants of their products, the difference paid or
refunded; the order cannot be changed again after."""

from __future__ import annotations

import dataclasses
from typing import Any

from agent_cli.domain.orders import Payment
from agent_cli.domain.writes.item_rules import (
    difference_of,
    planned_swaps,
    settled_words,
    swapped_words,
)
from agent_cli.domain.writes.rules import (
    PENDING_ONLY,
    Plan,
    Records,
    covers,
    method_of,
    order_of,
    status_is,
    with_balance,
)


def change_items(args: dict[str, Any], records: Records) -> Plan:
    order = order_of(records)
    status_is(order, "PENDING", PENDING_ONLY)
    swaps = planned_swaps(order, records, list(args["item_ids"]), list(args["new_item_ids"]))
    method = method_of(records.customer, args["payment_method_id"])
    currency = order.currency
    difference = difference_of(swaps)
    covers(method, difference, currency)
    entry = Payment("payment" if difference > 0 else "refund", abs(difference), method.id)
    items = list(order.items)
    for old, new in swaps:
        items[items.index(old)] = new  # the first such item still unchanged, as τ² does
    after = dataclasses.replace(
        order,
        status="PENDING_ITEM_MODIFIED",
        total=sum(i.price for i in items),
        items=tuple(items),
        payments=(*order.payments, entry),
    )
    customer = with_balance(records.customer, method.id, -difference)
    summary = (
        f"change {swapped_words(swaps, currency)} on {order.code}: "
        f"{settled_words(difference, method.id, currency)}; the order cannot be changed again "
        "after this"
    )
    return Plan(
        "modify_pending_order_items",
        summary,
        records.version,
        customer,
        after,
        (entry,),
        abs(difference),
        currency,
    )
