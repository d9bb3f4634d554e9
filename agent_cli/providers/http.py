"""HTTP for the LLM adapters: one httpx.Client per run, retries like the official SDKs, and a
deadline that bounds the whole request, not just each read.

Retried: 408, 409, 429 and 5xx (529 included), connection errors and timeouts; at most
`max_retries` times, waiting `retry-after-ms` / `retry-after` when the server says (up to
`max_retry_after`; longer is an error that says when to come back), else `min(0.5 * 2**n, 8)`
seconds times a jitter in 0.75..1. `x-should-retry: true|false` overrides the decision. Quota and
billing errors are never retried. A Ctrl-C during a wait ends it at once (time.sleep raises).
"""

from __future__ import annotations

import contextlib
import functools
import random
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from agent_cli.core.decisions import Usage
from agent_cli.core.seams import DeadlineExceeded, ModelCall
from agent_cli.errors import (
    InvalidProviderResponse,
    ProviderBillingError,
    ProviderError,
    ProviderRateLimited,
    ProviderRequestError,
    ProviderUnavailable,
)
from agent_cli.providers.api_errors import (
    CONTEXT_CODES,
    STATUS_ERRORS,
    ApiError,
    check_features,
    clean_message,
)
from agent_cli.providers.retries import RetryPolicy, retry_after_seconds, retryable
from agent_cli.providers.streaming import SseParser, StreamFailed, StreamReader
from agent_cli.providers.watchdog import Watchdog
from agent_cli.text import JsonTextError, read_json

MAX_RESPONSE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class _Attempt:
    status: int | None
    headers: httpx.Headers
    body: bytes
    latency_ms: float
    failure: str | None = None  # a connection error or timeout, when no response came
    payload: dict[str, Any] | None = None  # a streamed reply, assembled
    cut: bool = False  # a stream began but did not end as it should


_MAX_WATCH_S = 7 * 86_400.0  # beyond any --timeout (86,400 s at most)


@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    """Where a channel connects and how: the provider's URL, the headers every request sends,
    the API key (so no error message ever shows it) and the variable it came from (so an error
    can name it), the timeouts and the retry policy."""

    base_url: str
    headers: Mapping[str, str]
    secret: str | None
    key_env: str | None
    connect_timeout: float
    read_timeout: float
    retry: RetryPolicy


def _no_usage(payload: dict[str, Any]) -> Usage:
    return Usage()


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyReading:
    """How a reply is read: `usage_of` counts its tokens; `features` names the optional parts
    of the body, each with the pattern of an error message that refuses it; `stream` makes a
    new reader of an event-stream response for each attempt."""

    usage_of: Callable[[dict[str, Any]], Usage] = _no_usage
    features: Mapping[str, re.Pattern[str]] = field(default_factory=dict)
    stream: Callable[[], StreamReader] | None = None


