"""Streamed replies (server-sent events) in both dialects: the text shown as it arrives, the
reply assembled exactly as a whole one, and cut, broken or refused streams handled as the rest of
the provider layer handles failures."""

from __future__ import annotations

import itertools
import json
import random
import time
from datetime import date
from typing import Any

import httpx
import pytest

from agent_cli.core.decisions import CallTool, FinalAnswer
from agent_cli.core.seams import DeadlineExceeded, ModelCall, ModelRequest, TextDelta, ToolSpec
from agent_cli.errors import InvalidProviderResponse, ProviderUnavailable
from agent_cli.providers.anthropic import ANTHROPIC_VERSION, AnthropicMessages, AnthropicOptions
from agent_cli.providers.base import HttpAdapter
from agent_cli.providers.http import Channel, Endpoint
from agent_cli.providers.openai import OpenAIChat, OpenAIOptions
from agent_cli.providers.retries import RetryPolicy
from agent_cli.providers.streaming import SseParser, partial_answer
from tests.contract.test_providers import ask, records
from tests.fakellm import (
    FakeLLM,
    Reply,
    anthropic_calls,
    anthropic_text,
    error,
    openai_calls,
    openai_text,
)
from tests.helpers import mock_channel

LOOKUP = ToolSpec("lookup_order", "Look up an order.", {"type": "object", "properties": {}})
ANSWER = "Order A100 is refundable: it was delivered 12 days ago."


def adapter(
    fake: FakeLLM, provider: str, *, mode: str = "tools", stream: bool = True, retries: int = 2
) -> HttpAdapter:
    headers = {"anthropic-version": ANTHROPIC_VERSION} if provider == "anthropic" else {}
    channel = Channel(
        Endpoint(
            base_url=fake.url if provider == "anthropic" else fake.url + "/v1",
            headers=headers,
            secret=None,
            key_env=None,
            connect_timeout=2,
            read_timeout=5,
            retry=RetryPolicy(max_retries=retries, initial_backoff=0.01),
        ),
    )
    if provider == "anthropic":
        return AnthropicMessages(channel, AnthropicOptions("m", mode=mode, stream=stream))  # type: ignore[arg-type]
    return OpenAIChat(channel, OpenAIOptions(model="m", mode=mode, stream=stream))  # type: ignore[arg-type]


class Seen:
    """What a request's callbacks saw: text deltas, with when they came, and HTTP attempts."""

    def __init__(self) -> None:
        self.deltas: list[TextDelta] = []
        self.times: list[float] = []
        self.calls: list[ModelCall] = []

    def request(self, deadline: float = 30.0) -> ModelRequest:
        return ModelRequest(
            goal="Is A100 refundable?",
            today=date(2026, 10, 13),
            tools=(LOOKUP,),
            history=(),
            deadline=time.monotonic() + deadline,
            on_call=self.calls.append,
            on_text=self.text,
        )

    def text(self, delta: TextDelta) -> None:
        self.deltas.append(delta)
        self.times.append(time.monotonic())

    @property
    def shown(self) -> str:
        """The text on screen now: what came since the last restart."""
        shown = ""
        for delta in self.deltas:
            shown = "" if delta.restart else shown + delta.text
        return shown


def text_reply(provider: str, text: str, **kwargs: Any) -> dict[str, Any]:
    return (openai_text if provider == "openai" else anthropic_text)(text, **kwargs)


