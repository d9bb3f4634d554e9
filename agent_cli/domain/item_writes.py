"""The desk's writes that name items (a pending order's items swapped, a delivered order's
returned or exchanged), and `plan`, which plans any of the seven (desk_changes.py holds the
records, the rules they share and the writes on a whole order or a customer)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from typing import Any

from agent_cli.domain import ledger
from agent_cli.domain.currencies import money
from agent_cli.domain.records import DeskOrder, ExchangeRequest, OrderItem, Payment, ReturnRequest
from agent_cli.domain.writes import (
    DELIVERED_ONLY,
    PENDING_ONLY,
    Plan,
    Records,
    Refused,
    cancel,
    counted,
    covers,
    method_of,
    order_address,
    order_of,
    payment,
    status_is,
    user_address,
    with_balance,
)


def _items_held(order: DeskOrder, item_ids: list[str]) -> None:
    held = Counter(item.item_id for item in order.items)
    for item_id, wanted in Counter(item_ids).items():
        if wanted > held[item_id]:
            have = ", ".join(sorted(held)) or "none"
            raise Refused(
                f"order {order.code} holds {held[item_id]} of item {item_id}, not {wanted} "
                f"(its items: {have}); name items of this order"
            )


def _swaps(
    order: DeskOrder, records: Records, item_ids: list[str], new_ids: list[str]
) -> list[tuple[OrderItem, OrderItem]]:
    """Each named item and what it becomes: another available variant of its own product, at
    that variant's price and options."""
    _items_held(order, item_ids)
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


def _difference(swaps: list[tuple[OrderItem, OrderItem]]) -> int:
    return sum(new.price - old.price for old, new in swaps)


def _items(args: dict[str, Any], records: Records) -> Plan:
    order = order_of(records)
    status_is(order, "PENDING", PENDING_ONLY)
    swaps = _swaps(order, records, list(args["item_ids"]), list(args["new_item_ids"]))
    method = method_of(records.customer, args["payment_method_id"])
    currency = order.order.currency
    difference = _difference(swaps)
    covers(method, difference, currency)
    entry = Payment("payment" if difference > 0 else "refund", abs(difference), method.id)
    items = list(order.items)
    for old, new in swaps:
        items[items.index(old)] = new  # the first such item still unchanged, as τ² does
    after = dataclasses.replace(
        order,
        order=dataclasses.replace(
            order.order, status="PENDING_ITEM_MODIFIED", total=sum(i.price for i in items)
        ),
        items=tuple(items),
        payments=(*order.payments, entry),
    )
    customer = with_balance(records.customer, method.id, -difference)
    summary = (
        f"change {_swapped(swaps, currency)} on {order.code}: "
        f"{_settled(difference, method.id, currency)}; the order cannot be changed again after "
        "this"
    )
    return Plan(
        "modify_pending_order_items",
        summary,
        records.version,
        customer,
        after,
        (entry,),
        abs(difference),
        currency,
    )


def _swapped(swaps: list[tuple[OrderItem, OrderItem]], currency: str) -> str:
    return ", ".join(
        f"{old.name} {old.item_id} ({money(old.price, currency)}) -> {new.item_id} "
        f"({money(new.price, currency)})"
        for old, new in swaps
    )


def _settled(difference: int, method_id: str, currency: str) -> str:
    if difference > 0:
        return f"the customer pays {money(difference, currency)} more with {method_id}"
    if difference < 0:
        return f"refund {money(-difference, currency)} to {method_id}"
    return "the same price, nothing to pay"


