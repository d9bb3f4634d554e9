"""A pending order paid with another of the customer's methods: the new one charged, the old one
refunded; once only."""

from __future__ import annotations

import dataclasses
from typing import Any

from agent_cli.domain.currencies import money
from agent_cli.domain.orders import Payment
from agent_cli.domain.writes.rules import (
    PENDING_ONLY,
    Plan,
    Records,
    Refused,
    Unchanged,
    covers,
    method_of,
    order_of,
    refund_words,
    status_is,
    with_balance,
)


def payment(args: dict[str, Any], records: Records) -> Plan:
    order = order_of(records)
    status_is(order, "PENDING", PENDING_ONLY)
    new = method_of(records.customer, args["payment_method_id"])
    if len(order.payments) != 1 or order.payments[0].kind != "payment":
        raise Refused(
            f"order {order.code}'s payment was changed already (its history has "
            f"{len(order.payments)} entries); a person can help: transfer_to_human_agents"
        )
    paid = order.payments[0]
    if paid.payment_method_id == new.id:
        raise Unchanged(f"order {order.code} is paid with {new.id} already; nothing to change")
    currency = order.currency
    covers(new, paid.amount, currency)
    added = (
        Payment("payment", paid.amount, new.id),
        Payment("refund", paid.amount, paid.payment_method_id),
    )
    customer = with_balance(records.customer, new.id, -paid.amount)
    customer = with_balance(customer, paid.payment_method_id, paid.amount)
    after = dataclasses.replace(order, payments=(*order.payments, *added))
    summary = (
        f"pay {order.code} ({money(paid.amount, currency)}) with {new.id} instead of "
        f"{paid.payment_method_id}: {refund_words(records.customer, added[1], currency)}"
    )
    return Plan(
        "modify_pending_order_payment",
        summary,
        records.version,
        customer,
        after,
        added,
        paid.amount,
        currency,
    )
