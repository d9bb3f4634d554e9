"""What the LLM adapters share besides the words (`prompts.py`): `HttpAdapter` (a request, its
fallbacks and its reply), the grouping of the history into model turns, tool names on the wire,
and reading one decision out of a reply.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import ValidationError

from agent_cli.core.decisions import (
    ASK_USER_TOOL,
    MAX_THOUGHT_CHARS,
    AskUser,
    CallTool,
    Decision,
    DecisionError,
    FinalAnswer,
    Step,
    Usage,
    describe_validation_error,
    parse_decision,
)
from agent_cli.core.seams import ModelCall, ModelReply, ModelRequest, TextDelta
from agent_cli.errors import FeatureRejected, InvalidProviderResponse, MalformedReply
from agent_cli.providers.http import Channel, ReplyReading
from agent_cli.providers.prompts import Mode, tool_specs
from agent_cli.providers.streaming import JsonAnswer, StreamReader
from agent_cli.text import JsonTextError, non_finite_in, read_json, valid_text

_WIRE_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what both APIs accept as a tool's name
_NOT_WIRE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True, slots=True)
class WireNames:
    """Tool names as the APIs accept them. An MCP tool is `crm.lookup` to us, but a function
    name may not hold a dot: it travels as `crm__lookup`, and a call of that name is ours again.
    Names that are already fine travel as they are."""

    outgoing: dict[str, str]
    incoming: dict[str, str]

    @classmethod
    def of(cls, request: ModelRequest) -> WireNames:
        names = [spec.name for spec in tool_specs(request)]
        taken = {name for name in names if _WIRE_NAME.fullmatch(name)}
        outgoing: dict[str, str] = {}
        for name in names:
            if name in taken:
                continue
            base = _wire_form(name)[:60]
            wire, n = base, 2
            while wire in taken:
                wire, n = f"{base}_{n}", n + 1
            taken.add(wire)
            outgoing[name] = wire
        incoming = {name: name for name in names if name not in outgoing}
        return cls(outgoing, incoming | {wire: name for name, wire in outgoing.items()})

    def out(self, name: str) -> str:
        """A name to send. One no tool has (a call the model made up, in the history) is made
        acceptable too, or the API would refuse every later request of the run."""
        if name in self.outgoing:
            return self.outgoing[name]
        return name if _WIRE_NAME.fullmatch(name) else _wire_form(name)[:64] or "unknown"

    def back(self, wire: str) -> str:
        """Ours again. A `NAME__tool` no tool has is read as `NAME.tool`: a tool of an MCP
        server that did not start, which the registry can then say so of."""
        if wire in self.incoming:
            return self.incoming[wire]
        server, separator, tool = wire.partition("__")
        return f"{server}.{tool}" if separator and server and tool else wire


BYTES_PER_TOKEN = 4  # about, in English and in JSON; Japanese runs fewer, so this counts low


def counted_usage(
    body: Any, usage_of: Callable[[dict[str, Any]], Usage]
) -> Callable[[dict[str, Any]], Usage]:
    """The server's token counts of a reply; a count it leaves out, or gives as nonsense (read
    as 0: negative, not a number), is counted from the bytes sent or received instead, so
    --max-tokens and --max-cost hold against a server that says nothing of usage."""

    def usage(payload: dict[str, Any]) -> Usage:
        reported = usage_of(payload)
        if reported.input_tokens > 0 and reported.output_tokens > 0:
            return reported  # the common case: nothing to count
        return Usage(
            reported.input_tokens or _tokens_in(body),
            reported.output_tokens or _tokens_in(payload),
        )

    return usage


def _tokens_in(data: Any) -> int:
    """About how many tokens `data` is, from its bytes as JSON."""
    return -(-len(json.dumps(data, ensure_ascii=False, default=str).encode()) // BYTES_PER_TOKEN)


def _wire_form(name: str) -> str:
    return _NOT_WIRE.sub("_", name.replace(".", "__"))


def as_decision(call: CallTool) -> CallTool | AskUser:
    """A native tool call of the built-in ask_user becomes an AskUser decision."""
    if call.tool != ASK_USER_TOOL or call.invalid is not None:
        return call
    question = call.args.get("question")
    if set(call.args) != {"question"} or not isinstance(question, str) or not question.strip():
        problem = 'the arguments for ask_user must be {"question": "<one short question>"}'
        return call.model_copy(update={"invalid": problem})
    return AskUser(question=question.strip(), call_id=call.call_id)


@dataclass(frozen=True, slots=True)
class ModelTurn:
    """One model reply in the history and what followed it."""

    steps: tuple[Step, ...]

    @property
    def malformed(self) -> Step | None:
        return self.steps[0] if self.steps[0].call is None else None

    @property
    def calls(self) -> list[tuple[CallTool, Step]]:
        return [(step.call, step) for step in self.steps if step.call is not None]


def turns(history: tuple[Step, ...]) -> Iterator[ModelTurn]:
    """Group the history by model reply: steps with the same number came from one reply."""
    group: list[Step] = []
    for step in history:
        if group and step.number != group[0].number:
            yield ModelTurn(tuple(group))
            group = []
        group.append(step)
    if group:
        yield ModelTurn(tuple(group))


# What servers say when they refuse an optional part of a request: llama.cpp and
# llama-cpp-python on response_format, Ollama "does not support tools", vLLM without
# --enable-auto-tool-choice, llama.cpp without --jinja.
REFUSES_FORMAT = re.compile(
    r"response_format|json_schema|json_object|structured_outputs", re.IGNORECASE
)
# A refused named tool_choice; vLLM's refusal of tools as a whole speaks of an "auto" one.
REFUSES_CHOICE = re.compile(r'(?<!"auto" )\btool[_ ]choice', re.IGNORECASE)
REFUSES_STREAM = re.compile(r"\bstream(?:_options|ing)?\b", re.IGNORECASE)
REFUSES_TOOLS = re.compile(
    r"tool_choice|tool choice|does not support tools|tools? (?:is|are) not supported"
    r"|not support(?:ed)? (?:for )?tools|tools param|--jinja|function.calling",
    re.IGNORECASE,
)


class HttpAdapter(ABC):
    """A ReasoningModel that posts one request per decision over a run's `Channel`; a subclass
    owns its dialect: the request body, the reply parsing and the usage counts."""

    provider: str  # the dialect by default; `connect` sets the provider the user chose
    path: ClassVar[str]

    def __init__(
        self, channel: Channel, model: str, *, mode: Mode = "tools", stream: bool = False
    ) -> None:
        self._channel = channel
        self.model = model
        self.mode = mode
        self.streaming = stream  # off for the rest of the run once a server refuses it
        self.on_refused: Callable[[str], None] = lambda feature: None  # e.g. remembered

    def close(self) -> None:
        self._channel.close()

    def decide(self, request: ModelRequest) -> ModelReply:
        """One decision. A server that refuses an optional feature is asked again at once in
        a plainer form (`fall_back`), which the adapter keeps for the rest of the run and the
        chat session; the refusal is reported as a model call with its `fallback`."""
        while True:
            try:
                return self._decide(request)
            except FeatureRejected as refused:
                plainer = self.fall_back(refused.feature)
                if plainer is None:
                    raise
                was, instead = plainer
                self.on_refused(refused.feature)
                request.on_call(
                    ModelCall(
                        refused.attempt,
                        refused.status,
                        refused.latency_ms,
                        error=f"HTTP {refused.status}: {was} refused",
                        fallback=instead,
                    )
                )

    def fall_back(self, feature: str) -> tuple[str, str] | None:
        """After a server refused `feature`: what was refused and what is sent from now on,
        or None when there is nothing plainer to ask for."""
        if feature == "stream" and self.streaming:
            self.streaming = False
            return "streaming", "no streaming"
        return None

    def _decide(self, request: ModelRequest) -> ModelReply:
        body = self.body(request)
        features = self.features()  # after the body: what it holds may be optional
        if self.streaming:
            features["stream"] = REFUSES_STREAM
        counted = counted_usage(body, self.usage_of)
        payload = self._channel.request_json(
            "POST",
            self.path,
            body,
            deadline=request.deadline,
            on_call=request.on_call,
            reading=ReplyReading(
                usage_of=counted,
                features=features,
                stream=self._readers(request) if self.streaming else None,
            ),
        )
        try:
            reply = self.parse(payload, request)
            return ModelReply(*reply.decisions, usage=counted(payload))
        except ValidationError as exc:  # a field out of bounds (a 30,000-character answer)
            problem = f"the reply is not a valid decision: {describe_validation_error(exc)}"
            raise MalformedReply(problem, raw="", usage=self.usage_of(payload)) from None
        except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
            raise InvalidProviderResponse(
                f"Invalid provider response from {self._channel.base_url}{self.path}: "
                f"a reply of an unexpected shape ({type(exc).__name__}); check --base-url"
            ) from None

    def speak(
        self,
        persona: str,
        history: Sequence[tuple[str, str]],
        *,
        deadline: float,
        on_call: Callable[[ModelCall], None],
    ) -> tuple[str, Usage]:
        """Another party's plain words (the eval's simulated customer): `persona` is the whole
        system prompt, `history` the conversation so far as (role, text), "user" for the other
        side; no tools, no decision format, no streaming."""
        payload = self._channel.request_json(
            "POST",
            self.path,
            self.speech_body(persona, history),
            deadline=deadline,
            on_call=on_call,
            reading=ReplyReading(usage_of=self.usage_of),
        )
        try:
            return valid_text(self.speech_of(payload)).strip(), self.usage_of(payload)
        except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
            raise InvalidProviderResponse(
                f"Invalid provider response from {self._channel.base_url}{self.path}: "
                f"a reply of an unexpected shape ({type(exc).__name__}); check --base-url"
            ) from None

    def speech_body(self, persona: str, history: Sequence[tuple[str, str]]) -> dict[str, Any]:
        raise NotImplementedError

    def speech_of(self, payload: dict[str, Any]) -> str:
        raise NotImplementedError

    def _readers(self, request: ModelRequest) -> Callable[[], StreamReader]:
        """A new reader for each attempt; text shown by a failed one is declared void first.
        JSON mode shows only the answer's text, decoded."""
        emit = request.on_text if self.mode == "tools" else JsonAnswer(request.on_text)
        shown = False

        def show(delta: TextDelta) -> None:
            nonlocal shown
            shown = True
            emit(delta)

        def fresh() -> StreamReader:
            nonlocal shown
            if shown:
                emit(TextDelta("", restart=True))
                shown = False
            return self.stream_reader(show)

        return fresh

    def stream_reader(self, emit: Callable[[TextDelta], None]) -> StreamReader:
        """The dialect's reader of a streamed reply."""
        raise NotImplementedError

    def features(self) -> dict[str, re.Pattern[str]]:
        """The optional parts of the body just built, each with the pattern of a refusal."""
        return {}

    @abstractmethod
    def body(self, request: ModelRequest) -> dict[str, Any]: ...

    @abstractmethod
    def parse(self, payload: dict[str, Any], request: ModelRequest) -> ModelReply: ...

    @staticmethod
    @abstractmethod
    def usage_of(payload: dict[str, Any]) -> Usage: ...


