"""The bodies of the CLI commands, free of Typer: settings -> model -> tools -> loop -> output.

`cli.py` parses options and calls in here; errors are raised as AgentError for its boundary.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Generator, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from agent_cli.config import Settings, choose_provider, load_settings
from agent_cli.errors import OrderNotFound, UsageError
from agent_cli.events import Event
from agent_cli.loop import Limits, ReasoningModel, run
from agent_cli.store import Order, OrderStore, default_db_path
from agent_cli.tools import ToolRegistry
from agent_cli.tools.orders import RefundPolicy, order_tools
from agent_cli.tracing import TraceWriter, open_trace_file
from agent_cli.ui import RunView, make_console, show_order, show_orders, show_tools


@dataclass(frozen=True, slots=True)
class ProviderOptions:
    """Command-line choices of the model, shared by the commands that reach a provider."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    mode: str | None = None
    config: Path | None = None

    def overrides(self) -> dict[str, dict[str, object]]:
        return {
            "provider": {
                "name": self.provider,
                "model": self.model,
                "base_url": self.base_url,
                "mode": self.mode,
            }
        }


@dataclass(frozen=True, slots=True)
class AskOptions:
    question: str
    dry_run: bool = False
    script: Path | None = None
    max_steps: int | None = None
    timeout: float | None = None
    max_tokens: int | None = None
    today: str | None = None
    trace: Path | None = None
    json_output: bool = False
    quiet: bool = False
    provider: ProviderOptions = ProviderOptions()

    def settings(self) -> Settings:
        limits = {
            "max_steps": self.max_steps,
            "timeout": self.timeout,
            "max_tokens": self.max_tokens,
        }
        return load_settings(
            self.provider.config, overrides={"limits": limits, **self.provider.overrides()}
        )


def ask_once(options: AskOptions) -> None:
    """`agent ask`: one question, one run, rendered live and/or traced."""
    settings = options.settings()
    question = check_question(options.question, settings.limits.max_question_chars)
    today = parse_today(options.today)
    with ExitStack() as stack:
        model = choose_model(options, settings, stack)
        sinks: list[Callable[[Event], None]] = []
        if options.trace:  # opened before the first model call: a bad path fails early
            sinks.append(TraceWriter(stack.enter_context(open_trace_file(options.trace))).write)
        store = _LazyStore(settings)
        stack.callback(store.close)
        tools = ToolRegistry(order_tools(store.get, _policy(settings)))
        limits = Limits(
            settings.limits.max_steps,
            settings.limits.timeout,
            settings.limits.max_repairs,
            settings.limits.max_tokens,
        )
        events = run(question, model, tools, limits=limits, today=today)
        if options.json_output:
            sinks.append(TraceWriter(sys.stdout).write)
            drive(events, sinks)
            return
        view = RunView(make_console(), quiet=options.quiet)
        drive(events, [*sinks, view.show], waiting=view.waiting)


def drive(
    events: Generator[Event, None, None],
    sinks: list[Callable[[Event], None]],
    *,
    waiting: Callable[[], AbstractContextManager[object]] = nullcontext,
) -> None:
    """Hand every event to every sink, in order. A Ctrl-C while a sink runs is passed into the
    loop, which records the run as interrupted and raises Interrupted."""
    while True:
        with waiting():
            event = next(events, None)
        if event is None:
            return
        try:
            for sink in sinks:
                sink(event)
        except KeyboardInterrupt:
            final = events.throw(KeyboardInterrupt())
            for sink in sinks:
                sink(final)


def check_question(question: str, max_chars: int) -> str:
    """Refuse empty, oversized, NUL-containing or undecodable questions with a clear message."""
    if "\x00" in question:
        raise UsageError("The question contains NUL bytes; pass plain text")
    try:
        question.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError("The question is not valid UTF-8 text") from None
    question = question.strip()
    if not question:
        raise UsageError('The question is empty; try: agent ask "Is order A100 refundable?"')
    if len(question) > max_chars:
        raise UsageError(
            f"The question is {len(question):,} characters; the limit is {max_chars:,} "
            "(limits.max_question_chars)"
        )
    return question


def parse_today(value: str | None) -> date:
    if value is None:
        return date.today()
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"--today {value!r} is not a date; use YYYY-MM-DD") from None


def choose_model(options: AskOptions, settings: Settings, stack: ExitStack) -> ReasoningModel:
    """--script, else --dry-run's playbook, else the configured or detected provider. A missing
    key fails here, before any request; the adapter's connection is closed with the stack."""
    if options.script is not None:
        from agent_cli.providers.scripted import load_script

        return load_script(options.script)
    from agent_cli.providers.playbook import PlaybookModel

    if options.dry_run:
        return PlaybookModel()
    choice = choose_provider(settings, os.environ)
    if choice.kind == "offline":
        if choice.automatic and not options.quiet:
            print(
                "agent: no LLM provider configured and no API key found; answering with the "
                "offline playbook model (pass --dry-run to choose it explicitly)",
                file=sys.stderr,
            )
        return PlaybookModel()
    key = choice.api_key(os.environ)
    from agent_cli.providers.connect import connect

    model = connect(choice, settings.provider, key)
    stack.callback(model.close)
    return model


def _policy(settings: Settings) -> RefundPolicy:
    return RefundPolicy(
        settings.policy.refund_window_days, tuple(settings.policy.refundable_statuses)
    )


class _LazyStore:
    """Opens the order database on first use, so runs that never look up an order never open it."""

    def __init__(self, settings: Settings) -> None:
        self._path = settings.store.path or default_db_path()
        self._store: OrderStore | None = None

    def get(self) -> OrderStore:
        if self._store is None:
            self._store = OrderStore.open(self._path)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


@contextmanager
def _opened_store(config: Path | None) -> Iterator[OrderStore]:
    settings = load_settings(config)
    store = OrderStore.open(settings.store.path or default_db_path())
    try:
        yield store
    finally:
        store.close()


def show_tools_command(*, json_output: bool, config: Path | None) -> None:
    settings = load_settings(config)
    registry = ToolRegistry(order_tools(_LazyStore(settings).get, _policy(settings)))
    if json_output:
        payload = [
            {"name": s.name, "description": s.description, "parameters": dict(s.parameters)}
            for s in registry.specs()
        ]
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    show_tools(make_console(), registry.specs())


def list_orders(*, json_output: bool, config: Path | None) -> None:
    with _opened_store(config) as store:
        orders = store.all()
    if json_output:
        print(json.dumps([order_json(o) for o in orders], indent=2, ensure_ascii=False))
        return
    show_orders(make_console(), orders)


def show_order_command(code: str, *, json_output: bool, config: Path | None) -> None:
    from agent_cli.order_files import normalise_code

    code = normalise_code(code)
    with _opened_store(config) as store:
        order = store.get(code)
    if order is None:
        raise OrderNotFound(f"No order with code {code}; see 'agent orders list'")
    if json_output:
        print(json.dumps(order_json(order), indent=2, ensure_ascii=False))
        return
    show_order(make_console(), order)


def import_orders(file: Path, *, config: Path | None) -> None:
    from agent_cli.order_files import read_orders

    orders = read_orders(file)
    with _opened_store(config) as store:
        result = store.import_orders(orders)
    print(
        f"Imported {len(orders)} orders from {file} ({result.added} new, {result.updated} replaced)"
    )


def order_json(order: Order) -> dict[str, object]:
    return {
        "code": order.code,
        "status": order.status,
        "total": order.total,
        "currency": order.currency,
        "delivered_at": order.delivered_at.isoformat() if order.delivered_at else None,
        "customer": order.customer,
    }
