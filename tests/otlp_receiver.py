"""A loopback OTLP/HTTP trace receiver for the tests: `POST /v1/traces` with a protobuf
(`application/x-protobuf`) or a JSON (`application/json`) body, each decoded as a collector
would, checking what a collector checks (the content type, ids of the right length in hex for
JSON); the spans kept as plain dicts: name, ids in hex, kind, attributes, status, events, the
resource's attributes, and which encoding brought them."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


@dataclass
class Received:
    spans: list[dict[str, Any]] = field(default_factory=list)
    encodings: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class OtlpReceiver:
    def __init__(self) -> None:
        self.got = Received()
        got = self.got

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                kind = self.headers.get("content-type", "")
                try:
                    if self.path != "/v1/traces":
                        raise ValueError(f"wrong path {self.path}")
                    spans, encoding = _decoded(raw, kind)
                except ValueError as bad:
                    with got.lock:
                        got.refused.append(str(bad))
                    self.send_response(400)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                with got.lock:
                    got.spans.extend(spans)
                    got.encodings.append(encoding)
                    got.headers.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def spans(self) -> list[dict[str, Any]]:
        with self.got.lock:
            return list(self.got.spans)

    def wait_for(self, count: int, seconds: float = 60) -> list[dict[str, Any]]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if len(found := self.spans()) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"{count} spans never came: {self.spans()} {self.got.refused}")


def _decoded(raw: bytes, kind: str) -> tuple[list[dict[str, Any]], str]:
    if kind.startswith("application/x-protobuf"):
        request = MessageToDict(ExportTraceServiceRequest.FromString(raw))
        return _spans(request, hex_ids=False), "protobuf"
    if kind.startswith("application/json"):
        return _spans(json.loads(raw), hex_ids=True), "json"
    raise ValueError(f"unknown content type {kind!r}")


def _spans(request: dict[str, Any], *, hex_ids: bool) -> list[dict[str, Any]]:
    found = []
    for resource_spans in request.get("resourceSpans", []):
        resource = _attributes(resource_spans.get("resource", {}).get("attributes", []))
        for scope in resource_spans.get("scopeSpans", []):
            for span in scope.get("spans", []):
                found.append(
                    {
                        "name": span["name"],
                        "trace": _id(span["traceId"], 32, hex_ids),
                        "span": _id(span["spanId"], 16, hex_ids),
                        "parent": _id(span["parentSpanId"], 16, hex_ids)
                        if span.get("parentSpanId")
                        else None,
                        "kind": span.get("kind"),
                        "attributes": _attributes(span.get("attributes", [])),
                        "status": span.get("status", {}),
                        "events": [e["name"] for e in span.get("events", [])],
                        "event_attributes": [
                            _attributes(e.get("attributes", [])) for e in span.get("events", [])
                        ],
                        "resource": resource,
                        "schema": scope.get("schemaUrl", ""),
                    }
                )
    return found


def _id(value: str, length: int, hex_ids: bool) -> str:
    if hex_ids:  # OTLP/JSON: lowercase hex, as the spec says (protobuf's JSON would be base64)
        if len(value) != length or any(c not in "0123456789abcdef" for c in value):
            raise ValueError(f"id {value!r} is not {length} hex digits")
        return value
    import base64

    return base64.b64decode(value).hex()


def _attributes(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for pair in pairs:
        value = pair.get("value", {})
        if "stringValue" in value:
            found[pair["key"]] = value["stringValue"]
        elif "intValue" in value:
            found[pair["key"]] = int(value["intValue"])
        elif "boolValue" in value:
            found[pair["key"]] = value["boolValue"]
        elif "doubleValue" in value:
            found[pair["key"]] = value["doubleValue"]
        elif "arrayValue" in value:
            found[pair["key"]] = [
                next(iter(v.values())) for v in value["arrayValue"].get("values", [])
            ]
    return found