MAX_TOOL_NAME = 100


def tool_call(
    name: str, args: dict[str, Any], *, thought: str, ref: str, problem: str | None
) -> CallTool:
    """A call as a model made it, within bounds: a long thought is cut (it is only kept for
    debugging), a missing or overlong name makes the call invalid (never run)."""
    if not name:
        problem = "the tool call has no tool name"
    elif problem is None and (constant := non_finite_in(args)) is not None:
        problem = f"the arguments for {name} hold {constant}, which JSON does not allow"
    elif len(name) > MAX_TOOL_NAME:
        problem = f"the tool name is longer than {MAX_TOOL_NAME} characters"
        name = name[:MAX_TOOL_NAME]
    return CallTool(
        tool=name or "(none)",
        args=args,
        thought=thought[:MAX_THOUGHT_CHARS],
        call_id=ref,
        invalid=problem,
    )


def next_step(request: ModelRequest) -> int:
    """The number of the step this request decides (parallel calls share a number)."""
    return len({step.number for step in request.history}) + 1


def call_id(step_number: int, index: int) -> str:
    """An id for a call whose provider gave none (JSON mode, or a lax compatible server)."""
    return f"call_{step_number}_{index}"


def cut_off(in_a_call: bool) -> str:
    """The problem told to the model when its reply hit the output token limit."""
    where = " in the middle of a tool call, which was not run" if in_a_call else ""
    return f"the reply was cut off by the output token limit{where}; reply more briefly"


