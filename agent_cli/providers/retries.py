"""How long to wait before the next attempt, as the official SDKs do: `min(0.5 * 2**n, 8)`
seconds times a jitter, unless the server says (`retry-after-ms`, `retry-after` in seconds or
as an HTTP date; absurd values count as absent). Which statuses are worth another attempt."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 2
    initial_backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0

    def backoff(self, retry_number: int, jitter: float) -> float:
        """Seconds before retry number `retry_number` (0 for the first retry)."""
        doubled: float = self.initial_backoff * 2.0**retry_number
        return min(doubled, self.max_backoff) * jitter


MAX_SENSIBLE_WAIT = 7 * 86_400.0  # a wait beyond a week is not a real answer: treat as absent


def retry_after_seconds(headers: Mapping[str, str], now: float) -> float | None:
    """The server's requested wait: retry-after-ms wins over retry-after (seconds or a date).
    Absurd values (negative, NaN, infinite, beyond a week) count as absent."""
    if (value := headers.get("retry-after-ms")) is not None:
        try:
            return _sensible(float(value) / 1000.0)
        except ValueError:
            pass
    if (value := headers.get("retry-after")) is None:
        return None
    try:
        return _sensible(float(value))
    except ValueError:
        pass
    try:
        return _sensible(max(parsedate_to_datetime(value).timestamp() - now, 0.0))
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _sensible(seconds: float) -> float | None:
    if not math.isfinite(seconds) or seconds < 0 or seconds > MAX_SENSIBLE_WAIT:
        return None
    return seconds


def retryable(status: int | None) -> bool:
    return status is None or status in (408, 409, 429) or status >= 500
