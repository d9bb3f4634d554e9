"""Upgrades of stored data that SQL alone cannot say, run inside the migration's transaction on
either backend (through the store's `query` and `execute`).

Amounts in minor units: stores made before the desk kept amounts in whole units of their
currency (USD 129 for 129 dollars); they now keep minor units (12900 cents), as τ²-bench's data
needs (47.84 USD). JPY and the other currencies without decimals are unchanged. Every amount a
row holds moves together, so nothing recorded changes meaning: an order's total, its refunds,
a queued approval's amount, the refund keys that name amounts, and the order as a queued
approval judged it (which is compared, as text, when the item is approved).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from agent_cli.domain.currencies import exponent


class _Writable(Protocol):
    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[Any]: ...

    def execute(self, sql: str, params: tuple[object, ...] = ()) -> None: ...


def amounts_to_minor_units(store: _Writable) -> None:
    """Scale every stored amount of a currency with decimals by 10**decimals."""
    scales = {
        str(code): 10 ** exponent(str(currency))
        for code, currency in store.query("SELECT code, currency FROM orders")
    }
    for code, scale in scales.items():
        if scale != 1:
            store.execute("UPDATE orders SET total = total * ? WHERE code = ?", (scale, code))
    for row_id, code, amount, key in store.query(
        "SELECT id, order_code, amount, idempotency_key FROM refunds"
    ):
        if (scale := scales.get(str(code), 1)) != 1:
            store.execute(
                "UPDATE refunds SET amount = ?, idempotency_key = ? WHERE id = ?",
                (_int(amount) * scale, _rescaled_key(str(key), scale), row_id),
            )
    for row_id, code, amount, key, judged in store.query(
        "SELECT id, order_code, amount, key, judged FROM approvals"
    ):
        scale = _judged_scale(str(judged)) or scales.get(str(code), 1)
        if scale != 1:
            store.execute(
                "UPDATE approvals SET amount = ?, key = ?, judged = ? WHERE id = ?",
                (
                    _int(amount) * scale,
                    _rescaled_key(str(key), scale),
                    _rescaled(judged, scale),
                    row_id,
                ),
            )


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0  # a bad row stays bad, and is shown so


def _rescaled_key(key: str, scale: int) -> str:
    """`CODE:AMOUNT:DIGEST` with the amount in minor units; any other key is left as it is
    (it names no amount this upgrade can tell)."""
    parts = key.split(":")
    if len(parts) != 3 or not parts[1].isdigit():
        return key
    return f"{parts[0]}:{int(parts[1]) * scale}:{parts[2]}"


def _judged_scale(judged: str) -> int | None:
    """The scale of the currency the item was judged in, when its judgement can be read."""
    try:
        fields = json.loads(judged)
    except ValueError:
        return None
    currency = fields.get("currency") if isinstance(fields, dict) else None
    return 10 ** exponent(currency) if isinstance(currency, str) else None


def _rescaled(judged: object, scale: int) -> object:
    """The judged order with its total in minor units, written as `judged_json` writes it."""
    try:
        fields = json.loads(str(judged))
    except ValueError:
        return judged
    if not isinstance(fields, dict) or not isinstance(fields.get("total"), int):
        return judged
    return json.dumps({**fields, "total": fields["total"] * scale}, sort_keys=True)
