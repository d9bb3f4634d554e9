"""Hand-over tickets: what `transfer_to_human_agents` opens for a person to pick up (desk.md,
rule 4: a hand-over is state, not words). A ticket holds the customer and the order when the
conversation knew them, the summary, the run it came from and the customer's question; a person
lists them, claims one, and closes it with a note. Each step happens once: a claim or a close
from two places at the same moment finds the ticket as the first left it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agent_cli.domain.tickets import NewTicket, Ticket
from agent_cli.store.sqlite import OrderStore

MAX_ID = 2**63 - 1  # an id the store can hold: SQLite's INTEGER, PostgreSQL's BIGINT


_COLUMNS = (
    "id, status, customer_id, order_code, summary, question, run_id, opened_at, claimed_by, "
    "claimed_at, closed_by, closed_at, note"
)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _ticket(row: Any) -> Ticket:
    return Ticket(int(row[0]), *(None if v is None else str(v) for v in row[1:]))  # type: ignore[arg-type]


def open_ticket(store: OrderStore, new: NewTicket) -> Ticket:
    def work() -> int:
        return store.insert(
            "INSERT INTO tickets (customer_id, order_code, summary, question, run_id, opened_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (new.customer_id, new.order_code, new.summary, new.question, new.run_id, _now()),
        )

    found = get(store, store.atomically(work))
    assert found is not None  # written just now
    return found


def get(store: OrderStore, ticket: int) -> Ticket | None:
    """The ticket; None for any number that is none (past the store's range too)."""
    if not 0 < ticket <= MAX_ID:
        return None
    rows = store.query(f"SELECT {_COLUMNS} FROM tickets WHERE id = ?", (ticket,))
    return _ticket(rows[0]) if rows else None


def listed(store: OrderStore, *, status: str | None = None) -> list[Ticket]:
    """Tickets, oldest first: of one status, or all."""
    clause, params = (" WHERE status = ?", (status,)) if status else ("", ())
    rows = store.query(f"SELECT {_COLUMNS} FROM tickets{clause} ORDER BY id", params)
    return [_ticket(row) for row in rows]


@dataclass(frozen=True, slots=True)
class TicketStep:
    """What a step on a ticket (a claim, a close) left."""

    ticket: Ticket  # as it is now
    changed: bool  # False: it was not in a state this step applies to; nothing was done


def claim(store: OrderStore, ticket: int, *, by: str) -> TicketStep | None:
    """An open ticket becomes `by`'s; None: no such ticket."""
    return _step(
        store,
        ticket,
        "UPDATE tickets SET status = 'claimed', claimed_by = ?, claimed_at = ?"
        " WHERE id = ? AND status = 'open'",
        (by, _now(), ticket),
    )


def close(store: OrderStore, ticket: int, *, by: str, note: str | None) -> TicketStep | None:
    """An open or claimed ticket is closed, with the note; None: no such ticket."""
    return _step(
        store,
        ticket,
        "UPDATE tickets SET status = 'closed', closed_by = ?, closed_at = ?, note = ?"
        " WHERE id = ? AND status IN ('open', 'claimed')",
        (by, _now(), note, ticket),
    )


def _step(
    store: OrderStore, ticket: int, sql: str, params: tuple[object, ...]
) -> TicketStep | None:
    """One step in one transaction: the ticket held (PostgreSQL: its row locked), changed if
    its status allows, and read back as it is now; None when there is no such ticket."""
    if not 0 < ticket <= MAX_ID:
        return None

    def work() -> TicketStep | None:
        held = f"SELECT status FROM tickets WHERE id = ?{store.FOR_UPDATE}"
        before = store.query(held, (ticket,))
        if not before:
            return None
        store.execute(sql, params)
        now = get(store, ticket)
        assert now is not None  # held since the read above
        return TicketStep(now, now.status != before[0][0])

    return store.atomically(work)
