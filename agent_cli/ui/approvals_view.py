"""The approval queue on screen: a table of items (tab-separated when piped, a header line
first) and one item. A row that cannot be read is shown as such, with what is wrong."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from rich.console import Console
from rich.text import Text

from agent_cli.domain.currencies import money
from agent_cli.store.approval_items import Approval, Item, Unreadable
from agent_cli.text import clean_text
from agent_cli.ui.tables import print_rows, whole_table

_STYLES = {"pending": "yellow", "approved": "green", "expired": "dim", "denied": "red"}
# `reason`: a refund's reason, or a desk write's change in words
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
        Text(item.order_code or "-"),
        Text(_amount(item), justify="right"),
        Text(clean_text(item.summary)),
        Text(clean_text(item.proposed_by)),
        Text(item.expires_at),
    ]


def _amount(item: Approval) -> str:
    """The money it moves; a write that moves none (an address) says so."""
    return "-" if item.is_write and item.amount == 0 else money(item.amount, item.currency)


def show_approval(console: Console, item: Approval, now: datetime) -> None:
    rows = [
        ("item", f"#{item.id} ({item.kind})"),
        ("state", item.state(now)),
        ("order", item.order_code or "-"),
        ("amount", _amount(item)),
        ("change" if item.is_write else "reason", item.summary),
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