class Channel:
    """A connection to one provider endpoint, reused for every request of a run."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[], float] = lambda: random.uniform(0.75, 1.0),
    ) -> None:
        """`transport`, `clock`, `sleep` and `jitter`: a test's stand-ins for the network, the
        time and the chance in a retry's wait."""
        self.base_url = endpoint.base_url.rstrip("/")
        self._secret = endpoint.secret
        self._key_env = endpoint.key_env
        self._connect = endpoint.connect_timeout
        self._read = endpoint.read_timeout
        self._retry = endpoint.retry
        self._clock = clock
        self._sleep = sleep
        self._jitter = jitter
        verify: ssl.SSLContext | bool = (
            _tls_context() if self.base_url.startswith("https") else False
        )
        headers = dict(endpoint.headers)
        self._client = httpx.Client(headers=headers, transport=transport, verify=verify)
        self._sockets: list[socket.socket] = []  # every socket this client opened, for cut_off
        self._streamed: int | None = None  # events read in this attempt, once a stream began
        self._watchdog = Watchdog()  # one thread for all this channel's attempts

    def close(self) -> None:
        self._watchdog.close()
        self._client.close()

    def request_json(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None = None,
        *,
        deadline: float,
        on_call: Callable[[ModelCall], None],
        reading: ReplyReading = ReplyReading(),
    ) -> dict[str, Any]:
        """Send with retries; return the JSON object of a 2xx response or raise ProviderError.
        `reading` says how the reply is read (see ReplyReading): a refusal of one of its `features`
        raises FeatureRejected at once; with a `stream`, the reply a stream assembled is
        returned, and a stream cut part-way is retried as a dropped connection is."""
        url = self.base_url + path
        for attempt in range(1, self._retry.max_retries + 2):
            result = self._attempt(method, url, body, deadline, reading.stream)
            if result.status is not None and 200 <= result.status < 300:
                payload = result.payload if result.payload is not None else self._json(result, url)
                usage = reading.usage_of(payload)
                on_call(ModelCall(attempt, result.status, result.latency_ms, usage))
                return payload
            error = ApiError.parse(result.body, self._secret) if result.status else None
            if result.status is not None and error is not None:
                check_features(
                    reading.features,
                    error,
                    status=result.status,
                    latency_ms=result.latency_ms,
                    attempt=attempt,
                    url=url,
                )
            try:
                wait = self._retry_wait(result, error, attempt, url)
            except ProviderError:  # not to be retried: the attempt is still on the record
                on_call(ModelCall(attempt, result.status, result.latency_ms, error=_what(result)))
                raise
            if self._clock() + wait > deadline:
                on_call(ModelCall(attempt, result.status, result.latency_ms, error=_what(result)))
                raise DeadlineExceeded
            on_call(
                ModelCall(
                    attempt, result.status, result.latency_ms, retry_in_s=wait, error=_what(result)
                )
            )
            self._sleep(wait)
        raise AssertionError("unreachable: the last attempt either returns or raises")

    def _attempt(
        self,
        method: str,
        url: str,
        body: Mapping[str, Any] | None,
        deadline: float,
        stream: Callable[[], StreamReader] | None = None,
    ) -> _Attempt:
        started = self._clock()
        remaining = deadline - started
        if remaining <= 0:
            raise DeadlineExceeded
        # httpx's timeouts apply per read, so a server trickling its status line, headers or
        # body one byte at a time never trips them: the watchdog shuts the sockets at the deadline.
        read = min(self._read, remaining)
        timeout = httpx.Timeout(read, connect=min(self._connect, remaining), pool=read)
        cut = threading.Event()
        if remaining < _MAX_WATCH_S:  # no deadline (a test's infinity): nothing to watch for
            self._watchdog.arm(remaining, lambda: self._cut_off(cut))
        self._streamed = None
        broken_stream = False
        try:
            return self._exchange(
                method,
                url,
                body=body,
                timeout=timeout,
                deadline=deadline,
                started=started,
                stream=stream,
            )
        except StreamFailed as exc:
            if not exc.retryable:
                raise InvalidProviderResponse(
                    f"Invalid provider response from {url}: {exc}; check --base-url"
                ) from None
            failure = f"the reply stream failed: {clean_message(str(exc), self._secret)}"
            broken_stream = True
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            if cut.is_set() or self._clock() >= deadline:
                raise DeadlineExceeded from None
            failure = (
                f"{type(exc).__name__}: no answer within the timeout"
                if isinstance(exc, httpx.TimeoutException)
                else f"{type(exc).__name__}: "
                f"{clean_message(str(exc), self._secret) or 'no details'}"
            )
            if self._streamed is not None:
                failure = f"the reply stream was cut off after {self._streamed} events ({failure})"
                broken_stream = True
        finally:
            self._watchdog.disarm()
        latency = (self._clock() - started) * 1000
        return _Attempt(None, httpx.Headers(), b"", latency, failure, cut=broken_stream)

    def _exchange(
        self,
        method: str,
        url: str,
        *,
        body: Mapping[str, Any] | None,
        timeout: httpx.Timeout,
        deadline: float,
        started: float,
        stream: Callable[[], StreamReader] | None = None,
    ) -> _Attempt:
        extensions = {"trace": self._on_trace}
        with self._client.stream(
            method, url, json=body, timeout=timeout, extensions=extensions
        ) as response:
            kind = response.headers.get("content-type", "")
            if stream is not None and response.is_success and kind.startswith("text/event-stream"):
                return self._read_stream(response, stream(), deadline=deadline, started=started)
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if self._clock() > deadline:
                    raise DeadlineExceeded
                if size > MAX_RESPONSE_BYTES:
                    raise InvalidProviderResponse(
                        f"Invalid provider response from {url}: larger than "
                        f"{MAX_RESPONSE_BYTES // 2**20} MiB"
                    )
            latency = (self._clock() - started) * 1000
            return _Attempt(response.status_code, response.headers, b"".join(chunks), latency)

    def _read_stream(
        self, response: httpx.Response, reader: StreamReader, *, deadline: float, started: float
    ) -> _Attempt:
        """Events handed to `reader` as they arrive, within the deadline and the size limit."""
        parser, size = SseParser(), 0
        self._streamed = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if self._clock() > deadline:
                raise DeadlineExceeded
            if size > MAX_RESPONSE_BYTES:
                raise StreamFailed(
                    f"a reply larger than {MAX_RESPONSE_BYTES // 2**20} MiB", retryable=False
                )
            for event in parser.feed(chunk):
                reader.feed(event.event, event.data)
            self._streamed = reader.events
        latency = (self._clock() - started) * 1000
        if not reader.complete:
            failure = f"the reply stream ended after {reader.events} events, before the reply"
            return _Attempt(None, response.headers, b"", latency, failure, cut=True)
        return _Attempt(
            response.status_code, response.headers, b"", latency, payload=reader.payload()
        )

    def _on_trace(self, event: str, info: Mapping[str, Any]) -> None:
        """httpcore reports each new connection: keep its socket, so the watchdog can shut it."""
        if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if isinstance(sock, socket.socket):
                self._sockets = [s for s in self._sockets if s.fileno() != -1] + [sock]

    def _cut_off(self, cut: threading.Event) -> None:
        """The run's deadline passed mid-request: end every read by shutting the sockets."""
        cut.set()
        for sock in list(self._sockets):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def _json(self, result: _Attempt, url: str) -> dict[str, Any]:
        try:
            payload = read_json(result.body)
        except JsonTextError:
            payload = None
        if not isinstance(payload, dict):
            kind = result.headers.get("content-type", "no content type").split(";")[0]
            raise InvalidProviderResponse(
                f"Invalid provider response from {url}: HTTP {result.status} with a {kind} body "
                "that is not a JSON object; check --base-url"
            )
        return payload

    def _retry_wait(
        self, result: _Attempt, error: ApiError | None, attempt: int, url: str
    ) -> float:
        """Seconds to wait before the next attempt, or raise the error that ends the request."""
        should = result.headers.get("x-should-retry", "").lower()
        again = should == "true" if should in ("true", "false") else retryable(result.status)
        if error is not None and error.is_billing:
            again = False
        if not again:
            raise self._final_error(result, error, url, attempts=attempt)
        if attempt > self._retry.max_retries:
            raise self._exhausted(result, error, url, attempt)
        asked = retry_after_seconds(result.headers, time.time())
        if asked is not None and asked > self._retry.max_retry_after:
            when = datetime.fromtimestamp(time.time() + asked, UTC).strftime("%H:%M:%S UTC")
            raise ProviderRateLimited(
                f"Rate limited ({result.status}): the provider asks to wait {asked:.0f} s, longer "
                f"than the {self._retry.max_retry_after:.0f} s we wait; try again after {when}"
            )
        return asked if asked is not None else self._retry.backoff(attempt - 1, self._jitter())

    def _final_error(
        self, result: _Attempt, error: ApiError | None, url: str, *, attempts: int
    ) -> ProviderError:
        if result.status is None or error is None:
            return self._exhausted(result, error, url, attempts)
        status, message = result.status, error.message
        if error.is_billing or status == 402:
            return ProviderBillingError(
                f"Billing or quota problem ({status}): {message}; "
                "check your plan and billing with the provider"
            )
        kind, template = STATUS_ERRORS.get(
            status, (ProviderRequestError, "The provider refused the request ({status}): {message}")
        )
        key = f"the key in {self._key_env}" if self._key_env else "the request"
        text = template.format(status=status, message=message, url=url, key=key)
        if error.codes & CONTEXT_CODES or "context length" in message.lower():
            text += "; the conversation is too long for this model: lower limits.history_tokens"
        return kind(text)

    def _exhausted(
        self, result: _Attempt, error: ApiError | None, url: str, attempts: int
    ) -> ProviderError:
        tries = f"after {attempts} attempt{'s' if attempts > 1 else ''}"
        if result.cut:
            return ProviderUnavailable(
                f"No complete reply from {url} {tries}: {result.failure}; try again later"
            )
        if result.status is None:
            return ProviderUnavailable(
                f"Cannot reach {url} {tries}: {result.failure}; "
                "check --base-url and that the server is running"
            )
        message = error.message if error else ""
        if result.status == 429:
            return ProviderRateLimited(f"Rate limited (429) {tries}: {message}; try again later")
        return ProviderUnavailable(
            f"Provider overloaded or unavailable ({result.status}) {tries}: {message}; "
            "try again later"
        )


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process: loading the CA bundle costs ~30 ms each time.
    Plain-HTTP endpoints (a local Ollama) get none: there is nothing to verify."""
    return httpx.create_ssl_context()


def _what(result: _Attempt) -> str:
    return result.failure or f"HTTP {result.status}"
