"""The Anthropic Messages adapter.

Wire format: POST {base_url}/v1/messages with `x-api-key` and `anthropic-version`; `system` at the
top level and `max_tokens` always. Tools mode sends `tools` with `input_schema`; the history goes
as assistant content (text, then `tool_use` blocks) followed by one user message of
`tool_result` blocks, one per `tool_use` id. JSON mode describes the decision JSON in the prompt.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from agent_cli.core.decisions import CallTool, Usage
from agent_cli.core.seams import ModelReply, ModelRequest, TextDelta, ToolSpec
from agent_cli.errors import InvalidProviderResponse, MalformedReply
from agent_cli.providers.base import (
    REFUSES_TOOLS,
    HttpAdapter,
    ModelTurn,
    WireNames,
    as_decision,
    call_id,
    cut_off,
    next_step,
    reply_of,
    tool_call,
    turns,
)
from agent_cli.providers.decision_schema import claims_offered, step_tools, tools_offered
from agent_cli.providers.http import Channel
from agent_cli.providers.prompts import (
    Mode,
    as_data,
    conversation_turns,
    final_prompt,
    observation_message,
    repair_message,
    system_prompt,
    tool_specs,
    wire_form,
    wire_schema,
)
from agent_cli.providers.streaming import StreamFailed, event_json
from agent_cli.text import JsonTextError, read_json

ANTHROPIC_VERSION = "2023-06-01"
_STOPS_WITHOUT_DECISION = {
    "refusal": "the model refused to answer",
    "pause_turn": "the model paused its turn without a decision",
}


@dataclass(frozen=True, slots=True)
class AnthropicOptions:
    model: str
    mode: Mode = "tools"
    temperature: float = 0.0
    max_output_tokens: int = 1024
    stream: bool = False  # server-sent events, the text shown as it arrives


class AnthropicMessages(HttpAdapter):
    """A ReasoningModel over the Messages API."""

    provider = "anthropic"
    path = "/v1/messages"

    def __init__(self, channel: Channel, options: AnthropicOptions) -> None:
        super().__init__(channel, options.model, mode=options.mode, stream=options.stream)
        self._options = options

    def features(self) -> dict[str, re.Pattern[str]]:
        return {"tools": REFUSES_TOOLS} if self._options.mode == "tools" else {}

    def body(self, request: ModelRequest) -> dict[str, Any]:
        options = self._options
        messages: list[dict[str, Any]] = [
            {"role": role, "content": text}
            for role, text in conversation_turns(request, options.mode)
        ]
        messages.append({"role": "user", "content": request.goal})
        names = WireNames.of(request)
        for turn in turns(request.history):
            messages.extend(_turn_messages(turn, options.mode, names))
        body: dict[str, Any] = {
            "model": options.model,
            "max_tokens": options.max_output_tokens,
            "system": system_prompt(
                request,
                options.mode,
                listed=step_tools(request) if options.mode == "json" else None,
                claims=claims_offered(request),
            ),
            "messages": messages,
            "temperature": options.temperature,
        }
        if self.streaming:
            body["stream"] = True
        if request.final:
            _append_user_text(messages, final_prompt(options.mode))
        if options.mode == "tools":
            specs, forced = tools_offered(request, force=True)
            body["tools"] = [_tool(spec, names) for spec in _with_called(specs, request)]
            if request.final:  # the history holds tool_use blocks, so the tools stay, unusable
                body["tool_choice"] = {"type": "none"}
            elif forced is not None:
                body["tool_choice"] = {"type": "tool", "name": names.out(forced)}
        return body

    def speech_body(self, persona: str, history: Sequence[tuple[str, str]]) -> dict[str, Any]:
        options = self._options
        return {
            "model": options.model,
            "max_tokens": options.max_output_tokens,
            "system": persona,
            "messages": [{"role": role, "content": text} for role, text in history],
            "temperature": options.temperature,
        }

    def speech_of(self, payload: dict[str, Any]) -> str:
        blocks = payload["content"]
        return "".join(
            b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
        )

    def parse(self, payload: dict[str, Any], request: ModelRequest) -> ModelReply:
        usage, step = self.usage_of(payload), next_step(request)
        blocks = payload.get("content")
        if not isinstance(blocks, list):
            raise InvalidProviderResponse("Invalid provider response: no content in the reply")
        blocks = [b for b in blocks if isinstance(b, dict)]
        text = "".join(
            b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
        )
        uses = [b for b in blocks if b.get("type") == "tool_use"]
        stop = payload.get("stop_reason")
        if stop == "max_tokens":
            raise MalformedReply(cut_off(bool(uses)), raw=text, usage=usage)
        if isinstance(stop, str) and stop in _STOPS_WITHOUT_DECISION:
            raise MalformedReply(_STOPS_WITHOUT_DECISION[stop], raw=text, usage=usage)
        names = WireNames.of(request)
        calls = [
            as_decision(_call(use, text if i == 0 else "", call_id(step, i), names))
            for i, use in enumerate(uses)
        ]
        return reply_of(text, calls, mode=self._options.mode, usage=usage, step=step)

    def stream_reader(self, emit: Callable[[TextDelta], None]) -> MessageStream:
        return MessageStream(emit)

    @staticmethod
    def usage_of(payload: dict[str, Any]) -> Usage:
        usage = payload.get("usage")
        if not isinstance(usage, dict):
            return Usage()
        counts = [usage.get("input_tokens"), usage.get("output_tokens")]
        return Usage(*(c if isinstance(c, int) and c >= 0 else 0 for c in counts))


def _with_called(specs: tuple[ToolSpec, ...], request: ModelRequest) -> tuple[ToolSpec, ...]:
    """`specs`, and every tool a call in the history named. The API refuses a history of
    `tool_use` blocks sent without tools, and may refuse one naming a tool the request does not
    define: a tool definition a step is cheaper than a run that fails at its second step."""
    offered = {spec.name for spec in specs}
    called = {step.call.tool for step in request.history if step.call is not None}
    if called <= offered:
        return specs
    return (*specs, *(spec for spec in tool_specs(request) if spec.name in called - offered))


def _tool(spec: ToolSpec, names: WireNames) -> dict[str, Any]:
    return {
        "name": names.out(spec.name),
        "description": spec.description,
        "input_schema": wire_schema(spec.parameters),
    }


def _call(use: dict[str, Any], thought: str, fallback_id: str, names: WireNames) -> CallTool:
    name = use.get("name")
    name = names.back(name) if isinstance(name, str) else ""
    ref = use.get("id")
    ref = ref if isinstance(ref, str) else fallback_id
    args = use.get("input")
    problem = None
    if not isinstance(args, dict):
        problem, args = f"the input for {name} must be a JSON object", {}
    return tool_call(name, args, thought=thought, ref=ref, problem=problem)


def _turn_messages(turn: ModelTurn, mode: Mode, names: WireNames) -> list[dict[str, Any]]:
    if (bad := turn.malformed) is not None:
        return [
            {"role": "assistant", "content": [{"type": "text", "text": bad.reply or "(empty)"}]},
            {"role": "user", "content": [{"type": "text", "text": repair_message(bad)}]},
        ]
    if mode == "json":
        call, step = turn.calls[0]
        return [
            {"role": "assistant", "content": [{"type": "text", "text": wire_form(call)}]},
            {"role": "user", "content": [{"type": "text", "text": observation_message(step)}]},
        ]
    calls = turn.calls
    content: list[dict[str, Any]] = []
    if thought := calls[0][0].thought:
        content.append({"type": "text", "text": thought})
    content += [
        {"type": "tool_use", "id": call.call_id, "name": names.out(call.tool), "input": call.args}
        for call, _ in calls
    ]
    results = [_result(call, as_data(step), step.is_error) for call, step in calls]
    return [{"role": "assistant", "content": content}, {"role": "user", "content": results}]


def _append_user_text(messages: list[dict[str, Any]], text: str) -> None:
    """Add text as the user's; roles must alternate, so join a trailing user message."""
    last = messages[-1]
    if last["role"] != "user":
        messages.append({"role": "user", "content": text})
        return
    content = last["content"]
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    last["content"] = [*blocks, {"type": "text", "text": text}]


