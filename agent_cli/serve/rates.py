"""How often a token may call and a conversation may be written to: a sliding minute per key, in
this process (a caller spread over several processes gets each process's allowance; a reverse
proxy's limit is the place for a hard, shared one). Over it, the request is refused with 429 and
the seconds until a slot frees up."""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable

WINDOW_S = 60.0


class RateLimit:
    """At most `per_minute` events per key in any 60 seconds; 0 means no limit."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def wait_for(self, key: str) -> int:
        """0 when an event for `key` may happen now (and counts it); else the whole seconds
        until one may."""
        if self.per_minute <= 0:
            return 0
        now = self._clock()
        with self._lock:
            seen = self._seen.setdefault(key, deque())
            while seen and now - seen[0] >= WINDOW_S:
                seen.popleft()
            if len(seen) >= self.per_minute:
                return max(1, math.ceil(WINDOW_S - (now - seen[0])))
            seen.append(now)
            self._forget_idle(now)
            return 0

    def _forget_idle(self, now: float) -> None:
        """Keys with nothing in the window are dropped, so memory follows the active callers."""
        if len(self._seen) < 10_000:
            return
        for key in [k for k, seen in self._seen.items() if not seen or now - seen[-1] >= WINDOW_S]:
            del self._seen[key]
