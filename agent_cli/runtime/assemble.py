"""Everything one run needs, built from the options: settings, model, tools, limits, today
(`open_runtime`), shared by `agent ask`, `agent chat`, `agent eval` and the Python API."""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Callable, Generator
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import TYPE_CHECKING, TypedDict, Unpack

from agent_cli.config import Settings
from agent_cli.core.budget import Limits, Price, RefundCounter
from agent_cli.core.events import Event
from agent_cli.core.loop import run
from agent_cli.core.seams import AnswerCheck, Exchange, ReasoningModel, Reply, TextDelta
from agent_cli.errors import UsageError
from agent_cli.language import intents
from agent_cli.policy.consent import heard
from agent_cli.policy.grounding import ground_answer
from agent_cli.providers.choice import choose_provider, key_in_clear
from agent_cli.providers.playbook import PlaybookModel
from agent_cli.providers.scripted import load_script
from agent_cli.runtime.drive import warn
from agent_cli.runtime.model_pool import connected_with, pooled
from agent_cli.runtime.options import RunOptions, parse_today
from agent_cli.runtime.shop import in_force
from agent_cli.runtime.stores import LazyStore
from agent_cli.store.sqlite import OrderStore
from agent_cli.text import clean_text
from agent_cli.tools import RegisteredTool, ToolRegistry
from agent_cli.tools.desk import desk_tools
from agent_cli.tools.desk_writes import WriteDesk, write_tools
from agent_cli.tools.handover import handover_tool
from agent_cli.tools.help_center import help_tools
from agent_cli.tools.identity import CustomerSession
from agent_cli.tools.offered import offer
from agent_cli.tools.orders import AsOf, RefundPolicy, order_tools

if TYPE_CHECKING:
    from agent_cli.tools.mcp_servers import McpServers


@dataclass(slots=True, kw_only=True)
class Runtime:
    """A model, tools and limits, ready for any number of runs."""

    settings: Settings
    model: ReasoningModel
    tools: ToolRegistry
    limits: Limits
    today: date
    refunds: RefundCounter
    mcp: McpServers | None = None  # the MCP servers started for it, stopped with its stack
    as_of: AsOf | None = None  # shared with its order tools: set to each run's date
    instructions: str = ""  # the shop's own (policy/instructions.py)
    identity: CustomerSession | None = None  # who this conversation is with (tools/desk.py)
    language: str | None = None  # the channel's language, for words that say none (LINE: ja)

    def today_for(self, question: str) -> date:
        """The date a run is answered as of (recorded in `run_started.today`): `--today`, else
        the system date; never a date the customer's text states."""
        return self.today

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
        # The customer's messages so far; it grows as they reply.
        customer_messages = [*(turn.question for turn in conversation), question]
        run_id = uuid.uuid4().hex
        consent = None
        if self.identity is not None:  # what a hand-over ticket records of the run
            self.identity.run_id, self.identity.question = run_id, question
            # A chat turn answers what the last answer proposed, if it put it to the customer.
            asked = conversation[-1].answer if conversation else ""
            heard(self.identity.consent, asked, question)
            consent = functools.partial(heard, self.identity.consent)

        def hear(asked: str, reply: str) -> str | None:
            customer_messages.append(reply)
            return consent(asked, reply) if consent is not None else None

        return run(
            question,
            self.model,
            self.tools.offering(
                offer(self.tools.names(), self.settings.agent.tool_offer, customer_messages)
            ),
            limits=self.limits,
            today=today,
            conversation=conversation,
            check_answer=_grounding(conversation, question, today)
            if self.limits.grounding
            else None,
            on_text=on_text,
            instructions=self.instructions,
            run_id=run_id,
            hear=hear,
            customer=self._customer(),
            language=self.language,
        )

    def _customer(self) -> str | None:
        """Whom this conversation identified before the run (not an operator's session)."""
        identity = self.identity
        return None if identity is None or identity.staff else identity.customer_id


