"""Everything one run needs, built from the options: settings, model, tools, limits, today;
and `drive`, which feeds a run's events to their consumers. Shared by `agent ask` and `agent chat`.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable, Generator, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from agent_cli import interrupts
from agent_cli.answerers import Approver, Responder, nobody, refuse
from agent_cli.budget import Limits, Price, RefundCounter
from agent_cli.config import Settings, choose_provider, load_settings
from agent_cli.dates import stated_today, system_today
from agent_cli.errors import UsageError
from agent_cli.events import ApprovalRequested, Event, QuestionAsked, RunFinished
from agent_cli.grounding import ground_answer
from agent_cli.instructions import shop_instructions
from agent_cli.loop import run
from agent_cli.providers.playbook import PlaybookModel
from agent_cli.providers.scripted import load_script
from agent_cli.runlog import RunRecorder, configured_log_path
from agent_cli.seams import Exchange, ReasoningModel, Reply, TextDelta
from agent_cli.store import OrderStore, configured_path, open_configured
from agent_cli.text import clean_text
from agent_cli.tools import RegisteredTool, ToolRegistry
from agent_cli.tools.orders import AsOf, RefundPolicy, order_tools

if TYPE_CHECKING:
    from agent_cli.tools.mcp_servers import McpServers


@dataclass(frozen=True, slots=True)
class ProviderOptions:
    """Command-line choices of the model, shared by the commands that reach a provider."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    mode: str | None = None
    config: Path | None = None
    stream: bool | None = None  # False: --no-stream

    def overrides(self) -> dict[str, dict[str, object]]:
        return {
            "provider": {
                "name": self.provider,
                "model": self.model,
                "base_url": self.base_url,
                "mode": self.mode,
                "stream": self.stream,
            }
        }


@dataclass(frozen=True, slots=True)
class RunOptions:
    """The options that shape a run, common to `agent ask` and `agent chat`."""

    dry_run: bool = False
    script: Path | None = None
    max_steps: int | None = None
    timeout: float | None = None
    max_tokens: int | None = None
    max_cost: float | None = None
    today: str | None = None
    trace: Path | None = None
    quiet: bool = False
    grounding: bool | None = None  # False: --no-grounding
    provider: ProviderOptions = field(default_factory=ProviderOptions)
    instructions: Path | None = None  # --instructions FILE: the shop's, for this run

    def settings(self) -> Settings:
        limits = {
            "max_steps": self.max_steps,
            "timeout": self.timeout,
            "max_tokens": self.max_tokens,
            "max_cost": self.max_cost,
            "grounding": self.grounding,
        }
        return load_settings(
            self.provider.config, overrides={"limits": limits, **self.provider.overrides()}
        )


@dataclass(slots=True)
class Runtime:
    """A model, tools and limits, ready for any number of runs."""

    settings: Settings
    model: ReasoningModel
    tools: ToolRegistry
    limits: Limits
    today: date
    refunds: RefundCounter
    today_from_question: bool = False  # the playbook, when --today was not given
    mcp: McpServers | None = None  # the MCP servers started for it, stopped with its stack
    as_of: AsOf | None = None  # shared with its order tools: set to each run's date
    instructions: str = ""  # the shop's own (instructions.py)

    def today_for(self, question: str) -> date:
        """The date a run on `question` is answered as of (recorded in `run_started.today`)."""
        stated = stated_today(question) if self.today_from_question else None
        return stated or self.today

    def events(
        self,
        question: str,
        conversation: tuple[Exchange, ...] = (),
        on_text: Callable[[TextDelta], None] | None = None,
    ) -> Generator[Event, Reply, None]:
        self.refunds.new_run()
        today = self.today_for(question)
        if self.as_of is not None:
            self.as_of.day = today  # what lookup_order computes its facts as of
        return run(
            question,
            self.model,
            self.tools,
            limits=self.limits,
            today=today,
            conversation=conversation,
            check_answer=ground_answer if self.limits.grounding else None,
            on_text=on_text,
            instructions=self.instructions,
        )


