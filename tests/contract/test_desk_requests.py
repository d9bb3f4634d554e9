"""What a real model is sent for a desk question: every tool, by the conversation's phase, not
by its words (issue 49, point 4): identification, the help centre and a hand-over from the
start, each other tool once what it needs has answered (an order's details once the customer is
identified, a write once the order was read, an article once searched). Budgets: the seed's
first request at most 1,500 bytes, a desk question's first about 3,000, the largest request of
a whole desk conversation at most 8,000 (τ²-bench's retail agent sends about 18,500). JSON
mode's schema and prompt list the step's own tools."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from tests.contract.test_providers import KEY
from tests.fakellm import FakeLLM, openai_calls, openai_text

runner = CliRunner()

DESK_QUESTIONS = (  # one per intent of desk.md, both languages
    "A101はいつ届きますか？メールはaoi.suzuki@example.comです",
    "Cancel B200 please, kaito.yamamoto@example.com",
    "Please ship B200 to 4-5-6 Umeda, Kita-ku, Osaka 530-0001, Japan. kaito.yamamoto@example.com",
    "Can I pay for B200 with PayPal? kaito.yamamoto@example.com",
    "I'd like to exchange the T-shirt in A105 for size L. mei.watanabe@example.com",
    "A100のマグを返品したいです。haruki.sato@example.com",
    "Where is my refund for A106?",
    "注文番号がわかりません。mei.watanabe@example.com",
    "What does the warranty cover?",
    "I want to talk to a person",
)


def ask(fake: FakeLLM, question: str, *more: str, input: str | None = None) -> Any:
    argv = ["ask", question, "--provider", "openai", "--base-url", fake.url, "--no-stream"]
    argv += ["--today", "2026-10-13", "--no-grounding", *more]
    env = {"OPENAI_API_KEY": KEY, "AGENT_TODAY": "2026-10-13"}  # the writes' own clock too
    return runner.invoke(app, argv, env=env, input=input)


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools", [])]


def size(body: dict[str, Any]) -> int:
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())


@pytest.mark.parametrize("mode", ["tools", "json"])
def test_the_seed_question_is_sent_what_it_was_before_the_desk(
    fake_llm: FakeLLM, mode: str
) -> None:
    fake_llm.queue(openai_text("Fine."))
    ask(fake_llm, "Is order A100 refundable?", "--mode", mode, "--max-steps", "1")
    first = fake_llm.bodies()[0]
    assert size(first) <= (1000 if mode == "tools" else 1700)
    prompt = first["messages"][0]["content"]
    assert "find_user_id_by_email" not in json.dumps(first) and "search_help" not in prompt


@pytest.mark.parametrize("question", DESK_QUESTIONS)
def test_a_desk_questions_first_request_is_under_3200_bytes(
    fake_llm: FakeLLM, question: str
) -> None:
    fake_llm.queue(openai_text("Fine."))
    ask(fake_llm, question, "--max-steps", "1")
    first = fake_llm.bodies()[0]
    assert size(first) <= 3200, (size(first), tool_names(first))  # 2,917 at most when set


MEI = "mei.watanabe@example.com"
EXCHANGE = {
    "order_id": "A105",
    "item_ids": ["1008001"],
    "new_item_ids": ["1008002"],
    "payment_method_id": "gift_card_1006",
}


def test_the_largest_request_of_a_whole_desk_conversation_is_under_8000_bytes(
    fake_llm: FakeLLM,
) -> None:
    """An exchange from the first word to the commit: look the order up, identify, read the
    order, read the product's variants, propose, ask for the customer's yes, commit, answer.
    Issue 49's budget, 8,000 bytes (τ²-bench's retail agent sends about 18,500): by phase (a
    write once an order of its status was read, the identification gone once it found the
    customer, the other writes and the catalogue not offered while a proposal waits for its
    yes) the largest is 7,957 (was 10,257 before the proposal's phase)."""
    fake_llm.queue(
        openai_calls(("lookup_order", {"order_code": "A105"})),
        openai_calls(("find_user_id_by_email", {"email": MEI})),
        openai_calls(("get_order_details", {"order_id": "A105"})),
        openai_calls(("get_product_details", {"product_id": "P-TSHIRT"})),
        openai_calls(("exchange_delivered_order_items", EXCHANGE)),
        openai_calls(("ask_user", {"question": "Exchange the T-shirt for size L? Say yes."})),
        openai_calls(("exchange_delivered_order_items", EXCHANGE)),
        openai_text("Your T-shirt will be exchanged for size L."),
    )
    argv = ["chat", "--provider", "openai", "--base-url", fake_llm.url, "--no-stream"]
    argv += ["--today", "2026-10-13", "--no-grounding", "--max-steps", "10"]
    question = f"I'd like to exchange the T-shirt in A105 for size L. {MEI}"
    env = {"OPENAI_API_KEY": KEY, "AGENT_TODAY": "2026-10-13"}
    result = runner.invoke(app, argv, input=f"{question}\nyes\n", env=env)
    bodies = fake_llm.bodies()
    assert len(bodies) == 8, result.output
    offered = [set(tool_names(body)) for body in bodies]
    assert "exchange_delivered_order_items" in offered[3]  # once the delivered order was read
    assert not any("cancel_pending_order" in names for names in offered)  # a pending order's
    assert "find_user_id_by_email" not in offered[3]  # found: not offered again
    assert max(size(body) for body in bodies) <= 8_000, [size(body) for body in bodies]
    assert "return_delivered_order_items" not in offered[5]  # the exchange waits for its yes


def test_the_customers_records_are_offered_once_they_are_identified(fake_llm: FakeLLM) -> None:
    fake_llm.queue(
        openai_calls(("find_user_id_by_email", {"email": "haruki.sato@example.com"})),
        openai_text("These are your orders."),
    )
    ask(fake_llm, "I don't have my order number. My email is haruki.sato@example.com")
    first, second = fake_llm.bodies()
    assert tool_names(first) == [
        "lookup_order",
        "refund_policy",
        "find_user_id_by_email",
        "find_user_id_by_name_zip",
        "transfer_to_human_agents",
        "search_help",
        "ask_user",
    ]
    assert {"get_user_details", "get_order_details"} <= set(tool_names(second))


def test_a_failed_identification_opens_nothing(fake_llm: FakeLLM) -> None:
    fake_llm.queue(
        openai_calls(("find_user_id_by_email", {"email": "nobody@example.com"})),
        openai_text("I could not find you."),
    )
    ask(fake_llm, "I don't have my order number. My email is nobody@example.com")
    second = fake_llm.bodies()[1]
    assert "get_user_details" not in tool_names(second)


CANCEL_FLOW = (
    openai_calls(("lookup_order", {"order_code": "B200"})),
    openai_calls(("find_user_id_by_email", {"email": "kaito.yamamoto@example.com"})),
    openai_calls(("get_order_details", {"order_id": "B200"})),
    openai_text("Shall I cancel B200?"),
)
OTHER_WRITES = {"return_delivered_order_items", "modify_pending_order_items"}


@pytest.mark.parametrize(
    "question",
    [
        "Please cancel my order B200. My email is kaito.yamamoto@example.com",
        # words no list foresaw: the cancel is offered all the same (issue 49, point 4)
        "I'd rather not go through with B200 after all. kaito.yamamoto@example.com",
    ],
)
def test_an_order_write_is_offered_once_the_order_was_read(
    fake_llm: FakeLLM, question: str
) -> None:
    fake_llm.queue(*CANCEL_FLOW)
    ask(fake_llm, question)
    offered = [tool_names(body) for body in fake_llm.bodies()]
    assert offered[0] == ["lookup_order"]  # the named order's lookup comes first
    assert "get_order_details" not in offered[1] and "cancel_pending_order" not in offered[1]
    assert "get_order_details" in offered[2] and "cancel_pending_order" not in offered[2]
    assert "cancel_pending_order" in offered[3]
    # by phase: every write of a pending order once it was read, whatever was asked; not a
    # delivered order's return, which could only be refused
    assert "modify_pending_order_items" in offered[3]
    assert "return_delivered_order_items" not in offered[3]


def test_the_narrow_profile_offers_only_the_tools_of_what_the_words_may_mean(
    fake_llm: FakeLLM, tmp_path: Any
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[agent]\ntool_offer = "narrow"\n', encoding="utf-8")
    fake_llm.queue(*CANCEL_FLOW)
    ask(fake_llm, CANCEL_FLOW_QUESTION, "--config", str(config))
    offered = [tool_names(body) for body in fake_llm.bodies()]
    assert "cancel_pending_order" in offered[3]
    assert not set().union(*offered) & OTHER_WRITES


CANCEL_FLOW_QUESTION = "Please cancel my order B200. My email is kaito.yamamoto@example.com"


def test_an_article_is_offered_once_searched(fake_llm: FakeLLM) -> None:
    query = {"query": "shipping to Osaka"}
    fake_llm.queue(openai_calls(("search_help", query)), openai_text("2-3 days [shipping-times]"))
    ask(fake_llm, "How long does shipping take to Osaka?")
    first, second = fake_llm.bodies()
    assert "get_article" not in tool_names(first) and "get_article" in tool_names(second)


def test_json_mode_lists_the_steps_own_tools(fake_llm: FakeLLM) -> None:
    fake_llm.queue(
        openai_text(
            json.dumps({"type": "tool", "tool": "search_help", "args": {"query": "shipping"}})
        ),
        openai_text(json.dumps({"type": "final", "answer": "2-3 days [shipping-times]"})),
    )
    ask(fake_llm, "How long does shipping take to Osaka?", "--mode", "json")
    first, second = (body["messages"][0]["content"] for body in fake_llm.bodies())
    assert "- search_help:" in first and "- get_article:" not in first
    assert "- get_article:" in second


def test_json_modes_tool_branches_carry_no_pattern_or_length(fake_llm: FakeLLM) -> None:
    """A grammar converter reads its own subset of regular expressions (llama.cpp's rejects
    `\\s` in a class and `(?:`) and spells lengths out as repetitions (a 2,000-character
    summary is more than llama.cpp builds), and its server then crashed: the arguments'
    patterns and lengths stay in our own check, not in the decision schema."""
    fake_llm.queue(
        openai_text(
            json.dumps(
                {"type": "tool", "tool": "find_user_id_by_email", "args": {"email": "a@b.c"}}
            )
        ),
        openai_text(json.dumps({"type": "final", "answer": "No such account."})),
    )
    ask(
        fake_llm,
        "I forgot my order number; a@b.c; and how long does shipping take?",
        "--mode",
        "json",
    )
    for body in fake_llm.bodies():
        schema = body["response_format"]["json_schema"]["schema"]
        for branch in schema["anyOf"]:
            if branch["properties"]["type"] == {"enum": ["tool"]}:
                args = json.dumps(branch["properties"]["args"])
                assert "pattern" not in args and "maxLength" not in args, branch
    first = fake_llm.bodies()[0]["response_format"]["json_schema"]["schema"]["anyOf"]
    offered = [b["properties"]["tool"]["enum"][0] for b in first if "tool" in b["properties"]]
    assert {"find_user_id_by_email", "search_help"} <= set(offered)  # patterned arguments


def test_tools_mode_sends_no_pattern_or_length(fake_llm: FakeLLM) -> None:
    """A server that makes a grammar of the tools (llama.cpp's function calling) spells a
    length out as repetitions: the hand-over's 2,000-character summary is more than it builds."""
    fake_llm.queue(openai_text("Fine."))
    ask(fake_llm, "I want to talk to a person", "--max-steps", "1")
    (body,) = fake_llm.bodies()
    assert "transfer_to_human_agents" in tool_names(body)
    for tool in body["tools"]:
        sent = json.dumps(tool["function"]["parameters"])
        assert not any(k in sent for k in ("maxLength", "minLength", "pattern", "maxItems")), sent