def _result(call: CallTool, observation: str, is_error: bool) -> dict[str, Any]:
    result: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": call.call_id,
        "content": observation,
    }
    if is_error:
        result["is_error"] = True
    return result


class MessageStream:
    """Messages API events assembled into the message a non-streamed reply is: each content
    block from its start and deltas (text joined, a tool_use's input from its JSON pieces),
    the stop reason and both token counts."""

    def __init__(self, emit: Callable[[TextDelta], None]) -> None:
        self._emit = emit
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}
        self._usage: dict[str, Any] = {}
        self._stop: str | None = None
        self.complete = False
        self.events = 0

    def feed(self, event: str, data: str) -> None:
        self.events += 1
        message = event_json(data)
        if not isinstance(message, dict):
            raise StreamFailed("a streamed event is not a JSON object", retryable=False)
        kind = message.get("type", event)
        if not isinstance(kind, str):
            raise StreamFailed("a streamed event's type is not a string", retryable=False)
        if kind == "error":
            error = message.get("error")
            why = error.get("message") if isinstance(error, dict) else None
            raise StreamFailed(why if isinstance(why, str) else "an error event", retryable=True)
        handler = self._handlers.get(kind)
        if handler is not None:
            handler(self, message)

    def _message_start(self, event: dict[str, Any]) -> None:
        message = event.get("message")
        if isinstance(message, dict) and isinstance(message.get("usage"), dict):
            self._usage.update(message["usage"])

    def _block_start(self, event: dict[str, Any]) -> None:
        block, index = event.get("content_block"), event.get("index")
        if isinstance(block, dict) and isinstance(index, int):
            self._blocks[index] = dict(block)

    def _block_delta(self, event: dict[str, Any]) -> None:
        delta, index = event.get("delta"), event.get("index")
        block = self._blocks.get(index) if isinstance(index, int) else None
        if not isinstance(delta, dict) or block is None or not isinstance(index, int):
            return
        if delta.get("type") == "text_delta" and isinstance(text := delta.get("text"), str):
            if isinstance(so_far := block.get("text", ""), str):  # else the parser refuses it
                block["text"] = so_far + text
            self._emit(TextDelta(text))
        elif delta.get("type") == "input_json_delta":
            piece = delta.get("partial_json")
            self._json.setdefault(index, []).append(piece if isinstance(piece, str) else "")

    def _message_delta(self, event: dict[str, Any]) -> None:
        delta = event.get("delta")
        if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
            self._stop = delta["stop_reason"]
        if isinstance(event.get("usage"), dict):
            self._usage.update(event["usage"])

    def _message_stop(self, _: dict[str, Any]) -> None:
        self.complete = True

    _handlers: ClassVar[dict[str, Callable[[MessageStream, dict[str, Any]], None]]] = {
        "message_start": _message_start,
        "content_block_start": _block_start,
        "content_block_delta": _block_delta,
        "message_delta": _message_delta,
        "message_stop": _message_stop,
    }

    def payload(self) -> dict[str, Any]:
        content = []
        for index in sorted(self._blocks):
            block = self._blocks[index]
            if block.get("type") == "tool_use" and index in self._json:
                pieces = "".join(self._json[index])
                try:  # unreadable input stays a string: the parser makes it a repair
                    block["input"] = read_json(pieces) if pieces.strip() else {}
                except JsonTextError:
                    block["input"] = pieces
            content.append(block)
        return {"content": content, "stop_reason": self._stop, "usage": self._usage}
