"""The generic webhook (docs/channels/webhook.md): one JSON shape in and out, signed, for anything
without a channel of its own (Zendesk's AI agent API, Intercom's custom channel, a shop's bot).

In: `POST /channels/webhook` with `X-Agent-Timestamp` (seconds since the epoch) and
`X-Agent-Signature: sha256=<hex HMAC-SHA256 of "{timestamp}.{raw body}">` keyed by the shared
secret, and `{"conversation": "<your id>", "message": {"id": "<your id>", "text": "..."}}`.
Without `[serve.webhook] reply_url` the turn runs and the answer is the replies; with it the answer
is at once (`{"accepted": true}`) and each reply is posted to `reply_url`, signed the same way,
with an `Idempotency-Key` that stays the same when a post is retried:
`{"conversation", "id", "role", "kind", "text"}`, or `{"conversation", "id", "event":
"handed_over"}` when a person takes over."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agent_cli.providers.outbound import Outbound
from agent_cli.serve.channels import inbox, signing
from agent_cli.serve.channels.base import Incoming, Outcome
from agent_cli.serve.errors import ApiError, bad_request
from agent_cli.serve.requests import json_object, text_field
from agent_cli.store import channel_conversations
from agent_cli.store.outbox import Delivery

NAME = "webhook"
MAX_ID_CHARS = 200


class Webhook:
    name = NAME

    def __init__(self, host: inbox.Host, secret: str, reply_url: str | None) -> None:
        self._host, self._secret, self._reply_url = host, secret, reply_url

    async def receive(self, request: Request) -> Response:
        body = await inbox.timed_body(request, self._host, self._secret, "x-agent")
        message = _incoming(json_object(body), delivered=self._reply_url is not None)
        received = await inbox.keep(self._host, NAME, [message])
        if self._reply_url is not None:
            task = inbox.answer_later(self._host, received)
            return JSONResponse({"accepted": True, "repeat": not received}, background=task)
        conversation = received[0][0] if received else await self._conversation_of(message)
        turn = await self._host.answer_in_order(conversation, message.text, message.key)
        self._host.delivered_soon()
        return JSONResponse({**turn.body(), "conversation": message.external_id})

    async def _conversation_of(self, message: Incoming) -> str:
        found = self._host.with_store(
            lambda store: channel_conversations.of_channel(store, NAME, message.external_id)
        )
        if found is None:
            raise ApiError(404, "not_found", "no such conversation")
        return found.id

    def deliver(self, outbound: Outbound, rows: Sequence[Delivery]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for row in rows:
            if self._reply_url is None:  # set since the conversation began: nowhere to post
                outcomes.append(Outcome(False, "[serve.webhook] reply_url is not set", again=False))
                break
            outcome = Outcome.of(outbound.post(self._reply_url, *self._signed(row)))
            outcomes.append(outcome)
            if not outcome.sent:
                break
        return outcomes

    def _signed(self, row: Delivery) -> tuple[bytes, dict[str, str]]:
        payload: dict[str, object] = {"conversation": row.external_id, "id": row.key}
        if row.kind == "handover":
            payload["event"] = "handed_over"
        else:
            payload.update(role=row.role, kind="message", text=row.text)
        body = json.dumps(payload, ensure_ascii=False).encode()
        stamp = str(int(time.time()))
        return body, {
            "X-Agent-Timestamp": stamp,
            "X-Agent-Signature": signing.hex_signature(self._secret, stamp, body),
            "Idempotency-Key": row.key,
        }


def _incoming(body: dict[str, object], *, delivered: bool) -> Incoming:
    """The message; `delivered`: replies go to the reply URL (the conversation gets an address,
    so the outbox owes them), else they go back in the response."""
    conversation = body.get("conversation")
    message = body.get("message")
    if not isinstance(conversation, str) or not 0 < len(conversation) <= MAX_ID_CHARS:
        raise bad_request(f'"conversation" must be your id of it, 1 to {MAX_ID_CHARS} characters')
    if not isinstance(message, dict):
        raise bad_request('"message" must be {"id": "...", "text": "..."}')
    key = text_field(message, "id", at_most=MAX_ID_CHARS)
    text = text_field(message, "text", at_most=100_000)
    return Incoming(conversation, {"via": NAME} if delivered else None, key, text)
