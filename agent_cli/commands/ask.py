"""`agent ask`: one question, one run, rendered live and/or traced."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.commands.notices import once_per_terminal
from agent_cli.config import Settings
from agent_cli.core.events import ApprovalDecided, Event, ToolObserved
from agent_cli.errors import (
    DeskAsked,
    HandedOver,
    Interrupted,
    NeedsInput,
    PendingApproval,
    UsageError,
)
from agent_cli.record import otel_gate
from agent_cli.record.tracing import TraceWriter, open_trace_file
from agent_cli.runtime.answerers import terminal_approver, terminal_responder
from agent_cli.runtime.api import sinks_for
from agent_cli.runtime.assemble import open_runtime
from agent_cli.runtime.conversation import Hooks, Turn, take_turn
from agent_cli.runtime.converse import message_key
from agent_cli.runtime.drive import drive, run_recorder
from agent_cli.runtime.options import RunOptions, check_question
from agent_cli.runtime.stores import opened_store
from agent_cli.store import conversations
from agent_cli.ui import (
    RunView,
    make_console,
)
from agent_cli.ui.console import notice


@dataclass(frozen=True, slots=True)
class AskOptions:
    question: str | None  # None or "-": read from stdin
    json_output: bool = False
    run: RunOptions = field(default_factory=RunOptions)
    conversation: str | None = None  # continue this conversation kept in the store
    message_id: str | None = None  # the caller's id of this message (a retry runs nothing)


def ask_once(options: AskOptions) -> None:
    """`agent ask`: one question, one run, rendered live and/or traced."""
    settings = options.run.settings()
    if options.json_output and options.run.quiet:
        notice("agent: -q is not used with --json: stdout holds the JSON Lines")
    limit = settings.limits.max_question_chars
    question = check_question(_question_text(options.question, limit), limit)
    if options.conversation is not None:
        converse_once(options, settings, question)
        return
    if options.message_id is not None:
        raise UsageError("--message-id names a message of a conversation: add --conversation ID")
    with ExitStack() as stack:
        stack.enter_context(_naming_the_trace(options.run.trace))
        runtime = open_runtime(
            options.run, stack, settings=settings, notify=once_per_terminal(notice)
        )
        sinks: list[Callable[[Event], None]] = []
        if recorder := run_recorder(settings, kind="ask", dry_run=options.run.dry_run):
            stack.callback(recorder.close)
            sinks.append(recorder)
        if options.run.trace:  # opened before the first model call: a bad path fails early
            trace = stack.enter_context(open_trace_file(options.run.trace))
            sinks.append(TraceWriter(trace).write)
        if exported := otel_gate.sink("ask", None):
            sinks.append(exported)
        queued: list[int] = []
        tickets: list[int] = []
        sinks.append(lambda event: _note_queued(event, queued, tickets))
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
    if tickets:
        raise HandedOver(tickets)
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


def _note_queued(event: Event, queued: list[int], tickets: list[int]) -> None:
    """What the run left for a person: approval queue items and hand-over tickets."""
    if isinstance(event, ApprovalDecided) and event.queued is not None:
        queued.append(event.queued)
    if isinstance(event, ToolObserved) and event.ticket is not None:
        tickets.append(event.ticket)


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


def converse_once(options: AskOptions, settings: Settings, question: str) -> None:
    """`agent ask --conversation ID`: one customer message of a conversation kept in the store,
    rendered as `agent ask` renders a run; a question the desk asks ends it (exit code 4) and
    the next call answers it."""
    assert options.conversation is not None
    if options.run.dry_run:
        raise UsageError(
            "--dry-run keeps nothing, and a conversation lives in the store: drop --dry-run "
            "(the offline model works on the configured store)"
        )
    key = message_key(options.message_id)
    with ExitStack() as stack:
        stack.enter_context(_naming_the_trace(options.run.trace))
        store = stack.enter_context(opened_store(settings))
        conversation = conversations.found(store, options.conversation).id
        runtime = open_runtime(
            options.run, stack, settings=settings, notify=once_per_terminal(notice)
        )
        sinks = sinks_for(
            options.run, settings, stack, kind="conversation", session_id=conversation
        )
        turn = take_turn(
            runtime, store, conversation, question, message_id=key, hooks=_hooks(options, sinks)
        )
    _what_is_left(turn, options)


def _hooks(options: AskOptions, sinks: list[Callable[[Event], None]]) -> Hooks:
    if options.json_output:
        return Hooks(sinks=(*sinks, TraceWriter(sys.stdout).write))
    view = RunView(make_console(), quiet=options.run.quiet)
    return Hooks(sinks=(*sinks, view.show), on_text=view.stream, waiting=view.waiting)


def _what_is_left(turn: Turn, options: AskOptions) -> None:
    """What the turn left: a retry's stored replies printed again, a message kept for a person,
    and the exit code `agent ask` would have (4 when the desk asked the customer something)."""
    if turn.repeated and not options.json_output:
        for reply in turn.replies:
            print(reply.text)
        notice(f"agent: message {turn.message} was answered before; nothing ran again")
    if turn.run_id is None and not turn.repeated:
        notice("agent: a person has this conversation; the message is kept for them")
    if turn.error is not None and not isinstance(turn.error, NeedsInput):
        raise turn.error
    if turn.status == "awaiting_customer":
        if options.run.quiet and not options.json_output and not turn.repeated:
            print(turn.replies[0].text if turn.replies else "")  # -q prints what the desk said
        raise DeskAsked(turn.replies[0].text if turn.replies else "", turn.conversation)
    _left_for_a_person(list(turn.events))


def _left_for_a_person(events: list[Event]) -> None:
    queued: list[int] = []
    tickets: list[int] = []
    for event in events:
        _note_queued(event, queued, tickets)
    if tickets:
        raise HandedOver(tickets)
    if queued:
        raise PendingApproval(queued)
