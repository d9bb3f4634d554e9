"""A simulated customer (issue 42, point 1): a case's persona played by `--customer-model`
under τ²'s user-simulator rules, over a loopback stub of the OpenAI wire format: the desk
greets first, the customer's stop and transfer tokens end the conversation, a customer who
never stops hits the turn limit, and a customer model that fails is not the agent's fault."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.evaluation.customer import GREETING, GUIDELINES, STOP, TRANSFER
from tests.contract.test_providers import KEY
from tests.fakellm import FakeLLM, Reply, anthropic_text, openai_calls, openai_text

runner = CliRunner()

CANCEL = """
[[cases]]
id = "sim-cancel"
approve = true
reference = [
  { tool = "cancel_pending_order", args = { order_id = "B200", reason = "no longer needed" } },
]

[cases.customer]
instructions = "You want to cancel order B200: you no longer need it."
known = "Your email is kaito.yamamoto@example.com."
unknown = "Your zip code."
"""


@pytest.fixture
def customer() -> Any:
    fake = FakeLLM().start()
    yield fake
    fake.stop()


def evaluate(
    tmp_path: Path, text: str, customer: FakeLLM, *extra: str, provider: str = "openai"
) -> Any:
    path = tmp_path / "cases.toml"
    path.write_text(text, encoding="utf-8")
    argv = ["eval", "run", str(path), "--json", "--customer-provider", provider]
    argv += ["--customer-model", "gpt-customer", "--customer-base-url", customer.url, *extra]
    if "--provider" not in extra:
        argv.append("--dry-run")
    return runner.invoke(app, argv, env={"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY})


def cases_of(result: Any) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return [line for line in lines if line["event"] == "case"]


def test_a_simulated_customer_cancels_an_order(customer: FakeLLM, tmp_path: Path) -> None:
    customer.queue(
        openai_text("Hi, I'd like to cancel my order B200."),
        openai_text("It's kaito.yamamoto@example.com"),
        openai_text("yes"),
        openai_text(f"Thanks! {STOP}"),
    )
    result = evaluate(tmp_path, CANCEL, customer)
    assert result.exit_code == 0, result.stdout + result.stderr
    (case,) = cases_of(result)
    assert case["passed"], case["failures"]
    assert case["customer_tokens"] == 4 * 120  # the customer model's, apart from the agent's
    bodies = customer.bodies()
    assert len(bodies) == 4
    system = bodies[0]["messages"][0]
    assert system["role"] == "system" and system["content"].startswith(GUIDELINES)
    assert "You want to cancel order B200" in system["content"]
    assert "Your email is kaito.yamamoto@example.com." in system["content"]
    assert "What you do not know:\nYour zip code." in system["content"]
    assert bodies[0]["messages"][1:] == [{"role": "user", "content": GREETING}]
    assert "tools" not in bodies[0] and bodies[0]["model"] == "gpt-customer"
    # the desk's words are the other side; the customer's own are "assistant"
    second = bodies[1]["messages"][1:]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"] == "Hi, I'd like to cancel my order B200."
    assert "email address on your account" in second[2]["content"]
    assert "Here is the change (P1): cancel order B200" in bodies[2]["messages"][-1]["content"]
    assert bodies[3]["messages"][-1]["content"].startswith("Done (change #1): cancel B200")


def test_a_customer_who_says_no_leaves_the_order_as_it_was(
    customer: FakeLLM, tmp_path: Path
) -> None:
    customer.queue(
        openai_text("Cancel B200 please."),
        openai_text("kaito.yamamoto@example.com"),
        openai_text("Hmm, no, leave it."),
        openai_text(STOP),
    )
    (case,) = cases_of(evaluate(tmp_path, CANCEL, customer))
    assert [f["kind"] for f in case["failures"]] == ["end_state"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_transfer_token_ends_the_conversation(
    provider: str, customer: FakeLLM, tmp_path: Path
) -> None:
    text = """
