"""What a request carries, read and checked before anything runs: the bearer token (and what it
may do), a JSON body under the size limit, and the fields each route takes."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from agent_cli.serve.errors import ApiError, bad_request
from agent_cli.store import tokens
from agent_cli.store.sqlite import OrderStore
from agent_cli.store.tokens import Scope, Token


def bearer(request: Request) -> str:
    """The request's bearer token; 401 when there is none."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(
            401, "unauthorized", "send Authorization: Bearer TOKEN (agent tokens create)"
        )
    return token.strip()


def allowed(store: OrderStore, token: str, scope: Scope) -> Token:
    """The live token, allowed `scope`: 401 when it is no live token, 403 when it may not."""
    found = tokens.verified(store, token)
    if found is None:
        raise ApiError(401, "unauthorized", "the token is unknown or revoked")
    if not found.may(scope):
        raise ApiError(403, "forbidden", f"token {found.name!r} ({found.scope}) may not do this")
    return found


async def raw_body(request: Request, limit: int) -> bytes:
    """The body's bytes (what a webhook's signature signs); 413 past `limit`, counted as it
    streams."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise _too_large(limit)
    return bytes(body)


async def json_body(request: Request, limit: int) -> dict[str, Any]:
    """The body as a JSON object ({} when empty); 413 past `limit` bytes, 400 when not JSON."""
    return json_object(await raw_body(request, limit))


def json_object(body: bytes) -> dict[str, Any]:
    """`body` as a JSON object ({} when empty); 400 when it is not one."""
    if not body.strip():
        return {}
    try:
        value = json.loads(body)
    except ValueError:
        raise bad_request("the body is not JSON") from None
    if not isinstance(value, dict):
        raise bad_request("the body is not a JSON object")
    return value


def _too_large(limit: int) -> ApiError:
    return ApiError(413, "too_large", f"the body is over {limit:,} bytes")


def text_field(body: dict[str, Any], name: str, *, at_most: int, required: bool = True) -> str:
    """A string field of the body, 1 to `at_most` characters; 400 otherwise."""
    value = body.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise bad_request(f'"{name}" must be a non-empty string')
    if len(value) > at_most:
        raise bad_request(f'"{name}" is over {at_most:,} characters')
    return value
