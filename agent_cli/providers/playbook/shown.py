"""A proposed change as the customer reads it (issue 49, points 5 and 6): in their language,
in words, never the tool's operator line ("exchange T-Shirt 1008001 (4,900 JPY) -> 1008002");
every option that changes named with its old and new value, and the price difference. The
question names the proposal's id ("change P1"), which is what the customer's yes answers
(policy/consent.py's `carries`). Built from what the playbook read itself: the order's record,
the product's variants, the address and the method it chose; None when it cannot tell, and the
tool's own line is quoted instead."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_cli.core.decisions import CallTool
from agent_cli.providers.playbook import catalogue
from agent_cli.providers.playbook.reading import JA_VALUES, Record


@dataclass(frozen=True, slots=True, kw_only=True)
class Shown:
    """One language's words for a proposed change."""

    ask: str  # the question: {shown}, {id}
    cancel: str
    address: str
    account: str
    payment: str
    swap: str  # before shipping
    exchange: str  # after delivery
    ret: str
    change: str  # one option: {key}, {old}, {new}
    added: str  # an option the new one has and the old had not
    none: str  # an option the old one had and the new has not
    joiner: str
    same_price: str
    more: str  # {amount}
    less: str
    methods: dict[str, str]
    japanese: bool


ENGLISH = Shown(**catalogue.SHOWN_EN)
JAPANESE = Shown(**catalogue.SHOWN_JA)


def shown(call: CallTool, order: Record, product: Record, words: Shown) -> str | None:
    """The change `call` proposes, in the customer's words, from the order's and the product's
    records; None when it cannot be said."""
    args = call.args
    code = str(args.get("order_id", ""))
    method = str(args.get("payment_method_id", "")).rsplit("_", 1)[0]
    total = order.get("total")
    simple = {
        "cancel_pending_order": lambda: words.cancel.format(
            code=code, amount=_amount(total, _unit(order), words) if total is not None else "?"
        ),
        "modify_pending_order_address": lambda: words.address.format(
            code=code, address=_address(args)
        ),
        "modify_user_address": lambda: words.account.format(address=_address(args)),
        "modify_pending_order_payment": lambda: words.payment.format(
            code=code, method=words.methods.get(method, method)
        ),
    }
    if call.tool in simple:
        return simple[call.tool]()
    if call.tool == "return_delivered_order_items":
        ids = [str(i) for i in args.get("item_ids", [])]
        names, paid = _names(order, ids), _paid(order, ids)
        if not names or paid is None:
            return None
        amount = _amount(paid, _unit(order), words)
        return words.ret.format(code=code, names=words.joiner.join(names), amount=amount)
    if call.tool in ("modify_pending_order_items", "exchange_delivered_order_items"):
        return _swapped(call, order, product, words)
    return None


def _address(args: dict[str, object]) -> str:
    parts = ("address1", "address2", "city")
    place = ", ".join(str(args[k]) for k in parts if args.get(k))
    return f"{place}, {args.get('state', '')} {args.get('zip', '')}, {args.get('country', '')}"


def _unit(record: Record) -> str:
    return str(record.get("currency") or "")


def _amount(value: float, unit: str, words: Shown) -> str:
    """An amount as the customer writes it: 5,400円 (Japanese, yen), 5,400 JPY, 12.50 USD."""
    whole = f"{value:,.0f}" if unit == "JPY" else f"{value:,.2f}"
    return f"{whole}円" if words.japanese and unit == "JPY" else f"{whole} {unit}".strip()


def _items(order: Record) -> dict[str, Record]:
    return {str(item["item_id"]): item for item in order.get("items") or ()}


def _paid(order: Record, item_ids: list[str]) -> float | None:
    """What the named items cost, one price per id named."""
    prices = [_price(_items(order).get(i)) for i in item_ids]
    return None if None in prices else sum(p for p in prices if p is not None)


def _price(record: Record | None) -> float | None:
    """A record's price, or None when there is none to read."""
    price = (record or {}).get("price")
    if isinstance(price, bool) or not isinstance(price, int | float):
        return None
    return float(price)


def _names(order: Record, item_ids: list[str]) -> list[str]:
    items = _items(order)
    return [str(items[i]["name"]) for i in dict.fromkeys(item_ids) if i in items]


def _swapped(call: CallTool, order: Record, product: Record, words: Shown) -> str | None:
    """An item for another variant: each option that changes, and the price difference."""
    old_ids = [str(i) for i in call.args.get("item_ids", [])]
    new_ids = [str(i) for i in call.args.get("new_item_ids", [])]
    items = _items(order)
    variants = {str(v["item_id"]): v for v in product.get("variants") or ()}
    if not old_ids or not new_ids or old_ids[0] not in items or new_ids[0] not in variants:
        return None
    name = str(items[old_ids[0]]["name"])
    old = _options(items[old_ids[0]]["options"], words)
    new = _options(variants[new_ids[0]]["options"], words)
    changes = [
        words.change.format(key=key, old=old[key], new=value)
        if key in old
        else words.added.format(key=key, new=value)
        for key, value in new.items()
        if old.get(key) != value
    ]
    changes += [
        words.change.format(key=key, old=value, new=words.none)
        for key, value in old.items()
        if key not in new
    ]
    pairs = [(items.get(o), variants.get(n)) for o, n in zip(old_ids, new_ids, strict=False)]
    price = _difference(pairs, _unit(order), words)
    if price is None:
        return None
    template = words.swap if call.tool == "modify_pending_order_items" else words.exchange
    change_words = words.joiner.join(changes) or words.same_price
    return template.format(
        name=name, code=call.args.get("order_id", ""), changes=change_words, price=price
    )


def _options(options: Mapping[str, Any], words: Shown) -> dict[str, str]:
    """A record's options, keys and values in the customer's language where we know them."""
    pairs = ((str(k), str(v)) for k, v in options.items())
    if not words.japanese:
        return {key.replace("color", "colour"): value for key, value in pairs}
    return {_JA_KEYS.get(k, k): JA_VALUES.get(v.lower(), v) for k, v in pairs}


_JA_KEYS = {"size": "サイズ", "color": "色", "colour": "色", "material": "素材", "capacity": "容量"}


def _difference(
    pairs: list[tuple[Record | None, Record | None]], unit: str, words: Shown
) -> str | None:
    """What the customer pays or gets back: each item's new price less its old one, summed;
    None when a price cannot be read (the tool's own line is quoted then)."""
    delta = 0.0
    for old, new in pairs:
        was, now = _price(old), _price(new)
        if was is None or now is None:
            return None
        delta += now - was
    if delta == 0:
        return words.same_price
    first = pairs[0][1] or {}
    amount = _amount(abs(delta), str(first.get("currency") or unit), words)
    return (words.more if delta > 0 else words.less).format(amount=amount)
