"""Live rendering of one run: a spinner while the model decides, each step as it completes,
the answer in a panel, and a footer with the step count and elapsed time."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, assert_never

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.padding import Padding
from rich.panel import Panel
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from agent_cli.core.decisions import AskUser, CallTool, FinalAnswer
from agent_cli.core.events import (
    ApprovalDecided,
    ApprovalRequested,
    Event,
    ModelCalled,
    ModelDecided,
    QueueDecided,
    RepairRequested,
    RunFinished,
    RunStarted,
    ToolObserved,
)
from agent_cli.core.seams import TextDelta
from agent_cli.ui.console import clean_text

_INDENT = 4
_REPAIRS = {"reply": "unusable reply", "calls": "too many calls", "answer": "answer not accepted"}


class RunView:
    """Turns events into lines on a console. `quiet` prints the answer and nothing else."""

    def __init__(self, console: Console, *, quiet: bool = False) -> None:
        self.console = console
        self.quiet = quiet
        self._model_ms = 0.0  # time spent waiting for the model, for the footer
        self._timed_steps: set[int] = set()
        self._step = 1  # the step the model is working on, for the spinner
        self._draft: list[str] = []  # the streamed text of the reply being written
        self._queued: list[int] = []  # approval queue items this run made
        self._handlers: dict[type[Event], Callable[[Any], None]] = {
            RunStarted: self._started,
            ModelDecided: self._decided,
            ToolObserved: self._observed,
            ModelCalled: self._called,
            ApprovalRequested: self._approval_requested,
            QueueDecided: self._queue_decided,
            ApprovalDecided: self._approval_decided,
            RepairRequested: self._repair,
            RunFinished: self._finished,
        }

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """A spinner while the next event is awaited, under the reply's text as it streams in:
        on a terminal, without NO_COLOR or --quiet. It leaves nothing behind: the decision is
        shown whole when it comes."""
        if self.console.is_terminal and not self.console.no_color and not self.quiet:
            spinner = Spinner("dots", _Waiting(self._step, self._draft), style="status.spinner")
            live = Live(
                _Streaming(self._draft, spinner),
                console=self.console,
                transient=True,
                refresh_per_second=12.5,  # as Rich's status: text appears as it streams
            )
            with live:
                yield
        else:
            yield

    def stream(self, delta: TextDelta) -> None:
        """More of the model's reply (a draft: it may yet be a tool call's thought, or be
        rejected by the grounding check)."""
        if delta.restart:
            self._draft.clear()
        elif delta.text:
            self._draft.append(delta.text)

    def show(self, event: Event) -> None:
        if isinstance(event, ModelDecided | RepairRequested | ModelCalled | RunFinished):
            self._draft.clear()  # the reply came whole (or a new one will): the draft is done
        if isinstance(event, ToolObserved | ModelDecided):
            self._step = event.step + (1 if isinstance(event, ToolObserved) else 0)
        if self.quiet:
            if isinstance(event, RunFinished) and event.answer:
                # Never wrapped: scripts read this line as it is. An answer asked for after a
                # limit stopped the run says so: it must not pass for a finished one.
                prefix = f"Incomplete answer ({event.status}): " if event.incomplete else ""
                self.console.print(Text(prefix + clean_text(event.answer)), soft_wrap=True)
            return
        if (handler := self._handlers.get(type(event))) is not None:
            handler(event)

    def _approval_requested(self, event: ApprovalRequested) -> None:
        self._note_line(f"needs approval: {event.summary}", event.step, "⚠", "yellow")

    def _approval_decided(self, event: ApprovalDecided) -> None:
        if event.queued is not None:
            self._queued.append(event.queued)
            line = f"queued as #{event.queued}: no one here could approve it"
            self._note_line(line, event.step, "⏳", "yellow")
            return
        verdict = "approved" if event.approved else "denied"
        who = {"operator": "the operator", "rule": "rule", "policy": "policy"}[event.by]
        why = f": {event.reason}" if event.reason else ""
        style = "green" if event.approved else "red"
        self._note_line(f"{verdict} by {who}{why}", event.step, "⚖", style)

    def _queue_decided(self, event: QueueDecided) -> None:
        style = "green" if event.status == "approved" else "red"
        line = f"#{event.item} {event.status} by {clean_text(event.decided_by)}: "
        self.console.print(Text(f"⚖ {line}{clean_text(event.outcome)}", style=style))

    def _repair(self, event: RepairRequested) -> None:
        what = _REPAIRS.get(event.cause)  # a rejected call already shows as its observation
        if what is not None:
            self._note(f"{what} (repair {event.repairs}): {event.problem}", event.step)

    def _started(self, event: RunStarted) -> None:
        line = f"{event.provider}/{event.model} · today {event.today} · max {event.max_steps} steps"
        self.console.print(Text(clean_text(line), style="dim"))

    def _called(self, event: ModelCalled) -> None:
        if event.fallback is not None:
            what = event.error or f"HTTP {event.status}"
            self._note(f"{what}; asking with {event.fallback} from now on", event.step)
        elif event.retry_in_s is not None:
            what = event.error or f"HTTP {event.status}"
            self._note(f"{what}; retrying in {event.retry_in_s:.1f} s", event.step)

    def _note(self, text: str, step: int) -> None:
        self._note_line(text, step, "↻", "yellow")

    def _note_line(self, text: str, step: int, mark: str, style: str) -> None:
        line = Text(f"[{step}] ", style=f"bold {style}")
        line.append(f"{mark} " + clean_text(text), style=style)
        self.console.print(line)

    def _decided(self, event: ModelDecided) -> None:
        if event.step not in self._timed_steps:  # parallel calls share one model latency
            self._timed_steps.add(event.step)
            self._model_ms += event.latency_ms
        decision = event.decision
        match decision:
            case CallTool():
                call = Text(f"[{event.step}] ", style="bold cyan")
                call.append(clean_text(f"{decision.tool}({format_args(decision.args)})"), "bold")
                self.console.print(call)
                if decision.thought:
                    thought = Text(clean_text(decision.thought), style="dim italic")
                    self._indented(thought)
            case AskUser():
                line = Text(f"[{event.step}] ", style="bold magenta")
                line.append("? " + clean_text(decision.question), style="magenta")
                self.console.print(line)
            case FinalAnswer():
                pass  # shown with the run's end, which says whether it is complete
            case _ as unreachable:
                assert_never(unreachable)

    def _indented(self, text: Text) -> None:
        if not self.console.is_terminal:  # a pipe or a file: whole lines, nothing padded
            for line in text.split("\n"):
                self.console.print(Text(" " * _INDENT) + line, soft_wrap=True)
            return
        self.console.print(Padding(text, (0, 0, 0, _INDENT), expand=False))

    def _observed(self, event: ToolObserved) -> None:
        marker, style = ("✗", "red") if event.is_error else ("→", "green")
        if not self.console.is_terminal:
            lines = Text(clean_text(event.observation)).split("\n")
            for number, line in enumerate(lines):
                lead = f"{marker:>{_INDENT - 1}} " if number == 0 else " " * _INDENT
                self.console.print(Text(lead, style=style) + line, soft_wrap=True)
            return
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=_INDENT - 1, justify="right", style=style)
        grid.add_column(style="red" if event.is_error else "")
        grid.add_row(marker, Text(clean_text(event.observation)))
        self.console.print(grid)

    def _finished(self, event: RunFinished) -> None:
        if event.answer:
            title = f"Incomplete answer ({event.status})" if event.incomplete else "Answer"
            style = "yellow" if event.incomplete else "none"
            if not self.console.is_terminal:  # no box: it would wrap and pad every line
                self.console.print(Text(f"{title}:", style="bold"))
                self._indented(Text(clean_text(event.answer)))
                self._footer(event)
                return
            panel = Panel(
                Text(clean_text(event.answer)),
                title=title,
                title_align="left",
                expand=False,
                border_style=style,
            )
            self.console.print(panel)
        self._footer(event)

    def _footer(self, event: RunFinished) -> None:
        parts = [
            f"{event.steps} step{'s' if event.steps != 1 else ''}",
            _duration(event.elapsed_ms),
        ]
        if event.usage.total:
            parts.append(f"{event.usage.total:,} tokens")
            parts.append(f"model {_duration(self._model_ms)}")
        if event.cost is not None:
            parts.append(f"cost {event.cost:.4f}")
        if event.status == "pending_approval":
            one = len(self._queued) == 1
            parts.append(
                f"awaiting approval: agent approvals {f'show {self._queued[0]}' if one else 'list'}"
            )
        elif event.status == "handed_over":
            parts.append("handed over to a person: agent tickets list")
        elif event.status != "answered":
            parts.append(f"stopped: {event.status}")
        style = "dim" if event.status in ("answered", "handed_over") else "yellow"
        self.console.print(Text(" · ".join(parts), style=style))


class _Waiting:
    """The spinner's text, drawn again at each refresh: a hung server shows the seconds pass."""

    def __init__(self, step: int, draft: list[str]) -> None:
        self._step = step
        self._draft = draft
        self._started = time.monotonic()

    def __rich__(self) -> Text:
        waited = time.monotonic() - self._started
        doing = "the model is writing" if self._draft else "waiting for the model"
        return Text(f"step {self._step} · {doing} · {waited:.0f} s", style="dim")


class _Streaming:
    """What the live region shows: the reply so far in the answer's panel, then the spinner."""

    def __init__(self, draft: list[str], spinner: Spinner) -> None:
        self._draft = draft
        self._spinner = spinner

    def __rich__(self) -> RenderableType:
        if not self._draft:
            return self._spinner
        text = Text(clean_text("".join(self._draft)))
        panel = Panel(text, title="Answer", title_align="left", expand=False, border_style="dim")
        return Group(panel, self._spinner)


def format_args(args: dict[str, Any]) -> str:
    return ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in args.items()
    )


def _duration(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"
