"""The HTTP API of `agent serve`, under `/v1`, JSON in and out (docs/serve.md):

    POST /v1/conversations                  -> 201 {"id", "status"}
    POST /v1/conversations/{id}/messages    -> 200 the turn: replies, status, proposal, run
    GET  /v1/conversations/{id}             -> 200 status, customer, messages, proposal
    POST /v1/conversations/{id}/close       -> 200 {"id", "status": "closed"}
    GET  /v1/conversations/{id}/events      -> server-sent events of its turns (serve/events.py)
    GET  /healthz (no token), GET /readyz (the store answers), GET /metrics (staff)

Every blocking step (the store, a turn) runs in a worker thread. Messages of one conversation
are answered one at a time: in this process a lock per conversation keeps them in the order
received; across processes the conversation's lease in the store does, and a message that finds
it held waits for it (up to a turn's longest time) instead of failing."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from agent_cli.errors import AgentError, ConversationBusy, ConversationClosed, UsageError
from agent_cli.record import otel_gate
from agent_cli.record.recorder import KeptLog
from agent_cli.runtime.conversation import LEASE_MARGIN_S, Turn, writes_made
from agent_cli.runtime.converse import (
    MAX_MESSAGE_ID_CHARS,
    Setup,
    answer_message,
    start_conversation,
)
from agent_cli.runtime.drive import kept_log
from agent_cli.runtime.model_pool import ModelPool, use_models
from agent_cli.runtime.stores import StorePool, opened_store, use_pool
from agent_cli.serve.channels import setup as channel_setup
from agent_cli.serve.errors import ApiError, bad_request, from_agent_error
from agent_cli.serve.events import EventHub
from agent_cli.serve.metrics import Metrics
from agent_cli.serve.outbox import Deliverer
from agent_cli.serve.rates import RateLimit
from agent_cli.serve.requests import allowed, bearer, json_body, text_field
from agent_cli.serve.staff import Staff
from agent_cli.serve.web import page as web_page
from agent_cli.store import conversations as stored
from agent_cli.store import outbox
from agent_cli.store.sqlite import OrderStore
from agent_cli.store.tokens import Scope, Token

T = TypeVar("T")
Handler = Callable[[Request], Awaitable[Response]]
_log = logging.getLogger("agent_cli.serve")
_BUSY_POLL_S = (0.05, 0.1, 0.2, 0.5, 1.0)  # waits between tries of a conversation held elsewhere


def make_app(setup: Setup, *, max_body: int | None = None) -> Starlette:
    """The API over `setup` (the options and settings every turn is answered with);
    `max_body`: the largest body in bytes (default: the setting `serve.max_body_bytes`)."""
    kept = kept_log(setup.settings) if not setup.run.dry_run else None
    setup = replace(setup, kept=kept)  # one run log open for every turn of this process
    api = _Api(setup, max_body or setup.settings.serve.max_body_bytes)
    serve = setup.settings.serve
    made_channels = channel_setup.channels(api, serve, os.environ)
    api.deliverer = Deliverer(
        api.with_store, made_channels, poll_s=serve.outbox_poll_s, attempts=serve.outbox_attempts
    )
    routes = [
        Route("/healthz", api.healthz, methods=["GET"]),
        Route("/metrics", _guarded(api.metrics_text, api.metrics), methods=["GET"]),
        Route("/readyz", _guarded(api.readyz, api.metrics), methods=["GET"]),
        Route("/v1/conversations", _guarded(api.create, api.metrics), methods=["POST"]),
        Route("/v1/conversations/{id}", _guarded(api.show, api.metrics), methods=["GET"]),
        Route(
            "/v1/conversations/{id}/messages", _guarded(api.message, api.metrics), methods=["POST"]
        ),
        Route("/v1/conversations/{id}/close", _guarded(api.close, api.metrics), methods=["POST"]),
        Route("/v1/conversations/{id}/events", _guarded(api.events, api.metrics), methods=["GET"]),
        *Staff(api, lambda handler: _guarded(handler, api.metrics)).routes,
        *channel_setup.routes(made_channels, lambda handler: _guarded(handler, api.metrics)),
        *web_page.routes(tuple(serve.web.allowed_origins)),
    ]
    made = Starlette(
        routes=routes,
        middleware=_cors(tuple(serve.web.allowed_origins)),
        exception_handlers={404: _not_found, 405: _not_allowed},
        lifespan=_closing(kept, api.deliverer, setup.settings.store.url),
    )
    made.state.hub = api.hub  # commands/serve.py ends the event streams when a stop is asked
    return made


def _cors(origins: tuple[str, ...]) -> list[Middleware]:
    """The shop's own pages may call the API from the browser (the token in the request, never a
    cookie): CORS for `[serve.web] allowed_origins` only."""
    if not origins:
        return []
    return [
        Middleware(
            CORSMiddleware,
            allow_origins=list(origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
            max_age=600,
        )
    ]


def _closing(
    kept: KeptLog | None, deliverer: Deliverer, url: str | None
) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    """The app's lifespan: the outbox delivered while it serves (and once more at the stop, for
    what the last turns said); the model's connections reused from message to message
    (ModelPool), and on a team's PostgreSQL the store's too (StorePool); the kept run log and
    the connections closed when the server stops."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        pool = StorePool(url) if url is not None else None
        if pool is not None:
            use_pool(pool)
        models = ModelPool()
        use_models(models)
        delivering = asyncio.create_task(deliverer.run())
        try:
            yield
        finally:
            deliverer.stop()
            await delivering
            if kept is not None:
                kept.close()
            use_models(None)
            models.close()
            if pool is not None:
                use_pool(None)
                pool.close()

    return lifespan