def reply_of(
    text: str, calls: list[CallTool | AskUser], *, mode: Mode, usage: Usage, step: int
) -> ModelReply:
    """What a reply decides, the same in every dialect: JSON mode reads the text; tools mode
    takes the calls, else the text as the answer; a reply with neither is unusable."""
    if mode == "json":
        return ModelReply(parse_json_decision(text, usage, call_id(step, 0)), usage=usage)
    if calls:
        return ModelReply(*calls, usage=usage)
    if text.strip():
        return ModelReply(FinalAnswer(answer=text.strip()), usage=usage)
    raise MalformedReply(
        "the reply was empty: neither an answer nor a tool call", raw="", usage=usage
    )


def parse_json_decision(text: str, usage: Usage, call_ref: str) -> Decision:
    """Read a JSON-mode reply; MalformedReply (fed back to the model) when it is not one."""
    expected = 'expected one JSON object like {"type": "tool", ...} or {"type": "final", ...}'
    stripped = _strip_fences(text)
    if not stripped:
        raise MalformedReply(f"the reply was empty; {expected}", raw=text, usage=usage)
    try:
        payload = read_json(stripped)
    except JsonTextError as exc:
        raise MalformedReply(
            f"the reply is not valid JSON ({exc}); {expected}", raw=text, usage=usage
        ) from None
    try:
        decision = parse_decision(payload)
    except DecisionError as exc:
        raise MalformedReply(
            f"the reply is not a valid decision: {exc}", raw=text, usage=usage
        ) from None
    if isinstance(decision, CallTool) and (constant := non_finite_in(decision.args)):
        problem = f"the arguments for {decision.tool} hold {constant}, which JSON does not allow"
        return decision.model_copy(update={"call_id": call_ref, "invalid": problem})
    if isinstance(decision, CallTool | AskUser):
        return decision.model_copy(update={"call_id": call_ref})
    return decision


def _strip_fences(text: str) -> str:
    """Models often wrap JSON in ``` fences despite instructions; accept that, nothing looser."""
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```"):
        stripped = stripped[3:-3]
        stripped = stripped.removeprefix("json").strip()
    return stripped
