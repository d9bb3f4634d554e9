"""Sending spans out (record/otel.py makes them): the process's tracer provider, a bounded queue
a background thread sends from, and OTLP over HTTP, protobuf or JSON, without retries; spans
lost are counted and said once at exit, and the exit waits at most `EXIT_WAIT_S`."""

from __future__ import annotations

import atexit
import base64
import json
import threading
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from agent_cli._version import __version__
from agent_cli.record.otel_env import endpoint, protocol, say_once, setting

# The GenAI semantic conventions followed (still "Development" upstream): the span and
# attribute names of record/otel.py are those of this release; the schema URL says so.
SEMCONV_VERSION = "1.37.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
QUEUE_SIZE = 2_048  # spans waiting to be sent; past it, new spans are dropped (and counted)
BATCH = 512
EVERY_S = 1.0  # how often the queue is sent
EXIT_WAIT_S = 1.0  # the longest a process waits at its end for the last spans to go


def tracer() -> trace.Tracer:
    """The process's tracer (its provider and exporter made on first use)."""
    return _export().tracer


class _Export:
    def __init__(self) -> None:
        wire = protocol()
        self.where = endpoint()
        exporter: SpanExporter | None
        if wire in ("http/json", "http/protobuf"):
            exporter = OtlpHttpExporter(
                self.where, _headers(), _timeout_s(), json_body=wire == "http/json"
            )
        else:
            say_once(
                f"agent: OTEL_EXPORTER_OTLP_PROTOCOL={wire} is not supported; use "
                "http/protobuf or http/json (runs are not exported)"
            )
            exporter = None
        resource = Resource.create({"service.version": __version__})  # and OTEL_SERVICE_NAME...
        if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
            resource = resource.merge(Resource({SERVICE_NAME: "agent-cli"}))
        # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES honoured; its end is ours (`close`).
        self.provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        self.queue = _Queue(exporter) if exporter is not None else None
        if self.queue is not None:
            self.provider.add_span_processor(self.queue)
        self.tracer = self.provider.get_tracer("agent_cli", __version__, schema_url=SCHEMA_URL)
        atexit.register(self.close)

    def close(self) -> None:
        if self.queue is None:
            return
        self.queue.shutdown()
        lost = self.queue.dropped + self.queue.failed
        if lost:
            why = f": {self.queue.error}" if self.queue.error else ""
            say_once(
                f"agent: {lost} span(s) could not be exported to {self.where}{why}; the runs "
                "were not affected"
            )


_made: _Export | None = None
_making = threading.Lock()


def _export() -> _Export:
    global _made  # noqa: PLW0603 (one exporter a process)
    with _making:
        if _made is None:
            _made = _Export()
        return _made


def _headers() -> dict[str, str]:
    """`key=value,key2=value2`, values URL-encoded (the spec's format)."""
    found: dict[str, str] = {}
    for part in setting("HEADERS").split(","):
        key, _, value = part.partition("=")
        if key.strip() and value:
            found[key.strip()] = urllib.parse.unquote(value.strip())
    return found


def _timeout_s() -> float:
    try:
        return max(0.1, float(setting("TIMEOUT") or 10_000) / 1000)  # milliseconds
    except ValueError:
        return 10.0


class _Queue(SpanProcessor):
    """Spans wait here for a background thread that sends them; never blocks a run."""

    def __init__(self, exporter: SpanExporter) -> None:
        self._exporter = exporter
        self._spans: deque[ReadableSpan] = deque()
        self._wake = threading.Condition()
        self._stopping = False
        self.dropped = 0  # the queue was full
        self.failed = 0  # the endpoint did not take them
        self.error = ""
        self._sending = 0  # spans of the batch on its way
        self._thread = threading.Thread(target=self._send, name="otel-export", daemon=True)
        self._thread.start()

    def on_start(self, span: Any, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        with self._wake:
            if len(self._spans) >= QUEUE_SIZE:
                self.dropped += 1
                return
            self._spans.append(span)
            if len(self._spans) >= BATCH:
                self._wake.notify()

    def _send(self) -> None:
        while True:
            with self._wake:
                if not self._stopping:
                    self._wake.wait(EVERY_S)
                batch = [self._spans.popleft() for _ in range(min(BATCH, len(self._spans)))]
                stopping = self._stopping
            if batch:
                self._sending = len(batch)
                self._export(batch)
                self._sending = 0
            if stopping and not self._spans:
                return

    def _export(self, batch: Sequence[ReadableSpan]) -> None:
        try:
            result = self._exporter.export(batch)
        except Exception as error:  # an exporter's surprise is lost spans, never a crash
            result, self.error = SpanExportResult.FAILURE, f"{type(error).__name__}: {error}"
        if result is not SpanExportResult.SUCCESS:
            self.failed += len(batch)
            reported = getattr(self._exporter, "error", "")
            self.error = self.error or reported or "the endpoint did not take them"

    def shutdown(self) -> None:
        with self._wake:
            if self._stopping:
                return
            self._stopping = True
            self._wake.notify()
        # An endpoint seen down gets no more of the process's time; a live one up to EXIT_WAIT_S.
        self._thread.join(0.05 if self.failed else EXIT_WAIT_S)
        if self._thread.is_alive():  # a slow or silent endpoint: what has not gone is lost
            with self._wake:
                self.dropped += len(self._spans) + self._sending
                self._spans.clear()
            self.error = self.error or f"no answer within {EXIT_WAIT_S:g} s"
        self._exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        with self._wake:
            self._wake.notify()
        return True


class OtlpHttpExporter(SpanExporter):
    """OTLP over HTTP, one POST a batch: a protobuf body (`http/protobuf`) or the OTLP JSON
    encoding (`http/json`: ids in hex, enums as numbers). No retry of its own: a batch the
    endpoint did not take is counted lost (the queue says so once), so an endpoint that is down
    costs a run nothing."""

    def __init__(
        self, endpoint: str, headers: Mapping[str, str], timeout_s: float, *, json_body: bool
    ) -> None:
        self._endpoint, self._headers, self._timeout = endpoint, dict(headers), timeout_s
        self._json = json_body
        self.error = ""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._json:
            body, kind = json.dumps(otlp_json(spans)).encode(), "application/json"
        else:
            body, kind = encode_spans(spans).SerializeToString(), "application/x-protobuf"
        request = urllib.request.Request(
            self._endpoint,
            data=body,
            method="POST",
            headers={**self._headers, "Content-Type": kind},
        )
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as answer:
                ok = 200 <= answer.status < 300
        except OSError as error:  # refused, timed out, or an HTTP error status
            self.error = str(getattr(error, "reason", None) or error)[:200]
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        pass


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """The OTLP JSON encoding of `spans`: the protobuf message in JSON, its trace and span ids
    turned from base64 (protobuf's JSON for bytes) into the hex OTLP asks for."""
    found: dict[str, Any] = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    return dict(_hex_ids(found))


def _hex_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: base64.b64decode(item).hex()
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(item, str)
            else _hex_ids(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(item) for item in value]
    return value