def _guarded(handler: Handler, metrics: Metrics) -> Handler:
    """The handler, every error it meets answered as JSON (never a traceback), every answer
    counted by route and status."""

    async def guarded(request: Request) -> Response:
        response = await _answered(handler, request)
        route = request.scope.get("route")
        metrics.answered(getattr(route, "path", request.url.path), response.status_code)
        return response

    return guarded


async def _answered(handler: Handler, request: Request) -> Response:
    try:
        return await handler(request)
    except ApiError as refused:
        return JSONResponse(refused.body(), refused.status, headers=refused.headers())
    except AgentError as error:
        failed = from_agent_error(error)
        return JSONResponse(failed.body(), status_code=failed.status)
    except Exception:  # the one place a request's surprise ends: logged, never shown
        _log.exception("%s %s failed", request.method, request.url.path)
        failed = ApiError(500, "internal", "the server failed; its log says why")
        return JSONResponse(failed.body(), status_code=500)


async def _not_found(request: Request, _: Exception) -> JSONResponse:
    return JSONResponse(ApiError(404, "not_found", "no such route").body(), status_code=404)


async def _not_allowed(request: Request, _: Exception) -> JSONResponse:
    refused = ApiError(405, "method_not_allowed", f"{request.method} is not allowed here")
    return JSONResponse(refused.body(), status_code=405)