def calls_reply(provider: str, *calls: tuple[str, Any], text: str = "") -> dict[str, Any]:
    if provider == "anthropic":
        return anthropic_calls(*calls, text=text)
    return openai_calls(*calls, text=text or None)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_streamed_answer_arrives_piece_by_piece_and_is_the_same_reply(
    fake_llm: FakeLLM, provider: str
) -> None:
    fake_llm.queue(Reply(body=text_reply(provider, ANSWER), token_delay=0.01))
    seen = Seen()
    reply = adapter(fake_llm, provider).decide(seen.request())
    (decision,) = reply.decisions
    assert isinstance(decision, FinalAnswer) and decision.answer == ANSWER
    assert len(seen.deltas) > 5 and seen.shown == ANSWER  # word by word, nothing lost
    assert seen.times[-1] - seen.times[0] > 0.04  # as they came, not all at the end
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (100, 20)
    sent = fake_llm.bodies()[0]
    assert sent["stream"] is True
    if provider == "openai":
        assert sent["stream_options"] == {"include_usage": True}
    assert fake_llm.violations == []


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_tool_call_pieces_are_assembled_into_whole_calls(fake_llm: FakeLLM, provider: str) -> None:
    fake_llm.queue(
        calls_reply(
            provider,
            ("lookup_order", {"order_code": "A100"}),
            ("lookup_order", {"order_code": "B200", "note": "x" * 50}),
            text="Let me check both.",
        )
    )
    seen = Seen()
    reply = adapter(fake_llm, provider).decide(seen.request())
    first, second = reply.decisions
    assert isinstance(first, CallTool) and isinstance(second, CallTool)
    assert first.args == {"order_code": "A100"} and first.thought == "Let me check both."
    assert second.args == {"order_code": "B200", "note": "x" * 50}
    assert first.call_id != second.call_id and first.invalid is None
    assert seen.shown == "Let me check both."


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_json_mode_shows_only_the_answer_text_decoded(fake_llm: FakeLLM, provider: str) -> None:
    raw = json.dumps({"type": "final", "answer": 'Yes: "A100" is refundable \u2014 12 days.'})
    fake_llm.queue(text_reply(provider, raw))
    seen = Seen()
    (decision,) = adapter(fake_llm, provider, mode="json").decide(seen.request()).decisions
    assert isinstance(decision, FinalAnswer)
    assert seen.shown == decision.answer == 'Yes: "A100" is refundable \u2014 12 days.'


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_stream_cut_part_way_is_retried_and_its_text_declared_void(
    fake_llm: FakeLLM, provider: str
) -> None:
    fake_llm.queue(
        Reply(body=text_reply(provider, "This draft will be cut off"), cut_after=4),
        text_reply(provider, ANSWER),
    )
    seen = Seen()
    (decision,) = adapter(fake_llm, provider).decide(seen.request()).decisions
    assert isinstance(decision, FinalAnswer) and decision.answer == ANSWER
    assert any(delta.restart for delta in seen.deltas)
    assert seen.shown == ANSWER  # the cut draft is gone from the screen
    failed, succeeded = seen.calls
    assert failed.status is None and failed.retry_in_s is not None
    assert failed.error is not None and "the reply stream was cut off" in failed.error
    assert succeeded.status == 200


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_stream_cut_on_every_attempt_fails_saying_so(fake_llm: FakeLLM, provider: str) -> None:
    for _ in range(3):
        fake_llm.queue(Reply(body=text_reply(provider, ANSWER), cut_after=3))
    with pytest.raises(ProviderUnavailable, match=r"No complete reply from .* after 3 attempts"):
        adapter(fake_llm, provider).decide(Seen().request())


def test_a_stream_that_ends_without_its_last_event_is_retried(fake_llm: FakeLLM) -> None:
    complete = FakeLLMEvents.anthropic(ANSWER)
    fake_llm.queue(Reply(events=complete[:-1]), Reply(events=complete))  # no message_stop
    seen = Seen()
    (decision,) = adapter(fake_llm, "anthropic").decide(seen.request()).decisions
    assert isinstance(decision, FinalAnswer) and decision.answer == ANSWER
    assert seen.calls[0].error is not None and "before the reply" in seen.calls[0].error


def test_an_error_event_mid_stream_is_retried_as_an_overload(fake_llm: FakeLLM) -> None:
    overloaded = _event(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "error"
    )
    fake_llm.queue(
        Reply(events=[*FakeLLMEvents.anthropic("Half")[:3], overloaded]),
        anthropic_text(ANSWER),
    )
    seen = Seen()
    (decision,) = adapter(fake_llm, "anthropic").decide(seen.request()).decisions
    assert isinstance(decision, FinalAnswer) and decision.answer == ANSWER
    assert seen.calls[0].error is not None and "Overloaded" in seen.calls[0].error


def test_events_that_are_not_json_are_an_invalid_response_not_retried(fake_llm: FakeLLM) -> None:
    fake_llm.queue(Reply(events=["data: {not json\n\n", "data: [DONE]\n\n"]))
    with pytest.raises(InvalidProviderResponse, match="a streamed event is not JSON"):
        adapter(fake_llm, "openai").decide(Seen().request())
    assert len(fake_llm.bodies()) == 1


