"""`GET /v1/conversations/{id}/events`: the events of a conversation's turns as they happen, as
server-sent events, each the record `agent ask --json` writes for it (`event:` its kind, `data:`
the record). A subscriber hears the turns this process answers from the moment it subscribes;
behind several processes, route a conversation's requests and its events to one process (by its
id), or read `GET /v1/conversations/{id}` for what was said. A comment line every
`HEARTBEAT_S` keeps proxies from closing an idle stream."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from agent_cli.core.events import Event
from agent_cli.record.tracing import event_record

HEARTBEAT_S = 15.0
_END = ""  # put in every queue when the server stops: the streams end, so it can
MAX_QUEUED = 1_000  # events held for a subscriber that reads too slowly; older ones dropped


class EventHub:
    """Who listens to which conversation, and the turns' events handed to them: published from
    the worker threads that run turns, read on the event loop."""

    def __init__(self) -> None:
        self._listeners: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Queue[str]]]] = {}
        self._lock = threading.Lock()
        self._closing = False

    def close(self) -> None:
        """End every stream (the server is stopping: an open stream would hold it up)."""
        with self._lock:
            self._closing = True
            listeners = [entry for entries in self._listeners.values() for entry in entries]
        for loop, queue in listeners:
            loop.call_soon_threadsafe(queue.put_nowait, _END)

    def sink(self, conversation: str) -> Callable[[Event], None]:
        """The sink a turn of `conversation` hands its events to."""

        def publish(event: Event) -> None:
            frame = _frame(event)
            with self._lock:
                listeners = list(self._listeners.get(conversation, ()))
            for loop, queue in listeners:
                loop.call_soon_threadsafe(_offer, queue, frame)

        return publish

    async def stream(self, conversation: str) -> AsyncIterator[str]:
        """The frames of `conversation`'s events, with a heartbeat when none come, until the
        subscriber leaves."""
        queue: asyncio.Queue[str] = asyncio.Queue()
        entry = (asyncio.get_running_loop(), queue)
        with self._lock:
            if self._closing:
                return
            self._listeners.setdefault(conversation, []).append(entry)
        try:
            yield ": subscribed\n\n"
            while True:
                try:
                    frame = await asyncio.wait_for(queue.get(), HEARTBEAT_S)
                except TimeoutError:
                    frame = ": heartbeat\n\n"
                if frame == _END:
                    return
                yield frame
        finally:
            with self._lock:
                listeners = self._listeners.get(conversation, [])
                if entry in listeners:
                    listeners.remove(entry)
                if not listeners:
                    self._listeners.pop(conversation, None)


def _frame(event: Event) -> str:
    record: dict[str, Any] = event_record(event)
    data = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event.kind}\ndata: {data}\n\n"


def _offer(queue: asyncio.Queue[str], frame: str) -> None:
    if queue.qsize() >= MAX_QUEUED:
        queue.get_nowait()  # the oldest goes: a slow reader must not hold the server's memory
    queue.put_nowait(frame)
