"""`agent tools call NAME [JSON]`: an operator runs one tool by hand.

The call is a run of its own, whose "model" is the operator's one call: it goes through the same
loop, so the same schema validation, the same approval path for a write (the shop's rules, then
`--yes`, a y/N/q at the terminal, or the approval queue when nobody is there), the same run log
(kind `tool`) and the same trace as the model's calls. The operator is staff: no customer has
to be identified first. Bad input (an unknown tool, JSON that is not an object, arguments the
schema refuses) is a usage error before anything runs.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.config import load_settings
from agent_cli.core.budget import Limits, RefundCounter
from agent_cli.core.decisions import CallTool, FinalAnswer
from agent_cli.core.events import ApprovalDecided, ApprovalRequested, Event, ToolObserved
from agent_cli.core.loop import run
from agent_cli.core.seams import ApprovalVerdict, ModelReply, ModelRequest
from agent_cli.dates import system_today
from agent_cli.errors import AgentError, PendingApproval, ToolCallFailed, UsageError
from agent_cli.record.tracing import TraceWriter, open_trace_file
from agent_cli.runtime.answerers import terminal_approver
from agent_cli.runtime.assemble import build_tools, operator_name, start_mcp_servers
from agent_cli.runtime.drive import drive, run_recorder
from agent_cli.runtime.shop import in_force
from agent_cli.runtime.stores import LazyStore
from agent_cli.text import clean_text, print_json_lines, read_json
from agent_cli.tools import InvalidArguments, ToolRegistry
from agent_cli.tools.identity import CustomerSession
from agent_cli.validation_text import near_miss

MAX_ARGS_CHARS = 100_000


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    name: str
    arguments: str | None = None  # JSON text; None: no arguments
    yes: bool = False  # approve a write as the operator
    operator: str | None = None  # --as NAME; None: the login name
    json_output: bool = False
    trace: Path | None = None
    config: Path | None = None


class OperatorCall:
    """The "model" of a tools call: the operator's one call, then the observation as the run's
    answer."""

    provider = "operator"

    def __init__(self, who: str, call: CallTool) -> None:
        self.model = who
        self._call = call

    def decide(self, request: ModelRequest) -> ModelReply:
        if not request.history:
            return ModelReply(self._call)
        return ModelReply(FinalAnswer(answer=request.history[-1].observation))


def call_tool(options: ToolCall) -> None:
    settings = load_settings(options.config)
    args = _arguments(options.arguments)
    who = (options.operator or "").strip() or operator_name()
    with ExitStack() as stack:
        servers = start_mcp_servers(settings, stack)
        store = LazyStore(settings)
        stack.callback(store.close)
        settings, _ = in_force(settings, store.get)  # the shop's rules decide money here too
        goal = f"agent tools call {options.name} {json.dumps(args, ensure_ascii=False)}"
        run_id = uuid.uuid4().hex  # what a ticket opened by hand records, as a run's would
        staff = CustomerSession(staff=True, run_id=run_id, question=goal, operator=who)
        tools = build_tools(
            settings, store.get, RefundCounter(), dry_run=False, mcp=servers, identity=staff
        )
        _check(tools, options.name, args)
        sinks: list[Callable[[Event], None]] = []
        if recorder := run_recorder(settings, kind="tool"):
            stack.callback(recorder.close)
            sinks.append(recorder)
        if options.trace:
            sinks.append(TraceWriter(stack.enter_context(open_trace_file(options.trace))).write)
        seen: list[Event] = []
        sinks.append(seen.append)
        events = run(
            goal,
            OperatorCall(who, CallTool(tool=options.name, args=args)),
            tools,
            # the observation whole: it is the operator's answer, not a model's context
            limits=Limits(
                max_steps=2, timeout_s=settings.limits.timeout, max_observation_chars=10**6
            ),
            today=system_today(),
            run_id=run_id,
        )
        drive(events, sinks, approve=_approver(options.yes, who))
    _report(options, args, seen)


def _arguments(text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    if len(text) > MAX_ARGS_CHARS:
        raise UsageError(f"the arguments are {len(text):,} characters; at most {MAX_ARGS_CHARS:,}")
    try:
        value = read_json(text)
    except ValueError as exc:
        raise UsageError(
            f'the arguments are not JSON ({exc}); e.g. \'{{"order_id": "A100"}}\''
        ) from None
    if not isinstance(value, dict):
        raise UsageError('the arguments must be a JSON object, e.g. \'{"order_id": "A100"}\'')
    return value


def _check(tools: ToolRegistry, name: str, args: dict[str, Any]) -> None:
    """Usage errors before anything runs: an unknown tool, arguments its schema refuses."""
    known = {tool.name: tool for tool in tools}
    if name not in known:
        raise UsageError(
            f"no tool {name!r}{near_miss(name, tuple(known))}; 'agent tools' lists them"
        )
    try:
        known[name].bind(args, time_left=0)
    except InvalidArguments as exc:
        raise UsageError(
            f"invalid arguments for {name}: {exc}; expected {known[name].signature()}"
        ) from None


def _approver(yes: bool, who: str) -> Callable[[ApprovalRequested], ApprovalVerdict]:
    """`--yes`: approved by the operator who ran it; else y/N/q at a terminal, or the queue."""
    if yes:
        return lambda request: ApprovalVerdict(True, "operator", f"approved by {who} (--yes)")
    return terminal_approver(stream=sys.stderr)


def _report(options: ToolCall, args: dict[str, Any], seen: list[Event]) -> None:
    observed = next((e for e in seen if isinstance(e, ToolObserved)), None)
    queued = next((e.queued for e in seen if isinstance(e, ApprovalDecided) and e.queued), None)
    if observed is None:  # pragma: no cover - the loop always observes the one call
        raise AgentError(f"{options.name} was not run")
    text, failed = observed.observation, observed.is_error
    if options.json_output:
        payload: dict[str, Any] = {"tool": options.name, "args": args}
        # A read's record field by field (`| jq .user_id`), the text it was shown as beside.
        payload |= {k: v for k, v in (observed.record or {}).items() if k not in payload}
        payload |= {"error": text} if failed and queued is None else {"observation": text}
        if queued is not None:
            payload["queued"] = queued
        print_json_lines([payload])
    else:
        print(clean_text(text))  # the store's data may hold terminal escapes: never raw
    if queued is not None:
        raise PendingApproval([queued])
    if failed:
        raise ToolCallFailed(f"{options.name} did not do it: see the line above")
