"""τ²-bench's retail data in and out: its `db.json` (users, products, orders, as its
`data_model.py` has them) read into the desk's records, and the desk's records written back in
the same shape, τ²'s fields only.

Reading checks every record before anything is written: a malformed file is one line naming the
record and the field (`orders["#W2611340"].items[1].price: ...`). τ²'s float dollars become
cents exactly (47.84 -> 4784; an amount with more decimals is refused, never rounded). Status
strings map onto ours: pending, processed (SHIPPING: it has shipped), delivered, cancelled,
"pending (item modified)", "return requested", "exchange requested"; an order of ours refunded
in full (REFUNDED, which τ² has not) is written as delivered, its refunds in its payments.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from agent_cli.domain.currencies import major_number, money, to_minor
from agent_cli.domain.orders import (
    Address,
    ExchangeRequest,
    Order,
    OrderItem,
    Payment,
    ReturnRequest,
    Shipment,
)
from agent_cli.domain.records import Customer, DeskData, PaymentMethod, Product, Variant
from agent_cli.errors import OrderFileError
from agent_cli.text import plain_value, read_json_file

CURRENCY = "USD"  # τ²-bench's prices are dollars
MAX_FILE_BYTES = 200 * 1024 * 1024
STATUS_IN = {
    "pending": "PENDING",
    "processed": "SHIPPING",
    "delivered": "DELIVERED",
    "cancelled": "CANCELLED",
    "pending (item modified)": "PENDING_ITEM_MODIFIED",
    "return requested": "RETURN_REQUESTED",
    "exchange requested": "EXCHANGE_REQUESTED",
}
STATUS_OUT = {ours: theirs for theirs, ours in STATUS_IN.items()} | {"REFUNDED": "delivered"}

Text = Annotated[str, AfterValidator(plain_value)]  # kept as given, but never a control

Money = float  # dollars, read exactly (to_minor)


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=False, allow_inf_nan=False)


class _Address(_Model):
    address1: Text
    address2: Text
    city: Text
    country: Text
    state: Text
    zip: Text


class _Method(_Model):
    source: Literal["credit_card", "paypal", "gift_card"]
    id: Text
    brand: Text | None = None
    last_four: Text | None = None
    balance: Money | None = Field(default=None, ge=0, le=10**12)


class _Name(_Model):
    first_name: Text
    last_name: Text


class _User(_Model):
    user_id: Text
    name: _Name
    address: _Address
    email: Text
    payment_methods: dict[Text, _Method]
    orders: list[Text] = Field(default_factory=list)


class _Variant(_Model):
    item_id: Text
    options: dict[Text, Text]
    available: bool
    price: Money = Field(ge=0, le=10**12)


class _Product(_Model):
    name: Text
    product_id: Text
    variants: dict[Text, _Variant]


class _Item(_Model):
    name: Text
    product_id: Text
    item_id: Text
    price: Money = Field(ge=0, le=10**12)
    options: dict[Text, Text]


class _Fulfilment(_Model):
    tracking_id: list[Text]
    item_ids: list[Text]


class _Payment(_Model):
    transaction_type: Literal["payment", "refund"]
    amount: Money = Field(ge=0, le=10**12)
    payment_method_id: Text


class _Order(_Model):
    order_id: Text
    user_id: Text
    address: _Address
    items: list[_Item]
    status: Literal[
        "pending",
        "processed",
        "delivered",
        "cancelled",
        "pending (item modified)",
        "return requested",
        "exchange requested",
    ]
    fulfillments: list[_Fulfilment]
    payment_history: list[_Payment]
    cancel_reason: Literal["no longer needed", "ordered by mistake"] | None = None
    exchange_items: list[Text] | None = None
    exchange_new_items: list[Text] | None = None
    exchange_payment_method_id: Text | None = None
    exchange_price_difference: float | None = Field(default=None, ge=-(10**12), le=10**12)
    return_items: list[Text] | None = None
    return_payment_method_id: Text | None = None


class _Db(_Model):
    model_config = ConfigDict(extra="forbid")

    products: dict[Text, _Product]
    users: dict[Text, _User]
    orders: dict[Text, _Order]


def read_tau2(path: Path) -> DeskData:
    """The file's records, checked; OrderFileError naming the record and field otherwise."""
    raw = read_json_file(path, max_bytes=MAX_FILE_BYTES, error=OrderFileError)
    return parse_tau2(raw, str(path))


def parse_tau2(raw: Any, source: str) -> DeskData:
    """`raw` (a decoded db.json) as desk records; OrderFileError naming what is wrong."""
    if not isinstance(raw, dict):
        raise OrderFileError(f"{source}: expected a JSON object with products, users, orders")
    try:
        db = _Db.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise OrderFileError(f"{source}: {_where(first['loc'])}: {first['msg']}") from None
    except RecursionError:
        raise OrderFileError(f"{source}: nested too deeply to read") from None
    try:
        return _desk(db)
    except _Bad as exc:
        raise OrderFileError(f"{source}: {exc}") from None


