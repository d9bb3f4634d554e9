"""A proposed change as the customer reads it (issue 49, points 5 and 6): in their language,
in words, never the tool's operator line ("exchange T-Shirt 1008001 (4,900 JPY) -> 1008002");
every option that changes named with its old and new value, and the price difference. The
question names the proposal's id ("change P1"), which is what the customer's yes answers
(policy/consent.py's `carries`). Built from what the playbook read itself: the order's record,
the product's variants, the address and the method it chose; None when it cannot tell, and the
tool's own line is quoted instead."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_cli.core.decisions import CallTool
from agent_cli.providers.playbook.reading import ITEM, JA_VALUES, VARIANT, unquote

_OPTION = re.compile(r'("(?:[^"\\]|\\.)*")=("(?:[^"\\]|\\.)*")')
_PRICE = re.compile(r"\bprice=(\d+(?:\.\d+)?)")
_TOTAL = re.compile(r"\btotal=(\d+(?:\.\d+)?)")
_CURRENCY = re.compile(r"\bcurrency=([A-Z]{3})\b")


@dataclass(frozen=True, slots=True)
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


ENGLISH = Shown(
    ask="Here is the change ({id}): {shown}. Shall I go ahead? Please answer yes or no.",
    cancel="cancel order {code}; {amount} goes back the way it was paid",
    address="send order {code} to {address}",
    account="make {address} your account's address (orders placed keep theirs)",
    payment="pay for order {code} with your {method}",
    swap="change the {name} in order {code}: {changes}; {price}",
    exchange="exchange the {name} from order {code}: {changes}; {price}",
    ret="return the {names} from order {code}; {amount} goes back the way it was paid",
    change="{key} {old} to {new}",
    added="{key} {new}",
    none="none",
    joiner=", and ",
    same_price="the same price",
    more="{amount} more to pay",
    less="{amount} back to you",
    methods={"gift_card": "gift card", "paypal": "PayPal", "credit_card": "credit card"},
    japanese=False,
)
JAPANESE = Shown(
    ask="次の変更（{id}）を行います：{shown}。よろしいですか？「はい」か「いいえ」でお答えください。",
    cancel="注文{code}をキャンセルし、{amount}を元のお支払い方法に返金",
    address="注文{code}のお届け先を{address}に変更",
    account="ご登録住所を{address}に変更（ご注文済みの分はそのまま）",
    payment="注文{code}のお支払いを{method}に変更",
    swap="注文{code}の{name}を変更（{changes}）、{price}",
    exchange="注文{code}の{name}を交換（{changes}）、{price}",
    ret="注文{code}の{names}を返品し、{amount}を元のお支払い方法に返金",
    change="{key}：{old}→{new}",
    added="{key}：{new}",
    none="なし",
    joiner="、",
    same_price="価格は同じ",
    more="差額{amount}のお支払い",
    less="差額{amount}のご返金",
    methods={"gift_card": "ギフトカード", "paypal": "PayPal", "credit_card": "クレジットカード"},
    japanese=True,
)


def shown(call: CallTool, order: str, product: str, words: Shown) -> str | None:
    """The change `call` proposes, in the customer's words; None when it cannot be said."""
    args = call.args
    code = str(args.get("order_id", ""))
    method = str(args.get("payment_method_id", "")).rsplit("_", 1)[0]
    simple = {
        "cancel_pending_order": lambda: words.cancel.format(
            code=code, amount=_money(_TOTAL.search(order), order, words)
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


def _unit(record: str) -> str:
    currency = _CURRENCY.search(record)
    return currency.group(1) if currency else ""


def _amount(value: float, unit: str, words: Shown) -> str:
    """An amount as the customer writes it: 5,400円 (Japanese, yen), 5,400 JPY, 12.50 USD."""
    whole = f"{value:,.0f}" if unit == "JPY" else f"{value:,.2f}"
    return f"{whole}円" if words.japanese and unit == "JPY" else f"{whole} {unit}".strip()


def _money(found: re.Match[str] | None, record: str, words: Shown) -> str:
    return _amount(float(found.group(1)), _unit(record), words) if found else "?"


def _paid(order: str, item_ids: list[str]) -> float | None:
    """What the named items cost, one price per id named."""
    prices = {m.group(1): _PRICE.search(m.group(0)) for m in ITEM.finditer(order)}
    found = [prices.get(i) for i in item_ids]
    return sum(float(p.group(1)) for p in found if p) if all(found) else None


def _names(order: str, item_ids: list[str]) -> list[str]:
    found = {item: unquote(name) for item, _, name, _ in ITEM.findall(order)}
    return [found[i] for i in dict.fromkeys(item_ids) if i in found]


def _swapped(call: CallTool, order: str, product: str, words: Shown) -> str | None:
    """An item for another variant: each option that changes, and the price difference."""
    old_ids = [str(i) for i in call.args.get("item_ids", [])]
    new_ids = [str(i) for i in call.args.get("new_item_ids", [])]
    items = {item: (unquote(name), rest) for item, _, name, rest in ITEM.findall(order)}
    variants = {item: line for item, line in _variant_lines(product)}
    if not old_ids or not new_ids or old_ids[0] not in items or new_ids[0] not in variants:
        return None
    name, old_options = items[old_ids[0]]
    old, new = _options(old_options, words), _options(variants[new_ids[0]], words)
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
    pairs = [(o, variants.get(n, "")) for o, n in zip(old_ids, new_ids, strict=False)]
    price = _difference(order, pairs, product, words)
    if price is None:
        return None
    template = words.swap if call.tool == "modify_pending_order_items" else words.exchange
    said = words.joiner.join(changes) or words.same_price
    return template.format(name=name, code=call.args.get("order_id", ""), changes=said, price=price)


def _variant_lines(product: str) -> list[tuple[str, str]]:
    return [(match.group(1), match.group(0)) for match in VARIANT.finditer(product)]


def _options(text: str, words: Shown) -> dict[str, str]:
    """A record's options, keys and values in the customer's language where we know them."""
    found = _OPTION.findall(text.split("options:", 1)[-1])
    pairs = ((unquote(k), unquote(v)) for k, v in found)
    if not words.japanese:
        return {key.replace("color", "colour"): value for key, value in pairs}
    return {_JA_KEYS.get(k, k): JA_VALUES.get(v.lower(), v) for k, v in pairs}


_JA_KEYS = {"size": "サイズ", "color": "色", "colour": "色", "material": "素材", "capacity": "容量"}


def _difference(order: str, pairs: list[tuple[str, str]], product: str, words: Shown) -> str | None:
    """What the customer pays or gets back: each item's new price less its old one, summed;
    None when a price cannot be read (the tool's own line is quoted then)."""
    lines = {m.group(1): m.group(0) for m in ITEM.finditer(order)}
    delta = 0.0
    for old_id, variant_line in pairs:
        old_price = _PRICE.search(lines.get(old_id, ""))
        new_price = _PRICE.search(variant_line)
        if old_price is None or new_price is None:
            return None
        delta += float(new_price.group(1)) - float(old_price.group(1))
    if delta == 0:
        return words.same_price
    amount = _amount(abs(delta), _unit(pairs[0][1]) or _unit(product), words)
    return (words.more if delta > 0 else words.less).format(amount=amount)