def test_a_slow_stream_is_bounded_by_the_run_deadline(fake_llm: FakeLLM) -> None:
    fake_llm.queue(Reply(body=openai_text(" ".join(["word"] * 100)), token_delay=0.5))
    began = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        adapter(fake_llm, "openai").decide(Seen().request(deadline=1.0))
    assert time.monotonic() - began < 20  # the deadline, not the stream's 50 s


def test_a_server_that_refuses_to_stream_is_asked_again_without_and_from_then_on(
    fake_llm: FakeLLM,
) -> None:
    refusal = {"error": {"message": "Unrecognized request argument supplied: stream_options"}}
    fake_llm.queue(Reply(400, refusal), openai_text("first"), openai_text("second"))
    model = adapter(fake_llm, "openai")
    seen = Seen()
    model.decide(seen.request())
    model.decide(seen.request())
    first, second, third = fake_llm.bodies()
    assert first["stream"] is True and "stream" not in second and "stream" not in third
    assert seen.calls[0].fallback == "no streaming"


def test_a_server_that_ignores_stream_and_sends_json_still_works(fake_llm: FakeLLM) -> None:
    fake_llm.queue(Reply(body=openai_text(ANSWER), trickle=0.0001))  # sent whole, as JSON
    (decision,) = adapter(fake_llm, "openai").decide(Seen().request()).decisions
    assert isinstance(decision, FinalAnswer) and decision.answer == ANSWER


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_retries_repairs_and_the_grounding_check_are_the_same_streamed_or_not(
    fake_llm: FakeLLM, provider: str
) -> None:
    def run(*extra: str) -> list[dict[str, Any]]:
        fake_llm.queue(
            error(429, "slow down", headers={"retry-after-ms": "10"}),
            calls_reply(provider, ("lookup_order", {"order_code": 100})),  # a repair
            calls_reply(provider, ("lookup_order", {"order_code": "A100"})),
            text_reply(provider, "A101 is refundable too."),  # not looked up: rejected
            text_reply(provider, "A100 is refundable: delivered 12 days ago."),
        )
        result = ask(fake_llm, provider, *extra, env={"AGENT_DEBUG": ""})
        assert result.exit_code == 0, result.stderr
        return records(result)

    streamed, whole = run(), run("--no-stream")
    volatile = {"ts", "run_id", "latency_ms", "duration_ms", "elapsed_ms", "retry_in_s"}
    assert [{k: v for k, v in r.items() if k not in volatile} for r in streamed] == [
        {k: v for k, v in r.items() if k not in volatile} for r in whole
    ]
    events = [r["event"] for r in streamed]
    assert events.count("repair") == 2 and events[-1] == "run_finished"
    assert streamed[-1]["answer"] == "A100 is refundable: delivered 12 days ago."
    bodies = fake_llm.bodies()
    assert all(body["stream"] is True for body in bodies[:5])
    assert all("stream" not in body for body in bodies[5:])
    assert fake_llm.violations == []


def test_the_sse_parser_reads_events_split_anywhere() -> None:
    raw = b'event: a\ndata: {"x":\ndata: 1}\n\n: a comment\ndata: two\r\n\r\nevent: b\ndata: 3\n\n'
    for cut in range(len(raw)):
        parser = SseParser()
        events = [*parser.feed(raw[:cut]), *parser.feed(raw[cut:])]
        assert [(e.event, e.data) for e in events] == [
            ("a", '{"x":\n1}'),
            ("message", "two"),
            ("b", "3"),
        ]


def test_the_partial_answer_never_shows_half_an_escape() -> None:
    raw = json.dumps({"type": "final", "answer": 'He said "fine" \u00e9\\n ok'})
    shown = [partial_answer(raw[:cut]) for cut in range(len(raw) + 1)]
    texts = [text for text in shown if text is not None]
    assert texts[-1] == 'He said "fine" \u00e9\\n ok'
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(texts))
    assert partial_answer('{"type": "tool", "tool": "lookup_order"}') is None


