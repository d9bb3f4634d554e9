"""Runs as OpenTelemetry traces, in the GenAI semantic conventions (docs/observability.md); the
`otel` extra, imported only when an OTLP endpoint is set (record/otel_gate.py).

One `invoke_agent` span per run, a `chat {model}` span per model request and an `execute_tool
{tool}` span per tool call under it, built from the run's events (each carries its time), with
the desk's own facts under `agent_cli.`. Message and argument content (names, addresses, orders)
only with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.

Export never slows or fails a run: record/otel_export.py sends the spans from a bounded queue in
a background thread, and says once what was lost."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from agent_cli.core.decisions import AskUser, CallTool, FinalAnswer
from agent_cli.core.events import (
    ApprovalDecided,
    Event,
    ModelCalled,
    ModelDecided,
    RunFinished,
    RunStarted,
    ToolObserved,
)
from agent_cli.domain.write_tools import WRITES
from agent_cli.record.desk_facts import RunFacts
from agent_cli.record.otel_export import tracer

CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def run_sink(*, kind: str, session_id: str | None, parent: str | None) -> Callable[[Event], None]:
    """A sink for one run's events (`kind`: ask, chat, conversation...; `session_id`: the chat
    session or the stored conversation), under the trace `parent` names (a `traceparent`)."""
    return _RunSpans(tracer(), kind, session_id, _context(parent), _capturing())


def _capturing() -> bool:
    return os.environ.get(CAPTURE, "").strip().lower() == "true"


def _context(traceparent: str | None) -> Context | None:
    if not traceparent:
        return None
    return TraceContextTextMapPropagator().extract({"traceparent": traceparent})


class _RunSpans:
    """One run's spans, made as its events arrive (each event says when it happened)."""

    def __init__(
        self,
        tracer: trace.Tracer,
        kind: str,
        session_id: str | None,
        parent: Context | None,
        capture: bool,
    ) -> None:
        self._tracer, self._kind, self._session = tracer, kind, session_id
        self._parent, self._capture = parent, capture
        self._run: Span | None = None
        self._model: tuple[str, str] = ("", "")  # the provider and the model asked
        self._calls: dict[int, list[tuple[str, str]]] = {}  # a step's calls: (tool, call id)
        self._failed_attempt: ModelCalled | None = None
        self._facts = RunFacts()  # the desk's figures, as the run log keeps them
        self._identified = False
        self._consent = ""  # a write put to the customer (asked), or made on their yes (given)

    def __call__(self, event: Event) -> None:
        self._facts.add(event)
        match event:
            case RunStarted():
                self._started(event)
            case ModelCalled():
                self._attempted(event)
            case ModelDecided():
                self._decided(event)
            case ToolObserved():
                self._tool(event)
            case ApprovalDecided():
                self._approval(event)
            case RunFinished():
                self._finished(event)
            case _:
                pass

    def _started(self, event: RunStarted) -> None:
        self._model = (event.provider, event.model)
        self._identified = event.customer_identified
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "agent-cli",
            "gen_ai.provider.name": event.provider,
            "gen_ai.request.model": event.model,
            "agent_cli.run.id": event.run_id,
            "agent_cli.run.kind": self._kind,
        }
        if self._session:
            attributes["gen_ai.conversation.id"] = self._session
        if self._capture:
            attributes["gen_ai.input.messages"] = _messages("user", event.goal)
        self._run = self._tracer.start_span(
            "invoke_agent agent-cli",
            context=self._parent,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=_ns(event.ts),
        )

    def _child(self) -> Context | None:
        return trace.set_span_in_context(self._run) if self._run is not None else None

    def _attempted(self, event: ModelCalled) -> None:
        """An HTTP attempt: one that failed is kept until it is known whether a retry saved it."""
        self._failed_attempt = event if event.error or (event.status or 200) >= 400 else None

    def _decided(self, event: ModelDecided) -> None:
        provider, model = self._model
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": model,
            "gen_ai.response.model": model,
            "gen_ai.usage.input_tokens": event.usage.input_tokens,
            "gen_ai.usage.output_tokens": event.usage.output_tokens,
            "gen_ai.response.finish_reasons": (_finish_reason(event),),
            "agent_cli.step": event.step,
        }
        decision = event.decision
        if isinstance(decision, CallTool):
            self._calls.setdefault(event.step, []).append((decision.tool, decision.call_id or ""))
        if self._capture and isinstance(decision, FinalAnswer):
            attributes["gen_ai.output.messages"] = _messages("assistant", decision.answer)
        self._failed_attempt = None
        start = event.ts - event.latency_ms / 1000
        span = self._tracer.start_span(
            f"chat {model}",
            context=self._child(),
            kind=SpanKind.CLIENT,
            attributes=attributes,
            start_time=_ns(start),
        )
        span.end(end_time=_ns(event.ts))

    def _tool(self, event: ToolObserved) -> None:
        if event.tool in _IDENTIFYING and event.outcome.kind == "read":
            self._identified = True
        if event.tool in WRITES and event.outcome.kind in ("proposed", "changed", "queued"):
            self._consent = "asked" if event.outcome.kind == "proposed" else "given"
        calls = self._calls.get(event.step, [])
        found = next((i for i, (tool, _) in enumerate(calls) if tool == event.tool), None)
        call_id = calls.pop(found)[1] if found is not None else ""
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.tool,
            "agent_cli.outcome.kind": event.outcome.kind,
        }
        if call_id:  # the model's own id (the offline playbook gives none)
            attributes["gen_ai.tool.call.id"] = call_id
        if event.ticket is not None:
            attributes["agent_cli.ticket"] = event.ticket
        if self._capture:
            attributes["gen_ai.tool.call.arguments"] = json.dumps(event.args, ensure_ascii=False)
            attributes["gen_ai.tool.call.result"] = event.observation
        span = self._tracer.start_span(
            f"execute_tool {event.tool}",
            context=self._child(),
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=_ns(event.ts - event.duration_ms / 1000),
        )
        if event.is_error:
            span.set_attribute("error.type", event.outcome.kind or "tool_error")
            span.set_status(Status(StatusCode.ERROR))
        span.end(end_time=_ns(event.ts))

    def _approval(self, event: ApprovalDecided) -> None:
        if self._run is None:
            return
        attributes: dict[str, Any] = {
            "agent_cli.approval.tool": event.tool,
            "agent_cli.approval.approved": event.approved,
            "agent_cli.approval.by": event.by,
        }
        if event.queued is not None:
            attributes["agent_cli.approval.queued"] = event.queued
        if event.rule:
            attributes["agent_cli.approval.rule"] = event.rule
        self._run.add_event("agent_cli.approval", attributes, timestamp=_ns(event.ts))

    def _finished(self, event: RunFinished) -> None:
        if self._failed_attempt is not None:  # the model never answered: its request failed
            self._failed_chat(self._failed_attempt)
        run = self._run
        if run is None:
            return
        run.set_attribute("agent_cli.run.status", event.status)
        run.set_attribute("agent_cli.run.steps", event.steps)
        facts = self._facts
        run.set_attribute("agent_cli.intent", facts.intent)
        run.set_attribute("agent_cli.customer.identified", self._identified)
        if self._consent:
            run.set_attribute("agent_cli.consent", self._consent)
        for name in ("proposed", "approved", "denied", "queued", "refused"):
            run.set_attribute(f"agent_cli.desk.{name}", getattr(facts, name))
        run.set_attribute("gen_ai.usage.input_tokens", event.usage.input_tokens)
        run.set_attribute("gen_ai.usage.output_tokens", event.usage.output_tokens)
        if event.error:
            run.set_attribute("error.type", event.status)
            run.set_status(Status(StatusCode.ERROR))
        if self._capture and event.answer:
            run.set_attribute("gen_ai.output.messages", _messages("assistant", event.answer))
        run.end(end_time=_ns(event.ts))
        self._run = None

    def _failed_chat(self, attempt: ModelCalled) -> None:
        provider, model = self._model
        span = self._tracer.start_span(
            f"chat {model}",
            context=self._child(),
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": provider,
                "gen_ai.request.model": model,
                "error.type": str(attempt.status) if attempt.status else "connection_error",
                "agent_cli.step": attempt.step,
            },
            start_time=_ns(attempt.ts - attempt.latency_ms / 1000),
        )
        span.set_status(Status(StatusCode.ERROR, (attempt.error or "")[:200]))
        span.end(end_time=_ns(attempt.ts))


_IDENTIFYING = frozenset(("find_user_id_by_email", "find_user_id_by_name_zip"))


def _ns(seconds: float) -> int:
    return int(seconds * 1_000_000_000)


def _finish_reason(event: ModelDecided) -> str:
    match event.decision:
        case CallTool():
            return "tool_call"
        case AskUser():
            return "ask_user"
        case FinalAnswer():
            return "stop"
        case _:
            return "unknown"


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])
