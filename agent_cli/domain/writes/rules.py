"""What the desk's writes share: the records a plan reads (`Records`: the order, the customer,
the products, their `version`), the plan it makes (`Plan`: the change in words and in records),
how a write is refused (`Refused`, `Unchanged`: the rule broken and what to do instead), the
statuses each write applies to, and the payment methods' rules (a method of the customer's, a
gift card's balance and currency)."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from datetime import date

from agent_cli.domain.currencies import money
from agent_cli.domain.orders import Order, OrderItem, Payment
from agent_cli.domain.records import Customer, PaymentMethod, Product

SHOWN_STATUS = {  # as a customer reads it, τ²'s words
    "PENDING": "pending",
    "SHIPPING": "processed (being shipped)",
    "DELIVERED": "delivered",
    "CANCELLED": "cancelled",
    "REFUNDED": "refunded",
    "PENDING_ITEM_MODIFIED": "pending with its items already changed",
    "RETURN_REQUESTED": "delivered with a return requested",
    "EXCHANGE_REQUESTED": "delivered with an exchange requested",
}


class Refused(Exception):
    """A precondition the change breaks, in words: the rule, and what the customer can do."""


class Unchanged(Refused):
    """The change asks for what the store holds already: there is nothing to do (τ²-bench's
    own tools write the same values again and succeed)."""


@dataclass(frozen=True, slots=True)
class ReturnWindow:
    """Returns and exchanges are accepted within `days` of delivery, judged on `today`."""

    days: int
    today: date


@dataclass(frozen=True, slots=True)
class Records:
    """What a change is planned on: the order (none for a customer's address), its customer,
    and the products of the order's items; its refunds recorded by `issue_refund` (for its
    ledger) and the shop's window for returns and exchanges (neither is in the version: the
    plan is made again on them inside the commit's transaction)."""

    customer: Customer
    order: Order | None = None
    products: tuple[Product, ...] = ()
    recorded: int = dataclasses.field(default=0, repr=False)
    window: ReturnWindow | None = dataclasses.field(default=None, repr=False)

    @property
    def version(self) -> str:
        """A digest of everything the plan read: any change to it between the proposal and
        the commit makes the commit refuse."""
        return hashlib.sha256(repr(self).encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Plan:
    """One write, computed: what it changes, in words and in records."""

    tool: str
    summary: str  # the exact change, as the customer is shown it
    version: str  # of the records it was planned on
    customer: Customer  # as it will be (an address, gift-card balances)
    order: Order | None  # as it will be; None: no order is touched
    added: tuple[Payment, ...] = ()  # the payment and refund entries it appends, in order
    amount: int = 0  # the money it moves, either way, in the order's minor units
    currency: str = ""  # the order's ("" for a customer's own record)
    status: str = ""  # the order's before the change, for the shop's rules
    delivered_at: date | None = None


def order_of(records: Records) -> Order:
    if records.order is None:
        raise ValueError("this change needs an order")
    return records.order


def status_is(order: Order, wanted: str, instead: str) -> None:
    """Refused unless the order's status is `wanted`: what it is, and what can be done."""
    status = order.status
    if status == wanted:
        return
    if status == "PENDING_ITEM_MODIFIED":
        raise Refused(
            f"order {order.code}'s items were changed already, and an order is changed once; "
            "it cannot be changed or cancelled any more: once it is delivered, the customer "
            "can return or exchange items"
        )
    shown = f"order {order.code} is {SHOWN_STATUS.get(status, status)}"
    raise Refused(f"{shown}; {_AFTER.get(status, instead)}")


_AFTER = {  # what is left to do with an order past the desk's changes
    "CANCELLED": "nothing more can be done to a cancelled order: the customer can order again",
    "REFUNDED": "it was refunded in full; for anything more, a person can help "
    "(transfer_to_human_agents)",
    "RETURN_REQUESTED": "a delivered order is returned or exchanged once; for anything more, "
    "a person can help (transfer_to_human_agents)",
    "EXCHANGE_REQUESTED": "a delivered order is returned or exchanged once; for anything "
    "more, a person can help (transfer_to_human_agents)",
}


# The order statuses each write of an order can apply to (its `status_is` check): the tool is
# offered to a model once an order of one of them was read (tools/desk_writes.py).
WRITE_STATUSES: dict[str, tuple[str, ...]] = {
    "cancel_pending_order": ("PENDING",),
    "modify_pending_order_address": ("PENDING",),
    "modify_pending_order_payment": ("PENDING",),
    "modify_pending_order_items": ("PENDING",),
    "return_delivered_order_items": ("DELIVERED",),
    "exchange_delivered_order_items": ("DELIVERED",),
}

PENDING_ONLY = (
    "only a pending order can be changed or cancelled: once it is delivered, the customer can "
    "return or exchange items"
)
DELIVERED_ONLY = (
    "only a delivered order's items can be returned or exchanged, and only once: the customer "
    "can wait for delivery, or ask for a person"
)


def method_of(customer: Customer, method_id: str) -> PaymentMethod:
    for method in customer.payment_methods:
        if method.id == method_id:
            return method
    have = ", ".join(m.id for m in customer.payment_methods) or "none"
    raise Refused(
        f"{method_id} is not one of the customer's payment methods (theirs: {have}); "
        "use one of theirs"
    )


def covers(method: PaymentMethod, amount: int, currency: str) -> None:
    """A gift card pays only what its balance covers, in its own currency."""
    if method.source != "gift_card" or amount <= 0:
        return
    if method.currency != currency:
        raise Refused(
            f"gift card {method.id} holds {method.currency}, and this order is in {currency}; "
            "choose another payment method"
        )
    if (method.balance or 0) < amount:
        balance = money(method.balance or 0, method.currency)
        raise Refused(
            f"gift card {method.id} holds {balance}, less than the {money(amount, currency)} "
            "to pay; choose another payment method"
        )


def with_balance(customer: Customer, method_id: str, change: int) -> Customer:
    """The customer with one gift card's balance moved by `change` (other methods as they are)."""
    methods = tuple(
        dataclasses.replace(m, balance=(m.balance or 0) + change)
        if m.id == method_id and m.source == "gift_card"
        else m
        for m in customer.payment_methods
    )
    return dataclasses.replace(customer, payment_methods=methods)


def refund_words(customer: Customer, refund: Payment, currency: str) -> str:
    to = refund.payment_method_id
    gift = any(m.id == to and m.source == "gift_card" for m in customer.payment_methods)
    when = "at once" if gift else "in 5-7 business days"
    return f"refund {money(refund.amount, currency)} to {to} {when}"


def counted(items: tuple[OrderItem, ...] | list[str]) -> str:
    return f"{len(items)} item" + ("" if len(items) == 1 else "s")