class _Bad(ValueError):
    """A record that parses but cannot be held: `where: why`."""


MAX_TOTAL = 10**15  # cents (10 trillion dollars): sums stay far inside the store's 64 bits


def _capped(cents: int, where: str) -> None:
    """Each amount is within its cap; their sum must be too (100,000 items at the top price
    add up past what SQLite's INTEGER holds)."""
    if cents > MAX_TOTAL:
        raise _Bad(
            f"{where}: adds up to {money(cents, CURRENCY)}, more than an order may hold "
            f"({money(MAX_TOTAL, CURRENCY)}); check the amounts"
        )


_KEYED = {"products", "users", "orders", "payment_methods", "variants", "options"}


def _where(loc: tuple[int | str, ...]) -> str:
    """pydantic's error location as the record's path: `orders["#W1"].items[1].price` (a key
    of a mapping in brackets and quotes, a list's index in brackets, a field after a dot)."""
    out, keyed = "", False
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif keyed:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
        else:
            out += f".{part}" if out else part
        keyed = isinstance(part, str) and part in _KEYED and not keyed
    return out


def _cents(value: float, where: str) -> int:
    try:
        return to_minor(value, CURRENCY)
    except ValueError as exc:
        raise _Bad(f"{where}: {exc}") from None


def _desk(db: _Db) -> DeskData:
    for key, user in db.users.items():
        if key != user.user_id:
            raise _Bad(f'users["{key}"].user_id: {user.user_id!r} differs from its key')
    customers = tuple(_customer(user) for user in db.users.values())
    products = tuple(_product(product) for product in db.products.values())
    orders = tuple(_order(key, order, db) for key, order in db.orders.items())
    return DeskData(customers, products, orders)


def _customer(user: _User) -> Customer:
    methods = []
    for key, m in user.payment_methods.items():
        where = f'users["{user.user_id}"].payment_methods["{key}"]'
        if key != m.id:
            raise _Bad(f"{where}.id: {m.id!r} differs from its key")
        balance = None if m.balance is None else _cents(m.balance, f"{where}.balance")
        methods.append(PaymentMethod(m.id, m.source, m.brand, m.last_four, balance, CURRENCY))
    a = user.address
    address = Address(a.address1, a.address2, a.city, a.state, a.country, a.zip)
    name = user.name
    return Customer(
        user.user_id, name.first_name, name.last_name, user.email, address, tuple(methods)
    )


def _product(p: _Product) -> Product:
    variants = []
    for key, v in p.variants.items():
        where = f'products["{p.product_id}"].variants["{key}"]'
        if key != v.item_id:
            raise _Bad(f"{where}.item_id: {v.item_id!r} differs from its key")
        price = _cents(v.price, f"{where}.price")
        variants.append(Variant(v.item_id, dict(v.options), v.available, price, CURRENCY))
    return Product(p.product_id, p.name, tuple(variants))


def _order(key: str, o: _Order, db: _Db) -> Order:
    where = f'orders["{key}"]'
    if key != o.order_id:
        raise _Bad(f"{where}.order_id: {o.order_id!r} differs from its key")
    user = db.users.get(o.user_id)
    if user is None:
        raise _Bad(f"{where}.user_id: no user {o.user_id!r} in the file")
    items = tuple(
        OrderItem(
            i.item_id,
            i.product_id,
            i.name,
            _cents(i.price, f"{where}.items[{n}].price"),
            dict(i.options),
        )
        for n, i in enumerate(o.items)
    )
    payments = tuple(
        Payment(
            p.transaction_type,
            _cents(p.amount, f"{where}.payment_history[{n}].amount"),
            p.payment_method_id,
        )
        for n, p in enumerate(o.payment_history)
    )
    name = f"{user.name.first_name} {user.name.last_name}"
    total = sum(item.price for item in items)
    _capped(total, f"{where}.items")
    _capped(sum(p.amount for p in payments), f"{where}.payment_history")
    a = o.address
    return Order(
        o.order_id,
        STATUS_IN[o.status],
        total,
        None,
        CURRENCY,
        name,
        customer_id=o.user_id,
        address=Address(a.address1, a.address2, a.city, a.state, a.country, a.zip),
        items=items,
        shipments=tuple(Shipment(tuple(f.tracking_id), tuple(f.item_ids)) for f in o.fulfillments),
        payments=payments,
        cancel_reason=o.cancel_reason,
        exchange=_exchange(o, where),
        returned=_returned(o, where),
    )


