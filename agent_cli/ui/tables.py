"""Tables for the non-run commands: `agent tools`, `agent orders`, `agent replay --list`.

Whatever the output, every value is whole: piped, tab-separated lines (a header line first; a
tab, newline or backslash inside a value escaped as \\t, \\n, \\\\, so a row is one line);
on a terminal narrower than NARROW columns, one block of `key: value` lines per row; else a
table, whose cells Rich may wrap."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agent_cli.core.seams import ToolSpec
from agent_cli.domain.currencies import major, money
from agent_cli.domain.orders import Order, Refund
from agent_cli.record.replay import RunSummary
from agent_cli.record.runlog import LoggedRun
from agent_cli.ui.console import clean_text

NARROW = 60  # columns: below this, a table's cells would be cut to a few characters
LOGS_NARROW = 110  # `logs list`'s nine columns leave the question no room below this


def whole_table(*headers: str, title: str | None = None, folded: Sequence[str] = ()) -> Table:
    """A table that never cuts a value: the `folded` columns (free text) fold onto more lines
    when the terminal is narrow, the others (ids, states, figures) keep to one line; with no
    `folded` named, every column may fold."""
    table = Table(title=title)
    for header in headers:
        folds = not folded or header in folded
        table.add_column(header, overflow="fold", no_wrap=not folds)
    return table


def escaped(value: str) -> str:
    """A value as one field of a tab-separated line: a backslash, tab, newline or carriage
    return inside it written as \\\\, \\t, \\n, \\r, so the row stays one line of the columns."""
    return value.translate(_ESCAPES)


_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def print_rows(
    console: Console, table: Table, rows: Sequence[Sequence[Text]], *, narrow: int = NARROW
) -> None:
    """`rows` under `table`'s headers, whole values whatever the output (see the docstring);
    below `narrow` columns (a table too wide to read there), a block of lines per row."""
    headers = [str(column.header) for column in table.columns]
    if not console.is_terminal:  # raw lines: Rich would expand the tabs into spaces
        out = console.file
        out.write("\t".join(headers) + "\n")
        for row in rows:
            out.write("\t".join(escaped(cell.plain) for cell in row) + "\n")
        out.flush()
        return
    if console.width < narrow:
        for number, row in enumerate(rows):
            if number:
                console.print()
            for header, cell in zip(headers, row, strict=True):
                console.print(Text.assemble((f"{header}: ", "dim"), cell))
        return
    for row in rows:
        table.add_row(*row)
    console.print(table)


def show_tools(console: Console, specs: Iterable[ToolSpec]) -> None:
    table = Table("tool", "arguments", "description", show_lines=True)
    rows = []
    for spec in specs:
        properties = spec.parameters.get("properties", {})
        required = set(spec.parameters.get("required", []))
        args = ", ".join(
            f"{name}: {prop.get('type', 'any')}" + ("" if name in required else " (optional)")
            for name, prop in properties.items()
        )
        # An MCP server's names and descriptions are its own: cleaned like all outside text.
        rows.append(
            [
                Text(clean_text(spec.name), style="bold"),
                Text(clean_text(args) or "-"),
                Text(clean_text(spec.description)),
            ]
        )
    print_rows(console, table, rows)


def show_orders(console: Console, orders: Iterable[Order]) -> None:
    """A table on a terminal; piped, tab-separated lines written as they come (a table of
    20,000 rows would be laid out in full before its first line)."""
    if not console.is_terminal:  # raw lines: Rich would expand the tabs into spaces
        out = console.file
        out.write("code\tstatus\ttotal\tcurrency\tdelivered\tcustomer\n")
        for o in orders:
            delivered = o.delivered_at.isoformat() if o.delivered_at else "-"
            customer = escaped(clean_text(o.customer or "-"))
            total = major(o.total, o.currency, grouped=False)
            out.write(f"{o.code}\t{o.status}\t{total}\t{o.currency}\t{delivered}\t{customer}\n")
        out.flush()
        return
    table = Table("code", "status", "total", "delivered", "customer")
    rows = [
        [
            Text(order.code, style="bold"),
            Text(order.status),
            Text(money(order.total, order.currency), justify="right"),
            Text(order.delivered_at.isoformat() if order.delivered_at else "-"),
            Text(clean_text(order.customer or "-")),
        ]
        for order in orders
    ]
    print_rows(console, table, rows)


def show_order(console: Console, order: Order, refunds: Sequence[Refund] = ()) -> None:
    rows = [
        ("code", order.code),
        ("status", order.status),
        ("total", money(order.total, order.currency)),
        ("delivered", order.delivered_at.isoformat() if order.delivered_at else "-"),
        ("customer", clean_text(order.customer or "-")),
        ("note", clean_text(order.note or "-")),
    ]
    for name, value in rows:
        line = Text(f"{name:<10}", style="dim")
        line.append(value)
        console.print(line)
    if not refunds:
        console.print(Text(f"{'refunds':<10}", style="dim").append("none"))
        return
    console.print(Text("refunds", style="dim"))
    cells = [
        [
            Text(f"#{refund.id}"),
            Text(money(refund.amount, order.currency), justify="right"),
            Text(clean_text(refund.reason)),
            Text(refund.created_at),
        ]
        for refund in refunds
    ]
    table = whole_table("refund", "amount", "reason", "recorded (UTC)", folded=("reason",))
    print_rows(console, table, cells)


def show_checks(console: Console, checks: Iterable[tuple[bool | None, str, str]]) -> None:
    for ok, name, detail in checks:
        mark, style = {True: ("✓", "green"), False: ("✗", "red"), None: ("-", "dim")}[ok]
        line = Text(f"{mark} ", style=style)
        line.append(f"{name}: ", style="bold")
        line.append(clean_text(detail))
        console.print(line)


def show_settings(console: Console, rows: Iterable[tuple[str, str, str]]) -> None:
    table = Table("setting", "value", "source")
    cells = [
        [Text(key, style="bold"), Text(clean_text(value)), Text(source, style="dim")]
        for key, value, source in rows
    ]
    print_rows(console, table, cells)


def _when(summary: RunSummary) -> str:
    return summary.started.strftime("%Y-%m-%d %H:%M:%S UTC") if summary.started else "?"


def show_run_header(console: Console, summary: RunSummary) -> None:
    """The line that opens a replayed run: which one, when, how it ended, what was asked."""
    line = Text(f"── run {summary.run_id[:8]} · {_when(summary)} · {summary.status} · ", "bold")
    line.append(clean_text(summary.goal))
    console.print(line)


def show_runs(console: Console, summaries: Iterable[RunSummary]) -> None:
    table = Table("run", "status", "steps", "question")
    table.add_column("started", no_wrap=True)
    whole = not console.is_terminal  # piped: whole ids, as `--run` takes them
    rows = [
        [
            Text(s.run_id if whole else s.run_id[:8], style="bold"),
            Text(s.status, style="green" if s.status == "answered" else "yellow"),
            Text(str(s.steps), justify="right"),
            Text(clean_text(s.goal)),
            Text(_when(s)),
        ]
        for s in summaries
    ]
    print_rows(console, table, rows)


def show_logged_runs(console: Console, runs: Iterable[LoggedRun]) -> None:
    """`agent logs list|search`: a table on a terminal (local times, short ids); piped,
    tab-separated lines with whole ids and UTC times."""
    if not console.is_terminal:
        out = console.file
        out.write("run\tstarted\tkind\tsession\tstatus\tsteps\ttokens\tprovider/model\tquestion\n")
        for r in runs:
            question = escaped(clean_text(r.question))
            out.write(
                f"{r.run_id}\t{r.started_at}\t{r.kind}\t{r.session_id or '-'}\t{r.status}\t"
                f"{r.steps}\t{r.tokens}\t{r.provider}/{r.model}\t{question}\n"
            )
        out.flush()
        return
    table = whole_table(
        "run",
        "started",
        "kind",
        "session",
        "status",
        "steps",
        "tokens",
        "model",
        "question",
        folded=("model", "question"),
    )
    rows = [
        [
            Text(r.run_id[:8], style="bold"),
            Text(_local(r.started_at), no_wrap=True),
            Text(r.kind),
            Text((r.session_id or "-")[:8], style="dim"),
            Text(r.status, style="green" if r.status == "answered" else "yellow"),
            Text(str(r.steps), justify="right"),
            Text(f"{r.tokens:,}" if r.tokens else "-", justify="right"),
            Text(clean_text(f"{r.provider}/{r.model}")),
            Text(clean_text(" ".join(r.question.split()))),
        ]
        for r in runs
    ]
    print_rows(console, table, rows, narrow=LOGS_NARROW)


def _local(started_at: str) -> str:
    try:
        return datetime.fromisoformat(started_at).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return started_at


def show_desk_report(console: Console, rows: Sequence[Sequence[str]], by: str) -> None:
    """`agent logs report`: a row per group (a day, a model, an intent, or all)."""
    figures = ("conversations", "resolved", "handed over", "refused", "at a limit", "writes")
    table = whole_table(by, *figures, "p50/p95", "tokens", "cost", title="the desk's numbers")
    print_rows(console, table, [[Text(cell) for cell in row] for row in rows], narrow=110)
