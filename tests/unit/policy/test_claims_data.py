"""A final answer may carry what it says was done as data (JSON mode's `claims`: kind and
order, issue 48 point 3): each is checked by kind and by order against this run's committed
outcomes and the store's facts, as a claim read from the text is; and the text is still read."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.core.decisions import DecisionError, FinalAnswer, StatedClaim, parse_decision
from agent_cli.core.tool_outcomes import Changed, Proposed, Read, Transferred
from agent_cli.policy.grounding import ground_answer
from tests.fakellm import FakeLLM, openai_text
from tests.unit.policy.test_claims import done, history

runner = CliRunner()
PLAIN = "Thank you for your patience."  # says nothing was done: only the data claims


def stated(kind: str, order: str | None = None) -> tuple[StatedClaim, ...]:
    return (StatedClaim.model_validate({"kind": kind, "order": order}),)


def test_a_stated_act_nobody_did_is_refused_saying_what_was_done() -> None:
    problem = ground_answer(PLAIN, history(), stated("cancel", "B200"))
    assert problem is not None
    assert "a cancellation was made (B200: 'claims: cancel B200')" in problem
    assert "this run did not make it (committed nothing)" in problem


@pytest.mark.parametrize(
    ("claim", "made"),
    [
        (stated("cancel", "B200"), done("cancel", "B201")),  # another order
        (stated("address", "B200"), done("cancel", "B200")),  # another kind
        (stated("refund", "A100"), done("cancel", "A100")),  # a cancel with nothing back
        (stated("handover"), done("cancel", "B200")),
    ],
)
def test_a_stated_act_is_grounded_only_by_its_own_kind_and_order(
    claim: tuple[StatedClaim, ...], made: Any
) -> None:
    assert ground_answer(PLAIN, history(made), claim) is not None


@pytest.mark.parametrize(
    ("claim", "made"),
    [
        (stated("cancel", "B200"), done("cancel", "B200")),
        (stated("cancel", "#b200"), done("cancel", "B200")),  # written as customers write it
        (stated("refund", "A100"), done("refund", "A100")),
        (stated("handover"), Transferred(4)),
        (stated("account_address"), done("account_address", "")),
    ],
)
def test_a_stated_act_this_run_did_passes(claim: tuple[StatedClaim, ...], made: Any) -> None:
    assert ground_answer(PLAIN, history(made), claim) is None


def test_a_proposed_change_is_no_change_made_and_a_store_fact_is_a_fact() -> None:
    proposed = Proposed("cancel_pending_order", "cancel B200", "B200", "P1")
    assert ground_answer(PLAIN, history(proposed), stated("cancel", "B200")) is not None
    refunded_before = Read("A104", "REFUNDED", 32_000)
    assert ground_answer(PLAIN, history(refunded_before), stated("refund", "A104")) is None


def test_the_text_is_still_read_when_the_data_says_nothing_or_something_else() -> None:
    cancelled = history(
        Changed(change_id=1, tool="cancel_pending_order", summary="cancel B200", order="B200")
    )
    text = "I have cancelled B200 and updated your address."
    assert ground_answer(text, cancelled, ()) is not None  # no data: the text's address claim
    assert ground_answer(text, cancelled, stated("cancel", "B200")) is not None


def test_claims_as_data_parse_strictly() -> None:
    decision = parse_decision(
        json.loads(
            '{"type": "final", "answer": "Done.", "claims": [{"kind": "cancel", "order": "B200"}]}'
        )
    )
    assert isinstance(decision, FinalAnswer) and decision.claims == stated("cancel", "B200")
    for bad in (
        '[{"kind": "status", "order": "B200"}]',  # not an act
        '[{"kind": "cancel", "order": "B200", "why": "x"}]',  # nothing else
        json.dumps([{"kind": "cancel"}] * 21),  # at most 20
    ):
        with pytest.raises(DecisionError):
            parse_decision(json.loads(f'{{"type": "final", "answer": "x", "claims": {bad}}}'))


# --- over a real HTTP server speaking the OpenAI wire format, in JSON mode ------------------------

FIND = {"type": "tool", "tool": "find_user_id_by_email"}
KAITO = {"email": "kaito.yamamoto@example.com"}
B200 = {"order_id": "B200"}
CANCEL = {**B200, "reason": "no longer needed"}
ASKED = "Shall I make change P1, cancelling B200? yes or no"


def ask_json_mode(fake: FakeLLM) -> list[dict[str, Any]]:
    argv = ["ask", "Please cancel B200", "--provider", "openai", "--base-url", fake.url]
    argv += ["--mode", "json", "--no-stream", "--today", "2026-10-13", "--json"]
    result = runner.invoke(app, argv, env={"OPENAI_API_KEY": "sk-test"})
    assert result.exit_code == 0, result.stderr + result.stdout
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_json_mode_claims_are_offered_after_an_act_and_a_false_one_is_repaired(
    fake_llm: FakeLLM,
) -> None:
    false_claim = {"kind": "cancel", "order": "B200"}
    fake_llm.queue(
        openai_text(json.dumps({**FIND, "args": KAITO})),
        openai_text(json.dumps({"type": "tool", "tool": "get_order_details", "args": B200})),
        openai_text(json.dumps({"type": "tool", "tool": "cancel_pending_order", "args": CANCEL})),
        openai_text(json.dumps({"type": "final", "answer": PLAIN, "claims": [false_claim]})),
        openai_text(json.dumps({"type": "final", "answer": ASKED})),
    )
    records = ask_json_mode(fake_llm)
    (repair,) = [r for r in records if r["event"] == "repair"]
    assert "a cancellation was made (B200: 'claims: cancel B200')" in repair["problem"]
    assert records[-1]["answer"] == ASKED
    bodies = fake_llm.bodies()

    def final_branch(body: dict[str, Any]) -> dict[str, Any]:
        schema = body["response_format"]["json_schema"]["schema"]
        branches = schema.get("anyOf", [schema])
        finals = [b for b in branches if b["properties"]["type"] == {"enum": ["final"]}]
        assert finals, json.dumps(schema)[:3000]
        return finals[0]

    # before the run acted, its requests are as they were: no claims offered
    assert not any('"claims"' in json.dumps(body) for body in bodies[:3])
    # after the proposal, the final answer may list them, and the prompt says how
    assert '"claims"' in bodies[3]["messages"][0]["content"]
    kinds = final_branch(bodies[3])["properties"]["claims"]["items"]["properties"]["kind"]
    assert "cancel" in kinds["enum"] and "status" not in kinds["enum"]


def test_a_named_order_read_by_the_desk_is_looked_up_already() -> None:
    """JSON mode's step schema makes a named order's lookup the only step until some call has
    asked about it: the desk's `order_id` (`#W...` too) asks as the seed's `order_code` does."""
    from datetime import date

    from agent_cli.core.decisions import CallTool, Step
    from agent_cli.core.seams import ModelRequest, ToolSpec
    from agent_cli.providers.decision_schema import step_schema

    lookup = ToolSpec("lookup_order", "d", {"type": "object", "properties": {"order_code": {}}})
    details = ToolSpec("get_order_details", "d", {"type": "object", "properties": {}})

    def branches(goal: str, args: dict[str, str]) -> list[str]:
        read = Step(1, CallTool(tool="get_order_details", args=args), "ok", False)
        request = ModelRequest(
            goal=goal,
            today=date(2026, 10, 13),
            tools=(lookup, details),
            history=(read,),
            deadline=0.0,
        )
        schema = step_schema(request)
        return [b["properties"]["type"]["enum"][0] for b in schema.get("anyOf", [schema])]

    assert "final" in branches("Please cancel B200", {"order_id": "B200"})
    assert "final" in branches("Please cancel #W2378156", {"order_id": "#W2378156"})
    assert branches("Please cancel B200", {"order_id": "B201"}) == ["tool"]  # another order
