"""Moving a store's contents into another: a SQLite file's orders, refunds and approval items
into the team's PostgreSQL (`agent orders import --from-sqlite FILE`), in one transaction of the
target, so a failure leaves it as it was. Refunds keep their idempotency keys and times, and one
already in the target (the same key) is not recorded twice; approval items get new numbers and
their refunds the target's ids."""

from __future__ import annotations

from dataclasses import dataclass

from agent_cli.store.approval_queue import Approval, listed
from agent_cli.store.sqlite import OrderStore

_REFUND_COLUMNS = "id, order_code, amount, reason, created_at, idempotency_key"
_ITEM_COLUMNS = (
    "tool, order_code, amount, reason, refund_key, judged, run_id, question, proposed_by, "
    "created_at, expires_at, status, decided_by, decided_at, outcome, refund_id"
)


@dataclass(frozen=True, slots=True)
class Copied:
    orders: int
    refunds: int  # recorded in the target
    refunds_present: int  # there already (the same idempotency key)
    approvals: int  # copied (an item moved before is not copied again)


def copy_store(origin: OrderStore, target: OrderStore) -> Copied:
    orders = origin.all()
    refunds = origin.query(f"SELECT {_REFUND_COLUMNS} FROM refunds ORDER BY id")
    items = listed(origin)

    def copy() -> tuple[int, int]:
        new_ids: dict[int, int] = {}  # each refund's id in the origin: its id in the target
        present = 0
        target.upsert_locked(orders)
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
        return present, sum(_copy_item(target, item, new_ids) for item in items)

    present, copied = target.atomically(copy)
    return Copied(len(orders), len(refunds) - present, present, copied)


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
        item.order_code,
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
