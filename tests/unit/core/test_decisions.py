"""The decision wire form: every shape, every bad payload."""

from __future__ import annotations

import pytest

from agent_cli.core.decisions import (
    AskUser,
    CallTool,
    DecisionError,
    FinalAnswer,
    parse_decision,
    parse_decisions,
)


def test_tool_decision_round_trips() -> None:
    wire = {"type": "tool", "tool": "lookup_order", "args": {"order_code": "A100"}, "thought": "t"}
    decision = parse_decision(wire)
    assert decision == CallTool(tool="lookup_order", args={"order_code": "A100"}, thought="t")
    assert decision.model_dump(exclude_none=True) == wire


def test_final_decision_round_trips() -> None:
    decision = parse_decision({"type": "final", "answer": "Yes."})
    assert decision == FinalAnswer(answer="Yes.")


def test_ask_user_decision() -> None:
    decision = parse_decision({"type": "ask_user", "question": "Which order?"})
    assert decision == AskUser(question="Which order?")
    assert decision.as_call() == CallTool(tool="ask_user", args={"question": "Which order?"})


def test_tool_decision_defaults_to_no_args_and_no_thought() -> None:
    decision = parse_decision({"type": "tool", "tool": "refund_policy"})
    assert isinstance(decision, CallTool)
    assert (decision.args, decision.thought) == ({}, "")


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({}, 'type: missing; expected "tool", "ask_user" or "final"'),
        ({"type": "ask_user"}, "question: Field required"),
        ({"type": "ask_user", "question": ""}, "question: String should have at least 1 character"),
        ({"type": "ask"}, "does not match any of the expected tags"),
        ({"type": "tool"}, "tool: Field required"),
        ({"type": "tool", "tool": ""}, "tool: String should have at least 1 character"),
        ({"type": "tool", "tool": "x", "args": "A100"}, "args: Input should be a valid dictionary"),
        ({"type": "tool", "tool": "x", "input": "A100"}, "input: Extra inputs are not permitted"),
        ({"type": "final"}, "answer: Field required"),
        ({"type": "final", "answer": ""}, "answer: String should have at least 1 character"),
        ({"type": "final", "answer": 42}, "answer: Input should be a valid string"),
        ("final", "decision: Input should be a valid dictionary"),
        (None, "decision: Input should be a valid dictionary"),
    ],
)
def test_bad_payloads_are_rejected_with_the_field_named(payload: object, message: str) -> None:
    with pytest.raises(DecisionError, match=message.replace("(", r"\(")):
        parse_decision(payload)


def test_error_messages_never_echo_a_huge_input() -> None:
    with pytest.raises(DecisionError) as caught:
        parse_decision({"type": "final", "answer": ["x" * 100_000]})
    assert len(str(caught.value)) < 200


def test_a_list_names_the_bad_decision_by_number() -> None:
    with pytest.raises(DecisionError, match="decision 2: tool: Field required"):
        parse_decisions([{"type": "final", "answer": "a"}, {"type": "tool"}])


def test_a_list_must_be_a_list() -> None:
    with pytest.raises(DecisionError, match="expected a JSON array of decisions, got dict"):
        parse_decisions({"type": "final", "answer": "a"})


def test_decisions_are_immutable() -> None:
    decision = FinalAnswer(answer="a")
    with pytest.raises(ValueError, match="frozen"):
        decision.answer = "b"  # type: ignore[misc]
