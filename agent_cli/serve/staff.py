"""The staff routes of `agent serve` (a `staff` token), each as the CLI does it:

    GET  /v1/approvals[?state=pending]      GET  /v1/approvals/{n}
    POST /v1/approvals/{n}/approve          POST /v1/approvals/{n}/deny  {"reason"}
    GET  /v1/tickets[?status=open]          GET  /v1/tickets/{n}
    POST /v1/tickets/{n}/claim              POST /v1/tickets/{n}/reply   {"text"}
    POST /v1/tickets/{n}/close  {"note", "close_conversation"}
    GET  /v1/help/search?q=TEXT

A decision or a step is made by the token (`token:NAME`), once: a second approve, claim or close
is 409 with the item as it stands. An approval decided here is told in its conversation, as one
decided at the terminal is."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agent_cli.domain.tickets import TICKET_STATUSES
from agent_cli.runtime import handovers
from agent_cli.runtime.converse import Setup
from agent_cli.runtime.queue_decisions import decide_item, recheck_for
from agent_cli.serve.errors import ApiError, bad_request
from agent_cli.serve.requests import json_body, text_field
from agent_cli.store import approval_queue, help_articles, tickets
from agent_cli.store.approval_items import ITEM_STATUSES, Unreadable, item_json
from agent_cli.store.approval_queue import now_utc
from agent_cli.store.sqlite import OrderStore
from agent_cli.store.tickets import MAX_ID
from agent_cli.store.tokens import Scope, Token

T = TypeVar("T")
Handler = Callable[[Request], Awaitable[Response]]
MAX_NOTE_CHARS = 1_000


class Host(Protocol):
    """What the staff routes use of the API (serve/app.py): its settings, its body limit, its
    token check and its store."""

    setup: Setup
    max_body: int

    async def token(self, request: Request, scope: Scope) -> Token: ...

    def with_store(self, work: Callable[[OrderStore], T]) -> T: ...


class Staff:
    """The staff routes, each error answered by `guard`."""

    def __init__(self, api: Host, guard: Callable[[Handler], Handler]) -> None:
        self._api = api
        self.routes = [
            Route("/v1/approvals", guard(self.approvals), methods=["GET"]),
            Route("/v1/approvals/{n}", guard(self.approval), methods=["GET"]),
            Route("/v1/approvals/{n}/approve", guard(self.approve), methods=["POST"]),
            Route("/v1/approvals/{n}/deny", guard(self.deny), methods=["POST"]),
            Route("/v1/tickets", guard(self.tickets), methods=["GET"]),
            Route("/v1/tickets/{n}", guard(self.ticket), methods=["GET"]),
            Route("/v1/tickets/{n}/claim", guard(self.claim), methods=["POST"]),
            Route("/v1/tickets/{n}/close", guard(self.close), methods=["POST"]),
            Route("/v1/tickets/{n}/reply", guard(self.reply), methods=["POST"]),
            Route("/v1/help/search", guard(self.search), methods=["GET"]),
        ]

    async def _staff(self, request: Request) -> Token:
        return await self._api.token(request, "staff")

    async def _in_store(self, work: Callable[[OrderStore], Any]) -> Any:
        return await run_in_threadpool(self._api.with_store, work)

    async def approvals(self, request: Request) -> Response:
        await self._staff(request)
        state = request.query_params.get("state", "pending")
        if state not in (*ITEM_STATUSES, "expired", "unreadable", "all"):
            raise bad_request(f"state {state!r} is not an item's state")
        now = now_utc()
        items = await self._in_store(approval_queue.listed)
        shown = [item_json(i, now) for i in items]
        kept = [s for s in shown if state in ("all", s["state"])]
        return JSONResponse({"approvals": kept})

    async def approval(self, request: Request) -> Response:
        await self._staff(request)
        number = _number(request)
        found = await self._in_store(lambda store: approval_queue.get(store, number))
        if found is None:
            raise ApiError(404, "not_found", f"no approval item #{number}")
        return JSONResponse(item_json(found, now_utc()))

    async def approve(self, request: Request) -> Response:
        return await self._decide(request, approve=True)

    async def deny(self, request: Request) -> Response:
        return await self._decide(request, approve=False)

    async def _decide(self, request: Request, *, approve: bool) -> Response:
        token = await self._staff(request)
        number = _number(request)
        body = await json_body(request, self._api.max_body)
        reason = text_field(body, "reason", at_most=MAX_NOTE_CHARS, required=False) or None
        recheck = recheck_for(self._api.setup.settings)
        decided = await self._in_store(
            lambda store: decide_item(
                store,
                number,
                approve=approve,
                by=f"token:{token.name}",
                reason=reason,
                recheck=recheck,
            )
        )
        if decided is None:
            raise ApiError(404, "not_found", f"no approval item #{number}")
        if isinstance(decided.item, Unreadable):
            raise ApiError(409, "unreadable", f"item #{number} cannot be read; nothing done")
        shown = item_json(decided.item, now_utc())
        if not decided.changed:
            raise ApiError(409, "decided", f"item #{number} is {shown['state']} already")
        return JSONResponse(shown)

    async def tickets(self, request: Request) -> Response:
        await self._staff(request)
        status = request.query_params.get("status")
        if status is not None and status not in (*TICKET_STATUSES, "all"):
            raise bad_request(f"status {status!r} is not a ticket's status")
        wanted = None if status in (None, "all") else status
        found = await self._in_store(lambda store: tickets.listed(store, status=wanted))
        if status is None:
            found = [t for t in found if t.status != "closed"]
        return JSONResponse({"tickets": [dataclasses.asdict(t) for t in found]})

    async def ticket(self, request: Request) -> Response:
        await self._staff(request)
        number = _number(request)
        found = await self._in_store(lambda store: tickets.get(store, number))
        if found is None:
            raise ApiError(404, "not_found", f"no ticket #{number}")
        return JSONResponse(dataclasses.asdict(found))

    async def claim(self, request: Request) -> Response:
        token = await self._staff(request)
        number = _number(request)
        changed = await self._in_store(
            lambda store: handovers.claim(store, number, by=f"token:{token.name}")
        )
        return _stepped(changed, number)

    async def close(self, request: Request) -> Response:
        token = await self._staff(request)
        number = _number(request)
        body = await json_body(request, self._api.max_body)
        note = text_field(body, "note", at_most=MAX_NOTE_CHARS, required=False) or None
        close_too = body.get("close_conversation", False)
        if not isinstance(close_too, bool):
            raise bad_request('"close_conversation" must be true or false')

        def close(store: OrderStore) -> Response:
            changed = tickets.close(store, number, by=f"token:{token.name}", note=note)
            answer = _stepped(changed, number)
            if changed is not None:
                handovers.hand_back(store, changed.ticket, close=close_too)
            return answer

        answer: Response = await self._in_store(close)
        return answer

    async def reply(self, request: Request) -> Response:
        await self._staff(request)
        number = _number(request)
        body = await json_body(request, self._api.max_body)
        text = text_field(body, "text", at_most=handovers.MAX_REPLY_CHARS)

        def reply(store: OrderStore) -> dict[str, str]:
            ticket = tickets.get(store, number)
            if ticket is None:
                raise ApiError(404, "not_found", f"no ticket #{number}")
            if ticket.status == "closed":
                raise ApiError(409, "unchanged", f"ticket #{number} is closed; nothing sent")
            conversation = handovers.reply(store, ticket, text)
            return {"conversation": conversation.id, "status": conversation.status}

        return JSONResponse(await self._in_store(reply))

    async def search(self, request: Request) -> Response:
        await self._staff(request)
        query = request.query_params.get("q", "").strip()
        if not query or len(query) > 500:
            raise bad_request("q: 1 to 500 characters to search the help centre for")
        hits = await self._in_store(lambda store: help_articles.search(store, query))
        return JSONResponse({"hits": [dataclasses.asdict(h) for h in hits]})


def _number(request: Request) -> int:
    given = request.path_params["n"]
    if not given.isdigit() or not 0 < int(given) <= MAX_ID:
        raise ApiError(404, "not_found", f"no item {given!r}")
    return int(given)


def _stepped(changed: tickets.TicketStep | None, number: int) -> Response:
    if changed is None:
        raise ApiError(404, "not_found", f"no ticket #{number}")
    if not changed.changed:
        raise ApiError(409, "unchanged", f"ticket #{number} is {changed.ticket.status} already")
    return JSONResponse(dataclasses.asdict(changed.ticket))
