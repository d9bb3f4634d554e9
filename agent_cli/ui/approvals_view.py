"""The approval queue on screen: a table of items (tab-separated when piped) and one item."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agent_cli.store.approval_queue import Approval
from agent_cli.text import clean_text
from agent_cli.ui.tables import print_rows

_STYLES = {"pending": "yellow", "approved": "green", "expired": "dim", "denied": "red"}


def show_approvals(console: Console, items: Sequence[Approval], now: datetime) -> None:
    if not console.is_terminal:  # piped: whole values, one item per line
        for item in items:
            reason = clean_text(item.reason).replace("\t", " ")
            console.file.write(
                f"{item.id}\t{item.state(now)}\t{item.order_code}\t{item.amount}\t{reason}\t"
                f"{item.proposed_by}\t{item.created_at}\t{item.expires_at}\n"
            )
        console.file.flush()
        return
    if not items:
        console.print("No approvals in the queue.")
        return
    table = Table("item", "state", "order", "amount", "reason", "proposed by", "expires (UTC)")
    rows = [
        [
            Text(f"#{item.id}", style="bold"),
            Text(item.state(now), style=_STYLES.get(item.state(now), "red")),
            Text(item.order_code),
            Text(f"{item.amount:,}", justify="right"),
            Text(clean_text(item.reason)),
            Text(clean_text(item.proposed_by)),
            Text(item.expires_at),
        ]
        for item in items
    ]
    print_rows(console, table, rows)


def show_approval(console: Console, item: Approval, now: datetime) -> None:
    rows = [
        ("item", f"#{item.id} ({item.tool})"),
        ("state", item.state(now)),
        ("order", item.order_code),
        ("amount", f"{item.amount:,}"),
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
