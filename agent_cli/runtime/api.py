"""The Python API: `agent_cli.ask` and `agent_cli.iter_events`, for a team that embeds the agent
(a help-desk webhook, a bot, a notebook) instead of spawning `agent ask --json`.

A run here is `agent ask` with nobody at a terminal: a question the model asks goes unanswered
(the run ends `needs_input`), and an approval is not given here (a refund waits in the approval
queue, or is denied when the queue is off). Runs are logged for `agent logs` and traced to
`trace=` as `agent ask` does; nothing is printed, and Ctrl-C stays the host's (no signal handler
is installed). Bad options, settings or a missing key raise before any request
(`agent_cli.errors`); once a run starts it ends in a `RunResult` whose `status` says how.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Literal, TypedDict, Unpack

from agent_cli.config import Settings
from agent_cli.core.events import (
    ApprovalDecided,
    ApprovalRequested,
    Event,
    RunFinished,
    RunStatus,
    ToolObserved,
)
from agent_cli.core.seams import Reply
from agent_cli.errors import AgentError, HandedOver, Interrupted, NeedsInput, PendingApproval
from agent_cli.record import otel_gate
from agent_cli.record.recorder import KeptLog
from agent_cli.record.tracing import TraceWriter, event_record, open_trace_file
from agent_cli.runtime.answerers import wait_in_queue
from agent_cli.runtime.assemble import open_runtime
from agent_cli.runtime.drive import run_recorder
from agent_cli.runtime.options import ProviderOptions, RunOptions, check_question


class Options(TypedDict, total=False):
    """What `agent ask`'s options are called here; each is optional, as on the command line."""

    provider: str  # --provider: offline, openai, anthropic, ollama or a [profiles.NAME]
    model: str  # --model
    base_url: str  # --base-url
    mode: Literal["tools", "json"]  # --mode
    config: str | Path  # --config FILE
    stream: bool  # False: --no-stream
    dry_run: bool  # --dry-run: the offline playbook, no side effects, nothing logged
    script: str | Path  # --script FILE: a scripted model
    max_steps: int  # --max-steps
    timeout: float  # --timeout, seconds for the whole run
    max_tokens: int  # --max-tokens
    max_cost: float  # --max-cost (needs the model's [prices])
    today: str | date  # --today: the date the run is answered as of
    trace: str | Path  # --trace FILE: JSON Lines, as --json writes them
    grounding: bool  # False: --no-grounding
    instructions: str | Path  # --instructions FILE: the shop's own, for this run


_PROVIDER_KEYS = ("provider", "model", "base_url", "mode", "config", "stream")
_PATHS = ("config", "script", "trace", "instructions")


@dataclass(frozen=True, slots=True)
class RunResult:
    """How one run ended, with every event it yielded (`records()`: as `--json` writes them)."""

    status: RunStatus
    answer: str | None
    run_id: str
    steps: int
    events: tuple[Event, ...] = field(repr=False)
    error: AgentError | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        """The run answered (a refund may be waiting in the approval queue)."""
        return self.status in ("answered", "pending_approval", "handed_over")

    @property
    def exit_code(self) -> int:
        """What `agent ask` would have exited with: 0, 3 at a limit, 4 needs input, 5 pending..."""
        return 0 if self.error is None else self.error.exit_code

    @property
    def asked(self) -> str | None:
        """The question the agent asked, when the run ended `needs_input`."""
        return self.error.question if isinstance(self.error, NeedsInput) else None

    def raise_for_status(self) -> None:
        """Raise what `agent ask` would have exited with (an AgentError), if anything."""
        if self.error is not None:
            raise self.error

    def records(self) -> list[dict[str, Any]]:
        """The run's trace records: the lines `agent ask --json` writes, as dictionaries."""
        return [event_record(event) for event in self.events]


def ask(question: str, **options: Unpack[Options]) -> RunResult:
    """Run the agent on one question and return how it ended. Raises AgentError (with the CLI's
    exit code) for bad options or settings and a missing API key, before any request; and
    KeyboardInterrupt when interrupted, after the run's end is recorded."""
    failure: list[AgentError] = []
    events = list(_events(*prepared(question, options), failure))
    finished = events[-1]
    assert isinstance(finished, RunFinished)  # every run ends with one (core/loop.py)
    error = failure[0] if failure else _pending(events)
    return RunResult(
        finished.status, finished.answer, finished.run_id, finished.steps, tuple(events), error
    )


