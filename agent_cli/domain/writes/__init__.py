"""The desk's seven writes, planned: τ²-bench retail's write tools (its `tools.py`: the same
names, arguments, statuses, payment and refund entries and gift-card balances), computed on the
records as they are and written nowhere.

A plan checks every precondition and says the exact change in words: one module per family
(`cancel.py`, `addresses.py`, `payment.py`, `items.py`, `returns.py`, `exchange.py`) over what
they share (`rules.py`, and `item_rules.py` for the writes naming items); `plan` here plans any
of the seven; `store/write_commits.py` commits it, planning again inside the transaction on the
records as they are then. Where τ²'s code is
looser than its own policy, or wrong, the policy wins (docs/desk-writes.md):

- several items changed in one call each take their own new variant's price and options
  (τ² gives every item the last one's: its issue #318);
- an order whose items were changed cannot be changed again (address, payment, items) nor
  cancelled; τ²'s address and payment tools allow it;
- an item is never exchanged or swapped for itself (τ² refuses it only for a pending order);
- a cancelled order refunds what each method paid, net of what it got back (τ² refunds every
  entry of the history, a refund entry included, so a cancel after a payment change paid back
  twice);
- a gift card pays only an order of its own currency (τ²'s data are all dollars).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from agent_cli.domain.writes.addresses import order_address, user_address
from agent_cli.domain.writes.cancel import cancel
from agent_cli.domain.writes.exchange import exchange_items
from agent_cli.domain.writes.items import change_items
from agent_cli.domain.writes.payment import payment
from agent_cli.domain.writes.returns import return_items
from agent_cli.domain.writes.rules import (
    SHOWN_STATUS,
    WRITE_STATUSES,
    Plan,
    Records,
    Refused,
    ReturnWindow,
    Unchanged,
)

__all__ = [
    "PLANNERS",
    "SHOWN_STATUS",
    "WRITE_STATUSES",
    "Plan",
    "Records",
    "Refused",
    "ReturnWindow",
    "Unchanged",
    "plan",
]

PLANNERS: dict[str, Callable[[dict[str, Any], Records], Plan]] = {
    "cancel_pending_order": cancel,
    "modify_pending_order_address": order_address,
    "modify_pending_order_payment": payment,
    "modify_pending_order_items": change_items,
    "modify_user_address": user_address,
    "return_delivered_order_items": return_items,
    "exchange_delivered_order_items": exchange_items,
}


def plan(tool: str, args: dict[str, Any], records: Records) -> Plan:
    """The change `tool` with `args` makes to `records`; Refused naming the rule it breaks."""
    planner = PLANNERS.get(tool)
    if planner is None:
        raise ValueError(f"{tool} is not a desk write")
    planned = planner(args, records)
    if (order := records.order) is None:
        return planned
    return dataclasses.replace(
        planned,
        currency=order.currency,
        status=order.status,
        delivered_at=order.delivered_at,
    )
