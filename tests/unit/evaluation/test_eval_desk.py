"""Eval cases that say what a desk answer must be (issue 41, point 5): the intent, the writes
committed, a ticket opened, the articles cited, the orders after the run; each shown to fail
when its condition does not hold, and the built-in set covering every intent in both
languages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.core.tool_outcomes import Failed, Outcome, Read, Simulated, Transferred
from agent_cli.errors import CaseFileError
from agent_cli.evaluation.cases import builtin_cases, parse_cases
from agent_cli.evaluation.intents import INTENT_TOOLS, Intent, ticket_opened
from agent_cli.evaluation.judge import judge
from agent_cli.record.outcomes import RunRecord, ToolRun

runner = CliRunner()

CANCEL = """
[[cases]]
id = "cancel"
question = "Please cancel my order B200. kaito.yamamoto@example.com"
replies = ["yes"]
approve = true
intent = "cancel"
writes = ["cancel_pending_order"]
orders_after = { B200 = { status = "CANCELLED" } }
"""


def run_cases(tmp_path: Path, text: str) -> list[dict[str, Any]]:
    path = tmp_path / "cases.toml"
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["eval", "run", str(path), "--dry-run", "--json"])
    records = [json.loads(line) for line in result.stdout.splitlines()]
    return [r for r in records if r["event"] == "case"]


def failures(case: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["kind"], f["message"]) for f in case["failures"]]


def test_a_desk_case_passes_when_every_expectation_holds(tmp_path: Path) -> None:
    (case,) = run_cases(tmp_path, CANCEL)
    assert case["passed"], case["failures"]


def test_writes_fail_when_the_customer_says_no(tmp_path: Path) -> None:
    (case,) = run_cases(tmp_path, CANCEL.replace('replies = ["yes"]', 'replies = ["no"]'))
    assert failures(case) == [
        ("writes", "committed []; expected [cancel_pending_order]"),
        ("orders_after", "B200: status is 'PENDING', expected 'CANCELLED'"),
    ]


def test_without_approve_nothing_is_committed(tmp_path: Path) -> None:
    (case,) = run_cases(tmp_path, CANCEL.replace("approve = true\n", ""))
    assert [kind for kind, _ in failures(case)] == ["writes", "orders_after"]


def test_writes_expected_none_fail_when_one_is_made(tmp_path: Path) -> None:
    (case,) = run_cases(
        tmp_path, CANCEL.replace('writes = ["cancel_pending_order"]', "writes = []")
    )
    assert failures(case) == [("writes", "committed [cancel_pending_order]; expected []")]


def test_the_intent_fails_when_the_run_worked_on_another(tmp_path: Path) -> None:
    (case,) = run_cases(tmp_path, CANCEL.replace('intent = "cancel"', 'intent = "return"'))
    assert failures(case) == [
        (
            "intent",
            "the run never worked on return (it called none of return_delivered_order_items)",
        )
    ]


def test_handover_fails_both_ways(tmp_path: Path) -> None:
    wrong = CANCEL.replace('intent = "cancel"', "handover = true")
    (case,) = run_cases(tmp_path, wrong)
    assert ("handover", "no ticket was opened; expected the opposite") in failures(case)
    handed = """
[[cases]]
question = "I was charged twice for order A100"
handover = false
"""
    (case,) = run_cases(tmp_path, handed)
    assert ("handover", "a ticket was opened; expected the opposite") in failures(case)
    (case,) = run_cases(tmp_path, handed.replace("false", "true"))
    assert case["passed"], case["failures"]


def test_a_citation_fails_when_the_answer_does_not_cite_it(tmp_path: Path) -> None:
    text = """
