"""A streamable HTTP MCP server's replies, held to the same limits as a stdio server's lines.

The SDK reads a JSON reply whole (`response.aread()`, no limit) and an event stream with its
own 1 MB limit per event, which fails the request with no word of what it was. So a response
hook gives every reply a body read through `mcp_limits.LineCap`: a JSON body is one message, an
event stream's `data:` lines are one message each. Past the cap, the error reply that stands in
is given at once and the connection closed: the rest of a 50 MB body is never downloaded.

This wraps the SDK's HTTP client library (httpx2, its dependency) and not ours: `providers/`
alone speaks httpx to models; this module only filters what the SDK reads.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2

from agent_cli.tools.mcp_limits import MAX_LINE_BYTES, LineCap

# The SDK's own per-event limit, above ours so that ours (which says what the reply was) acts.
SSE_EVENT_LIMIT = MAX_LINE_BYTES + 64 * 1024


async def cap_reply(response: Any) -> None:
    """An event hook: read a JSON or event-stream reply through a `LineCap` (a compressed
    body is left to the SDK: its bytes are not the message's)."""
    kind = str(response.headers.get("content-type", "")).split(";")[0].strip().lower()
    coded = str(response.headers.get("content-encoding", "identity")).lower() != "identity"
    if coded or kind not in ("application/json", "text/event-stream"):
        return
    lines = LineCap(whole=True) if kind == "application/json" else LineCap(prefix=b"data:")
    response.stream = CappedBody(response.stream, lines)


class CappedBody(httpx2.AsyncByteStream):
    """A response body passed through `lines`; it ends early once a message is cut short."""

    def __init__(self, inner: httpx2.AsyncByteStream, lines: LineCap) -> None:
        self._inner = inner
        self._lines = lines

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = self._inner.__aiter__()
        try:
            async for chunk in chunks:
                if ready := self._lines.take(chunk):
                    yield ready
                if (short := self._lines.cut_short()) is not None:
                    yield short + b"\n"  # for an event stream, the blank line ending the event
                    return
            if last := self._lines.rest():
                yield last
        finally:
            if isinstance(chunks, AsyncIterator) and hasattr(chunks, "aclose"):
                await chunks.aclose()

    async def aclose(self) -> None:
        await self._inner.aclose()
