"""`GET /metrics`: what this process has served, in the Prometheus text format (version 0.0.4):
turns by how they ended, the time a message takes, the writes turns made, the HTTP answers by
status, and, read from the store when scraped, the approval queue's depth and the conversations
by status. Counters are this process's since it started (Prometheus sums the processes)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable

# Seconds: a turn of the offline model takes tens of milliseconds, one of a real model seconds.
_TURNS = "Messages answered, by how their run ended."
_WRITES = "Store writes the turns made."
_RESPONSES = "HTTP answers, by route and status."
_QUEUE = "Changes waiting for a person's decision."
_OUTBOX = "Messages owed to customers' channels, by status (pending, sent, failed)."
_CONVERSATIONS = "Conversations in the store, by status."
BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


class Metrics:
    """This process's counters, safe to add to from any worker thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.turns: Counter[str] = Counter()  # by the run's status ("kept" when none ran)
        self.writes = 0
        self.responses: Counter[tuple[str, int]] = Counter()  # (route, HTTP status)
        self._buckets = [0] * len(BUCKETS)
        self._count = 0
        self._sum = 0.0

    def turned(self, status: str, seconds: float, writes: int) -> None:
        with self._lock:
            self.turns[status] += 1
            self.writes += writes
            self._count += 1
            self._sum += seconds
            for n, bound in enumerate(BUCKETS):
                if seconds <= bound:
                    self._buckets[n] += 1

    def answered(self, route: str, status: int) -> None:
        with self._lock:
            self.responses[(route, status)] += 1

    def text(
        self, queue_depth: int, conversations: dict[str, int], rows: dict[str, int] | None = None
    ) -> str:
        """Every metric in the exposition format; the store's figures as read at the scrape
        (`rows`: the outbox's rows by status)."""
        with self._lock:
            turns = [(f'status="{s}"', n) for s, n in sorted(self.turns.items())]
            responses = [
                (f'route="{route}",status="{status}"', n)
                for (route, status), n in sorted(self.responses.items())
            ]
            lines = [
                *_family("agent_turns_total", "counter", _TURNS, turns),
                *_family("agent_writes_total", "counter", _WRITES, [("", self.writes)]),
                *_family("agent_http_responses_total", "counter", _RESPONSES, responses),
                *self._histogram(),
            ]
        by_status = [(f'status="{s}"', n) for s, n in sorted(conversations.items())]
        lines += _family("agent_approval_queue_depth", "gauge", _QUEUE, [("", queue_depth)])
        lines += _family("agent_conversations", "gauge", _CONVERSATIONS, by_status)
        owed = [(f'status="{s}"', n) for s, n in sorted((rows or {}).items())]
        lines += _family("agent_outbox_rows", "gauge", _OUTBOX, owed)
        return "\n".join(lines) + "\n"

    def _histogram(self) -> list[str]:
        name = "agent_turn_seconds"
        lines = [f"# HELP {name} The time a message takes, from received to answered.",
                 f"# TYPE {name} histogram"]  # fmt: skip
        lines += [
            f'{name}_bucket{{le="{bound:g}"}} {count}'
            for bound, count in zip(BUCKETS, self._buckets, strict=True)
        ]
        lines += [
            f'{name}_bucket{{le="+Inf"}} {self._count}',
            f"{name}_sum {self._sum:.6f}",
            f"{name}_count {self._count}",
        ]
        return lines


def _family(name: str, kind: str, help_text: str, samples: Iterable[tuple[str, int]]) -> list[str]:
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
    for labels, value in samples:
        lines.append(f"{name}{{{labels}}} {value}" if labels else f"{name} {value}")
    return lines
