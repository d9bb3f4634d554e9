"""The desk's own refusals, said in Japanese to a Japanese customer (issue 49, point 6): the
write tools refuse in English, for the model and the operator (domain/writes/); the playbook
reads the common ones back from those sentences, which are ours and fixed, and says them in the
customer's language. One it does not know stays as the
tool wrote it."""

from __future__ import annotations

import re
from collections.abc import Callable

_RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (
        re.compile(
            r"order (\S+) was delivered (\d{4}-\d{2}-\d{2}), (\d+) days ago; returns and "
            r"exchanges are accepted within (\d+) days of delivery"
        ),
        lambda m: (
            f"注文{m[1]}は{m[2]}にお届け済み（{m[3]}日前）で、返品・交換はお届けから"
            f"{m[4]}日以内のみ承っています"
        ),
    ),
    (
        re.compile(r"order (\S+)'s items were changed already"),
        lambda m: f"注文{m[1]}は商品の変更が済んでいるため、これ以上の変更やキャンセルはできません",
    ),
    (
        re.compile(r"order (\S+) is [^;]+; only a pending order can be changed or cancelled"),
        lambda m: (
            f"注文{m[1]}は発送準備中ではないため、変更やキャンセルはできません"
            "（お届け後は返品・交換を承ります）"
        ),
    ),
    (
        re.compile(r"order (\S+) is [^;]+; only a delivered order's items can be returned"),
        lambda m: f"注文{m[1]}はお届け前か、すでに返品・交換済みのため、返品・交換はできません",
    ),
    (
        re.compile(r"order (\S+) is cancelled; nothing more can be done"),
        lambda m: f"注文{m[1]}はキャンセル済みのため、これ以上の手続きはできません",
    ),
)


def in_japanese(rule: str) -> str:
    """`rule` (a refusal's words meant for the customer) in Japanese, when it is one we know."""
    for pattern, japanese in _RULES:
        found = pattern.search(rule)
        if found is not None:
            return japanese(found)
    return rule
