"""Moving a store's contents into another: a SQLite file's orders, refunds and approval items
into the team's PostgreSQL (`agent orders import --from-sqlite FILE`), in one transaction of the
target, so a failure leaves it as it was. Refunds keep their idempotency keys and times, and one
already in the target (the same key) is not recorded twice; approval items get new numbers and
their refunds the target's ids.

Every row read from the other store is checked as a row of an orders file is (one line naming
the file, the table, the row and the field; nothing imported), and the target is never moved
backwards: an order further along there (REFUNDED, where the file says DELIVERED) is kept as it
is and named, and refunds that would come to more than an order's total stop the import.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from agent_cli.config.currencies import money
from agent_cli.core.decisions import describe_validation_error
from agent_cli.errors import OrderFileError
from agent_cli.store.approval_items import ITEM_COLUMNS, MAX_ID, Approval, Unreadable, read_item
from agent_cli.store.models import Order
from agent_cli.store.order_files import OrderRecord
from agent_cli.store.sqlite import OrderStore

_ORDER_COLUMNS = ("code", "status", "total", "currency", "delivered_at", "customer", "note")
_REFUND_COLUMNS = "id, order_code, amount, reason, created_at, idempotency_key"
_ITEM_COLUMNS = (
    "tool, order_code, amount, reason, refund_key, judged, run_id, question, proposed_by, "
    "created_at, expires_at, status, decided_by, decided_at, outcome, refund_id"
)
# How far along an order is; an import never moves one back (nor between two endings).
_PROGRESS = {"PENDING": 0, "SHIPPING": 1, "DELIVERED": 2, "CANCELLED": 3, "REFUNDED": 3}

Refund = tuple[int, str, int, str, str, str]


@dataclass(frozen=True, slots=True)
class Copied:
    orders: int
    refunds: int  # recorded in the target
    refunds_present: int  # there already (the same idempotency key)
    approvals: int  # copied (an item moved before is not copied again)
    # Orders further along in the target, left as they were there: (code, there, here).
    kept: tuple[tuple[str, str, str], ...] = ()


def copy_store(origin: OrderStore, target: OrderStore, *, source: str) -> Copied:
    """Copy `origin` (named `source` in messages) into `target`, all or nothing."""
    orders = _orders(origin, source)
    refunds = _refunds(origin, source)
    items = _items(origin, source)

    def copy() -> Copied:
        kept = _further_along(target, orders)
        target.upsert_locked(order for order in orders if order.code not in kept)
        new_ids, present = _copy_refunds(target, refunds)
        _check_totals(target, {refund[1] for refund in refunds}, source)
        copied = sum(_copy_item(target, item, new_ids) for item in items)
        held = tuple(sorted((code, *statuses) for code, statuses in kept.items()))
        return Copied(len(orders) - len(kept), len(refunds) - present, present, copied, held)

    return target.atomically(copy)


def _orders(origin: OrderStore, source: str) -> list[Order]:
    rows = origin.query(f"SELECT {', '.join(_ORDER_COLUMNS)} FROM orders ORDER BY code")
    orders = []
    for number, row in enumerate(rows, start=1):
        pairs = zip(_ORDER_COLUMNS, row, strict=True)
        raw = {name: value for name, value in pairs if value is not None and value != ""}
        where = f"{source}: table orders, row {number} (code {row[0]!r})"
        try:
            orders.append(OrderRecord.model_validate(raw).to_order())
        except ValidationError as exc:
            raise _refused(where, describe_validation_error(exc)) from None
        except ValueError as exc:
            raise _refused(where, str(exc)) from None
    return orders


def _refunds(origin: OrderStore, source: str) -> list[Refund]:
    rows = origin.query(f"SELECT {_REFUND_COLUMNS} FROM refunds ORDER BY id")
    for number, row in enumerate(rows, start=1):
        if problem := _refund_problem(row):
            raise _refused(f"{source}: table refunds, row {number} (id {row[0]!r})", problem)
    return [tuple(row) for row in rows]


def _refund_problem(row: tuple[Any, ...]) -> str | None:
    refund_id, code, amount, reason, created_at, key = row
    if not _whole(refund_id, 1):
        return f"id {refund_id!r} is not a refund's id"
    if not isinstance(code, str) or not code:
        return f"order_code {code!r} is not an order code"
    if not _whole(amount, 1):
        return f"amount {amount!r} is not a positive whole amount"
    if not isinstance(reason, str) or not isinstance(key, str) or not key:
        return "reason or idempotency_key is not text"
    try:
        datetime.fromisoformat(created_at)
    except (TypeError, ValueError):
        return f"created_at {created_at!r} is not a timestamp"
    return None


def _items(origin: OrderStore, source: str) -> list[Approval]:
    rows = origin.query(f"SELECT {ITEM_COLUMNS} FROM approvals ORDER BY id")
    items = []
    for number, row in enumerate(rows, start=1):
        item = read_item(row)
        if isinstance(item, Unreadable):
            where = f"{source}: table approvals, row {number} (id {row[0]!r})"
            raise _refused(where, item.problem)
        items.append(item)
    return items


def _further_along(target: OrderStore, orders: list[Order]) -> dict[str, tuple[str, str]]:
    """The orders the import would move backwards (or from one ending to another), by code,
    with the target's status and the import's: the target's stay as they are."""
    kept = {}
    for order in orders:
        there = target.get(order.code)
        if there is None or there.status == order.status:
            continue
        if _PROGRESS[order.status] <= _PROGRESS[there.status]:
            kept[order.code] = (there.status, order.status)
    return kept