[[cases]]
id = "sim-help"
customer = { instructions = "Ask how long shipping to Osaka takes, then ask for a person." }
cited = ["shipping-times"]
reference = []
"""
    said = anthropic_text if provider == "anthropic" else openai_text
    customer.queue(said("How long does shipping take to Osaka?"), said(TRANSFER))
    (case,) = cases_of(evaluate(tmp_path, text, customer, provider=provider))
    assert case["passed"], case["failures"]
    assert case["runs"] == 1 and len(customer.bodies()) == 2
    assert customer.violations == []  # each request as the real API takes it
    if provider == "anthropic":
        first = customer.bodies()[0]
        assert first["system"].startswith(GUIDELINES)
        assert first["messages"] == [{"role": "user", "content": GREETING}]


def test_a_customer_who_never_stops_hits_the_turn_limit(customer: FakeLLM, tmp_path: Path) -> None:
    text = """
[[cases]]
id = "sim-chatty"
max_turns = 3
customer = { instructions = "Keep asking about shipping times, forever." }
reference = []
"""
    customer.queue(*(openai_text("How long does shipping take to Osaka?") for _ in range(4)))
    (case,) = cases_of(evaluate(tmp_path, text, customer))
    assert [(f["kind"], f["message"]) for f in case["failures"]] == [
        ("status", "the conversation reached its limit of 3 turns")
    ]
    assert case["runs"] == 3


def test_a_failing_customer_model_is_not_the_agents_fault(
    customer: FakeLLM, tmp_path: Path
) -> None:
    customer.queue(Reply(400, {"error": {"message": "model not found", "type": "invalid"}}))
    (case,) = cases_of(evaluate(tmp_path, CANCEL, customer))
    kinds = [f["kind"] for f in case["failures"]]
    assert kinds[0] == "customer"
    assert "simulated customer's model failed" in case["failures"][0]["message"]
    assert case["runs"] == 0


def test_both_sides_are_models_over_http(
    customer: FakeLLM, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    text = """
[[cases]]
id = "sim-both"
customer = { instructions = "Ask how long shipping to Osaka takes." }
facts = ["2-3 business days"]
cited = ["shipping-times"]
reference = []
"""
    customer.queue(openai_text("How long does shipping take to Osaka?"), openai_text(STOP))
    fake_llm.queue(
        openai_calls(("search_help", {"query": "shipping time Osaka"})),
        openai_text("Shipping to Osaka takes 2-3 business days. [shipping-times]"),
    )
    agent = ["--provider", "openai", "--base-url", fake_llm.url, "--no-stream", "--model", "a"]
    result = evaluate(tmp_path, text, customer, *agent)
    (case,) = cases_of(result)
    assert case["passed"], case["failures"]
    assert fake_llm.violations == [] and customer.violations == []
    agent_first = fake_llm.bodies()[0]["messages"]
    assert agent_first[-1] == {"role": "user", "content": "How long does shipping take to Osaka?"}


def test_a_simulated_customer_needs_a_customer_model(tmp_path: Path) -> None:
    path = tmp_path / "cases.toml"
    path.write_text(CANCEL, encoding="utf-8")
    result = runner.invoke(app, ["eval", "run", str(path), "--dry-run"])
    assert result.exit_code == 2
    assert "1 case(s) have a simulated customer ('sim-cancel'): give --customer-model" in (
        result.stderr
    )
    listed = runner.invoke(app, ["eval", "list", str(path)])
    assert listed.stdout.startswith("sim-cancel\tconversation\tYou want to cancel order B200")
    lone = runner.invoke(
        app, ["eval", "run", str(path), "--dry-run", "--customer-provider", "openai"]
    )
    assert lone.exit_code == 2 and "need --customer-model" in lone.stderr
    offline = runner.invoke(
        app,
        [
            "eval",
            "run",
            str(path),
            "--dry-run",
            "--customer-model",
            "m",
            "--customer-provider",
            "offline",
        ],
    )
    assert offline.exit_code == 2
    assert "--customer-model: the simulated customer needs a model served over HTTP" in (
        offline.stderr
    )


def test_a_customer_who_says_nothing_fails_the_case_as_customer(
    customer: FakeLLM, tmp_path: Path
) -> None:
    customer.queue(openai_text("   "))
    (case,) = cases_of(evaluate(tmp_path, CANCEL, customer))
    assert [(f["kind"], f["message"]) for f in case["failures"]] == [
        ("customer", "the simulated customer said nothing")
    ]
