"""`GET /chat` (the web chat page) and `GET /chat.js` (the script tag a shop embeds), served with
headers that keep them what they are: a Content-Security-Policy that lets the page run only its
own script and style (by their hashes), talk only to this server, and be framed only by this
server and the shop's origins (`[serve.web] allowed_origins`)."""

from __future__ import annotations

import base64
import hashlib
import re
from functools import cache
from importlib import resources

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@cache
def _asset(name: str) -> str:
    return resources.files("agent_cli.serve.web").joinpath(name).read_text(encoding="utf-8")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def policy(page: str, origins: tuple[str, ...]) -> str:
    """The page's Content-Security-Policy: its own inline script and style by hash, requests to
    this server only, framed by this server and `origins`."""
    script = re.search(r"<script>(.*?)</script>", page, re.S)
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    nothing = "'none'"
    parts = [
        "default-src 'none'",
        f"script-src {_hash(script[1]) if script else nothing}",
        f"style-src {_hash(style[1]) if style else nothing}",
        "connect-src 'self'",
        "img-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors " + " ".join(("'self'", *origins)),
    ]
    return "; ".join(parts)


def routes(origins: tuple[str, ...]) -> list[Route]:
    page = _asset("chat.html")
    shown = {**_HEADERS, "Content-Security-Policy": policy(page, origins)}

    async def chat(request: Request) -> Response:
        return Response(page, media_type="text/html; charset=utf-8", headers=shown)

    async def loader(request: Request) -> Response:
        return Response(
            _asset("chat.js"), media_type="text/javascript; charset=utf-8", headers=_HEADERS
        )

    return [
        Route("/chat", chat, methods=["GET"]),
        Route("/chat.js", loader, methods=["GET"]),
    ]
