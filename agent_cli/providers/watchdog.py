"""One watchdog thread per HTTP channel, re-armed for each attempt.

httpx's timeouts apply per read, so a server trickling bytes never trips them; the channel arms
the watchdog with the run's deadline before each attempt and disarms it after. Starting a
`threading.Timer` per attempt cost a thread start every request (15% of an in-process run's
HTTP time); this thread is started once, at the first attempt, and ends with the channel.
Waking it is a context switch too (arm and disarm each woke it: ~0.1 ms an attempt on two busy
cores), so it is woken only when an alarm falls due before it would wake anyway: every attempt
of a run is armed with the run's own deadline, so a run wakes it once, and a disarmed alarm is
found gone when the thread next wakes.
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
        self._due: float | None = None
        self._alarm: Callable[[], None] | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        self._wakes_at: float | None = None  # the end of the thread's wait; None: no end

    def arm(self, after_s: float, alarm: Callable[[], None]) -> None:
        with self._changed:
            self._due, self._alarm = self._clock() + after_s, alarm
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, daemon=True, name="watchdog")
                self._thread.start()
            elif self._wakes_at is None or self._due < self._wakes_at - _SLACK_S:
                self._changed.notify()

    def disarm(self) -> None:
        with self._changed:  # no wake-up: the thread finds nothing due when it next wakes
            self._due, self._alarm = None, None

    def close(self) -> None:
        with self._changed:
            self._closed, self._due, self._alarm = True, None, None
            self._changed.notify()

    def _watch(self) -> None:
        with self._changed:
            while not self._closed:
                if self._due is None or self._alarm is None:
                    self._wakes_at = None
                    self._changed.wait()
                    continue
                left = self._due - self._clock()
                if left > 0:
                    self._wakes_at = self._due
                    self._changed.wait(left)
                    continue
                alarm, self._due, self._alarm = self._alarm, None, None
                self._changed.release()  # the alarm shuts sockets: never under the lock
                try:
                    alarm()
                finally:
                    self._changed.acquire()
