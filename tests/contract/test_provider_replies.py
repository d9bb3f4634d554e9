"""Whatever a provider sends ends as a repair or a clean ProviderError, never an internal error,
and every run's trace ends with run_finished whatever went wrong: bodies nested too deep, absurd
Retry-After values, lone surrogates, oversized answers, duplicate call ids, NaN in arguments,
calls past the per-reply limit."""

from __future__ import annotations

import copy
import json
import random
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.core.seams import ModelRequest
from agent_cli.errors import MalformedReply, ProviderError
from agent_cli.providers.anthropic import AnthropicMessages, AnthropicOptions
from agent_cli.providers.http import Channel
from agent_cli.providers.openai import OpenAIChat, OpenAIOptions
from agent_cli.providers.retries import retry_after_seconds
from agent_cli.text import JsonTextError, read_json, valid_text
from tests.contract.test_providers import ask, final, records
from tests.fakellm import FakeLLM, Reply, anthropic_calls, anthropic_text, openai_calls, openai_text
from tests.helpers import mock_channel

runner = CliRunner()
DEEP = 900


def test_read_json_bounds_nesting_and_repairs_surrogates() -> None:
    assert read_json('{"a": ["\\ud800x", {"\\udfff": 1}]}') == {"a": ["\ufffdx", {"\ufffd": 1}]}
    assert read_json('"\\ud83d\\ude00"') == "\U0001f600"  # a valid pair is kept as one emoji
    with pytest.raises(JsonTextError, match="nested deeper than 64"):
        read_json("[" * DEEP + "]" * DEEP)
    with pytest.raises(JsonTextError, match="nested deeper"):
        read_json("[" * 200_000 + "]" * 200_000)  # json.loads alone raises RecursionError
    with pytest.raises(JsonTextError):
        read_json(b"\xff\xfe{")
    assert valid_text("plain") == "plain"


def test_a_deeply_nested_body_is_an_invalid_response(fake_llm: FakeLLM) -> None:
    fake_llm.queue(Reply(200, "[" * 200_000 + "]" * 200_000, {"content-type": "application/json"}))
    result = ask(fake_llm, "openai")
    assert result.exit_code == 1
    assert "Invalid provider response" in result.stderr
    assert "internal error" not in result.stderr
    assert final(result)["event"] == "run_finished"
    assert final(result)["status"] == "error"


def test_deeply_nested_tool_arguments_are_a_repair(fake_llm: FakeLLM) -> None:
    nested = "[" * DEEP + "]" * DEEP
    fake_llm.queue(
        openai_calls(("lookup_order", '{"order_code": ' + nested + "}")),
        openai_calls(("lookup_order", {"order_code": "A100"})),
        openai_text("Order A100 is refundable."),
    )
    result = ask(fake_llm, "openai")
    assert result.exit_code == 0, result.stderr
    repairs = [r for r in records(result) if r["event"] == "repair"]
    assert len(repairs) == 1
    assert "nested deeper than 64 levels" in repairs[0]["problem"]
    assert fake_llm.violations == []


def test_deeply_nested_anthropic_input_ends_cleanly(fake_llm: FakeLLM) -> None:
    body = json.dumps(anthropic_calls(("lookup_order", {"order_code": "A100"})))
    body = body.replace('"A100"', "[" * DEEP + "]" * DEEP)
    fake_llm.queue(Reply(200, body, {"content-type": "application/json"}))
    result = ask(fake_llm, "anthropic")
    assert result.exit_code == 1
    assert "Invalid provider response" in result.stderr
    assert final(result)["status"] == "error"


@pytest.mark.parametrize("value", ["1e400", "-5000", "nan", "inf", "1e15", "abc"])
def test_absurd_retry_after_ms_is_treated_as_absent(value: str) -> None:
    assert retry_after_seconds({"retry-after-ms": value}, now=0.0) is None


@pytest.mark.parametrize(
    "value", ["1e400", "-3", "nan", "-inf", "99999999999", "Fri, 31 Dec 99999 23:59:59 GMT"]
)
def test_absurd_retry_after_is_treated_as_absent(value: str) -> None:
    assert retry_after_seconds({"retry-after": value}, now=0.0) is None


