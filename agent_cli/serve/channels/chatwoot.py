"""Chatwoot's agent bot (docs/channels/chatwoot.md): `POST /channels/chatwoot`.

A request is read only when `X-Chatwoot-Signature` is `sha256=` and the hex HMAC-SHA256 of
`{X-Chatwoot-Timestamp}.{raw body}` keyed by the bot's secret, and the timestamp is under five
minutes old (else 401, nothing run). A repeat of one `X-Chatwoot-Delivery` (or of one message)
is dropped. The answer is 200 at once; the turn runs after it. Only incoming, public messages of
the configured account are read, and only conversations the bot holds (`pending`) are answered:
one a person holds (`open`) is kept for them, silently. Replies go through Chatwoot's API
(`POST {base}/api/v1/accounts/{account}/conversations/{id}/messages`, header
`api_access_token`, `{"content", "message_type": "outgoing"}`); a hand-over sets the conversation
`open` (`POST .../toggle_status`), so the team's inbox shows it to a person.

Chatwoot's message API takes no idempotency key: a reply that Chatwoot took just as this process
died (before it was marked sent) may be posted twice. The window is one request's length."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agent_cli.providers.outbound import Outbound
from agent_cli.serve.channels import inbox
from agent_cli.serve.channels.base import Incoming, Outcome
from agent_cli.serve.requests import json_object
from agent_cli.store.outbox import Delivery

NAME = "chatwoot"
SEEN_DELIVERIES = 10_000  # delivery ids remembered in this process (the store dedupes the rest)


class Chatwoot:
    name = NAME

    def __init__(
        self, host: inbox.Host, *, base_url: str, account: int, token: str, secret: str
    ) -> None:
        self._host = host
        self._base = base_url.rstrip("/")
        self._account, self._token, self._secret = account, token, secret
        self._seen: OrderedDict[str, None] = OrderedDict()

    async def receive(self, request: Request) -> Response:
        body = await inbox.timed_body(request, self._host, self._secret, "x-chatwoot")
        if self._repeated(request.headers.get("x-chatwoot-delivery", "")):
            return JSONResponse({"status": "repeat"})
        message = self._incoming(json_object(body))
        if message is None:
            return JSONResponse({"status": "ignored"})
        received = await inbox.keep(self._host, NAME, [message])
        task = inbox.answer_later(self._host, received)
        return JSONResponse({"status": "accepted" if received else "not_answered"}, background=task)

    def _repeated(self, delivery: str) -> bool:
        if not delivery:
            return False
        if delivery in self._seen:
            return True
        self._seen[delivery] = None
        if len(self._seen) > SEEN_DELIVERIES:
            self._seen.popitem(last=False)
        return False

    def _incoming(self, event: dict[str, Any]) -> Incoming | None:
        """The customer's message in a `message_created` event, or None for anything else
        (our own replies come back as outgoing messages, and notes are private)."""
        if event.get("event") != "message_created" or event.get("message_type") != "incoming":
            return None
        if event.get("private") or not isinstance(event.get("content"), str):
            return None
        conversation = event.get("conversation")
        account = event.get("account")
        if not isinstance(conversation, dict) or not isinstance(account, dict):
            return None
        if account.get("id") != self._account or event.get("id") is None:
            return None
        number = conversation.get("id")
        if not isinstance(number, int) or not str(event["content"]).strip():
            return None
        return Incoming(
            external_id=str(number),
            address={"conversation": number},
            key=str(event["id"]),
            text=str(event["content"]),
            hold=conversation.get("status") != "pending",
        )

    def deliver(self, outbound: Outbound, rows: Sequence[Delivery]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for row in rows:
            number = row.address.get("conversation")
            where = f"{self._base}/api/v1/accounts/{self._account}/conversations/{number}"
            headers = {"api_access_token": self._token}
            if row.kind == "handover":
                answer = outbound.post(f"{where}/toggle_status", {"status": "open"}, headers)
            else:
                payload = {"content": row.text, "message_type": "outgoing", "private": False}
                answer = outbound.post(f"{where}/messages", payload, headers)
            outcomes.append(Outcome.of(answer))
            if not answer.ok:
                break
        return outcomes
