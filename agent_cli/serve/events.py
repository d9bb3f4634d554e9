"""`GET /v1/conversations/{id}/events`: a conversation as it happens, as server-sent events.
Two kinds: the events of the turns this process answers, each the record `agent ask --json`
writes for it (`event:` its kind, `data:` the record), from the moment one subscribes; and every
message written to the conversation (`event: message`) and every change of its status (`event:
status`), read from the store every `POLL_S` whichever process wrote them (a turn answered
elsewhere, a person's reply, a queued change's outcome). A comment line every `HEARTBEAT_S`
keeps proxies from closing an idle stream."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from agent_cli.core.events import Event
from agent_cli.record.tracing import event_record
from agent_cli.store.conversations import Message

# What the store holds of a conversation after a message: the messages since, and its status.
# (None: its latest message alone, where a reader starts from.)
Since = Callable[[int | None], Awaitable[tuple[list[Message], str]]]

HEARTBEAT_S = 15.0
POLL_S = 1.0  # how often the store is read for what other processes wrote
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

    async def stream(self, conversation: str, since: Since) -> AsyncIterator[str]:
        """The frames of `conversation`'s turns and of what the store says was written to it
        (`since`), with a heartbeat when none come, until the subscriber leaves."""
        queue: asyncio.Queue[str] = asyncio.Queue()
        entry = (asyncio.get_running_loop(), queue)
        with self._lock:
            if self._closing:
                return
            self._listeners.setdefault(conversation, []).append(entry)
        try:
            written, status = await since(None)
            last = written[-1].id if written else 0  # what was said before is not news
            yield ": subscribed\n\n"
            quiet = time.monotonic()
            while True:
                try:
                    frame = await asyncio.wait_for(queue.get(), POLL_S)
                except TimeoutError:
                    frame = None
                if frame == _END:
                    return
                frames = [frame] if frame else []
                written, now = await since(last)
                frames += [_message_frame(m) for m in written]
                last = written[-1].id if written else last
                if now != status:
                    frames.append(_status_frame(now))
                    status = now
                if not frames and time.monotonic() - quiet >= HEARTBEAT_S:
                    frames = [": heartbeat\n\n"]
                for each in frames:
                    yield each
                    quiet = time.monotonic()
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


def _message_frame(message: Message) -> str:
    record = {
        "event": "message",
        "id": message.id,
        "role": message.role,
        "kind": message.kind,
        "text": message.text,
        "at": message.at,
    }
    return f"event: message\ndata: {json.dumps(record, ensure_ascii=False)}\n\n"


def _status_frame(status: str) -> str:
    return f"event: status\ndata: {json.dumps({'event': 'status', 'status': status})}\n\n"


def _offer(queue: asyncio.Queue[str], frame: str) -> None:
    if queue.qsize() >= MAX_QUEUED:
        queue.get_nowait()  # the oldest goes: a slow reader must not hold the server's memory
    queue.put_nowait(frame)
