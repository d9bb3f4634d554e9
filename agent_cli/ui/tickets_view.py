"""Hand-over tickets: the list as a table (tab-separated when piped), and one ticket."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.text import Text

from agent_cli.domain.tickets import Ticket
from agent_cli.ui.console import clean_text
from agent_cli.ui.tables import print_rows, whole_table

_HEADERS = ("ticket", "status", "customer", "order", "summary", "opened (UTC)", "claimed by")


def show_tickets(console: Console, tickets: Sequence[Ticket]) -> None:
    table = whole_table(*_HEADERS, folded=("summary",))
    rows = [
        [
            Text(f"#{t.id}"),
            Text(t.status),
            Text(clean_text(t.customer_id or "-")),
            Text(clean_text(t.order_code or "-")),
            Text(clean_text(t.summary)),
            Text(t.opened_at),
            Text(clean_text(t.claimed_by or "-")),
        ]
        for t in tickets
    ]
    print_rows(console, table, rows)


def show_ticket(
    console: Console, t: Ticket, requester: Mapping[str, str | None] | None = None
) -> None:
    who = requester or {}
    rows = [
        ("ticket", f"#{t.id}"),
        ("status", t.status),
        ("customer", _customer(t, who)),
        ("channel", who.get("channel") or "-"),
        ("order", _order(t, who)),
        ("summary", t.summary),
        ("question", t.question),
        ("run", t.run_id),
        ("opened", t.opened_at),
    ]
    if t.claimed_by:
        rows.append(("claimed", f"by {t.claimed_by} at {t.claimed_at}"))
    if t.closed_by:
        rows.append(("closed", f"by {t.closed_by} at {t.closed_at}"))
    if t.note:
        rows.append(("note", t.note))
    for name, value in rows:
        line = Text(f"{name:<10}", style="dim")
        line.append(clean_text(value))
        console.print(line, soft_wrap=not console.is_terminal)


def _customer(t: Ticket, who: Mapping[str, str | None]) -> str:
    """The customer's id, with their name and email when the store knows them; else what they
    said about themselves, marked as such (never checked)."""
    known = [who.get("name") or "", f"<{who['email']}>" if who.get("email") else ""]
    named = " ".join(part for part in known if part)
    if not t.customer_id:
        return f"not identified; they wrote: {named}" if named else "not identified"
    return f"{t.customer_id} ({named})" if named else t.customer_id


def _order(t: Ticket, who: Mapping[str, str | None]) -> str:
    if t.order_code:
        return t.order_code
    order = who.get("order")
    return f"{order} (as they wrote it)" if order else "-"
