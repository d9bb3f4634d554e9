"""A pending order cancelled: every method refunded what it paid, net of what it got back, a gift
card at once; the reason one of τ²'s two."""

from __future__ import annotations

import dataclasses
from typing import Any

from agent_cli.domain.orders import Payment
from agent_cli.domain.records import CANCEL_REASONS
from agent_cli.domain.writes.rules import (
    PENDING_ONLY,
    Plan,
    Records,
    Refused,
    counted,
    order_of,
    refund_words,
    status_is,
    with_balance,
)


def cancel(args: dict[str, Any], records: Records) -> Plan:
    order = order_of(records)
    status_is(order, "PENDING", PENDING_ONLY)
    reason = args["reason"]
    if reason not in CANCEL_REASONS:
        allowed = " or ".join(repr(r) for r in CANCEL_REASONS)
        raise Refused(f"the reason must be {allowed}; ask the customer which one")
    currency = order.currency
    net: dict[str, int] = {}
    for payment in order.payments:  # what each method paid, net of what it got back
        sign = 1 if payment.kind == "payment" else -1
        net[payment.payment_method_id] = (
            net.get(payment.payment_method_id, 0) + sign * payment.amount
        )
    refunds = tuple(
        Payment("refund", amount, method) for method, amount in net.items() if amount > 0
    )
    customer = records.customer
    for refund in refunds:
        customer = with_balance(customer, refund.payment_method_id, refund.amount)
    after = dataclasses.replace(
        order,
        status="CANCELLED",
        payments=(*order.payments, *refunds),
        cancel_reason=reason,
    )
    back = (
        "; ".join(refund_words(records.customer, r, currency) for r in refunds)
        or "nothing to refund"
    )
    summary = f"cancel {order.code} ({counted(order.items)}; reason: {reason}): {back}"
    total = sum(r.amount for r in refunds)
    return Plan(
        "cancel_pending_order", summary, records.version, customer, after, refunds, total, currency
    )
