"""Ctrl-C and SIGTERM while a run is driven: the first ends the run, the rest wait for its record.

A run that is interrupted writes its end record (`run_finished`, status `interrupted`) to the
trace, the run log and the screen. A second Ctrl-C a few milliseconds after the first (a key
held down, an impatient operator, a supervisor sending SIGINT then SIGTERM) used to land in the
middle of that writing (or of the process's exit after it) and leave a trace without its end, or
a process killed by the signal. So, while a run is driven in the main thread, the first signal
raises as usual and any further one is held (not raised) from then on. A Ctrl-C that is answered
and does not end the process (a No at chat's approval prompt, a cancelled chat turn) releases the
hold, so the next one interrupts again.

Outside a driven run (a chat prompt, a command's own work) signals act as they always do.

A signal that arrives just as its handler is set to be ignored (as a run ends) is reported by
CPython as "Signal N ignored due to race condition", with a traceback; `quiet_signal_races` keeps
that report off the screen, as ignoring that signal was the point.
"""

from __future__ import annotations

import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from agent_cli.errors import Terminated


class _State:
    armed = False  # a run is driven in the main thread: the first signal ends it
    held = False  # the first signal was raised: later ones are held (not raised)
    terminated = False  # a SIGTERM arrived, raised or held: the process exits 143
    deferring = False  # inside `deferred`: a signal is kept, and raised as the section ends
    pending: BaseException | None = None  # the signal kept there (the first)
    previous: Any = signal.default_int_handler  # SIGINT's handler before `driving`


_state = _State()


def _raise_once(make: Callable[[], BaseException]) -> None:
    """Raise `make()`, unless a run is already ending from an earlier signal (then hold it)."""
    if _state.held:
        return
    if _state.deferring:
        _state.pending = _state.pending or make()
        return
    _state.held = _state.armed
    raise make()


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _raise_once(KeyboardInterrupt)


def on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM unwinds like Ctrl-C (so every run records `interrupted`), then exits 143."""
    _state.terminated = True
    _raise_once(Terminated)


def terminated() -> bool:
    """A SIGTERM arrived since `reset`, even one held while a run was ending."""
    return _state.terminated


def reset() -> None:
    _state.terminated = False


def release() -> None:
    """A Ctrl-C was answered without ending the process (a No at chat's approval prompt, a
    chat turn cancelled): the next one interrupts again."""
    was, _state.held = _state.held, False
    if was and not _state.armed:
        signal.signal(signal.SIGINT, _state.previous)


@contextmanager
def driving() -> Iterator[None]:
    """Around the driving of one run: from the first signal on, later ones are held while the
    run's end record is written, and after it, until `release` (the process is ending). A
    no-op outside the main thread (eval's workers: the main thread owns the signals) or when
    Ctrl-C is not Python's default (a shell that ignores it)."""
    main = threading.current_thread() is threading.main_thread()
    handler = signal.getsignal(signal.SIGINT) if main else None
    if handler not in (signal.default_int_handler, _on_sigint) or _state.armed:
        yield
        return
    if handler is not _on_sigint:
        _state.previous = handler
        signal.signal(signal.SIGINT, _on_sigint)
    _state.armed, _state.held = True, False
    try:
        yield
    finally:
        _state.armed = False
        # Held: the process is ending. Ignored in C, not by a Python handler: the interpreter
        # resets those as it exits, and a Ctrl-C then would still kill it with SIGINT.
        signal.signal(signal.SIGINT, signal.SIG_IGN if _state.held else _state.previous)


@contextmanager
def deferred() -> Iterator[None]:
    """A critical section that a signal never cuts in two (a transaction and the line that
    reports it): a Ctrl-C or SIGTERM arriving meanwhile is kept, and raised as the section
    ends. Python runs signal handlers in the main thread, whichever thread the signal reached,
    so this works in a process with other threads too; elsewhere it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    outer, _state.deferring = _state.deferring, True
    sigint = signal.getsignal(signal.SIGINT)
    if sigint is signal.default_int_handler:  # Python's own raises at once: ours keeps it
        signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        if sigint is signal.default_int_handler:
            signal.signal(signal.SIGINT, sigint)
        _state.deferring = outer
        pending, _state.pending = (None, _state.pending) if outer else (_state.pending, None)
        if pending is not None:
            raise pending


_RACE = re.compile(r"Signal \d+ ignored due to race condition")


class _QuietRaces:
    """An unraisable-exception hook that drops CPython's report of a signal caught between
    its check and a new handler (SIG_IGN, SIG_DFL): the Python handler it found gone was being
    replaced to ignore exactly such late signals. Every other report goes to `previous`."""

    def __init__(self, previous: Callable[[Any], object]) -> None:
        self.previous = previous

    def __call__(self, report: Any) -> None:
        value = report.exc_value
        if isinstance(value, OSError) and _RACE.fullmatch(str(value)):
            return
        self.previous(report)


def quiet_signal_races() -> None:
    """Install `_QuietRaces` over the current hook, once."""
    if not isinstance(sys.unraisablehook, _QuietRaces):
        sys.unraisablehook = _QuietRaces(sys.unraisablehook)
