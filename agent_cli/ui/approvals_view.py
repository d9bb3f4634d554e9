"""The approval queue on screen: a table of items (tab-separated when piped, a header line
first) and one item. A row that cannot be read is shown as such, with what is wrong."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from rich.console import Console
from rich.text import Text

from agent_cli.config.currencies import money
from agent_cli.store.approval_items import Approval, Item, Unreadable
from agent_cli.text import clean_text
from agent_cli.ui.tables import print_rows, whole_table

_STYLES = {"pending": "yellow", "approved": "green", "expired": "dim", "denied": "red"}
_HEADERS = ("item", "state", "order", "amount", "reason", "proposed by", "expires (UTC)")


def show_approvals(console: Console, items: Sequence[Item], now: datetime) -> None:
    if not items and console.is_terminal:
        console.print("No approvals in the queue.")
        return
    print_rows(console, whole_table(*_HEADERS), [_row(item, now) for item in items])


def _row(item: Item, now: datetime) -> list[Text]:
    if isinstance(item, Unreadable):
        problem = Text(f"cannot be read: {clean_text(item.problem)}")
        blank = [Text("-"), Text("-")]
        return [
            Text(f"#{item.id}", style="bold"),
            Text("unreadable", style="red"),
            *blank,
            problem,
            *blank,
        ]
    state = item.state(now)
    return [
        Text(f"#{item.id}", style="bold"),
        Text(state, style=_STYLES.get(state, "red")),
        Text(item.order_code),
        Text(money(item.amount, item.currency), justify="right"),
        Text(clean_text(item.reason)),
        Text(clean_text(item.proposed_by)),
        Text(item.expires_at),
    ]


def show_approval(console: Console, item: Approval, now: datetime) -> None:
    rows = [
        ("item", f"#{item.id} ({item.tool})"),
        ("state", item.state(now)),
        ("order", item.order_code),
        ("amount", money(item.amount, item.currency)),
        ("reason", item.reason),
        ("judged", item.judged),
        ("run", item.run_id),
        ("question", item.question),
        ("proposed", f"by {item.proposed_by} at {item.created_at}"),
        ("expires", item.expires_at),
    ]
    if item.decided_at:
        rows.append(("decided", f"by {item.decided_by} at {item.decided_at}: {item.outcome}"))
    for name, value in rows:
        line = Text(f"{name:<10}", style="dim")
        line.append(clean_text(value))
        console.print(line)
