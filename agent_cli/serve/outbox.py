"""The outbox's deliverer (store/outbox.py holds the rows): a task of each serving process that
takes the conversations with rows due, one conversation at a time, and hands their rows to the
conversation's channel in order. A row the channel took is marked sent at once; one it did not
waits with backoff (the channel's Retry-After when it gives one) and the rows after it wait
behind it; after `attempts` tries it is given up (status `failed`, shown by `agent conversations
show`). Woken at once when this process writes a row (a turn ended), else every `poll_s`, which is
how rows written by another process (an approval decided at a terminal) go out."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import uuid
from collections.abc import Callable, Mapping
from typing import Protocol, TypeVar

from starlette.concurrency import run_in_threadpool

from agent_cli.providers.outbound import Outbound
from agent_cli.serve.channels.base import Channel, Outcome
from agent_cli.store import outbox
from agent_cli.store.outbox import Delivery
from agent_cli.store.sqlite import OrderStore

T = TypeVar("T")
_log = logging.getLogger("agent_cli.serve.outbox")
CLAIM_S = 60.0  # a claim outlives its rows' deliveries (at most 5 a claim, each bounded at 10 s)
BATCH = 20  # conversations taken per pass
MAX_BACKOFF_S = 300.0


def backoff(attempts: int, asked: float | None) -> float:
    """The wait before try `attempts + 1`: what the channel asked for, else 1, 2, 4 ... up to
    five minutes, with jitter so processes do not retry in step."""
    if asked is not None:
        return min(asked, MAX_BACKOFF_S)
    return min(2.0**attempts, MAX_BACKOFF_S) * random.uniform(0.75, 1.0)


class WithStore(Protocol):
    """Work with a store opened for it (serve/app.py's `with_store`)."""

    def __call__(self, work: Callable[[OrderStore], T]) -> T: ...


class Deliverer:
    """Delivers the outbox's rows through `channels` (by the conversation's channel name)."""

    def __init__(
        self,
        with_store: WithStore,
        channels: Mapping[str, Channel],
        *,
        poll_s: float,
        attempts: int,
    ) -> None:
        self._with_store = with_store
        self._channels = channels
        self._poll_s = poll_s
        self._attempts = attempts
        self._owner = uuid.uuid4().hex
        self._outbound = Outbound()
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        self.sent = 0
        self.failed = 0

    def wake(self) -> None:
        """A row was written here: look now, not at the next poll."""
        self._wake.set()

    async def run(self) -> None:
        """Deliver until `stop`; then one last pass, so what the last turns owe goes out."""
        while not self._stop.is_set():
            self._wake.clear()
            if await self._pass():  # rows went: more may be waiting behind them
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self._poll_s)
        await self._pass()
        self._outbound.close()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    async def _pass(self) -> int:
        """One pass; how many rows went (0 when the store could not be read)."""
        try:
            return await run_in_threadpool(self.deliver_due)
        except Exception:  # a store that is down now may answer at the next poll
            _log.exception("the outbox could not be read")
            return 0

    def deliver_due(self) -> int:
        """One pass over the conversations with rows due; how many rows went out."""
        due = self._with_store(lambda store: outbox.due_conversations(store, limit=BATCH))
        return sum(self._deliver_conversation(conversation) for conversation in due)

    def _deliver_conversation(self, conversation: str) -> int:
        rows = self._with_store(
            lambda store: outbox.claim(store, conversation, self._owner, CLAIM_S)
        )
        if not rows:
            return 0
        channel = self._channels.get(rows[0].channel)
        if channel is None:  # not configured in this process: another process may deliver
            self._with_store(lambda store: outbox.let_go(store, conversation, self._owner))
            return 0
        outcomes = self._tried(channel, rows)
        self._with_store(lambda store: self._record(store, rows, outcomes))
        return sum(1 for outcome in outcomes if outcome.sent)

    def _tried(self, channel: Channel, rows: list[Delivery]) -> list[Outcome]:
        try:
            return channel.deliver(self._outbound, rows)
        except Exception as error:  # a channel's surprise costs one try, not the deliverer
            _log.exception("channel %s failed", channel.name)
            return [Outcome(False, f"{type(error).__name__}: {error}")]

    def _record(self, store: OrderStore, rows: list[Delivery], outcomes: list[Outcome]) -> None:
        for row, outcome in zip(rows, outcomes, strict=False):
            if outcome.sent:
                outbox.sent(store, row.id, self._owner)
                self.sent += 1
                continue
            last = not outcome.again or row.attempts + 1 >= self._attempts
            wait = None if last else backoff(row.attempts, outcome.after)
            outbox.failed(store, row.id, self._owner, outcome.error, retry_in=wait)
            if last:
                self.failed += 1
                _log.warning("gave up delivering outbox row %s: %s", row.id, outcome.error)
                continue  # a row given up stops holding up the ones after it
            break
        outbox.let_go(store, rows[0].conversation_id, self._owner)
