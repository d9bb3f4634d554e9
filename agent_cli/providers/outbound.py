"""HTTP out to a customer's channel (Chatwoot's API, LINE's, a shop's webhook), for `agent serve`'s
channels (serve/channels/): one request, its answer or why none came. No retry here: a message
that did not go waits in the outbox and is tried again with backoff (store/outbox.py), so one
slow channel never holds a turn. httpx stays in providers/, the one package that speaks HTTP out."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import httpx

from agent_cli.providers.retries import retry_after_seconds

MAX_ANSWER_BYTES = 64 * 1024  # a channel's answer is read this far (an error's text, an id)


@dataclass(frozen=True, slots=True)
class Answer:
    """A channel's answer: its status and body, or (status None) why no answer came."""

    status: int | None
    body: str = ""
    retry_after: float | None = None  # what the channel asked us to wait, when it said
    failure: str | None = None
    headers: dict[str, str] | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    def why(self) -> str:
        """One line for the outbox's `last_error`."""
        if self.status is None:
            return self.failure or "no answer"
        return f"HTTP {self.status}: {self.body[:200]}"


class Outbound:
    """One connection pool for a serving process's deliveries."""

    def __init__(self, *, timeout_s: float = 10.0) -> None:
        self._client = httpx.Client(timeout=httpx.Timeout(timeout_s), follow_redirects=False)

    def post(self, url: str, body: dict[str, Any] | bytes, headers: dict[str, str]) -> Answer:
        """POST `body` (JSON, or bytes already encoded: what a signature was made of)."""
        content = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
        sent = {"Content-Type": "application/json", **headers}
        try:
            with self._client.stream("POST", url, content=content, headers=sent) as response:
                read = b""
                for chunk in response.iter_bytes():
                    read += chunk
                    if len(read) >= MAX_ANSWER_BYTES:
                        break
        except httpx.HTTPError as error:
            return Answer(None, failure=f"{type(error).__name__}: {error}"[:300])
        return Answer(
            response.status_code,
            read.decode("utf-8", "replace"),
            retry_after_seconds(response.headers, time.time()),
            headers={k.lower(): v for k, v in response.headers.items()},
        )

    def close(self) -> None:
        self._client.close()
