"""Words the desk was not written for (issue 49, point 8): held-out lines of the intent corpus
as built-in cases, judged on what the run did with them, reported in a row of their own."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.domain.intents import NAMES
from agent_cli.evaluation.cases import builtin_cases
from agent_cli.evaluation.heard import PER_INTENT, SUFFIX, heard_cases, heard_problems
from agent_cli.evaluation.judge import judge
from agent_cli.language import intent_corpus
from agent_cli.record.outcomes import RunRecord, ToolRun

runner = CliRunner()


def test_the_heard_cases_are_held_out_lines_of_every_intent_in_both_languages() -> None:
    cases = heard_cases()
    held = {e.text: e for e in intent_corpus.builtin() if e.held_out}
    assert all(case.question in held for case in cases)  # never a line the model learnt
    assert all(held[c.question].intent == c.desk.heard for c in cases)
    per = Counter((held[c.question].language, c.desk.heard) for c in cases)
    assert set(per.values()) == {PER_INTENT}
    assert len(per) == 2 * len(NAMES)
    assert len({c.id for c in cases}) == len(cases)
    assert not {c.id for c in cases} & {c.id for c in builtin_cases()}


def run(status: str, *tools: str, answer: str | None = "Fine.") -> RunRecord:
    record = RunRecord(status=status, answer=answer)
    record.tools = [ToolRun(tool, {}, "x", False) for tool in tools]
    return record


@pytest.mark.parametrize(
    ("intent", "record", "problem"),
    [
        ("cancel", run("needs_input", "find_user_id_by_email", "ask_user"), None),
        ("cancel", run("answered", "get_order_details", "cancel_pending_order"), None),
        ("return", run("answered", "cancel_pending_order"), "it worked on cancel"),
        (
            "status",
            run("answered", "lookup_order", answer="Order A100 is refundable: x."),
            "verdict",
        ),
        ("refund", run("answered", "lookup_order", answer="Order A100 is refundable: x."), None),
        ("help", run("answered", "search_help"), None),
        ("help", run("answered"), "it never called get_article, search_help"),
        ("handover", run("handed_over", "transfer_to_human_agents"), None),
        ("greeting", run("answered"), None),
        ("other", run("answered", "lookup_order"), None),
        ("greeting", run("answered", "search_help"), "asks for nothing"),
        ("orders", run("answered"), "it did nothing towards orders"),
        ("refund_status", run("answered", "search_help"), None),
        ("cancel", run("max_steps", "find_user_id_by_email"), "the run ended max_steps"),
    ],
)
def test_a_heard_case_is_judged_on_what_the_run_did_with_the_message(
    intent: str, record: RunRecord, problem: str | None
) -> None:
    problems = heard_problems(intent, record)  # type: ignore[arg-type]
    if problem is None:
        assert problems == []
    else:
        assert any(problem in p for p in problems), problems


def test_the_judge_reads_a_heard_case_by_its_own_rule() -> None:
    case = heard_cases()[0]
    assert case.desk.heard == "refund"
    failures = judge(case, run("answered", "cancel_pending_order"))
    assert {f.kind for f in failures} == {"heard"}  # worked on cancel; did nothing to refund


def test_the_builtin_eval_reports_the_heard_cases_in_a_row_of_their_own() -> None:
    result = runner.invoke(app, ["eval", "run", "--builtin", "--dry-run", "--json"])
    assert result.exit_code == 0, result.output  # --min-heard 0 by default: reported
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    summaries = {r["model"]: r for r in rows if r.get("event") == "summary"}
    heard = summaries[f"offline/playbook{SUFFIX}"]
    assert heard["cases"] == len(heard_cases())
    assert heard["passed"] >= 0.9 * heard["cases"]  # 114 of 120 when written
    assert summaries["offline/playbook"]["cases"] == len(builtin_cases())
    strict = runner.invoke(app, ["eval", "run", "--builtin", "--dry-run", "--min-heard", "1"])
    if heard["passed"] < heard["cases"]:
        assert strict.exit_code == 3 and "below --min-heard 100%" in strict.stderr
    wrong = runner.invoke(app, ["eval", "run", "--builtin", "--dry-run", "--min-heard", "2"])
    assert wrong.exit_code == 2 and "--min-heard is a fraction" in wrong.stderr


def test_a_heard_cases_id_says_its_language_and_intent() -> None:
    ids = {c.id for c in heard_cases()}
    assert {"heard-en-account-address-1", "heard-ja-refund-status-4"} <= ids


@pytest.mark.parametrize(
    ("intent", "record", "problem"),
    [
        ("help", run("answered", "lookup_order"), "it never called get_article, search_help"),
        ("handover", run("needs_input", "find_user_id_by_email"), None),  # who, first: fine
        ("handover", run("answered", "search_help"), "it never called transfer_to_human_agents"),
        ("cancel", run("answered", "track_order"), "it did nothing towards cancel"),
        ("cancel", run("answered", "lookup_order"), None),  # the named order, looked up first
        ("status", run("answered", "get_order_details"), None),  # a tool the intent uses
        ("return", run("answered", "find_user_id_by_email"), None),
        (
            "other",
            run("answered", "search_help", "get_user_details"),
            "search_help, get_user_details",
        ),
        ("status", run("error", answer=None), "the run ended error"),
    ],
)
def test_the_heard_judge_at_its_edges(intent: str, record: RunRecord, problem: str | None) -> None:
    problems = heard_problems(intent, record)  # type: ignore[arg-type]
    assert (problems == []) if problem is None else any(problem in p for p in problems), problems


def test_a_failed_run_says_why() -> None:
    record = run("error", answer=None)
    record.error = "the store is down"
    assert heard_problems("status", record) == ["the run ended error: the store is down"]
