"""The desk's writes committed: one transaction that locks the order (and the customer), reads
the records again, refuses when they changed since the change was proposed (the version),
plans the change again (every precondition again, on the records as they are now) and writes
it, with a line in the order's history (`order_changes`).

Two approvals of one proposal, or of two proposals that conflict, change the store once: the
second finds the records changed (a new version) and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agent_cli.domain import ledger
from agent_cli.domain.orders import Order
from agent_cli.domain.records import Customer
from agent_cli.domain.writes import Plan, Records, Refused, ReturnWindow, plan
from agent_cli.store import record_reads
from agent_cli.store.bulk_writes import DeskStore, desk_columns, json_text


class RecordsChanged(Refused):
    """The records changed between the proposal and the commit: nothing was written."""


@dataclass(frozen=True, slots=True)
class Target:
    """What a write is about: a customer, and an order of theirs (none for their address)."""

    customer_id: str
    order_code: str | None = None


def records(
    store: DeskStore, target: Target, *, lock: bool = False, window: ReturnWindow | None = None
) -> Records:
    """The records a change is planned on; `lock` holds the order's and the customer's rows
    until the caller's transaction ends (PostgreSQL; SQLite's write lock holds everything)."""
    held = store.FOR_UPDATE if lock else ""
    if target.order_code is not None:
        store.query(f"SELECT code FROM orders WHERE code = ?{held}", (target.order_code,))
    store.query(f"SELECT id FROM customers WHERE id = ?{held}", (target.customer_id,))
    customer = record_reads.customer(store, target.customer_id)
    if customer is None:
        raise Refused(f"no customer {target.customer_id}")
    if target.order_code is None:
        return Records(customer, window=window)
    order = record_reads.desk_order(store, target.order_code)
    if order is None or order.customer_id != customer.id:
        raise Refused(f"no order {target.order_code} of {customer.id}")
    products = []
    for product_id in dict.fromkeys(item.product_id for item in order.items):
        if (found := record_reads.product(store, product_id)) is not None:
            products.append(found)
    return Records(customer, order, tuple(products), ledger.recorded(store, order.code), window)


def propose(
    store: DeskStore,
    tool: str,
    args: dict[str, Any],
    target: Target,
    window: ReturnWindow | None = None,
) -> Plan:
    """The change, planned on the records as they are now; Refused naming the rule."""
    return plan(tool, args, records(store, target, window=window))


@dataclass(frozen=True, slots=True)
class Committed:
    plan: Plan
    change_id: int


def commit(
    store: DeskStore,
    proposed: Plan,
    args: dict[str, Any],
    target: Target,
    *,
    by: str,
    run_id: str,
    window: ReturnWindow | None = None,
) -> Committed:
    """Write the proposed change once, if the records are still as it was planned on and every
    precondition still holds; Refused (RecordsChanged) otherwise, with nothing written."""
    return store.atomically(
        lambda: commit_locked(
            store,
            Agreed(tool=proposed.tool, version=proposed.version, args=args),
            target,
            by=by,
            run_id=run_id,
            window=window,
        )
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Agreed:
    """A write as it was agreed to: the tool, the version of the records its plan was made
    on, and its arguments."""

    tool: str
    version: str
    args: dict[str, Any]


def commit_locked(
    store: DeskStore,
    agreed: Agreed,
    target: Target,
    *,
    by: str,
    run_id: str,
    window: ReturnWindow | None = None,
) -> Committed:
    """`commit`, in a transaction the caller holds (the approval queue closes its item in it).
    The plan is made again here, on the locked records: the ledger and the window too."""
    tool, args = agreed.tool, agreed.args
    now = records(store, target, lock=True, window=window)
    if now.version != agreed.version:
        raise RecordsChanged(
            "the records changed since this was proposed (another change was made meanwhile); "
            "nothing was changed: look again and propose it anew"
        )
    planned = plan(tool, args, now)
    write(store, planned)
    return Committed(planned, _history(store, planned, target, by=by, run_id=run_id))


def write(store: DeskStore, planned: Plan) -> None:
    """The planned records, in the caller's transaction."""
    if planned.order is not None:
        _order(store, planned.order, len(planned.added))
    _customer(store, planned.customer)


def _order(store: DeskStore, order: Order, added: int) -> None:
    store.upsert_locked([order])
    store.execute(
        "UPDATE orders SET customer_id = ?, address1 = ?, address2 = ?, city = ?, state = ?,"
        " country = ?, zip = ?, placed_at = ?, cancel_reason = ?, exchange_request = ?,"
        " return_request = ? WHERE code = ?",
        desk_columns(order),
    )
    store.execute("DELETE FROM order_items WHERE order_code = ?", (order.code,))
    store.execute_many(
        "INSERT INTO order_items (order_code, position, item_id, product_id, name, price,"
        " options) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (order.code, n, i.item_id, i.product_id, i.name, i.price, json_text(i.options))
            for n, i in enumerate(order.items)
        ],
    )
    first = len(order.payments) - added
    store.execute_many(
        "INSERT INTO payments (order_code, position, kind, amount, payment_method_id, paid_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [
            (order.code, first + n, p.kind, p.amount, p.payment_method_id, _now())
            for n, p in enumerate(order.payments[first:])
        ],
    )


def _customer(store: DeskStore, customer: Customer) -> None:
    a = customer.address
    store.execute(
        "UPDATE customers SET address1 = ?, address2 = ?, city = ?, state = ?, country = ?,"
        " zip = ? WHERE id = ?",
        (a.address1, a.address2, a.city, a.state, a.country, a.zip, customer.id),
    )
    store.execute_many(
        "UPDATE payment_methods SET balance = ? WHERE customer_id = ? AND id = ?",
        [
            (m.balance, customer.id, m.id)
            for m in customer.payment_methods
            if m.source == "gift_card"
        ],
    )


def _history(store: DeskStore, planned: Plan, target: Target, *, by: str, run_id: str) -> int:
    return store.insert(
        "INSERT INTO order_changes (order_code, customer_id, tool, summary, amount, currency,"
        " made_by, run_id, made_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            target.order_code,
            target.customer_id,
            planned.tool,
            planned.summary,
            planned.amount,
            planned.currency or None,
            by,
            run_id,
            _now(),
        ),
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