def open_runtime(
    options: RunOptions,
    stack: ExitStack,
    *,
    settings: Settings | None = None,
    previous: Runtime | None = None,
) -> Runtime:
    """Build a runtime whose connections and database close with `stack`. Bad settings, a bad
    --today and a missing API key all fail here, before any request. A chat switching models
    passes its `previous` runtime: the refund count and the MCP servers carry over."""
    settings = settings or options.settings()
    today = parse_today(options.today)
    instructions = shop_instructions(settings, options.instructions).text
    model = choose_model(options, settings, stack)
    store = LazyStore(settings, dry_run=options.dry_run)
    stack.callback(store.close)
    counter = previous.refunds if previous else RefundCounter()
    # The playbook never calls an MCP tool, and --dry-run must have no side effects.
    offline = options.dry_run or isinstance(model, PlaybookModel)
    if previous is not None:
        servers = previous.mcp
    else:
        servers = None if offline else start_mcp_servers(settings, stack)
    as_of = AsOf()
    tools = build_tools(
        settings, store.get, counter, dry_run=options.dry_run, mcp=servers, as_of=as_of
    )
    limits = limits_for(settings, model.model)
    from_question = options.today is None and isinstance(model, PlaybookModel)
    return Runtime(
        settings, model, tools, limits, today, counter, from_question, servers, as_of, instructions
    )


def limits_for(settings: Settings, model: str) -> Limits:
    """The run limits from the settings; a cost budget needs the model's price."""
    config = settings.limits
    known = settings.prices.get(model)
    price = Price(known.input, known.output) if known else None
    if config.max_cost is not None and price is None:
        raise UsageError(
            f'--max-cost needs a price for model {model!r}: add [prices."{model}"] with input '
            "and output per million tokens to the config"
        )
    return Limits(
        max_steps=config.max_steps,
        timeout_s=config.timeout,
        max_repairs=config.max_repairs,
        max_tokens=config.max_tokens,
        max_cost=config.max_cost,
        price=price,
        max_observation_chars=config.max_observation_chars,
        history_tokens=config.history_tokens,
        answer_at_limit=config.answer_at_limit,
        max_calls_per_reply=config.max_calls_per_reply,
        grounding=config.grounding,
    )


def build_tools(
    settings: Settings,
    store: Callable[[], OrderStore],
    counter: RefundCounter,
    *,
    dry_run: bool,
    mcp: McpServers | None = None,
    as_of: AsOf | None = None,
) -> ToolRegistry:
    """The order tools over the store `store()` opens, issue_refund when [refunds]
    enabled = true (side-effect free under --dry-run), and the tools of the MCP servers. No
    date goes in the refund tool: refunds are judged on the system date, whatever the run is
    told; `as_of` is only what lookups compute their facts as of."""
    tools: list[RegisteredTool] = list(order_tools(store, policy_of(settings), as_of))
    refunds = settings.refunds
    if refunds.enabled:
        from agent_cli.tools.refunds import RefundDesk, RefundLimits, refund_tool  # noqa: PLC0415

        limits = RefundLimits(refunds.max_amount, refunds.max_per_run, refunds.max_per_session)
        desk = RefundDesk(
            store,
            policy_of(settings),
            limits,
            counter,
            dry_run,
            queue_for=timedelta(hours=refunds.queue_hours) if refunds.queue_hours else None,
            proposer=operator_name(),
            rules=tuple(refunds.rules),
        )
        tools.append(refund_tool(desk))
    if mcp is None:
        return ToolRegistry(tools)
    return ToolRegistry([*tools, *mcp.tools], unavailable=mcp.unavailable)


def operator_name() -> str:
    """Who is at this terminal, for the approval queue's records: $AGENT_OPERATOR, else the
    OS user."""
    import getpass  # noqa: PLC0415

    if named := os.environ.get("AGENT_OPERATOR", "").strip():
        return clean_text(named)[:80]
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        return f"uid {os.getuid()}"