def test_an_overflowing_retry_after_ms_falls_back_to_backoff(fake_llm: FakeLLM) -> None:
    fake_llm.queue(
        Reply(503, {"error": {"message": "busy"}}, {"retry-after-ms": "1e400"}),
        openai_text("ok"),
    )
    result = ask(fake_llm, "openai")
    assert result.exit_code == 0, result.stderr
    calls = [r for r in records(result) if r["event"] == "model_call"]
    assert calls[0]["status"] == 503
    assert 0.375 <= calls[0]["retry_in_s"] <= 0.5  # the SDKs' first backoff, with jitter


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_lone_surrogate_in_the_answer_is_replaced(fake_llm: FakeLLM, provider: str) -> None:
    text = "Order A100 \ud800 is refundable."
    reply = openai_text(text) if provider == "openai" else anthropic_text(text)
    raw = json.dumps(reply)  # ensure_ascii writes the surrogate as \ud800
    assert "\\ud800" in raw
    fake_llm.queue(Reply(200, raw, {"content-type": "application/json"}))
    result = ask(fake_llm, provider, "--no-grounding")
    assert result.exit_code == 0, result.stderr
    assert final(result)["answer"] == "Order A100 \ufffd is refundable."
    result.stdout.encode("utf-8")  # every line is valid UTF-8


def test_an_oversized_answer_is_a_repair_not_a_crash(fake_llm: FakeLLM) -> None:
    fake_llm.queue(openai_text("x" * 30_000), openai_text("Short answer."))
    result = ask(fake_llm, "openai")
    assert result.exit_code == 0, result.stderr
    repairs = [r for r in records(result) if r["event"] == "repair"]
    assert "answer: String should have at most 20000 characters" in repairs[0]["problem"]


def _echoed_replies(body: dict[str, Any]) -> list[str]:
    """The model's own unusable replies as a request shows them back to it."""
    texts = []
    for message in body["messages"]:
        content = message["content"]
        if message["role"] == "assistant" and isinstance(content, str) and content:
            texts.append(content)
        elif message["role"] == "assistant" and isinstance(content, list):
            texts += [block["text"] for block in content if block.get("type") == "text"]
    return texts


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_long_unusable_reply_is_shown_back_cut_not_whole(
    fake_llm: FakeLLM, provider: str
) -> None:
    """A small model's ramble to its output limit would otherwise be paid again, whole, on every
    later step: seconds of prompt each time on a local server."""
    ramble = "A new order has been placed. " * 400  # 11,600 characters
    if provider == "openai":
        cut = openai_text(ramble, finish="length")
        rest = [openai_calls(("lookup_order", {"order_code": "A100"}))]
        rest.append(openai_text("Order A100 is refundable: delivered 12 days ago."))
    else:
        cut = anthropic_text(ramble, stop="max_tokens")
        rest = [anthropic_calls(("lookup_order", {"order_code": "A100"}))]
        rest.append(anthropic_text("Order A100 is refundable: delivered 12 days ago."))
    fake_llm.queue(cut, *rest)
    result = ask(fake_llm, provider)
    assert result.exit_code == 0, result.stderr
    later = fake_llm.bodies()[1:]
    assert len(later) == 2
    for body in later:
        (echoed,) = _echoed_replies(body)
        assert echoed.startswith(ramble[:800]) and len(echoed) < 900
        assert echoed.endswith("[10,800 more characters not repeated]")


class _Exploding:
    provider = "test"
    model = "exploding"

    def decide(self, request: ModelRequest) -> Any:
        raise RuntimeError("boom in the model")


def _trace_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_model_raising_anything_still_ends_the_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("agent_cli.runtime.assemble.choose_model", lambda *_: _Exploding())
    trace = tmp_path / "run.jsonl"
    result = runner.invoke(app, ["ask", "Is A100 refundable?", "--trace", str(trace)])
    assert result.exit_code == 1
    assert "internal error (RuntimeError: boom in the model)" in result.stderr
    last = _trace_records(trace)[-1]
    assert last["event"] == "run_finished"
    assert last["status"] == "error"
    assert last["error"] == "internal error (RuntimeError: boom in the model)"