def iter_events(question: str, **options: Unpack[Options]) -> Iterator[Event]:
    """Run the agent on one question, yielding each event as it happens (the same events, in
    the same order, as `agent ask --json` writes); the last is a `RunFinished`, whose status
    and error say how it ended. Bad options, settings or question raise here; the model is
    chosen (a missing key raises) at the first step. Leaving the loop early ends the run as
    interrupted, and its end is still logged and traced."""
    return _events(*prepared(question, options), [])


def prepared(question: str, options: Options) -> tuple[str, RunOptions, Settings]:
    run = run_options(options)
    settings = run.settings()
    return check_question(question, settings.limits.max_question_chars), run, settings


def _events(
    question: str, run: RunOptions, settings: Settings, failure: list[AgentError]
) -> Generator[Event, None, None]:
    with ExitStack() as stack:
        runtime = open_runtime(run, stack, settings=settings)
        sinks = sinks_for(run, settings, stack)
        yield from _drive(runtime.events(question), sinks, failure)


def _drive(
    events: Generator[Event, Reply, None],
    sinks: list[Callable[[Event], None]],
    failure: list[AgentError],
) -> Generator[Event, None, None]:
    """The run's events, each recorded before it is handed on; the questions unanswered and the
    approvals queued, as with no terminal. The loop's closing error is kept in `failure`."""
    reply: Reply = None
    event: Event | None = None
    try:
        while True:
            event = events.send(reply)
            for sink in sinks:
                sink(event)
            yield event
            reply = wait_in_queue(event) if isinstance(event, ApprovalRequested) else None
    except StopIteration:
        return
    except Interrupted as stop:
        raise KeyboardInterrupt from stop  # Ctrl-C is the host's: it goes on as one
    except AgentError as error:
        failure.append(error)
    except GeneratorExit:  # the caller stopped iterating: the run still ends on the record
        if not isinstance(event, RunFinished):
            final = events.throw(KeyboardInterrupt())
            for sink in sinks:
                sink(final)
        events.close()
        raise


def sinks_for(
    run: RunOptions,
    settings: Settings,
    stack: ExitStack,
    *,
    kind: str = "ask",
    session_id: str | None = None,
    kept: KeptLog | None = None,
) -> list[Callable[[Event], None]]:
    """The run log's recorder (not under dry_run) and the trace file, as `agent ask` has them;
    `kept`: the run log held open by the caller."""
    sinks: list[Callable[[Event], None]] = []
    recorder = run_recorder(
        settings, kind=kind, session_id=session_id, dry_run=run.dry_run, kept=kept
    )
    if recorder:
        stack.callback(recorder.close)
        sinks.append(recorder)
    if run.trace is not None:
        sinks.append(TraceWriter(stack.enter_context(open_trace_file(run.trace))).write)
    if exported := otel_gate.sink(kind, session_id):  # the SDK imported only when asked for
        sinks.append(exported)
    return sinks


def _pending(events: list[Event]) -> HandedOver | PendingApproval | None:
    """How an answered run left things for a person: a hand-over ticket (first), or refunds
    waiting in the approval queue."""
    if tickets := [e.ticket for e in events if isinstance(e, ToolObserved) and e.ticket]:
        return HandedOver(tickets)
    queued = [e.queued for e in events if isinstance(e, ApprovalDecided) and e.queued is not None]
    return PendingApproval(queued) if queued else None


def run_options(options: Options) -> RunOptions:
    """The API's keyword options as the CLI's; an unknown name is a TypeError, as Python's own."""
    given: dict[str, Any] = dict(options)
    if unknown := sorted(set(given) - set(Options.__annotations__)):
        known = ", ".join(Options.__annotations__)
        raise TypeError(f"unknown option {unknown[0]!r}; the options are: {known}")
    for name in _PATHS:
        if given.get(name) is not None:
            given[name] = Path(given[name])
    if isinstance(given.get("today"), date):
        given["today"] = given["today"].isoformat()
    provider = ProviderOptions(**{k: given.pop(k) for k in _PROVIDER_KEYS if k in given})
    return RunOptions(provider=provider, **given)