INSTALL_MCP = "pip install 'agent-cli[mcp]' (in a checkout: pip install -e '.[mcp]')"


def start_mcp_servers(settings: Settings, stack: ExitStack) -> McpServers | None:
    """The configured MCP servers, started (each failure a warning), stopped with `stack`;
    None when there are none, and then the SDK is not even imported (it is slow to)."""
    if not settings.mcp.servers:
        return None
    servers = mcp_servers(settings, warn)
    stack.callback(servers.close)
    servers.start(settings.limits.timeout)
    return servers


def mcp_servers(settings: Settings, warn: Callable[[str], None]) -> McpServers:
    """The configured MCP servers, not yet started; a UsageError when the SDK is missing."""
    try:
        from agent_cli.tools.mcp_servers import McpServers  # noqa: PLC0415
    except ImportError as exc:
        raise UsageError(
            f"the MCP SDK cannot be imported ({exc}), and [mcp.servers] needs it: {INSTALL_MCP}"
        ) from None
    return McpServers(settings.mcp.servers, warn=warn)


def run_recorder(
    settings: Settings, *, kind: str, session_id: str | None = None, dry_run: bool = False
) -> RunRecorder | None:
    """The sink that logs runs for `agent logs`; None when the log is off, and under --dry-run,
    which writes nothing anywhere. The log file is opened at the first run."""
    if dry_run or not settings.log.enabled:
        return None
    return RunRecorder(
        configured_log_path(settings.log.path),
        kind=kind,
        session_id=session_id,
        keep_runs=settings.log.keep_runs,
        warn=warn,
        make_dirs=settings.log.path is None,  # a named path (AGENT_LOG) makes no directories
    )


def warn(message: str) -> None:
    """A warning on stderr, one line, safe to print whatever it quotes."""
    print(f"agent: warning: {clean_text(message)}", file=sys.stderr, flush=True)


def drive(
    events: Generator[Event, Reply, None],
    sinks: list[Callable[[Event], None]],
    *,
    waiting: Callable[[], AbstractContextManager[object]] = nullcontext,
    respond: Responder = nobody,
    approve: Approver = refuse,
) -> None:
    """Hand every event to every sink, in order; send the responder's reply to each question
    and the approver's verdict on each approval back into the loop. A Ctrl-C while a sink, the
    responder or the approver runs is passed into the loop, which records the run as
    interrupted and raises Interrupted."""
    with interrupts.driving():
        _deliver(events, sinks, waiting, respond, approve)


def _deliver(
    events: Generator[Event, Reply, None],
    sinks: list[Callable[[Event], None]],
    waiting: Callable[[], AbstractContextManager[object]],
    respond: Responder,
    approve: Approver,
) -> None:
    reply: Reply = None
    while True:
        try:
            event = _next_event(events, sinks, waiting, reply)
        except StopIteration:
            return
        reply = None if event is None else _hand_on(event, events, sinks, respond, approve)


def _next_event(
    events: Generator[Event, Reply, None],
    sinks: list[Callable[[Event], None]],
    waiting: Callable[[], AbstractContextManager[object]],
    reply: Reply,
) -> Event | None:
    """The loop's next event; None when a Ctrl-C came (before the loop ran, or after it
    yielded) and was passed into the loop, whose end record the sinks now have."""
    event: Event | None = None
    try:
        with waiting():
            event = events.send(reply)  # send(None) is next()
    except KeyboardInterrupt as stop:
        if inspect.getgeneratorstate(events) == inspect.GEN_CLOSED:
            raise  # the loop ended on it: its record is written
        _interrupted(events, sinks, stop, pending=event)
        return None
    return event


