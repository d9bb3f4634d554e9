"""What a read tool returned, as data: the fields of its record, for `agent tools call --json`
(`| jq .user_id`). The model reads the text record (tools/desk.py, tools/orders.py); these are
the same facts, money in major units of the currency beside it (as `orders show --json`),
dates as ISO 8601, ids exactly as stored."""

from __future__ import annotations

from datetime import date
from typing import Any

from agent_cli.domain.currencies import major_number
from agent_cli.domain.orders import Address, Order
from agent_cli.domain.records import Customer, Product, Variant

Record = dict[str, Any]


def _day(value: date | None) -> str | None:
    return value.isoformat() if value is not None else None


def address_data(address: Address | None) -> Record | None:
    if address is None:
        return None
    keys = ("address1", "address2", "city", "state", "country", "zip")
    return {key: getattr(address, key) for key in keys}


def customer_data(customer: Customer, orders: list[str]) -> Record:
    methods = [
        {
            "id": m.id,
            "source": m.source,
            "brand": m.brand,
            "last_four": m.last_four,
            "balance": None if m.balance is None else major_number(m.balance, m.currency),
            "currency": m.currency if m.balance is not None else None,
        }
        for m in customer.payment_methods
    ]
    return {
        "user_id": customer.id,
        "first_name": customer.first_name,
        "last_name": customer.last_name,
        "email": customer.email,
        "address": address_data(customer.address),
        "payment_methods": methods,
        "orders": orders,
    }


def order_data(found: Order, refunded: int) -> Record:
    """An order with its items, payments and what went back (`get_order_details`)."""
    currency = found.currency

    def amount(minor: int) -> int | float:
        return major_number(minor, currency)

    return {
        "order_id": found.code,
        "user_id": found.customer_id,
        "status": found.status,
        "total": amount(found.total),
        "currency": currency,
        "placed_at": _day(found.placed_at),
        "delivered_at": _day(found.delivered_at),
        "address": address_data(found.address),
        "items": [
            {
                "item_id": item.item_id,
                "product_id": item.product_id,
                "name": item.name,
                "price": amount(item.price),
                "options": dict(item.options),
            }
            for item in found.items
        ],
        "payments": [
            {
                "kind": p.kind,
                "amount": amount(p.amount),
                "payment_method_id": p.payment_method_id,
                "paid_at": p.paid_at,
            }
            for p in found.payments
        ],
        "refunded": amount(refunded),
        "cancel_reason": found.cancel_reason,
        "exchange_request": _exchange(found, amount),
        "return_request": _return(found),
    }


def _exchange(found: Order, amount: Any) -> Record | None:
    e = found.exchange
    if e is None:
        return None
    return {
        "items": list(e.items),
        "new_items": list(e.new_items),
        "payment_method_id": e.payment_method_id,
        "price_difference": amount(e.price_difference),
    }


def _return(found: Order) -> Record | None:
    r = found.returned
    if r is None:
        return None
    return {"items": list(r.items), "payment_method_id": r.payment_method_id}


def tracking_data(found: Order) -> Record:
    """Where an order is (`track_order`): each shipment, its latest events last."""
    shipments = [
        {
            "carrier": s.carrier,
            "tracking_ids": list(s.tracking_ids),
            "item_ids": list(s.item_ids),
            "estimated_delivery": _day(s.estimated_delivery),
            "events": [
                {"happened_at": e.happened_at, "place": e.place, "description": e.description}
                for e in s.events
            ],
        }
        for s in found.shipments
    ]
    return {
        "order_id": found.code,
        "status": found.status,
        "delivered_at": _day(found.delivered_at),
        "shipments": shipments,
    }


def variant_data(variant: Variant, product_id: str | None = None) -> Record:
    record: Record = {"item_id": variant.item_id}
    if product_id is not None:
        record["product_id"] = product_id
    return record | {
        "available": variant.available,
        "price": major_number(variant.price, variant.currency),
        "currency": variant.currency,
        "options": dict(variant.options),
    }


def product_data(product: Product) -> Record:
    return {
        "product_id": product.id,
        "name": product.name,
        "variants": [variant_data(v) for v in product.variants],
    }


def lookup_data(order: Order, refunded: int, refundable: str | None, why: str) -> Record:
    """The seed's order row, and what code computed of it (`lookup_order`)."""
    record: Record = {
        "order": order.code,
        "status": order.status,
        "total": major_number(order.total, order.currency),
        "currency": order.currency,
        "delivered_at": _day(order.delivered_at),
        "refunded": major_number(refunded, order.currency),
        "note": order.note,
    }
    if refundable is not None:
        record |= {"refundable": refundable, "why": why}
    return record
