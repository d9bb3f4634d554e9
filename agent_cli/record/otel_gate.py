"""Whether runs are exported as OpenTelemetry traces (docs/observability.md), decided from the
standard environment without importing the SDK: with no OTLP endpoint set, nothing of it is
imported and start-up is unchanged. `sink` is the run's OTel sink, or None.

`PARENT` carries a W3C `traceparent` from an incoming request (`agent serve`) to the runs the
request starts, so they continue the caller's trace."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

from agent_cli.core.events import Event
from agent_cli.record.otel_env import ENDPOINTS, configured, endpoint, protocol, say_once

__all__ = ["INSTALL", "PARENT", "configured", "endpoint", "protocol", "sink"]

INSTALL = "pip install 'agent-cli[otel]'"
PARENT: ContextVar[str | None] = ContextVar("agent_cli_traceparent", default=None)


def sink(kind: str, session_id: str | None) -> Callable[[Event], None] | None:
    """The sink that turns one run's events into spans; None when export is not asked for, or
    the `otel` extra is missing (said once)."""
    if not configured():
        return None
    try:
        from agent_cli.record import otel  # noqa: PLC0415 (the SDK, only when asked for)
    except ImportError as missing:
        say_once(
            f"agent: {ENDPOINTS[1]} is set but OpenTelemetry is not installed ({missing.name}); "
            f"runs are not exported: {INSTALL}"
        )
        return None
    try:
        made = otel.run_sink(kind=kind, session_id=session_id, parent=PARENT.get())
    except Exception as error:  # export must never fail a run: said once, then left off
        say_once(
            f"agent: OpenTelemetry export is off for this run: {type(error).__name__}: {error}"
        )
        return None
    return _guarded(made)


def _guarded(sink: Callable[[Event], None]) -> Callable[[Event], None]:
    """The sink, its failures swallowed (said once): a span lost never costs the run."""
    broken = False

    def guarded(event: Event) -> None:
        nonlocal broken
        if broken:
            return
        try:
            sink(event)
        except Exception as error:
            broken = True
            say_once(f"agent: OpenTelemetry export stopped: {type(error).__name__}: {error}")

    return guarded
