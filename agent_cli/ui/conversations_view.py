"""Conversations: the list as a table (tab-separated when piped), and one conversation with its
messages in order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.text import Text

from agent_cli.store.conversations import Conversation, Message
from agent_cli.store.outbox import Row
from agent_cli.ui.console import clean_text
from agent_cli.ui.tables import print_rows, whole_table

_HEADERS = ("conversation", "status", "channel", "customer", "last active (UTC)")
_ROLE_STYLE = {"customer": "bold", "desk": "green", "staff": "cyan"}


def show_conversations(console: Console, conversations: Sequence[Conversation]) -> None:
    table = whole_table(*_HEADERS, folded=("customer",))
    rows = [
        [
            Text(c.id),
            Text(c.status),
            Text(clean_text(c.channel)),
            Text(clean_text(c.customer_id or "-")),
            Text(c.updated_at),
        ]
        for c in conversations
    ]
    print_rows(console, table, rows)


def show_conversation_record(
    console: Console,
    c: Conversation,
    messages: Sequence[Message],
    proposal: dict[str, str] | None,
    *,
    deliveries: Mapping[int, Row] | None = None,
) -> None:
    customer = c.customer_id or "-"
    if c.customer_id and c.asserted_by:
        customer += f" (as {c.asserted_by} said)"
    rows = [
        ("id", c.id),
        ("status", c.status),
        ("channel", c.channel),
        ("customer", customer),
        ("started", c.created_at),
        ("active", c.updated_at),
    ]
    if proposal:
        rows.append(("proposal", f"{proposal['id']}: {proposal['summary']}"))
    if c.closed_by:
        rows.append(("closed", f"by {c.closed_by}"))
    for name, value in rows:
        line = Text(f"{name:<10}", style="dim")
        line.append(clean_text(value))
        console.print(line, soft_wrap=not console.is_terminal)
    for m in messages:
        line = Text(f"{m.at} ", style="dim")
        label = m.role if m.kind in ("message", "answer") else f"{m.role} ({m.kind})"
        line.append(f"{label}: ", style=_ROLE_STYLE.get(m.role, ""))
        line.append(clean_text(m.text))
        if (delivery := (deliveries or {}).get(m.id)) is not None:
            line.append(
                f"  [{_delivered(delivery)}]",
                style="dim" if delivery.status == "sent" else "yellow",
            )
        console.print(line, soft_wrap=not console.is_terminal)


def _delivered(row: Row) -> str:
    """How the message fared on its way to the customer's channel."""
    if row.status == "sent":
        return "delivered"
    tries = f"{row.attempts} {'try' if row.attempts == 1 else 'tries'}"
    why = f": {clean_text(row.last_error or '')[:80]}" if row.last_error else ""
    if row.status == "failed":
        return f"not delivered after {tries}{why}"
    return f"waiting to be delivered ({tries}{why})" if row.attempts else "waiting to be delivered"
