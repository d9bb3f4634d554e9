"""The bodies of the CLI commands, free of Typer: settings -> model -> tools -> loop -> output.

`cli.py` parses options and calls in here; errors are raised as AgentError for its boundary.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.answerers import terminal_approver, terminal_responder
from agent_cli.budget import RefundCounter
from agent_cli.config import load_settings
from agent_cli.errors import Interrupted, OrderNotFound, PendingApproval, UsageError
from agent_cli.events import ApprovalDecided, Event
from agent_cli.jsontext import print_json_lines
from agent_cli.runtime import (
    LazyStore,
    RunOptions,
    build_tools,
    check_question,
    drive,
    open_runtime,
    opened_store,
    parse_today,
    run_recorder,
    start_mcp_servers,
    warn,
)
from agent_cli.store import STATUSES, Order, OrderStore, configured_path
from agent_cli.tracing import TraceWriter, open_trace_file
from agent_cli.ui import (
    RunView,
    make_console,
    show_order,
    show_orders,
    show_run_header,
    show_runs,
    show_tools,
)

DEFAULT_LIST_LIMIT = 50  # on a terminal; a pipe gets every order


@dataclass(frozen=True, slots=True)
class AskOptions:
    question: str | None  # None or "-": read from stdin
    json_output: bool = False
    run: RunOptions = field(default_factory=RunOptions)


def ask_once(options: AskOptions) -> None:
    """`agent ask`: one question, one run, rendered live and/or traced."""
    settings = options.run.settings()
    limit = settings.limits.max_question_chars
    question = check_question(_question_text(options.question, limit), limit)
    with ExitStack() as stack:
        stack.enter_context(_naming_the_trace(options.run.trace))
        runtime = open_runtime(options.run, stack, settings=settings)
        sinks: list[Callable[[Event], None]] = []
        if recorder := run_recorder(settings, kind="ask", dry_run=options.run.dry_run):
            stack.callback(recorder.close)
            sinks.append(recorder)
        if options.run.trace:  # opened before the first model call: a bad path fails early
            trace = stack.enter_context(open_trace_file(options.run.trace))
            sinks.append(TraceWriter(trace).write)
        queued: list[int] = []
        sinks.append(lambda event: _note_queued(event, queued))
        if options.json_output:
            sinks.append(TraceWriter(sys.stdout).write)
            drive(
                runtime.events(question),
                sinks,
                respond=terminal_responder(show_question=True, stream=sys.stderr),
                approve=terminal_approver(stream=sys.stderr),
            )
        else:
            view = RunView(make_console(), quiet=options.run.quiet)
            events = runtime.events(question, on_text=view.stream)
            respond = terminal_responder(show_question=options.run.quiet, stream=sys.stdout)
            approve = terminal_approver(stream=sys.stdout, show_summary=options.run.quiet)
            sinks += [view.show]
            drive(events, sinks, waiting=view.waiting, respond=respond, approve=approve)
    if queued:
        raise PendingApproval(queued)


@contextmanager
def _naming_the_trace(trace: Path | None) -> Iterator[None]:
    """An interruption says where the completed steps are kept, when a trace is written."""
    try:
        yield
    except Interrupted as exc:
        if trace is None:
            raise
        raise Interrupted(terminated=exc.terminated, kept_in=f"the trace {trace}") from None


def _note_queued(event: Event, queued: list[int]) -> None:
    if isinstance(event, ApprovalDecided) and event.queued is not None:
        queued.append(event.queued)


def _question_text(given: str | None, limit: int) -> str:
    """The question as given, or read from stdin for `-` (or none, when stdin is piped)."""
    if given not in (None, "-"):
        return given
    if sys.stdin.isatty():
        raise UsageError(
            'No question: agent ask "Is order A100 refundable?" (or pipe one in: '
            "echo 'Is order A100 refundable?' | agent ask -)"
        )
    try:  # enough to tell "too long" (whitespace is stripped later), never all of a huge input
        return sys.stdin.read(limit * 4 + 1)
    except UnicodeDecodeError:
        raise UsageError("The question on stdin is not valid UTF-8 text") from None


def show_tools_command(*, json_output: bool, config: Path | None) -> None:
    """`agent tools`: ours and those of the MCP servers, which are started to list them."""
    settings = load_settings(config)
    with ExitStack() as stack:
        servers = start_mcp_servers(settings, stack)
        registry = build_tools(
            settings, LazyStore(settings).get, RefundCounter(), dry_run=True, mcp=servers
        )
    if json_output:
        print_json_lines(
            {"name": s.name, "description": s.description, "parameters": dict(s.parameters)}
            for s in registry.specs()
        )
        return
    show_tools(make_console(), registry.specs())


def list_orders(
    *,
    json_output: bool,
    config: Path | None,
    limit: int | None = None,
    status: str | None = None,
) -> None:
    """`agent orders list`: on a terminal the first 50 (--limit), else all, or one --status."""
    console = make_console()
    if limit is None and console.is_terminal and not json_output:
        limit = DEFAULT_LIST_LIMIT
    if limit is not None and limit < 1:
        raise UsageError("--limit must be 1 or more")
    if status is not None:
        status = status.upper()
        if status not in STATUSES:
            raise UsageError(f"--status {status!r} is not a status; use {', '.join(STATUSES)}")
    with opened_store(load_settings(config)) as store:
        orders = store.orders(status=status, limit=limit)
        total = store.count(status=status)
    if json_output:
        print_json_lines(order_json(o) for o in orders)
        return
    show_orders(console, orders)
    if len(orders) < total:
        warn(f"{len(orders)} of {total:,} orders shown; --limit N shows more")


def show_order_command(code: str, *, json_output: bool, config: Path | None) -> None:
    from agent_cli.order_files import normalise_code

    code = normalise_code(code)
    from agent_cli import approval_queue
    from agent_cli.ui.approvals_view import show_approvals

    with opened_store(load_settings(config)) as store:
        order = store.get(code)
        refunds = store.refunds(code)
        waiting = approval_queue.listed(store, order=code)
    if order is None:
        raise OrderNotFound(f"No order with code {code}; see 'agent orders list'")
    now = approval_queue.now_utc()
    if json_output:
        payload = {
            **order_json(order),
            "refunds": [dataclasses.asdict(r) for r in refunds],
            "approvals": [{**dataclasses.asdict(a), "state": a.state(now)} for a in waiting],
        }
        print_json_lines([payload])
        return
    console = make_console()
    show_order(console, order, refunds)
    if waiting:
        console.print("approval queue (agent approvals show ID):")
        show_approvals(console, waiting, now)


def init_orders(*, sample: bool, config: Path | None, today: str | None = None) -> None:
    """`agent orders init`: a new database (0600), empty or with the sample orders dated as of
    `today` (default: the system date)."""
    from agent_cli.store import sample_orders

    settings = load_settings(config)
    as_of = parse_today(today)
    path = configured_path(settings.store.path)
    if path.exists() and sample:
        _add_samples_if_empty(path, sample_orders(as_of))
        return
    if path.exists():
        raise UsageError(
            f"An order database exists already at {path}; nothing was changed. Add orders with "
            "'agent orders import FILE', or remove the file and run 'agent orders init' again"
        )
    store = OrderStore.open(path, seed=sample_orders(as_of) if sample else ())
    try:
        count = len(store.all())
    finally:
        store.close()
    print(f"Created the order database {path} ({count} orders)")


def _add_samples_if_empty(path: Path, samples: tuple[Order, ...]) -> None:
    """`orders init --sample` on a database with no orders fills it: nothing is lost. One that
    holds orders is left alone."""
    store = OrderStore.open(path, create=False)
    try:
        if store.count():
            raise UsageError(
                f"An order database with orders exists already at {path}; nothing was changed. "
                "Add orders with 'agent orders import FILE', or remove the file and run "
                "'agent orders init --sample' again"
            )
        store.import_orders(samples)
    finally:
        store.close()
    print(f"Added {len(samples)} sample orders to the empty order database {path}")


def import_orders(file: Path, *, config: Path | None) -> None:
    from agent_cli.order_files import read_orders

    orders = read_orders(file)
    with opened_store(load_settings(config)) as store:
        result = store.import_orders(orders)
    print(
        f"Imported {len(orders)} orders from {file} ({result.added} new, {result.updated} replaced)"
    )


def import_sqlite(source: Path, *, config: Path | None) -> None:
    """`agent orders import --from-sqlite FILE`: a SQLite store's orders, refunds and approval
    items into the configured store, all in one transaction."""
    from agent_cli.store_copy import copy_store

    settings = load_settings(config)
    if (
        settings.store.url is None
        and source.resolve() == configured_path(settings.store.path).resolve()
    ):
        raise UsageError(f"{source} is the configured store itself; nothing to move")
    origin = OrderStore.open(source, create=False)
    try:
        with opened_store(settings) as target:
            copied = copy_store(origin, target)
    finally:
        origin.close()
    print(
        f"Moved {copied.orders} orders, {copied.refunds} refunds ({copied.refunds_present} "
        f"there already) and {copied.approvals} approval items from {source}"
    )


def order_json(order: Order) -> dict[str, object]:
    return {
        "code": order.code,
        "status": order.status,
        "total": order.total,
        "currency": order.currency,
        "delivered_at": order.delivered_at.isoformat() if order.delivered_at else None,
        "customer": order.customer,
        "note": order.note,
    }


def replay_command(
    file: Path,
    *,
    run_id: str | None,
    quiet: bool,
    check: bool = False,
    config: Path | None = None,
    list_runs: bool = False,
) -> None:
    """`agent replay`: show recorded runs again, as `agent ask` showed them live; with
    `check`, re-run their decisions against today's tools and store instead (exit 3 on any
    difference)."""
    from agent_cli.replay import load_runs, summarize_run

    if check:
        from agent_cli.evaluation.command import check_replays

        check_replays([file], settings=load_settings(config), run_id=run_id, json_output=False)
        return
    console = make_console()
    runs = load_runs(file, warn=warn, run_id=run_id)
    if list_runs:
        show_runs(console, [summarize_run(events) for events in runs])
        return
    for events in runs:
        if not quiet:
            show_run_header(console, summarize_run(events))
        view = RunView(console, quiet=quiet)
        for event in events:
            view.show(event)