[[cases]]
question = "How long does shipping take to Osaka?"
intent = "help"
cited = ["warranty"]
"""
    (case,) = run_cases(tmp_path, text)
    assert failures(case) == [("cited", "the answer does not cite [warranty]")]
    (case,) = run_cases(tmp_path, text.replace("warranty", "shipping-times"))
    assert case["passed"], case["failures"]


def test_orders_after_names_every_field_that_differs(tmp_path: Path) -> None:
    after = 'orders_after = { B200 = { status = "CANCELLED", items = ["1002001"], zip = "1" } }'
    (case,) = run_cases(tmp_path, CANCEL.replace(CANCEL.splitlines()[-1], after))
    assert failures(case) == [
        ("orders_after", "B200: items is ['1002002'], expected ['1002001']"),
        ("orders_after", "B200: zip is '220-0012', expected '1'"),
    ]
    missing = CANCEL.replace("{ B200 = {", "{ Z999 = {")
    (case,) = run_cases(tmp_path, missing)
    assert ("orders_after", "Z999: no such order in the store after the run") in failures(case)


def test_an_unrelated_acting_intent_fails_the_intent() -> None:
    (case,) = parse_cases(
        '[[cases]]\nquestion = "x"\nintent = "cancel"\n', "cases", json_file=False
    )
    run = RunRecord(status="answered", answer="Done")
    run.tools = [
        ToolRun("cancel_pending_order", {}, "PROPOSED (nothing is changed yet): ...", False),
        ToolRun("transfer_to_human_agents", {}, "TRANSFERRED: ticket #1 is open", False),
    ]
    assert [f.message for f in judge(case, run)] == [
        "the run worked on cancel but also on handover"
    ]
    run.tools = run.tools[:1]
    assert judge(case, run) == ()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("intent", '"refunds"', "intent"),
        ("writes", '["issue_refund"]', "writes"),
        ("cited", '["Not An Id"]', "cited"),
        ("orders_after", '{ "B-200" = { status = "X" } }', "'B-200' is not an order code"),
        ("orders_after", '{ B200 = { colour = "X" } }', "colour"),
        ("handover", '"maybe"', "handover"),
    ],
)
def test_a_bad_expectation_is_one_clear_error(field: str, value: str, message: str) -> None:
    text = f'[[cases]]\nid = "c"\nquestion = "x"\n{field} = {value}\n'
    with pytest.raises(CaseFileError, match="case 1 \\('c'\\)") as raised:
        parse_cases(text, "cases.toml", json_file=False)
    assert message in str(raised.value)


def test_the_builtin_set_covers_every_intent_in_both_languages() -> None:
    cases = builtin_cases()
    assert len(cases) >= 60
    japanese = {
        c.desk.intent for c in cases if any("\u3040" <= ch <= "\u30ff" for ch in c.question)
    }
    english = {c.desk.intent for c in cases if c.question.isascii()}
    # Every intent a run shows by its tools; the seed's cases judge refunds by verdict, and a
    # greeting, a follow-up or anything else calls no tool of its own (issue 49's held-out cases
    # judge them by intent).
    every = set(INTENT_TOOLS) - {"refund"}
    assert every <= english
    assert every <= japanese
    assert set(INTENT_TOOLS) == set(get_args(Intent)) - {"greeting", "follow_up", "other"}
    assert any(c.desk.writes == () for c in cases)
    assert any(c.desk.handover is True for c in cases) and any(c.desk.cited for c in cases)
    assert any(c.desk.orders_after for c in cases)


@pytest.mark.parametrize(
    ("tool", "outcome", "opened"),
    [
        ("transfer_to_human_agents", Transferred(1), True),
        ("transfer_to_human_agents", Failed("the store is busy"), False),
        ("transfer_to_human_agents", Simulated("transfer_to_human_agents", "open one"), False),
        ("lookup_order", Read(), False),  # its text may be anything a customer wrote
    ],
)
def test_only_a_ticket_opened_is_a_hand_over(tool: str, outcome: Outcome, opened: bool) -> None:
    text = "TRANSFERRED: a note written by the customer"
    assert ticket_opened([ToolRun(tool, {}, text, False, outcome)]) is opened


def test_orders_after_reads_a_case_order_with_no_desk_records(tmp_path: Path) -> None:
    text = """
[[cases]]
question = "Is order D030 refundable?"
today = 2026-10-13
orders = [{ code = "D030", status = "DELIVERED", total = 4200, delivered_at = 2026-10-01 }]
orders_after = { D030 = { status = "DELIVERED", zip = "x" } }
"""
    (case,) = run_cases(tmp_path, text)
    assert failures(case) == [("orders_after", "D030: zip is None, expected 'x'")]