def test_a_toolbox_raising_anything_still_ends_the_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*_: object, **__: object) -> None:
        raise RuntimeError("boom in a tool")

    monkeypatch.setattr("agent_cli.tools.ToolRegistry.invoke", explode)
    trace = tmp_path / "run.jsonl"
    result = runner.invoke(app, ["ask", "Is A100 refundable?", "--dry-run", "--trace", str(trace)])
    assert result.exit_code == 1
    assert "RuntimeError: boom in a tool" in result.stderr
    kinds = [r["event"] for r in _trace_records(trace)]
    assert kinds == ["run_started", "decision", "run_finished"]
    assert _trace_records(trace)[-1]["status"] == "error"


# --- fuzzing the reply parsers -----------------------------------------------------------------

_ODD_VALUES: list[Any] = [
    None,
    True,
    -1,
    10**30,
    1.5e308,
    "",
    "\ud800",
    "x" * 25_000,
    [],
    {},
    [[[[[]]]]],
    {"type": "text"},
    {"type": "tool_use", "name": 5},
]


def _mutations(payload: Any, rng: random.Random) -> Any:
    """A copy of `payload` with one random value anywhere in it replaced by an odd one."""
    mutated = copy.deepcopy(payload)
    places: list[tuple[Any, Any]] = []
    pending = [mutated]
    while pending:
        node = pending.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            places.append((node, key))
            if isinstance(value, dict | list):
                pending.append(value)
    if not places:
        return rng.choice(_ODD_VALUES)
    node, key = rng.choice(places)
    node[key] = copy.deepcopy(rng.choice(_ODD_VALUES))
    return mutated


def _request() -> ModelRequest:
    return ModelRequest(
        goal="Is A100 refundable?", today=date(2026, 10, 13), tools=(), history=(), deadline=1e12
    )


class _Replies:
    """A transport that answers every request with the payload it holds."""

    def __init__(self) -> None:
        self.payload: Any = None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=json.dumps(self.payload).encode())


def _adapters(replies: _Replies) -> list[OpenAIChat | AnthropicMessages]:
    def channel() -> Channel:
        return mock_channel(replies)

    return [
        OpenAIChat(channel(), OpenAIOptions(model="m", mode="tools")),
        OpenAIChat(channel(), OpenAIOptions(model="m", mode="json")),
        AnthropicMessages(channel(), AnthropicOptions("m", mode="tools")),
        AnthropicMessages(channel(), AnthropicOptions("m", mode="json")),
    ]


def test_mutated_replies_never_escape_as_internal_errors() -> None:
    rng = random.Random(20261202)
    seeds = [
        openai_calls(("lookup_order", {"order_code": "A100"}), ("refund_policy", "{}")),
        openai_text('{"type": "final", "answer": "ok"}'),
        anthropic_calls(("lookup_order", {"order_code": "A100"}), text="thinking"),
        anthropic_text('{"type": "tool", "tool": "refund_policy"}'),
    ]
    replies = _Replies()
    outcomes: dict[str, int] = {}
    for adapter in _adapters(replies):
        for _ in range(300):
            replies.payload = _mutations(rng.choice(seeds), rng)
            try:
                adapter.decide(_request())
                outcome = "parsed"
            except (MalformedReply, ProviderError) as exc:
                outcome = type(exc).__name__
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
        adapter.close()
    # Every kind of outcome was reached, so the mutations really hit the parsers.
    assert {"parsed", "MalformedReply", "InvalidProviderResponse"} <= set(outcomes)


# --- limits per reply --------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_calls_past_the_per_reply_limit_are_answered_not_run(
    fake_llm: FakeLLM, provider: str
) -> None:
    many = [("lookup_order", {"order_code": f"A{100 + i}"}) for i in range(11)]
    calls = openai_calls(*many) if provider == "openai" else anthropic_calls(*many)
    answer = (
        openai_text("Done: I looked up order A100 as asked.")
        if provider == "openai"
        else anthropic_text("Done: I looked up order A100 as asked.")
    )
    fake_llm.queue(calls, answer)
    result = ask(fake_llm, provider)
    assert result.exit_code == 0, result.stderr
    seen = records(result)
    observed = [r for r in seen if r["event"] == "observation"]
    assert len(observed) == 8  # the default limits.max_calls_per_reply
    repair = next(r for r in seen if r["event"] == "repair")
    assert repair["cause"] == "calls"
    assert "the reply held 11 calls and at most 8 run per reply" in repair["problem"]
    assert fake_llm.violations == []  # the second request answered all 11 ids
    second = fake_llm.bodies()[1]["messages"]
    if provider == "openai":
        results = [m for m in second if m["role"] == "tool"]
    else:
        results = [b for b in second[-1]["content"] if b["type"] == "tool_result"]
    assert len(results) == 11
    assert all("not run" in str(r["content"]) for r in results[8:])


