"""One watchdog thread per HTTP channel, re-armed for each attempt.

httpx's timeouts apply per read, so a server trickling bytes never trips them; the channel arms
the watchdog with the run's deadline before each attempt and disarms it after. Starting a
`threading.Timer` per attempt cost a thread start every request (15% of an in-process run's
HTTP time); this thread is started once, at the first attempt, and ends with the channel.
Waking it is a context switch too (arm and disarm each woke it: ~0.1 ms an attempt on two busy
cores), so it is woken only while it waits, and only for an alarm due before it would wake
anyway: every attempt of a run is armed with the run's own deadline, and a disarmed thread
still waits until that time, so a run wakes it at most once; a disarmed alarm is found gone
when the thread next wakes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

# Attempts of one run are armed with the same deadline, give or take the microseconds between
# reading the clock twice: an alarm up to 10 ms late is harmless, a wake-up for it is not.
_SLACK_S = 0.01


class Watchdog:
    """Calls an alarm once its armed time has passed, unless disarmed first."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._changed = threading.Condition()
        self._due: float | None = None  # the time last armed, kept when disarmed
        self._alarm: Callable[[], None] | None = None  # set while armed
        self._thread: threading.Thread | None = None
        self._closed = False
        self._wakes_at: float | None = None  # the end of the thread's wait; None: no end
        self._waiting = False  # the thread is in its wait (else it reads the state first)

    def arm(self, after_s: float, alarm: Callable[[], None]) -> None:
        with self._changed:
            self._due, self._alarm = self._clock() + after_s, alarm
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, daemon=True, name="watchdog")
                self._thread.start()
            elif self._waiting and (
                self._wakes_at is None or self._due < self._wakes_at - _SLACK_S
            ):  # a thread not waiting reads the new time before it next waits
                self._changed.notify()

    def disarm(self) -> None:
        with self._changed:  # no wake-up: the thread finds nothing due when it next wakes
            self._alarm = None

    def close(self) -> None:
        with self._changed:
            self._closed, self._alarm = True, None
            self._changed.notify()

    def _watch(self) -> None:
        with self._changed:
            while not self._closed:
                now = self._clock()
                if self._alarm is not None and self._due is not None and self._due <= now:
                    self._ring(self._alarm)
                    continue
                # Disarmed, it still waits until the last time armed: the next attempt of the
                # run is armed with the same deadline and need not wake it.
                due = self._due
                self._wakes_at = due if due is not None and due > now else None
                self._waiting = True
                self._changed.wait(None if self._wakes_at is None else self._wakes_at - now)
                self._waiting = False

    def _ring(self, alarm: Callable[[], None]) -> None:
        self._alarm = None
        self._changed.release()  # the alarm shuts sockets: never under the lock
        try:
            alarm()
        finally:
            self._changed.acquire()