def test_mutated_streams_never_escape_as_internal_errors() -> None:
    """Any event sequence a server might send ends as a reply, a repair or a ProviderError."""
    rng = random.Random(20261204)
    seeds = [
        FakeLLMEvents.openai_lines(openai_calls(("lookup_order", {"order_code": "A100"}))),
        FakeLLMEvents.openai_lines(openai_text(ANSWER)),
        FakeLLMEvents.anthropic(ANSWER),
        FakeLLMEvents.anthropic_lines(anthropic_calls(("lookup_order", {"order_code": "A1"}))),
    ]
    for _ in range(300):
        events = list(rng.choice(seeds))
        for _ in range(rng.randint(1, 3)):
            index = rng.randrange(len(events))
            events[index] = rng.choice(_ODD_EVENTS)
        body = "".join(events).encode()
        provider = "anthropic" if b"message_start" in body else "openai"
        model = _mock_adapter(provider, body)
        try:
            model.decide(Seen().request())
        except Exception as exc:  # every failure must be one of ours
            from agent_cli.errors import AgentError

            assert isinstance(exc, AgentError | DeadlineExceeded), (type(exc), events)


def _event(data: Any, name: str | None = None) -> str:
    return (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"


_ODD_EVENTS = [
    "data: null\n\n",
    "data: []\n\n",
    _event({"choices": "x"}),
    _event({"choices": [{"delta": {"tool_calls": [{"index": "a", "function": 5}]}}]}),
    _event({"choices": [{"delta": {"content": 7}, "finish_reason": 3}]}),
    _event({"choices": [{"delta": {"tool_calls": [None, {"index": 0, "id": 4}]}}]}),
    _event({"type": "content_block_delta", "index": 9, "delta": {"type": "text_delta"}}),
    _event({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta"}}),
    _event({"type": "content_block_start", "index": 0, "content_block": "x"}),
    _event({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use"}}),
    _event({"type": "message_delta", "delta": None, "usage": []}, "message_delta"),
    _event({"type": "message_start", "message": {"usage": "lots"}}),
    _event({"type": "error", "error": "x"}, "error"),
    'data: {"choices": [{"delta": {"content": "\\ud800"}}]}\n\n',
    "data: [DONE]\n\n",
    "\n\n\n",
]


def _mock_adapter(provider: str, body: bytes) -> HttpAdapter:
    def respond(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    channel = mock_channel(respond)
    if provider == "anthropic":
        return AnthropicMessages(channel, AnthropicOptions("m", stream=True))
    return OpenAIChat(channel, OpenAIOptions(model="m", stream=True))


class FakeLLMEvents:
    """The event sequences the test server sends for a reply (its own converter)."""

    @staticmethod
    def anthropic(text: str) -> list[str]:
        return FakeLLMEvents.anthropic_lines(anthropic_text(text))

    @staticmethod
    def anthropic_lines(reply: dict[str, Any]) -> list[str]:
        from tests.fakellm import _anthropic_events

        return _anthropic_events(reply)

    @staticmethod
    def openai_lines(reply: dict[str, Any]) -> list[str]:
        from tests.fakellm import _openai_events

        return _openai_events(reply, include_usage=True)


def test_on_a_terminal_the_answer_is_drawn_while_it_streams(fake_llm: FakeLLM) -> None:
    import os
    import sys

    import pexpect

    words = "Order A100 is refundable: it was delivered twelve days ago, well within the window."
    fake_llm.queue(Reply(body=openai_text(words), token_delay=0.15))
    argv = ["--provider", "openai", "--base-url", fake_llm.url + "/v1", "--no-grounding"]
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}  # a live, colour terminal
    child = pexpect.spawn(
        sys.executable,
        ["-m", "agent_cli", "ask", "Is A100 refundable?", *argv],
        env={**env, "TERM": "xterm-256color", "OPENAI_API_KEY": "sk-test-key"},
        encoding="utf-8",
        timeout=90,
        dimensions=(40, 120),
    )
    child.expect("the model is writing")  # shown only once text has arrived, and before the end
    assert "Order" in child.before  # the streamed words, drawn above the spinner
    assert "1 step" not in child.before  # ...while the run is still going
    child.expect("Order A100 is refundable")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def _openai_pieces(count: int, size: int) -> list[str]:
    """A streamed answer of `count` text events of `size` characters each, then its end."""
    piece = {"choices": [{"index": 0, "delta": {"content": "x" * size}, "finish_reason": None}]}
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return [_event(piece)] * count + [_event(end), "data: [DONE]\n\n"]


@pytest.mark.parametrize("stream", [True, False])
def test_a_reply_over_8_mib_fails_streamed_or_whole_and_is_not_retried(
    fake_llm: FakeLLM, stream: bool
) -> None:
    if stream:
        fake_llm.queue(Reply(events=_openai_pieces(9, 1_000_000)))  # 9 MB in events under 1 MiB
    else:
        fake_llm.queue(openai_text("x" * 9_000_000))
    with pytest.raises(InvalidProviderResponse, match="larger than 8 MiB"):
        adapter(fake_llm, "openai", stream=stream).decide(Seen().request())
    assert len(fake_llm.bodies()) == 1


def test_a_streamed_reply_under_8_mib_is_read_whole(fake_llm: FakeLLM) -> None:
    from agent_cli.errors import MalformedReply

    fake_llm.queue(Reply(events=_openai_pieces(7, 1_000_000)))  # 7 MB: under the bound
    with pytest.raises(MalformedReply, match="answer: String should have at most 20000"):
        adapter(fake_llm, "openai").decide(Seen().request())  # read whole, then judged


def test_one_space_after_the_colon_is_dropped_and_no_more() -> None:
    events = list(SseParser().feed(b"event: delta\ndata:  two spaces \ndata:none\n\n"))
    assert [(e.event, e.data) for e in events] == [("delta", " two spaces \nnone")]


def test_an_event_over_1_mib_fails_the_stream_not_retried(fake_llm: FakeLLM) -> None:
    fake_llm.queue(Reply(events=_openai_pieces(1, 1_100_000)))  # one event of 1.1 MB
    with pytest.raises(InvalidProviderResponse, match="a streamed event larger than 1 MiB"):
        adapter(fake_llm, "openai").decide(Seen().request())
    assert len(fake_llm.bodies()) == 1


def test_a_tool_name_repeated_in_every_delta_is_one_name_and_split_names_are_joined() -> None:
    def piece(name: str, arguments: str) -> str:
        call = {"index": 0, "id": "c1", "function": {"name": name, "arguments": arguments}}
        return _event({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})

    end = _event({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    # llama-cpp-python sends the whole name with every piece of the arguments.
    repeated = [piece("lookup_order", '{"order_code"'), piece("lookup_order", ': "A100"}')]
    split = [piece("lookup_", ""), piece("order", '{"order_code": "A100"}')]
    for events in (repeated, split):
        body = "".join([*events, end, "data: [DONE]\n\n"]).encode()
        (decision,) = _mock_adapter("openai", body).decide(Seen().request()).decisions
        assert isinstance(decision, CallTool)
        assert (decision.tool, decision.args) == ("lookup_order", {"order_code": "A100"})


def test_a_refusal_to_stream_is_remembered_for_the_next_runs_of_that_server(
    fake_llm: FakeLLM,
) -> None:
    import os
    import stat
    from pathlib import Path

    refusal = {"error": {"message": "Unrecognized request argument supplied: stream_options"}}
    answer = "Order A100 is refundable: delivered 12 days ago."
    fake_llm.queue(Reply(400, refusal), openai_calls(("lookup_order", {"order_code": "A100"})))
    fake_llm.queue(openai_text(answer))
    assert ask(fake_llm, "openai").exit_code == 0
    fake_llm.queue(openai_calls(("lookup_order", {"order_code": "A100"})), openai_text(answer))
    assert ask(fake_llm, "openai").exit_code == 0
    streamed = [body.get("stream") is True for body in fake_llm.bodies()]
    assert streamed == [True, False, False, False, False]  # the second run never asks to stream
    memory = Path(os.environ["XDG_STATE_HOME"]) / "agent-cli" / "servers.json"
    assert stat.S_IMODE(memory.stat().st_mode) == 0o600


def test_a_remembered_refusal_is_forgotten_after_a_week_and_a_broken_file_ignored() -> None:
    import json as json_module

    from agent_cli.providers import server_memory

    url = "http://127.0.0.1:8000/v1"
    path = server_memory.memory_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    week_ago = time.time() - server_memory.FORGET_AFTER_S - 60
    path.write_text(json_module.dumps({url: {"stream": week_ago}}))
    assert not server_memory.refused(url, "stream")  # an upgraded server streams again
    server_memory.remember_refusal(url + "/", "stream")
    assert server_memory.refused(url, "stream")
    path.write_text("{not json")
    assert not server_memory.refused(url, "stream")
    server_memory.remember_refusal(url, "stream")  # a broken file is replaced, not a crash
    assert server_memory.refused(url, "stream")
