"""The seed's records: orders, refunds, import results, and the order statuses and code form."""

from __future__ import annotations

import hashlib
from dataclasses import KW_ONLY, dataclass, field
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

PaymentKind = Literal["payment", "refund"]


@dataclass(frozen=True, slots=True)
class Address:
    address1: str
    address2: str
    city: str
    state: str
    country: str
    zip: str

    def __str__(self) -> str:
        street = ", ".join(part for part in (self.address1, self.address2) if part)
        return f"{street}, {self.city}, {self.state} {self.zip}, {self.country}"


@dataclass(frozen=True, slots=True)
class OrderItem:
    item_id: str
    product_id: str
    name: str
    price: int  # at the time of purchase, in the order's currency
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ShipmentEvent:
    happened_at: str  # ISO 8601
    place: str
    description: str


@dataclass(frozen=True, slots=True)
class Shipment:
    tracking_ids: tuple[str, ...]
    item_ids: tuple[str, ...]
    carrier: str | None = None
    estimated_delivery: date | None = None
    events: tuple[ShipmentEvent, ...] = ()


@dataclass(frozen=True, slots=True)
class Payment:
    kind: PaymentKind
    amount: int  # in the order's currency
    payment_method_id: str
    paid_at: str | None = None  # ISO 8601, when known


@dataclass(frozen=True, slots=True)
class ExchangeRequest:
    items: tuple[str, ...]
    new_items: tuple[str, ...]
    payment_method_id: str
    price_difference: int  # in the order's currency; negative: the customer gets money back


@dataclass(frozen=True, slots=True)
class ReturnRequest:
    items: tuple[str, ...]
    payment_method_id: str


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
    _: KW_ONLY
    # What the desk holds beyond the seed's row (empty for a seed order, `store.get`'s):
    customer_id: str | None = None
    address: Address | None = None
    items: tuple[OrderItem, ...] = ()
    shipments: tuple[Shipment, ...] = ()
    payments: tuple[Payment, ...] = ()
    placed_at: date | None = None
    cancel_reason: str | None = None
    exchange: ExchangeRequest | None = None
    returned: ReturnRequest | None = None


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
