"""Conversations: the list as a table (tab-separated when piped), and one conversation with its
messages in order."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from agent_cli.store.conversations import Conversation, Message
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
        console.print(line, soft_wrap=not console.is_terminal)
