"""How a channel's messages come in, the same for every channel: each message is kept in its
conversation (found by the channel's id of it, or started) before the channel is answered, a
message already received (a redelivery) is dropped, and the turns run after the answer, in the
background, one conversation's messages in the order they came; what the turns say goes out
through the outbox."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from agent_cli.runtime.conversation import Turn
from agent_cli.runtime.converse import Setup
from agent_cli.serve.channels import signing
from agent_cli.serve.channels.base import Incoming
from agent_cli.serve.errors import ApiError
from agent_cli.serve.requests import raw_body
from agent_cli.store import channel_conversations
from agent_cli.store.sqlite import OrderStore

T = TypeVar("T")
_log = logging.getLogger("agent_cli.serve.channels")


class Host(Protocol):
    """What a channel's route uses of the API (serve/app.py)."""

    setup: Setup
    max_body: int

    def with_store(self, work: Callable[[OrderStore], T]) -> T: ...

    async def answer_in_order(self, conversation: str, text: str, key: str) -> Turn: ...

    def delivered_soon(self) -> None: ...


Received = tuple[str, Incoming]  # the conversation's id and the message


async def timed_body(request: Request, host: Host, secret: str, prefix: str) -> bytes:
    """The raw body, once `{prefix}-signature` signs it at `{prefix}-timestamp` (a timestamp
    under five minutes old); 401 otherwise, before anything in it is read."""
    body = await raw_body(request, host.max_body)
    stamp = request.headers.get(f"{prefix}-timestamp", "")
    given = request.headers.get(f"{prefix}-signature", "")
    if not signing.timed_ok(secret, given, stamp, body):
        raise ApiError(401, "bad_signature", "the signature or its timestamp is not valid")
    return body


async def keep(host: Host, channel: str, messages: Sequence[Incoming]) -> list[Received]:
    """The new messages, each kept in its conversation (one transaction each); repeats and
    messages of a conversation the channel says a person holds (and the desk never had) are left
    out."""
    limit = host.setup.settings.limits.max_question_chars

    def work(store: OrderStore) -> list[Received]:
        kept: list[Received] = []
        for message in messages:
            arrival = channel_conversations.Arrival(
                external_id=message.external_id,
                address=message.address,
                key=message.key,
                text=message.text[:limit],  # a channel cannot show the customer a 400
                hold=message.hold,
            )
            found = channel_conversations.keep(store, channel, arrival)
            if found is not None and found[1]:
                kept.append((found[0], message))
        return kept

    return await run_in_threadpool(host.with_store, work)


def answer_later(
    host: Host,
    received: list[Received],
    before: Callable[[Received], Awaitable[None]] | None = None,
) -> BackgroundTask | None:
    """The turns of `received`, run after the channel has its answer (`before`: what to do
    first for each, such as showing that the desk is typing)."""
    if not received:
        return None

    async def answer() -> None:
        for conversation, message in received:
            try:
                if before is not None:
                    await before((conversation, message))
                await host.answer_in_order(conversation, message.text[: _limit(host)], message.key)
            except Exception:  # one failed turn must not cost the next message its answer
                _log.exception("turn of conversation %s failed", conversation[:8])
        host.delivered_soon()

    return BackgroundTask(answer)


def _limit(host: Host) -> int:
    return host.setup.settings.limits.max_question_chars
