"""What the customer named, read from their words against the desk's records: the items of an
order (by product name, in English or Japanese), the variant they want instead (by its option
values), a new address (`street, city, state zip, country`). The offline playbook's reading;
nothing here is guessed: what cannot be read is None, and the playbook asks."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent_cli.providers.playbook.who import EMAIL

# The names Japanese customers use for the sample shop's products, and its options' values.
_JA_NAMES = {
    "mug": "マグ", "t-shirt": "Tシャツ", "hoodie": "パーカー", "espresso": "エスプレッソ",
    "rice cooker": "炊飯器", "camera": "カメラ", "lamp": "ランプ", "earbuds": "イヤホン",
    "watch": "時計", "shoes": "靴", "backpack": "リュック",
}  # fmt: skip
JA_VALUES = {
    "white": "白", "blue": "青", "black": "黒", "green": "緑", "silver": "銀", "navy": "紺",
    "grey": "グレー", "red": "赤",
}  # fmt: skip
_ALL = re.compile(r"(?i)\b(?:all|everything|whole order|entire order)\b|全部|すべて")
_ONE = re.compile(r"(?i)\b(?:one|a single|just one)\b|1つ|一つ|1個")

OrderItemRef = tuple[str, str, str]  # item id, product id, name
Record = Mapping[str, Any]  # a read's record (tools/records.py)


def named_items(texts: str, order: Record) -> tuple[list[OrderItemRef], list[OrderItemRef]]:
    """The order's items the customer named (all of them when they named none but said "all",
    or the order holds one product), and every item of the order (from its record)."""
    items = [
        (str(i["item_id"]), str(i["product_id"]), str(i["name"])) for i in order.get("items") or ()
    ]
    named = [item for item in items if _names(texts, item[2])]
    if not named and (_ALL.search(texts) or len({p for _, p, _ in items}) == 1):
        named = items
    if _ONE.search(texts) and named:
        named = named[:1]
    return named, items


def _names(text: str, name: str) -> bool:
    lowered = text.lower()
    for key, japanese in _JA_NAMES.items():
        if key in name.lower() and (key in lowered or japanese in text):
            return True
    return any(
        len(w) > 3 and re.search(rf"\b{re.escape(w)}s?\b", lowered) for w in name.lower().split()
    )


def variant(text: str, product: Record, current: set[str]) -> str | None:
    """The variant whose option values the customer named most of (an unavailable one too:
    the tool then says it is not available), from the product's record."""
    best, score = None, 0
    for found in product.get("variants") or ():
        item_id = str(found["item_id"])
        if item_id in current:
            continue
        values = [str(v) for v in dict(found["options"]).values()]
        named = sum(_mentions(text, value) for value in values) * 2 + bool(found["available"])
        if named > 1 and named > score:
            best, score = item_id, named
    return best


def _mentions(text: str, value: str) -> bool:
    japanese = JA_VALUES.get(value.lower())
    if japanese and japanese in text:
        return True
    flags = 0 if len(value) <= 2 else re.I  # "L" is a size; "l" is not
    # ASCII edges: "Lサイズ" names size L (\w would count the kana as part of the word)
    edge = "A-Za-z0-9-"
    return re.search(rf"(?<![{edge}]){re.escape(value)}(?![{edge}])", text, flags) is not None


def options(options: Mapping[str, Any]) -> str:
    return ", ".join(f"{key} {value}" for key, value in options.items())


_JAPANESE = r"[\u3040-\u30ff\u4e00-\u9fff]"


def _after_words(street: str) -> str:
    """ "登録住所を1-1 Marunouchi" -> "1-1 Marunouchi": the sentence before a Latin address."""
    found = re.fullmatch(rf".*{_JAPANESE}[をはにへ：:]\s*([0-9A-Za-z].*)", street)
    return found[1] if found else street


def _before_words(country: str) -> str:
    """ "Japanに変更してください" -> "Japan": the sentence after a Latin country."""
    found = re.match(rf"([A-Za-z][A-Za-z .'-]*?)\s*{_JAPANESE}", country)
    return found[1] if found else country


def parsed_address(text: str) -> dict[str, str] | None:
    text = EMAIL.sub("", text)
    parts = [p.strip() for p in re.split(r"[,、，]", text) if p.strip()]
    if parts:  # the country ends the address: what follows it is another sentence
        parts[-1] = re.split(r"[.。!?！？](?:\s|$)", parts[-1])[0].strip()
    if len(parts) not in (4, 5):
        return None
    parts[0], parts[-1] = _after_words(parts[0]), _before_words(parts[-1])
    state_zip = re.fullmatch(r"(.*?)\s*〒?([A-Za-z0-9-]*\d[A-Za-z0-9-]*)", parts[-2])
    if state_zip is None:
        return None
    state = state_zip[1] or parts[-3]
    return {
        "address1": parts[0],
        "address2": parts[1] if len(parts) == 5 else "",
        "city": parts[-3],
        "state": state,
        "country": parts[-1],
        "zip": state_zip[2],
    }