def _return(args: dict[str, Any], records: Records) -> Plan:
    order = order_of(records)
    status_is(order, "DELIVERED", DELIVERED_ONLY)
    method = method_of(records.customer, args["payment_method_id"])
    if method.source != "gift_card":
        if not order.payments:
            raise Refused(
                f"order {order.code} has no payment on record to refund to; a return can be "
                "refunded to a gift card of the customer's, or a person can help"
            )
        if method.id != (original := order.payments[0].payment_method_id):
            raise Refused(
                f"a return is refunded to the original payment method ({original}) or a gift "
                f"card, not {method.id}; ask the customer which of those"
            )
    item_ids = list(args["item_ids"])
    _items_held(order, item_ids)
    _within_window(order, records)
    currency = order.order.currency
    amount, already = _back_at_most(order, records, sum(_priced(order, item_ids)))
    after = dataclasses.replace(
        order,
        order=dataclasses.replace(order.order, status="RETURN_REQUESTED"),
        returned=ReturnRequest(tuple(sorted(item_ids)), method.id),
    )
    summary = (
        f"return {counted(item_ids)} of {order.code} ({', '.join(item_ids)}): "
        f"{money(amount, currency)} back to {method.id} once they arrive{already}; the "
        "customer gets an email saying how to send them"
    )
    return Plan(
        "return_delivered_order_items",
        summary,
        records.version,
        records.customer,
        after,
        (),
        amount,
        currency,
    )


def _within_window(order: DeskOrder, records: Records) -> None:
    """Returns and exchanges follow the shop's window, judged on the delivery date (an order
    with none on record, as τ²'s, is not held to it)."""
    window, delivered = records.window, order.order.delivered_at
    if window is None or delivered is None:
        return
    if (age := (window.today - delivered).days) > window.days:
        raise Refused(
            f"order {order.code} was delivered {delivered.isoformat()}, {age} days ago; returns "
            f"and exchanges are accepted within {window.days} days of delivery; a person can "
            "help: transfer_to_human_agents"
        )


def _back_at_most(order: DeskOrder, records: Records, amount: int) -> tuple[int, str]:
    """What may go back for items worth `amount`: no more than the order's ledger has left,
    and the words saying what went back already (money goes back once)."""
    held = ledger.of_order(order, records.recorded)
    currency = order.order.currency
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


def _priced(order: DeskOrder, item_ids: list[str]) -> list[int]:
    remaining = list(order.items)
    prices = []
    for item_id in item_ids:
        item = next(i for i in remaining if i.item_id == item_id)
        remaining.remove(item)
        prices.append(item.price)
    return prices


def _exchange(args: dict[str, Any], records: Records) -> Plan:
    order = order_of(records)
    status_is(order, "DELIVERED", DELIVERED_ONLY)
    item_ids, new_ids = list(args["item_ids"]), list(args["new_item_ids"])
    swaps = _swaps(order, records, item_ids, new_ids)
    _within_window(order, records)
    method = method_of(records.customer, args["payment_method_id"])
    currency = order.order.currency
    difference = _difference(swaps)
    covers(method, difference, currency)
    if difference < 0 and _back_at_most(order, records, -difference)[0] < -difference:
        raise Refused(
            f"the exchange would send back {money(-difference, currency)}, more than is left "
            f"of order {order.code} after its refunds; a person can help: transfer_to_human_agents"
        )
    after = dataclasses.replace(
        order,
        order=dataclasses.replace(order.order, status="EXCHANGE_REQUESTED"),
        exchange=ExchangeRequest(
            tuple(sorted(item_ids)), tuple(sorted(new_ids)), method.id, difference
        ),
    )
    summary = (
        f"exchange {_swapped(swaps, currency)} on {order.code}: "
        f"{_settled(difference, method.id, currency)}; the customer gets an email saying how "
        "to send the items back"
    )
    return Plan(
        "exchange_delivered_order_items",
        summary,
        records.version,
        records.customer,
        after,
        (),
        abs(difference),
        currency,
    )


PLANNERS: dict[str, Callable[[dict[str, Any], Records], Plan]] = {
    "cancel_pending_order": cancel,
    "modify_pending_order_address": order_address,
    "modify_pending_order_payment": payment,
    "modify_pending_order_items": _items,
    "modify_user_address": user_address,
    "return_delivered_order_items": _return,
    "exchange_delivered_order_items": _exchange,
}


def plan(tool: str, args: dict[str, Any], records: Records) -> Plan:
    """The change `tool` with `args` makes to `records`; Refused naming the rule it breaks."""
    planner = PLANNERS.get(tool)
    if planner is None:
        raise ValueError(f"{tool} is not a desk write")
    planned = planner(args, records)
    if (order := records.order) is None:
        return planned
    return dataclasses.replace(
        planned,
        currency=order.order.currency,
        status=order.order.status,
        delivered_at=order.order.delivered_at,
    )
