"""A date the question states as today's: the playbook answers as of it unless --today is given;
a real model is told the system date and gets the question as written."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from agent_cli.cli import app
from agent_cli.dates import stated_today

from .fakellm import FakeLLM, openai_calls, openai_text
from .test_providers import final, records

runner = CliRunner()
SEED_QUESTION = "注文A100は返金されますか?本日は2026-10-13です。"  # A100 was delivered 2026-10-01


def dry_run(question: str, *args: str) -> Result:
    return runner.invoke(app, ["ask", question, "--dry-run", "--json", *args], env={})


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (SEED_QUESTION, date(2026, 10, 13)),
        ("注文A100は返金されますか?今日は2026年10月13日です。", date(2026, 10, 13)),
        ("Is order A100 refundable? Today is 2026-10-13.", date(2026, 10, 13)),
        ("Today's date is 2026/1/5: is A100 refundable?", date(2026, 1, 5)),
        ("As of 2026-10-13, is A100 refundable?", date(2026, 10, 13)),
        ("A100 was delivered 2026-10-01; is it refundable?", None),  # a date, not today's
        ("Today is 2026-02-30; is A100 refundable?", None),  # no such day
        ("Is A100 refundable?", None),
    ],
)
def test_dates_stated_as_today(question: str, expected: date | None) -> None:
    assert stated_today(question) == expected


def test_the_seed_question_is_answered_as_of_its_own_date() -> None:
    result = dry_run(SEED_QUESTION)
    assert result.exit_code == 0, result.stderr
    assert records(result)[0]["today"] == "2026-10-13"
    assert final(result)["answer"].startswith("注文A100は返金可能です")
    assert "12日前" in final(result)["answer"]


def test_today_option_wins_over_the_question() -> None:
    result = dry_run(SEED_QUESTION, "--today", "2026-12-01")
    assert result.exit_code == 0, result.stderr
    assert records(result)[0]["today"] == "2026-12-01"
    assert "返金可能" not in final(result)["answer"]
    assert "61日前" in final(result)["answer"]


def test_without_a_stated_date_the_system_date_is_used() -> None:
    result = dry_run("Is order A100 refundable?")
    assert result.exit_code == 0, result.stderr
    assert records(result)[0]["today"] == date.today().isoformat()


def test_each_chat_turn_reads_its_own_date(tmp_path: Path) -> None:
    trace = tmp_path / "session.jsonl"
    lines = f"{SEED_QUESTION}\nIs order A100 refundable?\n"
    result = runner.invoke(app, ["chat", "--dry-run", "--trace", str(trace)], input=lines, env={})
    assert result.exit_code == 0, result.stderr
    started = [
        event["today"]
        for event in map(json.loads, trace.read_text().splitlines())
        if event["event"] == "run_started"
    ]
    assert started == ["2026-10-13", date.today().isoformat()]


def test_a_real_model_gets_the_system_date_and_the_question_as_written(
    fake_llm: FakeLLM,
) -> None:
    fake_llm.queue(
        openai_calls(("lookup_order", {"order_code": "A100"})),
        openai_text("注文A100は返金できません。"),
    )
    argv = ["ask", SEED_QUESTION, "--provider", "openai", "--base-url", fake_llm.url + "/v1"]
    result = runner.invoke(app, [*argv, "--json"], env={"OPENAI_API_KEY": "test-key"})
    assert result.exit_code == 0, result.stderr
    assert records(result)[0]["today"] == date.today().isoformat()
    messages = fake_llm.bodies()[0]["messages"]
    assert f"Today is {date.today().isoformat()}." in messages[0]["content"]
    assert messages[-1] == {"role": "user", "content": SEED_QUESTION}
