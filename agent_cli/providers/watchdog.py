"""One watchdog thread per HTTP channel, re-armed for each attempt.

httpx's timeouts apply per read, so a server trickling bytes never trips them; the channel arms
the watchdog with the run's deadline before each attempt and disarms it after. Starting a
`threading.Timer` per attempt cost a thread start every request (15% of an in-process run's
HTTP time); this thread is started once, at the first attempt, and ends with the channel.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Watchdog:
    """Calls an alarm once its armed time has passed, unless disarmed first."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._changed = threading.Condition()
        self._due: float | None = None
        self._alarm: Callable[[], None] | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def arm(self, after_s: float, alarm: Callable[[], None]) -> None:
        with self._changed:
            self._due, self._alarm = self._clock() + after_s, alarm
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, daemon=True, name="watchdog")
                self._thread.start()
            self._changed.notify()

    def disarm(self) -> None:
        with self._changed:
            self._due, self._alarm = None, None
            self._changed.notify()

    def close(self) -> None:
        with self._changed:
            self._closed, self._due, self._alarm = True, None, None
            self._changed.notify()

    def _watch(self) -> None:
        with self._changed:
            while not self._closed:
                if self._due is None or self._alarm is None:
                    self._changed.wait()
                    continue
                left = self._due - self._clock()
                if left > 0:
                    self._changed.wait(left)
                    continue
                alarm, self._due, self._alarm = self._alarm, None, None
                self._changed.release()  # the alarm shuts sockets: never under the lock
                try:
                    alarm()
                finally:
                    self._changed.acquire()