def _hand_on(
    event: Event,
    events: Generator[Event, Reply, None],
    sinks: list[Callable[[Event], None]],
    respond: Responder,
    approve: Approver,
) -> Reply:
    """Give `event` to every sink; the reply to a question or an approval request."""
    handed = 0
    try:
        for sink in sinks:
            sink(event)
            handed += 1
        if isinstance(event, QuestionAsked):
            return respond(event.question)
        if isinstance(event, ApprovalRequested):
            return approve(event)
    except KeyboardInterrupt as stop:  # Terminated (SIGTERM) stays Terminated: exit 143
        if isinstance(event, RunFinished):  # too late to interrupt: finish its record
            for sink in sinks[handed:]:
                sink(event)
        else:
            _interrupted(events, sinks, stop)
    except BrokenPipeError:  # stdout's reader left (`| head`): the run's record still ends
        _end_quietly(events, sinks)
        raise
    return None


def _interrupted(
    events: Generator[Event, Reply, None],
    sinks: list[Callable[[Event], None]],
    stop: KeyboardInterrupt,
    pending: Event | None = None,
) -> None:
    """Pass a Ctrl-C into the loop; hand the event it had yielded but not yet handed on (if
    any), then the end record the loop yields now, to every sink."""
    final = events.throw(stop)
    for event in (pending, final):
        if event is not None:
            for sink in sinks:
                sink(event)


def _end_quietly(
    events: Generator[Event, Reply, None], sinks: list[Callable[[Event], None]]
) -> None:
    """End the run as interrupted and hand its end record to every sink that can still take it
    (the trace file, the run log), so no trace is left without its run_finished."""
    final = events.throw(KeyboardInterrupt())
    for sink in sinks:
        with suppress(BrokenPipeError):  # the screen is gone; the records are not
            sink(final)
    events.close()


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
        return system_today()
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"--today {value!r} is not a date; use YYYY-MM-DD") from None


# At most 80 characters: one line on any terminal.
OFFLINE_NOTICE = 'agent: offline playbook model (no API key); provider.name = "offline" hides this'


def choose_model(options: RunOptions, settings: Settings, stack: ExitStack) -> ReasoningModel:
    """--script, else --dry-run's playbook, else the configured or detected provider. A missing
    key fails here, before any request; the adapter's connection is closed with the stack."""
    if options.script is not None:
        return load_script(options.script)
    if options.dry_run:
        return PlaybookModel()
    choice = choose_provider(settings, os.environ)
    if choice.kind == "offline":
        if (named := options.provider.model) is not None:
            chosen = "no API key was found, so" if choice.automatic else "--provider offline:"
            raise UsageError(
                f"--model {named!r} is not used: {chosen} the offline playbook model answers; "
                "choose a provider (--provider openai|anthropic|ollama, with its API key) or "
                "drop --model"
            )
        if choice.automatic and not options.quiet:
            from agent_cli.ui.console import notice  # noqa: PLC0415 - Rich only to print it

            notice(OFFLINE_NOTICE)
        return PlaybookModel()
    key = choice.api_key(os.environ)
    from agent_cli.providers.connect import connect  # noqa: PLC0415 - httpx only when needed

    model = connect(choice, settings.provider, key)
    stack.callback(model.close)
    return model


def policy_of(settings: Settings) -> RefundPolicy:
    return RefundPolicy(
        settings.policy.refund_window_days, tuple(settings.policy.refundable_statuses)
    )


@contextmanager
def opened_store(settings: Settings) -> Iterator[OrderStore]:
    """The configured order store (a SQLite file or a PostgreSQL server), closed after use."""
    store = open_configured(settings.store.path, settings.store.url)
    try:
        yield store
    finally:
        store.close()


class LazyStore:
    """Opens the order database on first use, so runs that never look up an order never open it."""

    def __init__(
        self, settings: Settings, *, opened: OrderStore | None = None, dry_run: bool = False
    ) -> None:
        self._configured = settings.store.path
        self._url = settings.store.url
        self._store: OrderStore | None = opened  # a store made already (an eval case's)
        self._dry_run = dry_run  # no database is created: the samples in memory instead

    def get(self) -> OrderStore:
        if self._store is None:
            never_made = self._configured is None and not configured_path(None).exists()
            if self._dry_run and self._url is None and never_made:
                self._store = OrderStore.in_memory(as_of=system_today())
            else:
                self._store = open_configured(self._configured, self._url)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
