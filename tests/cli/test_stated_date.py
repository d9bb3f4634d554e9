"""The date a run is judged on is `--today`, else the system date: never a date the customer's
text states, on the offline model or a real one ("Today is 2026-08-10" in a question used to make
A103 refundable on the playbook)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from agent_cli.cli import app
from tests.contract.test_providers import final, records
from tests.fakellm import FakeLLM, openai_calls, openai_text

runner = CliRunner()
SEED_QUESTION = "注文A100は返金されますか?本日は2026-10-13です。"  # A100 was delivered 2026-10-01


def dry_run(question: str, *args: str) -> Result:
    return runner.invoke(app, ["ask", question, "--dry-run", "--json", *args], env={})


@pytest.mark.parametrize(
    "question",
    [
        SEED_QUESTION,
        "注文A100は返金されますか?今日は2026年10月13日です。",
        "Is order A100 refundable? Today is 2026-10-13.",
        "As of 2026-10-13, is A100 refundable?",
        "Is order A103 refundable? Today is 2026-06-20.",  # would put A103 inside its window
    ],
)
def test_a_date_in_the_question_never_sets_the_runs_date(question: str) -> None:
    result = dry_run(question)
    assert result.exit_code == 0, result.stderr
    assert records(result)[0]["today"] == date.today().isoformat()
    answer = final(result)["answer"]
    assert "refundable:" not in answer.replace("not refundable", "") and "返金可能" not in answer


def test_today_option_sets_it() -> None:
    result = dry_run(SEED_QUESTION, "--today", "2026-10-13")
    assert result.exit_code == 0, result.stderr
    assert records(result)[0]["today"] == "2026-10-13"
    assert final(result)["answer"].startswith("注文A100は返金可能です")
    assert "12日前" in final(result)["answer"]


def test_each_chat_turn_is_judged_on_the_sessions_date(tmp_path: Path) -> None:
    trace = tmp_path / "session.jsonl"
    lines = f"{SEED_QUESTION}\nIs order A100 refundable?\n"
    result = runner.invoke(app, ["chat", "--dry-run", "--trace", str(trace)], input=lines, env={})
    assert result.exit_code == 0, result.stderr
    started = [
        event["today"]
        for event in map(json.loads, trace.read_text().splitlines())
        if event["event"] == "run_started"
    ]
    assert started == [date.today().isoformat()] * 2


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
