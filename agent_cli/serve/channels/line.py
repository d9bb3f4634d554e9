"""LINE's Messaging API (docs/channels/line.md): `POST /channels/line`.

`X-Line-Signature` (the base64 HMAC-SHA256 of the raw body keyed by the channel secret) is
checked before anything else is read (else 401, nothing run). Each text message event of a
user, a group or a room is kept (a repeat of one `webhookEventId` dropped; events in `standby`
mode belong to another bot) and the answer is 200 at once. While its turn runs, a user's chat
shows LINE's loading indicator. Replies use the event's reply token while it is fresh (LINE's
last about a minute; `reply_window_s`), up to five messages in one reply, else a push with an
`X-Line-Retry-Key` (LINE takes one key once, so a push retried after a crash is not shown
twice)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agent_cli.providers.outbound import Outbound
from agent_cli.serve.channels import inbox, signing
from agent_cli.serve.channels.base import SENT, Incoming, Outcome
from agent_cli.serve.errors import ApiError
from agent_cli.serve.requests import json_object, raw_body
from agent_cli.store import channel_conversations
from agent_cli.store.outbox import Delivery
from agent_cli.store.sqlite import OrderStore

T = TypeVar("T")
NAME = "line"
MAX_REPLY_MESSAGES = 5  # LINE's limit per reply
MAX_TEXT_CHARS = 5_000  # LINE's limit per text message
LOADING_S = 20  # the indicator's length (LINE: 5 to 60 seconds; it stops when a message comes)


class Line:
    name = NAME

    def __init__(
        self, host: inbox.Host, *, api: str, secret: str, token: str, reply_window_s: float
    ) -> None:
        self._host = host
        self._api = api.rstrip("/")
        self._secret, self._token, self._window = secret, token, reply_window_s
        self._indicator = Outbound(timeout_s=5.0)  # the loading indicator's: one for the process

    async def receive(self, request: Request) -> Response:
        body = await raw_body(request, self._host.max_body)
        if not signing.body_ok(self._secret, request.headers.get("x-line-signature", ""), body):
            raise ApiError(401, "bad_signature", "the signature is not valid")
        events = json_object(body).get("events")
        messages = (
            [m for e in events if (m := self._incoming(e))] if isinstance(events, list) else []
        )
        received = await inbox.keep(self._host, NAME, messages)
        task = inbox.answer_later(self._host, received, before=self._loading)
        return JSONResponse({"status": "accepted"}, background=task)

    def _incoming(self, event: object) -> Incoming | None:
        if not isinstance(event, dict) or event.get("type") != "message":
            return None
        message, source = event.get("message"), event.get("source")
        if not isinstance(message, dict) or message.get("type") != "text":
            return None
        if event.get("mode", "active") != "active" or not isinstance(source, dict):
            return None
        chat = source.get("groupId") or source.get("roomId") or source.get("userId")
        key = event.get("webhookEventId") or message.get("id")
        text = message.get("text")
        if not isinstance(chat, str) or not isinstance(key, str) or not isinstance(text, str):
            return None
        address: dict[str, Any] = {
            "to": chat,
            "user": source.get("type") == "user",
            "language": "ja",  # LINE's customers write Japanese: words that show none get it
        }
        if isinstance(token := event.get("replyToken"), str):
            address.update(reply_token=token, reply_until=time.time() + self._window)
        return Incoming(chat, address, key, text)

    async def _loading(self, received: inbox.Received) -> None:
        """The indicator in a user's chat while the turn runs (best effort: it is a courtesy)."""
        _, message = received
        if message.address and message.address.get("user"):
            await run_in_threadpool(self._start_loading, message.external_id)

    def _start_loading(self, chat: str) -> None:
        body = {"chatId": chat, "loadingSeconds": LOADING_S}
        self._indicator.post(f"{self._api}/v2/bot/chat/loading/start", body, self._auth())

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token}"}

    def deliver(self, outbound: Outbound, rows: Sequence[Delivery]) -> list[Outcome]:
        texts = [row for row in rows if row.kind == "message"]
        outcomes: list[Outcome] = []
        replied = {row.id for row in self._replied(outbound, texts[:MAX_REPLY_MESSAGES])}
        for row in rows:
            if row.kind == "handover" or row.id in replied:
                outcomes.append(SENT)  # a person answers in LINE's own console: nothing to call
                continue
            outcome = Outcome.of(self._pushed(outbound, row))
            outcomes.append(outcome)
            if not outcome.sent:
                break
        return outcomes

    def _replied(self, outbound: Outbound, rows: list[Delivery]) -> list[Delivery]:
        """The rows sent with the conversation's reply token, if it is fresh (it is used once,
        whatever LINE answers: a token it refused is no better the second time)."""
        if not rows:
            return []
        address = rows[0].address
        token = address.get("reply_token")
        until = address.get("reply_until")
        fresh = isinstance(until, (int, float)) and time.time() < until
        if not isinstance(token, str) or not fresh or not self._took(rows[0], token):
            return []
        body = {"replyToken": token, "messages": [_text(row) for row in rows]}
        answer = outbound.post(f"{self._api}/v2/bot/message/reply", body, self._auth())
        return rows if answer.ok else []

    def _took(self, row: Delivery, token: str) -> bool:
        def take(store: OrderStore) -> bool:
            return channel_conversations.take_from_address(
                store, row.conversation_id, "reply_token", token
            )

        return self._host.with_store(take)

    def _pushed(self, outbound: Outbound, row: Delivery) -> Any:
        headers = {**self._auth(), "X-Line-Retry-Key": str(uuid.UUID(row.key))}
        body = {"to": row.address.get("to"), "messages": [_text(row)]}
        answer = outbound.post(f"{self._api}/v2/bot/message/push", body, headers)
        if answer.status == 409 and (answer.headers or {}).get("x-line-accepted-request-id"):
            return type(answer)(200, answer.body)  # taken before, under this key: sent
        return answer


def _text(row: Delivery) -> dict[str, str]:
    return {"type": "text", "text": (row.text or "")[:MAX_TEXT_CHARS]}
