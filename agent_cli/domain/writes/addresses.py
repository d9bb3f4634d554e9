"""Where a pending order ships, and a customer's default address (orders placed already keep
theirs)."""

from __future__ import annotations

import dataclasses
from typing import Any

from agent_cli.domain.orders import Address
from agent_cli.domain.writes.rules import (
    PENDING_ONLY,
    Plan,
    Records,
    Unchanged,
    order_of,
    status_is,
)


def _address(args: dict[str, Any]) -> Address:
    return Address(
        args["address1"],
        args["address2"],
        args["city"],
        args["state"],
        args["country"],
        args["zip"],
    )


def order_address(args: dict[str, Any], records: Records) -> Plan:
    order = order_of(records)
    status_is(order, "PENDING", PENDING_ONLY)
    new = _address(args)
    if new == order.address:
        raise Unchanged(f"order {order.code} ships to that address already; nothing to change")
    after = dataclasses.replace(order, address=new)
    summary = f"ship {order.code} to {new} instead of {order.address}"
    return Plan("modify_pending_order_address", summary, records.version, records.customer, after)


def user_address(args: dict[str, Any], records: Records) -> Plan:
    customer = records.customer
    new = _address(args)
    if new == customer.address:
        raise Unchanged(f"{customer.id}'s address is that already; nothing to change")
    after = dataclasses.replace(customer, address=new)
    summary = (
        f"change {customer.id}'s default address to {new} (was {customer.address}); "
        "orders placed already keep theirs"
    )
    return Plan("modify_user_address", summary, records.version, after, None)
