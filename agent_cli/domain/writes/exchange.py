"""A delivered order's items exchanged for other variants within the window, the difference settled
with one method."""

from __future__ import annotations

import dataclasses
from typing import Any

from agent_cli.domain.currencies import money
from agent_cli.domain.orders import ExchangeRequest
from agent_cli.domain.writes.item_rules import (
    back_at_most,
    difference_of,
    planned_swaps,
    settled_words,
    swapped_words,
    within_window,
)
from agent_cli.domain.writes.rules import (
    DELIVERED_ONLY,
    Plan,
    Records,
    Refused,
    covers,
    method_of,
    order_of,
    status_is,
)


def exchange_items(args: dict[str, Any], records: Records) -> Plan:
    order = order_of(records)
    status_is(order, "DELIVERED", DELIVERED_ONLY)
    item_ids, new_ids = list(args["item_ids"]), list(args["new_item_ids"])
    swaps = planned_swaps(order, records, item_ids, new_ids)
    within_window(order, records)
    method = method_of(records.customer, args["payment_method_id"])
    currency = order.currency
    difference = difference_of(swaps)
    covers(method, difference, currency)
    if difference < 0 and back_at_most(order, records, -difference)[0] < -difference:
        raise Refused(
            f"the exchange would send back {money(-difference, currency)}, more than is left "
            f"of order {order.code} after its refunds; a person can help: transfer_to_human_agents"
        )
    after = dataclasses.replace(
        order,
        status="EXCHANGE_REQUESTED",
        exchange=ExchangeRequest(
            tuple(sorted(item_ids)), tuple(sorted(new_ids)), method.id, difference
        ),
    )
    summary = (
        f"exchange {swapped_words(swaps, currency)} on {order.code}: "
        f"{settled_words(difference, method.id, currency)}; the customer gets an email saying how "
        "to send the items back"
    )
    return Plan(
        "exchange_delivered_order_items",
        summary,
        records.version,
        records.customer,
        after,
        (),
        abs(difference),
        currency,
    )
