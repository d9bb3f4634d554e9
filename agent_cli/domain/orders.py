"""The seed's records: orders, refunds, import results, and the order statuses and code form."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date
from typing import Literal, get_args

OrderStatus = Literal["PENDING", "SHIPPING", "DELIVERED", "CANCELLED", "REFUNDED"]
# An order's statuses, the seed's and the desk's: what a rule may judge, and what the store's
# check allows (STATUSES below).
RuleStatus = Literal[
    "PENDING",
    "SHIPPING",
    "DELIVERED",
    "CANCELLED",
    "REFUNDED",
    "PENDING_ITEM_MODIFIED",
    "RETURN_REQUESTED",
    "EXCHANGE_REQUESTED",
]
# The seed's five and the desk's three (τ²-bench's "pending (item modified)", "return
# requested", "exchange requested"), named once above.
STATUSES: tuple[str, ...] = get_args(RuleStatus)
ORDER_CODE_PATTERN = r"^[A-Za-z0-9]{1,16}$"  # ASCII letters and digits: no look-alikes
ORDER_ID_PATTERN = r"^#?[A-Za-z0-9]{1,16}$"  # and τ²-bench's ids, `#W2611340`, to look one up


@dataclass(frozen=True, slots=True)
class Order:
    """One customer order. `total` is in minor units of `currency` (JPY 250,000 is 250000, USD
    129.00 is 12900); `note` is customer text."""

    code: str
    status: str
    total: int
    delivered_at: date | None = None
    currency: str = "JPY"
    customer: str | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Refund:
    id: int
    order_code: str
    amount: int
    reason: str
    created_at: str  # ISO 8601, UTC


@dataclass(frozen=True, slots=True)
class RefundRecorded:
    refund: Refund
    created: bool  # False: this exact refund existed already and nothing new was recorded


class RefundRefused(Exception):
    """The store will not record a refund (more than is still refundable)."""


@dataclass(frozen=True, slots=True)
class ImportResult:
    added: int
    updated: int


def refund_key(order_code: str, amount: int, reason: str) -> str:
    """A refund's idempotency key: the same order, amount and reason (case and spacing aside)
    make the same refund, recorded once."""
    folded_reason = " ".join(reason.lower().split())
    digest = hashlib.sha256(folded_reason.encode()).hexdigest()[:16]
    return f"{order_code}:{amount}:{digest}"
