"""Driving a run: every event handed to every sink in order, the replies to questions and
approvals sent back into the loop, Ctrl-C passed in; the run-log sink; warnings on stderr."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Generator
from contextlib import AbstractContextManager, nullcontext, suppress

from agent_cli.config import Settings
from agent_cli.core import interrupts
from agent_cli.core.events import ApprovalRequested, Event, QuestionAsked, RunFinished
from agent_cli.core.seams import Reply
from agent_cli.record.log_place import log_place
from agent_cli.record.recorder import KeptLog, RunRecorder
from agent_cli.runtime.answerers import Approver, Responder, nobody, refuse
from agent_cli.text import clean_text


def run_recorder(
    settings: Settings,
    *,
    kind: str,
    session_id: str | None = None,
    dry_run: bool = False,
    kept: KeptLog | None = None,
) -> RunRecorder | None:
    """The sink that logs runs for `agent logs`; None when the log is off, and under --dry-run,
    which writes nothing anywhere. The log file is opened at the first run (or `kept` open by
    the caller, for a process that logs many runs)."""
    if dry_run or not settings.log.enabled:
        return None
    return RunRecorder(
        log_place(settings),
        kind=kind,
        session_id=session_id,
        warn=warn,
        log=kept.get() if kept is not None else None,
    )


def kept_log(settings: Settings) -> KeptLog | None:
    """The run log a serving process keeps open for all its turns; None when runs are not
    logged."""
    if not settings.log.enabled:
        return None
    return KeptLog(log_place(settings))


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
    wait = waiting
    while True:
        try:
            event = _next_event(events, sinks, wait, reply)
        except StopIteration:
            return
        if isinstance(event, RunFinished):
            wait = nullcontext  # nothing is awaited after the end: no spinner under the footer
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