class _Api:
    def __init__(self, setup: Setup, max_body: int) -> None:
        self.setup = setup
        self.max_body = max_body
        self.metrics = Metrics()
        self.hub = EventHub()
        self._per_token = RateLimit(setup.settings.serve.token_rate)
        self._per_conversation = RateLimit(setup.settings.serve.conversation_rate)
        self._locks: dict[str, asyncio.Lock] = {}
        self._waiting: dict[str, int] = {}
        self.deliverer: Deliverer | None = None

    async def metrics_text(self, request: Request) -> Response:
        await self.token(request, "staff")

        def read(store: OrderStore) -> tuple[int, dict[str, int], dict[str, int]]:
            depth = store.query("SELECT COUNT(*) FROM approvals WHERE status = 'pending'")
            rows = store.query("SELECT status, COUNT(*) FROM conversations GROUP BY status")
            return int(depth[0][0]), {str(s): int(n) for s, n in rows}, outbox.counts(store)

        depth, conversations, owed = await run_in_threadpool(self.with_store, read)
        return PlainTextResponse(
            self.metrics.text(depth, conversations, owed),
            media_type="text/plain; version=0.0.4; charset=utf-8",
        )

    async def healthz(self, request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    async def readyz(self, request: Request) -> JSONResponse:
        await run_in_threadpool(self.with_store, lambda store: store.query("SELECT 1"))
        return JSONResponse({"status": "ready"})

    async def create(self, request: Request) -> JSONResponse:
        token = await self.token(request, "customer")
        body = await json_body(request, self.max_body)
        channel = text_field(body, "channel", at_most=64, required=False) or "api"
        customer = _vouched(body, token)
        try:
            made = await run_in_threadpool(
                partial(start_conversation, opened_by=f"token:{token.name}"),
                self.setup,
                channel,
                customer,
                f"token:{token.name}",
            )
        except UsageError as bad:  # a customer the store does not hold, a bad channel
            raise bad_request(str(bad)) from None
        return JSONResponse({"id": made.id, "status": made.status}, status_code=201)

    async def message(self, request: Request) -> JSONResponse:
        token = await self.token(request, "customer")
        body = await json_body(request, self.max_body)
        key = text_field(body, "id", at_most=MAX_MESSAGE_ID_CHARS)
        limit = self.setup.settings.limits.max_question_chars
        text = text_field(body, "text", at_most=limit)
        conversation = await self._found(request.path_params["id"], token)
        _within(self._per_conversation, conversation, "messages to this conversation")
        otel_gate.PARENT.set(request.headers.get("traceparent"))  # the caller's trace, continued
        turn = await self.answer_in_order(conversation, text, key)
        self.delivered_soon()  # an API conversation owes nothing; a staff reply's may
        return JSONResponse(turn.body())

    async def answer_in_order(self, conversation: str, text: str, key: str) -> Turn:
        """One message's turn, after the ones this process received before it (counted)."""
        started = time.monotonic()
        async with self._turn_of(conversation):
            turn = await run_in_threadpool(self._answer, conversation, text, key)
        self.metrics.turned(_ended(turn), time.monotonic() - started, writes_made(turn.events))
        return turn

    def delivered_soon(self) -> None:
        """Rows were written to the outbox: the deliverer looks now."""
        if self.deliverer is not None:
            self.deliverer.wake()

    async def events(self, request: Request) -> Response:
        token = await self.token(request, "customer")
        conversation = await self._found(request.path_params["id"], token)

        async def since(after: int | None) -> tuple[list[stored.Message], str]:
            def read(store: OrderStore) -> tuple[list[stored.Message], str]:
                held = stored.get(store, conversation)
                return stored.messages_after(store, conversation, after), (
                    held.status if held else "closed"
                )

            return await run_in_threadpool(self.with_store, read)

        return StreamingResponse(
            self.hub.stream(conversation, since),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def show(self, request: Request) -> JSONResponse:
        token = await self.token(request, "customer")
        conversation_id = request.path_params["id"]

        def read(store: OrderStore) -> dict[str, Any]:
            held = _exact(store, conversation_id, token)
            return _shown(held, stored.messages(store, held.id))

        return JSONResponse(await run_in_threadpool(self.with_store, read))

    async def close(self, request: Request) -> JSONResponse:
        token = await self.token(request, "customer")
        conversation_id = request.path_params["id"]

        def close(store: OrderStore) -> stored.Conversation:
            held = _exact(store, conversation_id, token)
            closed, changed = stored.close(store, held.id, by=f"token:{token.name}")
            if not changed:
                raise ConversationClosed(f"conversation {held.id[:8]} was closed already")
            return closed

        closed = await run_in_threadpool(self.with_store, close)
        return JSONResponse({"id": closed.id, "status": closed.status})

    async def token(self, request: Request, scope: Scope) -> Token:
        given = bearer(request)
        token = await run_in_threadpool(self.with_store, lambda store: allowed(store, given, scope))
        _within(self._per_token, token.name, f"requests of token {token.name!r}")
        return token

    async def _found(self, given: str, token: Token) -> str:
        return await run_in_threadpool(
            self.with_store, lambda store: _exact(store, given, token).id
        )

    def with_store(self, work: Callable[[OrderStore], T]) -> T:
        with opened_store(self.setup.settings) as store:
            return work(store)

    def _turn_of(self, conversation: str) -> _Turn:
        return _Turn(self._locks, self._waiting, conversation)

    def _answer(self, conversation: str, text: str, key: str) -> Turn:
        """The turn, waiting (bounded) while another process holds the conversation."""
        patience = self.setup.settings.limits.timeout + LEASE_MARGIN_S
        deadline = time.monotonic() + patience
        attempt = 0
        while True:
            try:
                listen = (self.hub.sink(conversation),)
                return answer_message(self.setup, conversation, text, key, listen)
            except ConversationBusy:
                if time.monotonic() >= deadline:
                    raise
            time.sleep(_BUSY_POLL_S[min(attempt, len(_BUSY_POLL_S) - 1)])
            attempt += 1


class _Turn:
    """This process's lock on one conversation for one message: messages wait in the order they
    came; the lock is dropped when nobody waits for it."""

    def __init__(self, locks: dict[str, asyncio.Lock], waiting: dict[str, int], key: str) -> None:
        self._locks, self._waiting, self._key = locks, waiting, key

    async def __aenter__(self) -> None:
        self._waiting[self._key] = self._waiting.get(self._key, 0) + 1
        try:
            await self._locks.setdefault(self._key, asyncio.Lock()).acquire()
        except BaseException:  # the caller left while waiting (cancelled): not held, not waiting
            self._leave()
            raise

    async def __aexit__(self, *_: object) -> None:
        self._locks[self._key].release()
        self._leave()

    def _leave(self) -> None:
        self._waiting[self._key] -= 1
        if not self._waiting[self._key]:
            del self._waiting[self._key], self._locks[self._key]


def _within(limit: RateLimit, key: str, what: str) -> None:
    """429, with the seconds to wait, past `limit`'s rate for `key`."""
    wait = limit.wait_for(key)
    if wait:
        raise ApiError(
            429,
            "rate_limited",
            f"over {limit.per_minute} {what} a minute; try again in {wait} s",
            retry_after=wait,
        )


def _ended(turn: Turn) -> str:
    """How a turn ended, for the metrics: its run's status, or why none ran."""
    if turn.repeated:
        return "repeated"
    return turn.run_status or "kept_for_a_person"


def _exact(store: OrderStore, given: str, token: Token) -> stored.Conversation:
    """The conversation with exactly this id (the API takes no prefixes: ids are secrets), if
    `token` may reach it: a customer-scope token (the web chat's is public) only the ones it
    opened, or ones opened outside the API; 404 otherwise, as for no conversation at all."""
    found = stored.get(store, given) if given.isalnum() and len(given) <= 64 else None
    theirs = found is not None and found.opened_by not in (None, f"token:{token.name}")
    if found is None or (theirs and not token.may("identify")):
        raise ApiError(404, "not_found", "no such conversation")
    return found


def _vouched(body: dict[str, Any], token: Token) -> str | None:
    """The customer a trusted caller says this is (`{"customer": {"user_id"}}`): only for a
    token allowed to identify customers."""
    asserted = body.get("customer")
    if asserted is None:
        return None
    if not isinstance(asserted, dict) or not isinstance(asserted.get("user_id"), str):
        raise bad_request('"customer" must be {"user_id": "..."}')
    if not token.may("identify"):
        raise ApiError(403, "forbidden", f"token {token.name!r} may not say who the customer is")
    return str(asserted["user_id"])


def _shown(conversation: stored.Conversation, messages: list[stored.Message]) -> dict[str, Any]:
    return {
        "id": conversation.id,
        "channel": conversation.channel,
        "status": conversation.status,
        "customer": conversation.customer_id,
        "messages": [
            {"role": m.role, "kind": m.kind, "text": m.text, "at": m.at} for m in messages
        ],
        "proposal": conversation.proposal,
    }
