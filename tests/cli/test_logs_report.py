"""`agent logs report` (issue 42, point 7): the desk's numbers from the run log: conversations,
resolved without a person, handed over, refused, stopped at a limit, writes proposed, approved,
denied and queued (and what the queue made of them), the median and p95 time to answer, tokens
and cost; in all or by day, model or intent; a table, --json, or an HTML page."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.commands.logs_report import figures
from agent_cli.core.events import ApprovalDecided, RunStarted, ToolObserved
from agent_cli.core.tool_outcomes import Failed, Outcome, Proposed, Read
from agent_cli.record.desk_facts import RunFacts
from agent_cli.record.runlog import _MIGRATIONS, RunLog
from tests.cli.test_logs import _started

runner = CliRunner()


def agent(*args: str, stdin: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=stdin)


def log_path() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "agent-cli" / "runs.db"


def row(
    conversation: str,
    status: str = "answered",
    *,
    day: str = "2026-12-01",
    model: str = "m",
    ms: float | None = 100.0,
    tokens: int = 10,
    cost: float | None = 0.5,
    facts: tuple[Any, ...] = ("status", 0, 0, 0, 0, 0),
) -> tuple[Any, ...]:
    head = (f"{day}T09:00:00.000+00:00", conversation, "p", model, status, ms, tokens, cost)
    return (*head, *facts, conversation)


def test_conversations_are_sessions_resolved_when_they_end_answered_without_a_person() -> None:
    rows = [
        row("chat-1", "needs_input"),  # a chat session whose later turn answered
        row("chat-1", "answered"),
        row("ask-1", "handed_over", facts=("handover", 0, 0, 0, 0, 0)),
        row("ask-2", "max_steps", ms=None),
        row("ask-3", "answered", facts=("cancel", 1, 0, 0, 0, 0)),
        row("ask-4", "answered", facts=("cancel", 2, 1, 1, 0, 1)),
        row("ask-5", "pending_approval", facts=("cancel", 1, 0, 0, 1, 0), cost=None),
    ]
    (all_,) = figures(rows, None)
    assert all_.group == "all" and all_.runs == 7
    assert all_.conversations == 6
    assert all_.resolved == 4  # chat-1, ask-3, ask-4, ask-5 (answered, waiting for the queue)
    assert all_.handed_over == 1 and all_.at_limit == 1 and all_.refused == 1
    assert (all_.proposed, all_.approved, all_.denied, all_.queued) == (4, 1, 1, 1)
    assert all_.tokens == 70
    assert all_.cost is None  # a run whose cost is unknown: the total is not known either
    assert all_.p50_ms == 100.0 and all_.p95_ms == 100.0


def test_time_to_answer_is_the_nearest_rank_median_and_p95_of_answered_runs() -> None:
    rows = [row(f"a{n}", ms=float(n)) for n in range(1, 21)] + [row("x", "timeout", ms=9e9)]
    (all_,) = figures(rows, None)
    assert (all_.p50_ms, all_.p95_ms) == (10.0, 19.0)
    assert figures([], None)[0].conversations == 0


def test_grouped_by_day_model_or_intent() -> None:
    rows = [
        row("a", day="2026-12-01", model="m1", facts=("status", 0, 0, 0, 0, 0)),
        row("b", day="2026-12-02", model="m2", facts=("cancel", 1, 1, 0, 0, 0)),
        row("c", day="2026-12-02", model="m1", facts=(None, 0, 0, 0, 0, 0)),  # logged before
    ]
    by_day = {f.group: f.conversations for f in figures(rows, "day")}
    assert by_day == {"2026-12-01": 1, "2026-12-02": 2}
    assert {f.group: f.runs for f in figures(rows, "model")} == {"p/m1": 2, "p/m2": 1}
    by_intent = {f.group: (f.conversations, f.approved) for f in figures(rows, "intent")}
    assert by_intent == {"status": (1, 0), "cancel": (1, 1), "unknown": (1, 0)}


def test_the_report_of_real_runs(tmp_path: Path) -> None:
    assert agent("ask", "Is order A100 refundable?").exit_code == 0
    handed = agent("ask", "I was charged twice for A100. haruki.sato@example.com")
    assert handed.exit_code == 6, handed.stderr  # handed over: exit 6, as documented
    assert agent("ask", "Please cancel A100. haruki.sato@example.com").exit_code == 0
    chat = agent("chat", stdin="Please cancel B200\nkaito.yamamoto@example.com\nyes\n")
    assert chat.exit_code == 0, chat.stderr
    result = agent("logs", "report", "--json")
    assert result.exit_code == 0, result.stderr
    (report,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert report["conversations"] == 4
    assert report["handed_over"] == 1 and report["refused"] == 1
    assert (report["proposed"], report["queued"]) == (1, 1)  # piped: the change waits
    assert report["later"] == {"pending": 1}  # the approval queue's word on it
    by_intent = agent("logs", "report", "--by", "intent", "--json")
    intents = {json.loads(x)["group"]: json.loads(x) for x in by_intent.stdout.splitlines()}
    assert set(intents) == {"refund", "handover", "cancel"}
    assert intents["cancel"]["conversations"] == 2
    table = agent("logs", "report", "--by", "intent")
    assert table.stdout.splitlines()[0].split("\t")[:3] == ["intent", "conversations", "resolved"]
    page = tmp_path / "desk.html"
    assert agent("logs", "report", "--html", str(page)).exit_code == 0
    assert "<h1>agent logs report</h1>" in page.read_text("utf-8")
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    since = agent("logs", "report", "--since", "2099-01-01", "--json")
    assert json.loads(since.stdout)["conversations"] == 0


def test_bad_input_is_one_line_and_exit_2() -> None:
    assert agent("ask", "Is order A100 refundable?").exit_code == 0
    wrong = agent("logs", "report", "--by", "week")
    assert wrong.exit_code == 2 and "--by 'week': use day, model, intent" in wrong.stderr
    when = agent("logs", "report", "--since", "yesterdayish")
    assert when.exit_code == 2


def test_no_log_yet_says_so_and_every_figure_is_zero() -> None:
    result = agent("logs", "report", "--json")
    assert result.exit_code == 0 and "No runs logged yet" in result.stderr
    assert json.loads(result.stdout)["conversations"] == 0


def test_a_log_from_before_the_desk_figures_is_upgraded(tmp_path: Path) -> None:
    path = log_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    old = sqlite3.connect(path)
    for migration in _MIGRATIONS[:-1]:
        for sql in migration:
            old.execute(sql)
    old.execute(f"PRAGMA user_version = {len(_MIGRATIONS) - 1}")
    old.execute(
        "INSERT INTO runs (run_id, kind, started_at, question, provider, model, status)"
        " VALUES ('r1', 'ask', '2026-12-01T09:00:00.000+00:00', 'q', 'p', 'm', 'answered')"
    )
    old.commit()
    old.close()
    RunLog.open(path, create=False).close()
    result = agent("logs", "report", "--by", "intent", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["group"] == "unknown"


@pytest.mark.parametrize("by", ["day", "model", "intent"])
def test_every_grouping_prints(by: str) -> None:
    assert agent("ask", "Is order A100 refundable?").exit_code == 0
    result = agent("logs", "report", "--by", by)
    assert result.exit_code == 0 and result.stdout.startswith(by + "\t")


def test_costs_and_queued_writes_add_up() -> None:
    rows = [
        row("a", cost=0.25, facts=("cancel", 1, 0, 0, 1, 0)),
        row("b", cost=0.5, facts=("return", 1, 0, 0, 1, 0)),
    ]
    (all_,) = figures(rows, None)
    assert all_.cost == 0.75 and all_.queued == 2 and all_.proposed == 2


def observed(step: int, tool: str, observation: str, *, error: bool = False) -> ToolObserved:
    """An observation whose outcome is what its text says (a proposal, a failure, a read)."""
    if observation.startswith("PROPOSED"):
        outcome: Outcome = Proposed(tool, observation)
    else:
        outcome = Failed(observation) if error else Read()
    return ToolObserved(
        outcome=outcome,
        run_id="r",
        ts=0.0,
        step=step,
        tool=tool,
        args={},
        observation=observation,
        is_error=error,
        duration_ms=0.0,
    )


def decided(step: int, approved: bool, queued: int | None = None) -> ApprovalDecided:
    by = "operator" if approved else "rule"
    return ApprovalDecided(
        run_id="r",
        ts=0.0,
        step=step,
        tool="cancel_pending_order",
        approved=approved,
        by=by,
        reason="",
        queued=queued,
    )


def started(goal: str) -> RunStarted:
    return _started("r", goal)


def test_a_runs_desk_figures_are_counted_from_its_events() -> None:
    facts = RunFacts()
    proposed = "PROPOSED (nothing is changed yet): x"
    for event in (
        started("I'd like to call off my order B200"),
        observed(1, "lookup_order", "ERROR: x", error=True),  # a read's error: no refusal
        observed(2, "cancel_pending_order", proposed),
        observed(3, "return_delivered_order_items", proposed),
        observed(4, "cancel_pending_order", "ERROR: order A100 is delivered", error=True),
        observed(5, "modify_user_address", "ERROR: no", error=True),
        decided(6, True),
        decided(7, False),
        decided(8, False, queued=3),
    ):
        facts.add(event)
    assert facts.row() == ("cancel", 2, 1, 1, 1, 2)  # the question's intent, not the tools'
    assert RunFacts().row() == ("unknown", 0, 0, 0, 0, 0)


@pytest.mark.parametrize(
    ("goal", "intent"),
    [
        ("Is order A100 refundable?", "refund"),
        ("My parcel still hasn't come, A101", "status"),
        ("A100", "unknown"),  # a reading the model is unsure of is its own row
    ],
)
def test_a_runs_intent_is_the_intent_models_reading_of_its_question(goal: str, intent: str) -> None:
    facts = RunFacts()
    facts.add(started(goal))
    facts.add(observed(1, "lookup_order", "status=delivered"))  # the tools do not decide it
    assert facts.intent == intent


def test_the_html_page_holds_the_figures(tmp_path: Path) -> None:
    assert agent("ask", "Is order A100 refundable?").exit_code == 0
    page = tmp_path / "desk.html"
    assert agent("logs", "report", "--html", str(page), "--since", "2000-01-01").exit_code == 0
    text = page.read_text("utf-8")
    assert "<td>all</td><td>1</td><td>1 (100%)</td>" in text
    assert "since 2000-01-01" in text


def test_a_chat_of_many_turns_is_one_conversation_and_a_hand_over_in_it_is_counted_once() -> None:
    """Counted from real runs: a session's turns are one conversation (not one per run), and a
    conversation handed over in one turn is handed over, not resolved, whatever came after."""
    turns = "Please cancel B200\nkaito.yamamoto@example.com\nhmm, wait\n"
    turns += "OK, please cancel B200 after all\nyes\n"
    assert agent("chat", stdin=turns).exit_code == 0
    handed = "I was charged twice for A100. haruki.sato@example.com\nthanks\n"
    assert agent("chat", stdin=handed).exit_code in (0, 6)
    listed = agent("logs", "list", "--json").stdout.splitlines()
    assert len(listed) >= 4  # at least two runs in each session
    (report,) = [json.loads(line) for line in agent("logs", "report", "--json").stdout.splitlines()]
    assert (report["conversations"], report["runs"]) == (2, len(listed))
    assert report["handed_over"] == 1 and report["resolved"] == 1