def _exchange(o: _Order, where: str) -> ExchangeRequest | None:
    fields = (o.exchange_items, o.exchange_new_items, o.exchange_payment_method_id)
    if all(f is None for f in (*fields, o.exchange_price_difference)):
        return None
    if o.exchange_items is None or o.exchange_new_items is None:
        raise _Bad(f"{where}.exchange_items: an exchange names its items and new items")
    if o.exchange_payment_method_id is None or o.exchange_price_difference is None:
        raise _Bad(f"{where}.exchange_payment_method_id: an exchange names how it is paid")
    cents = _cents(o.exchange_price_difference, f"{where}.exchange_price_difference")
    return ExchangeRequest(
        tuple(o.exchange_items), tuple(o.exchange_new_items), o.exchange_payment_method_id, cents
    )


def _returned(o: _Order, where: str) -> ReturnRequest | None:
    if o.return_items is None and o.return_payment_method_id is None:
        return None
    if o.return_items is None or o.return_payment_method_id is None:
        raise _Bad(f"{where}.return_items: a return names its items and its payment method")
    return ReturnRequest(tuple(o.return_items), o.return_payment_method_id)


# Out ---------------------------------------------------------------------------------------


def tau2_json(data: DeskData) -> dict[str, Any]:
    """The desk's records in τ²-bench's shape. Orders with no customer (the seed's rows) have
    no place in it and are left out; the caller says how many."""
    orders = [o for o in data.orders if o.customer_id is not None and o.address is not None]
    by_customer: dict[str, list[str]] = {}
    for o in orders:
        by_customer.setdefault(str(o.customer_id), []).append(o.code)
    return {
        "products": {p.id: _product_out(p) for p in data.products},
        "users": {c.id: _user_out(c, by_customer.get(c.id, [])) for c in data.customers},
        "orders": {o.code: _order_out(o) for o in orders},
    }


def _amount(minor: int, currency: str) -> int | float:
    """τ²'s float, in the record's own currency as written (τ²'s data are all dollars; a shop
    of ours in yen exports yen)."""
    return major_number(minor, currency)


def _address_out(a: Address) -> dict[str, str]:
    return {
        "address1": a.address1,
        "address2": a.address2,
        "city": a.city,
        "country": a.country,
        "state": a.state,
        "zip": a.zip,
    }


def _product_out(p: Product) -> dict[str, Any]:
    variants = {
        v.item_id: {
            "item_id": v.item_id,
            "options": v.options,
            "available": v.available,
            "price": _amount(v.price, v.currency),
        }
        for v in p.variants
    }
    return {"name": p.name, "product_id": p.id, "variants": variants}


def _method_out(m: PaymentMethod) -> dict[str, Any]:
    out: dict[str, Any] = {"source": m.source, "id": m.id}
    if m.source == "credit_card":
        out |= {"brand": m.brand, "last_four": m.last_four}
    if m.source == "gift_card":
        out["balance"] = _amount(m.balance or 0, m.currency)
    return out


def _user_out(c: Customer, orders: list[str]) -> dict[str, Any]:
    return {
        "user_id": c.id,
        "name": {"first_name": c.first_name, "last_name": c.last_name},
        "address": _address_out(c.address),
        "email": c.email,
        "payment_methods": {m.id: _method_out(m) for m in c.payment_methods},
        "orders": orders,
    }


def _order_out(o: Order) -> dict[str, Any]:
    assert o.address is not None
    currency = o.currency
    out: dict[str, Any] = {
        "order_id": o.code,
        "user_id": o.customer_id,
        "address": _address_out(o.address),
        "items": [
            {
                "name": i.name,
                "product_id": i.product_id,
                "item_id": i.item_id,
                "price": _amount(i.price, currency),
                "options": i.options,
            }
            for i in o.items
        ],
        "status": STATUS_OUT[o.status],
        "fulfillments": [
            {"tracking_id": list(s.tracking_ids), "item_ids": list(s.item_ids)} for s in o.shipments
        ],
        "payment_history": [
            {
                "transaction_type": p.kind,
                "amount": _amount(p.amount, currency),
                "payment_method_id": p.payment_method_id,
            }
            for p in o.payments
        ],
    }
    if o.cancel_reason is not None:
        out["cancel_reason"] = o.cancel_reason
    if (e := o.exchange) is not None:
        out |= {
            "exchange_items": list(e.items),
            "exchange_new_items": list(e.new_items),
            "exchange_payment_method_id": e.payment_method_id,
            "exchange_price_difference": _amount(e.price_difference, currency),
        }
    if (r := o.returned) is not None:
        out |= {"return_items": list(r.items), "return_payment_method_id": r.payment_method_id}
    return out
