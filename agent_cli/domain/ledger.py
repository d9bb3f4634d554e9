"""One ledger per order (desk.md, rule 7): what was paid, what has gone back by any path, and
what is left. Money goes back once: every write that sends money back checks what is left,
inside its transaction (the refund's `record_refund`, a desk write's plan on locked records).

What went back is read from the order's payment history, where every path writes: a cancel's
refunds, an item change's or a payment change's refund, and `issue_refund` (which also keeps a
row in `refunds`, its idempotency record). An order with no payment history (the seed's rows,
imported without one) counts its total as paid and its `refunds` rows as gone back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from agent_cli.domain.orders import Order


class LedgerStore(Protocol):
    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]: ...


@dataclass(frozen=True, slots=True)
class Ledger:
    """An order's money, in its minor units: `left` is what may still go back, the least of
    what was paid less what went back, and the order's total less what `issue_refund` gave
    back (a total corrected down by an import leaves less)."""

    paid: int
    back: int
    left: int


def _ledger(paid: int, back: int, total: int, recorded: int) -> Ledger:
    if not paid:  # no payment history: the total was paid, the refunds table says what went back
        return Ledger(total, recorded, max(total - recorded, 0))
    back = max(back, recorded)
    return Ledger(paid, back, max(min(paid - back, total - recorded), 0))


def of_order(order: Order, recorded: int) -> Ledger:
    """The ledger of a desk order; `recorded`: its rows in `refunds`."""
    paid = sum(p.amount for p in order.payments if p.kind == "payment")
    back = sum(p.amount for p in order.payments if p.kind == "refund")
    return _ledger(paid, back, order.total, recorded)


def recorded(store: LedgerStore, code: str) -> int:
    """What `issue_refund` recorded of order `code` (its rows in `refunds`)."""
    ((amount,),) = store.query(
        "SELECT COALESCE(SUM(amount), 0) FROM refunds WHERE order_code = ?", (code,)
    )
    return _whole(amount)


def read(store: LedgerStore, code: str, total: int) -> Ledger:
    """The ledger of order `code` (of `total`) as the store holds it now."""
    ((paid, back),) = store.query(
        "SELECT COALESCE(SUM(CASE WHEN kind = 'payment' THEN amount ELSE 0 END), 0),"
        " COALESCE(SUM(CASE WHEN kind = 'refund' THEN amount ELSE 0 END), 0)"
        " FROM payments WHERE order_code = ?",
        (code,),
    )
    return _ledger(_whole(paid), _whole(back), total, recorded(store, code))


def _whole(value: object) -> int:
    """A SUM as either backend returns it (an int, or PostgreSQL's Decimal)."""
    return int(str(value))


def spent(store: LedgerStore, code: str) -> int:
    """How much of order `code`'s total can no longer go back: its total less what is left,
    whichever path the money went back by (what `issue_refund`'s rules subtract from it)."""
    total = _total(store, code)
    return max(total - read(store, code, total).left, 0)


def refunded(store: LedgerStore, code: str) -> int:
    """What has gone back of order `code`, by any path (what `lookup_order` shows)."""
    return read(store, code, _total(store, code)).back


def _total(store: LedgerStore, code: str) -> int:
    found = store.query("SELECT total FROM orders WHERE code = ?", (code,))
    return _whole(found[0][0]) if found else 0
