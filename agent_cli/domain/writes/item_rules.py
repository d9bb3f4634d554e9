"""What the writes naming items share: the items held by the order, each swapped for another
variant of its own product at that variant's price, the difference settled with one method, and
a delivered order's window and what is left to send back."""

from __future__ import annotations

import dataclasses
from collections import Counter

from agent_cli.domain import ledger
from agent_cli.domain.currencies import money
from agent_cli.domain.orders import Order, OrderItem
from agent_cli.domain.writes.rules import Records, Refused, counted


def items_held(order: Order, item_ids: list[str]) -> None:
    held = Counter(item.item_id for item in order.items)
    for item_id, wanted in Counter(item_ids).items():
        if wanted > held[item_id]:
            have = ", ".join(sorted(held)) or "none"
            raise Refused(
                f"order {order.code} holds {held[item_id]} of item {item_id}, not {wanted} "
                f"(its items: {have}); name items of this order"
            )


def planned_swaps(
    order: Order, records: Records, item_ids: list[str], new_ids: list[str]
) -> list[tuple[OrderItem, OrderItem]]:
    """Each named item and what it becomes: another available variant of its own product, at
    that variant's price and options."""
    items_held(order, item_ids)
    if len(item_ids) != len(new_ids):
        raise Refused(
            f"{counted(item_ids)} named and {counted(new_ids)} to change them to; name one new "
            "item for each"
        )
    products = {p.id: p for p in records.products}
    remaining = list(order.items)
    swaps = []
    for old_id, new_id in zip(item_ids, new_ids, strict=True):
        if old_id == new_id:
            raise Refused(f"item {old_id} cannot be swapped for itself; name another variant")
        old = next(item for item in remaining if item.item_id == old_id)
        remaining.remove(old)
        product = products.get(old.product_id)
        variant = (
            next((v for v in product.variants if v.item_id == new_id), None) if product else None
        )
        if variant is None or not variant.available:
            raise Refused(
                f"item {new_id} is not an available variant of {old.name!r} (product "
                f"{old.product_id}); get_product_details lists the ones that are"
            )
        swaps.append(
            (
                old,
                dataclasses.replace(
                    old, item_id=new_id, price=variant.price, options=variant.options
                ),
            )
        )
    return swaps


def difference_of(swaps: list[tuple[OrderItem, OrderItem]]) -> int:
    return sum(new.price - old.price for old, new in swaps)


def swapped_words(swaps: list[tuple[OrderItem, OrderItem]], currency: str) -> str:
    return ", ".join(
        f"{old.name} {old.item_id} ({money(old.price, currency)}) -> {new.item_id} "
        f"({money(new.price, currency)})"
        for old, new in swaps
    )


def settled_words(difference: int, method_id: str, currency: str) -> str:
    if difference > 0:
        return f"the customer pays {money(difference, currency)} more with {method_id}"
    if difference < 0:
        return f"refund {money(-difference, currency)} to {method_id}"
    return "the same price, nothing to pay"


def within_window(order: Order, records: Records) -> None:
    """Returns and exchanges follow the shop's window, judged on the delivery date (an order
    with none on record, as τ²'s, is not held to it)."""
    window, delivered = records.window, order.delivered_at
    if window is None or delivered is None:
        return
    if (age := (window.today - delivered).days) > window.days:
        raise Refused(
            f"order {order.code} was delivered {delivered.isoformat()}, {age} days ago; returns "
            f"and exchanges are accepted within {window.days} days of delivery; a person can "
            "help: transfer_to_human_agents"
        )


def back_at_most(order: Order, records: Records, amount: int) -> tuple[int, str]:
    """What may go back for items worth `amount`: no more than the order's ledger has left,
    and the words saying what went back already (money goes back once)."""
    held = ledger.of_order(order, records.recorded)
    currency = order.currency
    if held.left <= 0:
        raise Refused(
            f"order {order.code} was refunded in full already ({money(held.back, currency)}); "
            "nothing is left to go back: a person can help: transfer_to_human_agents"
        )
    if not held.back:
        return amount, ""
    return min(amount, held.left), (
        f" ({money(held.back, currency)} of the order was refunded already; "
        f"{money(held.left, currency)} is left)"
    )


def priced(order: Order, item_ids: list[str]) -> list[int]:
    remaining = list(order.items)
    prices = []
    for item_id in item_ids:
        item = next(i for i in remaining if i.item_id == item_id)
        remaining.remove(item)
        prices.append(item.price)
    return prices