def test_the_per_reply_limit_is_a_setting(fake_llm: FakeLLM, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[limits]\nmax_calls_per_reply = 1\n")
    fake_llm.queue(
        openai_calls(("refund_policy", {}), ("lookup_order", {"order_code": "A100"})),
        openai_text("Done: I read the refund policy."),  # A100 was not looked up: not named
    )
    result = ask(fake_llm, "openai", "--config", str(config))
    assert result.exit_code == 0, result.stderr
    assert [r["tool"] for r in records(result) if r["event"] == "observation"] == ["refund_policy"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_duplicate_call_ids_are_made_unique(fake_llm: FakeLLM, provider: str) -> None:
    if provider == "openai":
        first = openai_calls(("lookup_order", {"order_code": "A100"}), ("refund_policy", {}))
        for call in first["choices"][0]["message"]["tool_calls"]:
            call["id"] = "call_same"
        again = openai_calls(("refund_policy", {}))
        again["choices"][0]["message"]["tool_calls"][0]["id"] = "call_same"
        answer = openai_text("Done: I looked up order A100 as asked.")
    else:
        first = anthropic_calls(("lookup_order", {"order_code": "A100"}), ("refund_policy", {}))
        for block in first["content"]:
            block["id"] = "toolu_same"
        again = anthropic_calls(("lookup_order", {"order_code": "A101"}))
        again["content"][0]["id"] = "toolu_same"
        answer = anthropic_text("Done: I looked up order A100 as asked.")
    fake_llm.queue(first, again, answer)
    result = ask(fake_llm, provider)
    assert result.exit_code == 0, result.stderr
    assert fake_llm.violations == []
    ids = [r["decision"].get("call_id") for r in records(result) if r["event"] == "decision"]
    ids = ids[:3]
    assert len(set(ids)) == 3
    assert ids[0] in ("call_same", "toolu_same")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_or_infinity_in_arguments_is_an_invalid_call_not_a_crash(
    fake_llm: FakeLLM, provider: str, constant: str
) -> None:
    if provider == "openai":
        hostile = json.dumps(openai_calls(("lookup_order", '{"order_code": "A100"}')))
        hostile = hostile.replace('\\"A100\\"', constant)
    else:
        hostile = json.dumps(anthropic_calls(("lookup_order", {"order_code": "A100"})))
        hostile = hostile.replace('"A100"', constant)
    assert constant in hostile
    fake_llm.queue(
        Reply(200, hostile, {"content-type": "application/json"}),
        (openai_text if provider == "openai" else anthropic_text)("I could not check it."),
    )
    result = ask(fake_llm, provider, "--no-stream")
    assert result.exit_code == 0, result.stderr
    assert "internal error" not in result.stderr
    (observed,) = [r for r in records(result) if r["event"] == "observation"]
    assert observed["is_error"] and observed["observation"].startswith("ERROR:")
    assert "NaN" in observed["observation"] or "Infinity" in observed["observation"]
    assert fake_llm.violations == []


def test_nan_in_a_json_mode_decision_makes_the_call_invalid() -> None:
    from agent_cli.core.decisions import CallTool, Usage
    from agent_cli.providers.base import parse_json_decision

    text = '{"type": "tool", "tool": "issue_refund", "args": {"amount": -Infinity}}'
    decision = parse_json_decision(text, Usage(), "c1")
    assert isinstance(decision, CallTool)
    assert (
        decision.invalid
        == "the arguments for issue_refund hold -Infinity, which JSON does not allow"
    )
    json.dumps(decision.args, allow_nan=False)  # nothing a request cannot carry


def test_a_raw_line_break_inside_a_json_string_is_read() -> None:
    """Small models write them; the text is cleaned before any terminal sees it anyway."""
    assert read_json('{"answer": "two\nlines\tand a tab"}') == {"answer": "two\nlines\tand a tab"}