def _copy_refunds(target: OrderStore, refunds: list[Refund]) -> tuple[dict[int, int], int]:
    new_ids: dict[int, int] = {}  # each refund's id in the origin: its id in the target
    present = 0
    for refund_id, code, amount, reason, created_at, key in refunds:
        if (found := target.find_refund(key)) is not None:
            new_ids[refund_id] = found.id
            present += 1
            continue
        new_ids[refund_id] = target.insert(
            "INSERT INTO refunds (order_code, amount, reason, created_at, idempotency_key)"
            " VALUES (?, ?, ?, ?, ?)",
            (code, amount, reason, created_at, key),
        )
    return new_ids, present


def _check_totals(target: OrderStore, codes: set[str], source: str) -> None:
    for code in sorted(codes):
        order = target.get(code)
        refunded = target.refunded_total(code)
        if order is not None and refunded > order.total:
            raise OrderFileError(
                f"{source}: the refunds of order {code} would come to "
                f"{money(refunded, order.currency)}, more than its total of "
                f"{money(order.total, order.currency)}; nothing imported"
            )


def _copy_item(target: OrderStore, item: Approval, new_ids: dict[int, int]) -> bool:
    """Copy one approval item, unless the target has it already (moved before): False."""
    same = target.query(
        "SELECT id FROM approvals WHERE run_id = ? AND refund_key = ? AND created_at = ?",
        (item.run_id, item.refund_key, item.created_at),
    )
    if same:
        return False
    values = (
        item.tool,
        item.order_code or None,  # a write to a customer's own record has no order
        item.amount,
        item.reason,
        item.refund_key,
        item.judged,
        item.run_id,
        item.question,
        item.proposed_by,
        item.created_at,
        item.expires_at,
        item.status,
        item.decided_by,
        item.decided_at,
        item.outcome,
        new_ids.get(item.refund_id) if item.refund_id is not None else None,
    )
    marks = ", ".join("?" * len(values))
    target.insert(f"INSERT INTO approvals ({_ITEM_COLUMNS}) VALUES ({marks})", values)
    return True


def _whole(value: object, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and least <= value <= MAX_ID


def _refused(where: str, problem: str) -> OrderFileError:
    return OrderFileError(f"{where}: {problem}; nothing imported")