def open_runtime(
    options: RunOptions,
    stack: ExitStack,
    *,
    settings: Settings | None = None,
    previous: Runtime | None = None,
    notify: Callable[[str], None] | None = None,
) -> Runtime:
    """Build a runtime whose connections and database close with `stack`. Bad settings, a bad
    --today and a missing API key all fail here, before any request. A chat switching models
    passes its `previous` runtime: the refund count and the MCP servers carry over. `notify`
    is told, unless the options are quiet, that the offline model answers for want of a key."""
    settings = settings or options.settings()
    intents.use_examples(settings.agent.intent_examples)  # a bad file fails here, before a run
    today = parse_today(options.today)
    store = LazyStore(settings, dry_run=options.dry_run)
    stack.callback(store.close)
    settings, instructions = in_force(settings, store.get, options.instructions)
    model = choose_model(options, settings, stack)
    if notify is not None:
        for notice in notices(options, settings, model):
            notify(notice)
    counter = previous.refunds if previous else RefundCounter()
    identity = previous.identity if previous and previous.identity else CustomerSession()
    # The playbook never calls an MCP tool, and --dry-run must have no side effects.
    offline = options.dry_run or isinstance(model, PlaybookModel)
    if previous is not None:
        servers = previous.mcp
    else:
        servers = None if offline else start_mcp_servers(settings, stack)
    as_of = AsOf()
    tools = build_tools(
        settings,
        store.get,
        counter,
        dry_run=options.dry_run,
        mcp=servers,
        as_of=as_of,
        identity=identity,
    )
    limits = limits_for(settings, model.model)
    return Runtime(
        settings=settings,
        model=model,
        tools=tools,
        limits=limits,
        today=today,
        refunds=counter,
        mcp=servers,
        as_of=as_of,
        instructions=instructions,
        identity=identity,
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


class ToolsOptions(TypedDict, total=False):
    """What a toolbox may be built with besides its settings, store and refund count."""

    mcp: McpServers | None  # the MCP servers started for the run, their tools added
    as_of: AsOf | None  # the day lookups compute their facts as of
    identity: CustomerSession | None  # the conversation's customer (default: a new session)
    desk_clock: Callable[[], date] | None  # the day a return's window is judged on


def build_tools(
    settings: Settings,
    store: Callable[[], OrderStore],
    counter: RefundCounter,
    *,
    dry_run: bool,
    **given: Unpack[ToolsOptions],
) -> ToolRegistry:
    """The order tools over the store `store()` opens, issue_refund when [refunds]
    enabled = true (side-effect free under --dry-run), and the tools of the MCP servers. No
    date goes in the refund tool: refunds are judged on the system date, whatever the run is
    told; `as_of` is only what lookups compute their facts as of. A return's window is judged
    on the system date too, unless `desk_clock` says otherwise (an eval's throwaway store,
    dated for its case's day)."""
    session = given.get("identity") or CustomerSession()
    as_of, desk_clock, mcp = given.get("as_of"), given.get("desk_clock"), given.get("mcp")
    tools: list[RegisteredTool] = list(order_tools(store, policy_of(settings), as_of, session))
    tools += [*desk_tools(store, session), handover_tool(store, session, dry_run=dry_run)]
    tools += help_tools(store)
    queue_for = timedelta(hours=settings.refunds.queue_hours) or None  # the one queue's hours
    rules = tuple(settings.refunds.rules)  # the shop's rules: those naming a write decide it
    days = settings.policy.return_window_days
    window = settings.policy.refund_window_days if days is None else days
    writes = WriteDesk(
        open_store=store,
        session=session,
        dry_run=dry_run,
        by=operator_name(),
        queue_for=queue_for,
        rules=rules,
        window_days=window,
    )
    tools += write_tools(replace(writes, clock=desk_clock) if desk_clock else writes)
    refunds = settings.refunds
    if refunds.enabled:
        from agent_cli.tools.refunds import RefundDesk, RefundLimits, refund_tool  # noqa: PLC0415

        limits = RefundLimits(refunds.max_amount, refunds.max_per_run, refunds.max_per_session)
        desk = RefundDesk(
            open_store=store,
            policy=policy_of(settings),
            limits=limits,
            counter=counter,
            dry_run=dry_run,
            queue_for=timedelta(hours=refunds.queue_hours) if refunds.queue_hours else None,
            proposer=operator_name(),
            rules=tuple(refunds.rules),
            session=session,
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
        return PlaybookModel()
    key = choice.api_key(os.environ)
    from agent_cli.providers.connect import connect  # noqa: PLC0415 - httpx only when needed

    # Closed with the stack; in a serving process, kept for the next message (model_pool.py).
    return pooled(
        stack,
        connected_with(choice, settings.provider, key),
        lambda: connect(choice, settings.provider, key),
    )


def notices(options: RunOptions, settings: Settings, model: ReasoningModel) -> list[str]:
    """What the user should know about the model chosen: the offline model answering for want
    of a key (unless quiet), and options that the model chosen does not use."""
    lines = []
    if not options.quiet and _for_want_of_a_key(options, settings, model):
        lines.append(OFFLINE_NOTICE)
    named = options.provider
    if options.dry_run or options.script is not None:
        why = "--dry-run" if options.dry_run else "--script"
        for flag, value in (("--provider", named.provider), ("--model", named.model)):
            if value is not None:
                lines.append(f"agent: {flag} {value} is not used: {why} chose the model")
    if options.instructions is not None and isinstance(model, PlaybookModel):
        lines.append("agent: --instructions is not used by the offline playbook model")
    networked = not isinstance(model, PlaybookModel) and options.script is None
    clear = key_in_clear(choose_provider(settings, os.environ), os.environ) if networked else None
    return [*lines, clear] if clear else lines


def _for_want_of_a_key(options: RunOptions, settings: Settings, model: ReasoningModel) -> bool:
    """Whether the offline model answers only because no API key was found: nothing named it
    (--dry-run, --script or a provider). The runtime prints nothing; its caller tells the user."""
    if options.dry_run or options.script is not None or not isinstance(model, PlaybookModel):
        return False
    return choose_provider(settings, os.environ).automatic


def policy_of(settings: Settings) -> RefundPolicy:
    """The refund policy a run is told: the window, the statuses and, when refunds are on, the
    most one refund may be (so an answer says what this shop allows, not only the total)."""
    refunds = settings.refunds
    return RefundPolicy(
        settings.policy.refund_window_days,
        tuple(settings.policy.refundable_statuses),
        refunds.max_amount if refunds.enabled else None,
    )


def _grounding(conversation: tuple[Exchange, ...], question: str, today: date) -> AnswerCheck:
    """The grounding check of one run: its question and date, and the conversation's earlier
    turns (their answers passed this check in their own runs), are sources of the figures an
    answer may state, besides the tools' results."""
    context = "\n".join([*(f"{t.question}\n{t.answer}" for t in conversation), question])
    return functools.partial(ground_answer, question=context, today=today.isoformat())
