"""`agent ask`: one question, one run, rendered live and/or traced."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.commands.notices import once_per_terminal
from agent_cli.core.events import ApprovalDecided, Event, ToolObserved
from agent_cli.errors import HandedOver, Interrupted, PendingApproval, UsageError
from agent_cli.record.tracing import TraceWriter, open_trace_file
from agent_cli.runtime.answerers import terminal_approver, terminal_responder
from agent_cli.runtime.assemble import open_runtime
from agent_cli.runtime.drive import drive, run_recorder
from agent_cli.runtime.options import RunOptions, check_question
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


def ask_once(options: AskOptions) -> None:
    """`agent ask`: one question, one run, rendered live and/or traced."""
    settings = options.run.settings()
    if options.json_output and options.run.quiet:
        notice("agent: -q is not used with --json: stdout holds the JSON Lines")
    limit = settings.limits.max_question_chars
    question = check_question(_question_text(options.question, limit), limit)
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
