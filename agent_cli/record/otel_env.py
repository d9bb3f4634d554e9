"""What the standard OpenTelemetry environment says (the OTLP exporter's variables), read by
the gate (record/otel_gate.py) and the exporter (record/otel.py) alike, importing nothing of the
SDK; and `say_once`, export trouble said once a process."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
_reported: set[str] = set()


def configured(environ: Mapping[str, str] = os.environ) -> bool:
    """An OTLP endpoint is set (traces' own, or the general one), and the SDK is not disabled."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(environ.get(name, "").strip() for name in ENDPOINTS)


def setting(name: str, environ: Mapping[str, str] = os.environ) -> str:
    """`OTEL_EXPORTER_OTLP_TRACES_{name}`, else `OTEL_EXPORTER_OTLP_{name}`, else ""."""
    return (
        environ.get(f"OTEL_EXPORTER_OTLP_TRACES_{name}")
        or environ.get(f"OTEL_EXPORTER_OTLP_{name}")
        or ""
    ).strip()


def endpoint(environ: Mapping[str, str] = os.environ) -> str:
    """Where spans go: the traces' own endpoint as given, else the general one + /v1/traces."""
    own = environ.get(ENDPOINTS[0], "").strip()
    return own or environ.get(ENDPOINTS[1], "").strip().rstrip("/") + "/v1/traces"


def protocol(environ: Mapping[str, str] = os.environ) -> str:
    return setting("PROTOCOL", environ) or "http/protobuf"


def say_once(line: str) -> None:
    """One line on stderr, once a process: export trouble never repeats itself per run."""
    if line not in _reported:
        _reported.add(line)
        print(line, file=sys.stderr, flush=True)
