"""Hand-over tickets: the list as a table (tab-separated when piped), and one ticket."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from agent_cli.store.tickets import Ticket
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


def show_ticket(console: Console, t: Ticket) -> None:
    rows = [
        ("ticket", f"#{t.id}"),
        ("status", t.status),
        ("customer", t.customer_id or "-"),
        ("order", t.order_code or "-"),
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
