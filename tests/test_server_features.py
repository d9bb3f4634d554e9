"""Servers that refuse parts of a request: JSON mode falls back to plainer forms and remembers
the one that works; a server without tool calling gets a message that says what to do."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app

from .fakellm import FakeLLM, Reply, error, openai_text
from .test_providers import KEY, ask, final, records

runner = CliRunner()
LOOKUP = json.dumps({"type": "tool", "tool": "lookup_order", "args": {"order_code": "A100"}})
ANSWER = json.dumps({"type": "final", "answer": "Order A100 is refundable."})


def formats(fake: FakeLLM) -> list[str | None]:
    return [(b.get("response_format") or {}).get("type") for b in fake.bodies()]


def test_a_refused_json_schema_falls_back_to_json_object_and_stays(fake_llm: FakeLLM) -> None:
    fake_llm.refuse_formats = {"json_schema"}
    fake_llm.queue(openai_text(LOOKUP), openai_text(ANSWER))
    result = ask(fake_llm, "openai", "--mode", "json")
    assert result.exit_code == 0, result.stderr
    assert final(result)["answer"] == "Order A100 is refundable."
    # Refused once, not retried as an overload; the working form kept for step 2.
    assert formats(fake_llm) == ["json_schema", "json_object", "json_object"]
    downgrade = [r for r in records(result) if r["event"] == "model_call" and r["fallback"]]
    assert len(downgrade) == 1
    assert downgrade[0]["status"] == 500
    assert downgrade[0]["fallback"] == "response_format json_object"
    # The schema the server would not take travels in the prompt instead.
    first, second = fake_llm.bodies()[:2]
    assert "must match this JSON schema" not in first["messages"][0]["content"]
    assert "must match this JSON schema" in second["messages"][0]["content"]


def test_plain_prompting_when_both_forms_are_refused(fake_llm: FakeLLM) -> None:
    fake_llm.refuse_formats = {"json_schema", "json_object"}
    fake_llm.queue(openai_text(ANSWER))
    result = ask(fake_llm, "openai", "--mode", "json", "--no-grounding")
    assert result.exit_code == 0, result.stderr
    assert formats(fake_llm) == ["json_schema", "json_object", None]
    fallbacks = [r["fallback"] for r in records(result) if r["event"] == "model_call"]
    assert fallbacks == ["response_format json_object", "response_format none", None]


def test_the_fallback_is_shown_on_screen(fake_llm: FakeLLM) -> None:
    fake_llm.refuse_formats = {"json_schema"}
    fake_llm.queue(openai_text(ANSWER))
    argv = ["ask", "Is A100 refundable?", "--provider", "openai", "--base-url"]
    argv += [fake_llm.url, "--mode", "json", "--no-grounding"]
    result = runner.invoke(app, argv, env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 0, result.stderr
    shown = " ".join(result.stdout.split())  # the console wraps at 80 columns
    assert "response_format json_schema refused; asking with response_format json_object" in shown


def test_a_chat_session_remembers_the_working_form(fake_llm: FakeLLM) -> None:
    fake_llm.refuse_formats = {"json_schema"}
    fake_llm.queue(openai_text(ANSWER), openai_text(ANSWER))
    argv = ["chat", "--provider", "openai", "--base-url", fake_llm.url, "--mode", "json"]
    result = runner.invoke(
        app,
        [*argv, "--no-grounding"],
        input="Is A100 refundable?\nAnd now?\n",
        env={"OPENAI_API_KEY": KEY},
    )
    assert result.exit_code == 0, result.stderr
    assert formats(fake_llm) == ["json_schema", "json_object", "json_object"]


def test_an_ordinary_500_is_still_retried_in_json_mode(fake_llm: FakeLLM) -> None:
    fake_llm.queue(error(500, "upstream failure"), openai_text(ANSWER))
    result = ask(fake_llm, "openai", "--mode", "json", "--no-grounding")
    assert result.exit_code == 0, result.stderr
    assert formats(fake_llm) == ["json_schema", "json_schema"]


REFUSALS: list[Any] = [
    error(400, "registry.ollama.ai/library/gemma:2b does not support tools"),
    error(400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser'),
    error(500, "tools param requires --jinja flag"),
]


@pytest.mark.parametrize("refusal", REFUSALS)
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_server_without_tool_calling_suggests_json_mode(
    fake_llm: FakeLLM, provider: str, refusal: Reply
) -> None:
    fake_llm.refuse_tools = refusal
    result = ask(fake_llm, provider)
    assert result.exit_code == 1
    assert "refused tools" in result.stderr
    assert "use --mode json" in result.stderr
    assert len(fake_llm.requests) == 1  # not retried, even for a 500
    assert final(result)["status"] == "error"
