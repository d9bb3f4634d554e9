"""The OpenAI Chat Completions adapter; it serves every OpenAI-compatible server by base URL
(OpenAI, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter...).

Wire format: POST {base_url}/chat/completions. Tools mode sends the tools' JSON schemas and the
history as assistant `tool_calls` followed by one `tool` message per call id, so each request only
appends to the previous one. JSON mode describes the decision JSON in the system prompt and asks
for `response_format` json_schema (or json_object).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agent_cli.core.decisions import CallTool, Usage
from agent_cli.core.seams import ModelReply, ModelRequest, TextDelta, ToolSpec
from agent_cli.errors import InvalidProviderResponse, MalformedReply
from agent_cli.providers.base import (
    REFUSES_CHOICE,
    REFUSES_FORMAT,
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
from agent_cli.providers.decision_schema import (
    claims_offered,
    step_schema,
    step_tools,
    tools_offered,
)
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


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenAIOptions:
    model: str
    mode: Mode = "tools"
    temperature: float = 0.0
    max_output_tokens: int = 1024
    max_tokens_param: str = "max_completion_tokens"  # older compatible servers: "max_tokens"
    # JSON mode: json_schema | json_object_schema (llama-cpp-python) | json_object | none, or a
    # server's own field: llama_cpp_json_schema (llama-server) | vllm_structured_outputs (vLLM)
    response_format: str = "json_schema"
    stream: bool = False  # server-sent events, the text shown as it arrives


# The next plainer way to ask for JSON when a server refuses one: the decision schema as OpenAI
# (and llama.cpp's server, vLLM, Ollama) take it, as llama-cpp-python takes it, then JSON alone.
_PLAINER = {
    "json_schema": "json_object_schema",
    "json_object_schema": "json_object",
    "json_object": "none",
    "llama_cpp_json_schema": "json_object",
    "vllm_structured_outputs": "json_object",
}
# Fields of the body other than response_format: llama.cpp's server takes the schema as
# `json_schema`; vLLM (0.12 on) as `structured_outputs.json`.
_NATIVE: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "llama_cpp_json_schema": lambda schema: {"json_schema": schema},
    "vllm_structured_outputs": lambda schema: {"structured_outputs": {"json": schema}},
}
_SHOWN = {
    "json_object_schema": "response_format json_object with a schema",
    "llama_cpp_json_schema": "llama.cpp's json_schema field",
    "vllm_structured_outputs": "vLLM's structured_outputs field",
}


class OpenAIChat(HttpAdapter):
    """A ReasoningModel over the Chat Completions API."""

    provider = "openai"
    path = "/chat/completions"

    def __init__(self, channel: Channel, options: OpenAIOptions) -> None:
        super().__init__(channel, options.model, mode=options.mode, stream=options.stream)
        self._options = options
        self._format = options.response_format  # plainer after a server refuses it
        self._force = True  # a named tool_choice when a lookup must come; off once refused
        self._forcing = False  # the body being sent names one

    def fall_back(self, feature: str) -> tuple[str, str] | None:
        """A refused `response_format` is asked for more plainly: json_schema, then
        json_object, then plain prompting with the schema in the system prompt."""
        if feature == "tool_choice" and self._force:
            self._force = False
            return "a named tool_choice", "the model's own choice of tool"
        if feature == "response_format" and self._format != "none":
            was, self._format = self._format, _PLAINER[self._format]
            return _format_name(was), _format_name(self._format)
        return super().fall_back(feature)

    def features(self) -> dict[str, re.Pattern[str]]:
        if self._options.mode == "tools" and self._forcing:
            return {"tool_choice": REFUSES_CHOICE, "tools": REFUSES_TOOLS}
        if self._options.mode == "tools":
            return {"tools": REFUSES_TOOLS}
        return {"response_format": REFUSES_FORMAT} if self._format != "none" else {}

    def body(self, request: ModelRequest) -> dict[str, Any]:
        options = self._options
        with_schema = self._format in ("json_object", "none")  # else the server is given it
        prompt = system_prompt(
            request,
            options.mode,
            with_schema=with_schema,
            listed=step_tools(request) if options.mode == "json" else None,
            claims=claims_offered(request),
        )
        messages: list[dict[str, Any]] = [{"role": "system", "content": prompt}]
        messages += [
            {"role": role, "content": text}
            for role, text in conversation_turns(request, options.mode)
        ]
        messages.append({"role": "user", "content": request.goal})
        names = WireNames.of(request)
        for turn in turns(request.history):
            messages.extend(_turn_messages(turn, options.mode, names))
        body: dict[str, Any] = {
            "model": options.model,
            "messages": messages,
            "temperature": options.temperature,
            options.max_tokens_param: options.max_output_tokens,
        }
        if self.streaming:  # the usage comes as a last chunk only when asked for
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        if request.final:
            messages.append({"role": "user", "content": final_prompt(options.mode)})
        if options.mode == "tools":
            specs, forced = tools_offered(request, force=self._force)
            self._forcing = forced is not None and not request.final
            body["tools"] = [_tool(spec, names) for spec in specs]
            if request.final:  # the history holds tool calls, so the tools stay, unusable
                body["tool_choice"] = "none"
            elif forced is not None:
                body["tool_choice"] = {"type": "function", "function": {"name": names.out(forced)}}
        elif self._format in _NATIVE:
            body.update(_NATIVE[self._format](step_schema(request)))
        elif self._format != "none":
            body["response_format"] = _response_format(self._format, step_schema(request))
        return body

    def speech_body(self, persona: str, history: Sequence[tuple[str, str]]) -> dict[str, Any]:
        options = self._options
        messages = [{"role": "system", "content": persona}]
        messages += [{"role": role, "content": text} for role, text in history]
        return {
            "model": options.model,
            "messages": messages,
            "temperature": options.temperature,
            options.max_tokens_param: options.max_output_tokens,
        }

    def speech_of(self, payload: dict[str, Any]) -> str:
        message, _ = _first_choice(payload)
        return _text(message.get("content"))

    def parse(self, payload: dict[str, Any], request: ModelRequest) -> ModelReply:
        usage, step = self.usage_of(payload), next_step(request)
        message, finish = _first_choice(payload)
        content = _text(message.get("content"))
        tool_calls = message.get("tool_calls") or []
        if not isinstance(tool_calls, list):
            raise InvalidProviderResponse("Invalid provider response: tool_calls is not a list")
        if refusal := message.get("refusal"):
            raise MalformedReply(f"the model refused: {refusal}", raw=str(refusal), usage=usage)
        if finish == "length":
            raise MalformedReply(cut_off(bool(tool_calls)), raw=content, usage=usage)
        schemas = {spec.name: spec.parameters for spec in tool_specs(request)}
        names = WireNames.of(request)
        calls = [
            as_decision(_call(raw, content if i == 0 else "", call_id(step, i), schemas, names))
            for i, raw in enumerate(tool_calls)
        ]
        return reply_of(content, calls, mode=self._options.mode, usage=usage, step=step)

    def stream_reader(self, emit: Callable[[TextDelta], None]) -> ChatStream:
        return ChatStream(emit)

    @staticmethod
    def usage_of(payload: dict[str, Any]) -> Usage:
        usage = payload.get("usage")
        if not isinstance(usage, dict):
            return Usage()
        return Usage(_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")))


def _response_format(form: str, schema: dict[str, Any]) -> dict[str, Any]:
    """JSON mode's response_format in the form asked for: OpenAI's json_schema (also taken by
    llama.cpp's server, vLLM and Ollama), llama-cpp-python's json_object with a schema, or plain
    json_object (JSON, of no particular shape)."""
    if form == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "decision", "schema": schema, "strict": False},
        }
    if form == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_object"}


def _format_name(form: str) -> str:
    return _SHOWN.get(form, f"response_format {form}")


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _int(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def _first_choice(payload: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise InvalidProviderResponse("Invalid provider response: no choices in the reply")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise InvalidProviderResponse("Invalid provider response: the choice has no message")
    finish = choices[0].get("finish_reason")
    return message, finish if isinstance(finish, str) else None


def _tool(spec: ToolSpec, names: WireNames) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": names.out(spec.name),
            "description": spec.description,
            "parameters": wire_schema(spec.parameters),
        },
    }


def _call(
    raw: Any, thought: str, fallback_id: str, schemas: dict[str, Any], names: WireNames
) -> CallTool:
    """One tool call as the model made it; unreadable arguments are kept as `invalid`, never run."""
    raw = raw if isinstance(raw, dict) else {}
    function = raw.get("function") if isinstance(raw.get("function"), dict) else {}
    ref = raw.get("id") if isinstance(raw.get("id"), str) else fallback_id
    name = names.back(_text(function.get("name")))
    args, problem = _arguments(function.get("arguments"), name, schemas)
    return tool_call(name, args, thought=thought, ref=ref, problem=problem)


def _arguments(
    arguments: object, name: str, schemas: dict[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """The decoded arguments, or why they cannot be: the string may be invalid JSON."""
    expected = json.dumps(schemas.get(name, {}), separators=(",", ":"))
    if not isinstance(arguments, str) or not arguments.strip():
        return {}, None
    try:
        args = read_json(arguments)
    except JsonTextError as exc:
        return {}, f"the arguments for {name} are not valid JSON ({exc}); expected {expected}"
    if not isinstance(args, dict):
        return {}, f"the arguments for {name} must be a JSON object; expected {expected}"
    return args, None


def _turn_messages(turn: ModelTurn, mode: Mode, names: WireNames) -> list[dict[str, Any]]:
    if (bad := turn.malformed) is not None:
        return [
            {"role": "assistant", "content": bad.reply or "(empty reply)"},
            {"role": "user", "content": repair_message(bad)},
        ]
    if mode == "json":
        call, step = turn.calls[0]
        return [
            {"role": "assistant", "content": wire_form(call)},
            {"role": "user", "content": observation_message(step)},
        ]
    calls = turn.calls
    assistant = {
        "role": "assistant",
        "content": calls[0][0].thought,  # "", not null: llama-cpp-python refuses a null (500)
        "tool_calls": [
            {
                "id": call.call_id,
                "type": "function",
                "function": {"name": names.out(call.tool), "arguments": json.dumps(call.args)},
            }
            for call, _ in calls
        ],
    }
    results = [
        {"role": "tool", "tool_call_id": call.call_id, "content": as_data(step)}
        for call, step in calls
    ]
    return [assistant, *results]


class ChatStream:
    """Chat Completions chunks assembled into the `choices[0].message` a non-streamed reply
    has: content and refusal joined, each tool call's id, name and argument pieces by index."""

    def __init__(self, emit: Callable[[TextDelta], None]) -> None:
        self._emit = emit
        self._content: list[str] = []
        self._refusal: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish: str | None = None
        self._usage: dict[str, Any] | None = None
        self._done = False
        self.events = 0

    @property
    def complete(self) -> bool:
        return self._done or self._finish is not None

    def feed(self, event: str, data: str) -> None:
        self.events += 1
        if data.strip() == "[DONE]":
            self._done = True
            return
        chunk = event_json(data)
        if not isinstance(chunk, dict):
            raise StreamFailed("a streamed chunk is not a JSON object", retryable=False)
        if isinstance(error := chunk.get("error"), dict):
            raise StreamFailed(_text(error.get("message")) or "an error event", retryable=True)
        if isinstance(chunk.get("usage"), dict):
            self._usage = chunk["usage"]
        choices = chunk.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            self._choice(choices[0])

    def _choice(self, choice: dict[str, Any]) -> None:
        if isinstance(finish := choice.get("finish_reason"), str):
            self._finish = finish
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        if text := _text(delta.get("content")):
            self._content.append(text)
            self._emit(TextDelta(text))
        self._refusal.append(_text(delta.get("refusal")))
        pieces = delta.get("tool_calls")
        if pieces is not None and not isinstance(pieces, list):
            raise StreamFailed("a streamed delta's tool_calls is not a list", retryable=False)
        for piece in pieces or []:
            if isinstance(piece, dict):
                self._call_piece(piece)

    def _call_piece(self, piece: dict[str, Any]) -> None:
        index = piece.get("index")
        call = self._calls.setdefault(
            index if isinstance(index, int) else len(self._calls),
            {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
        )
        if isinstance(piece.get("id"), str):
            call["id"] = piece["id"]
        function = piece.get("function")
        if isinstance(function, dict):
            name = _text(function.get("name"))
            if name != call["function"]["name"]:  # llama-cpp-python repeats it in every delta
                call["function"]["name"] += name
            call["function"]["arguments"] += _text(function.get("arguments"))

    def payload(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._content)}
        if refusal := "".join(self._refusal):
            message["refusal"] = refusal
        if self._calls:
            message["tool_calls"] = [self._calls[i] for i in sorted(self._calls)]
        payload: dict[str, Any] = {
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish}]
        }
        if self._usage is not None:
            payload["usage"] = self._usage
        return payload
