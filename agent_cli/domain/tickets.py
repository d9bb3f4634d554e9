"""A hand-over ticket, the record `transfer_to_human_agents` opens for a person (desk.md, rule
4: a hand-over is state, not words): the customer and the order when the conversation knew
them, the summary, the run it came from and the customer's question; who claimed and closed it.
store/tickets.py keeps them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

TicketStatus = Literal["open", "claimed", "closed"]
TICKET_STATUSES: tuple[TicketStatus, ...] = ("open", "claimed", "closed")


@dataclass(frozen=True, slots=True)
class Ticket:
    id: int
    status: str
    customer_id: str | None
    order_code: str | None
    summary: str
    question: str
    run_id: str
    opened_at: str
    claimed_by: str | None = None
    claimed_at: str | None = None
    closed_by: str | None = None
    closed_at: str | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class NewTicket:
    summary: str
    question: str
    run_id: str
    customer_id: str | None = None
    order_code: str | None = None
