"""The desk's records: customers and their payment methods, products and their variants, and an
order with everything a desk looks at (items, shipments, payments). Money is in minor units of
the currency named beside it; ids are kept exactly as given."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agent_cli.domain.orders import Address, Order, Refund

PaymentSource = Literal["credit_card", "paypal", "gift_card"]
CANCEL_REASONS = ("no longer needed", "ordered by mistake")  # τ²-bench's, the only ones


@dataclass(frozen=True, slots=True)
class PaymentMethod:
    id: str
    source: PaymentSource
    brand: str | None = None  # a card's
    last_four: str | None = None  # a card's
    balance: int | None = None  # a gift card's, in minor units of `currency`
    currency: str = "USD"


@dataclass(frozen=True, slots=True)
class Customer:
    id: str
    first_name: str
    last_name: str
    email: str
    address: Address
    payment_methods: tuple[PaymentMethod, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.first_name} {self.last_name}"


@dataclass(frozen=True, slots=True)
class Variant:
    item_id: str
    options: dict[str, str]
    available: bool
    price: int
    currency: str = "USD"


@dataclass(frozen=True, slots=True)
class Product:
    id: str
    name: str
    variants: tuple[Variant, ...] = ()


@dataclass(frozen=True, slots=True)
class OrderChange:
    """A desk write as committed (the `order_changes` table): what changed, by whom, when."""

    id: int
    order_code: str | None  # None: a customer's own record (their address)
    customer_id: str
    tool: str
    summary: str
    made_by: str
    run_id: str
    made_at: str  # ISO 8601, UTC


@dataclass(frozen=True, slots=True)
class Article:
    """A help-centre article (help_articles.py)."""

    id: str
    title: str
    body: str  # Markdown, the title's heading not included
    updated_at: str = ""  # ISO 8601, UTC: when it was imported


@dataclass(frozen=True, slots=True)
class DeskData:
    """A shop's desk data, as imported or exported whole."""

    customers: tuple[Customer, ...] = ()
    products: tuple[Product, ...] = ()
    orders: tuple[Order, ...] = ()
    refunds: tuple[Refund, ...] = ()  # of the seed's kind (the sample shop's A106); ids unused
    articles: tuple[Article, ...] = ()  # the help centre (a new store's; imports leave it)
