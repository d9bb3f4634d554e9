"""The Python API (`agent_cli.ask`, `agent_cli.iter_events`): what `agent ask` does, without a
process, a terminal or a print."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import agent_cli
from agent_cli.cli import app
from agent_cli.errors import ConfigError, MaxStepsExceeded, MissingApiKey, UsageError
from agent_cli.record.runlog import RunLog, configured_log_path
from agent_cli.store.approval_queue import listed
from agent_cli.store.sqlite import OrderStore
from tests.cli.test_refunds import refund_script, refunds_config
from tests.fakellm import FakeLLM, openai_calls, openai_text
from tests.helpers import delivered_recently, json_lines

runner = CliRunner()
QUESTION = "Is order A100 refundable?"


def normalised(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Trace records without what differs from run to run (ids, times, durations)."""
    varying = ("run_id", "ts", "elapsed_ms", "latency_ms", "duration_ms")
    return [{k: v for k, v in record.items() if k not in varying} for record in records]


def test_offline_with_no_options_it_answers_as_agent_ask_does() -> None:
    result = agent_cli.ask(QUESTION)
    cli = json_lines(runner.invoke(app, ["ask", QUESTION, "--json"]).stdout)
    assert result.status == "answered"
    assert result.ok and result.exit_code == 0 and result.error is None
    assert result.answer == cli[-1]["answer"]
    assert (result.answer or "").startswith("Order A100 is")
    assert normalised(result.records()) == normalised(cli)
    assert result.steps == cli[-1]["steps"] == 3
    assert result.run_id == result.events[0].run_id != cli[0]["run_id"]


def test_the_iterator_yields_the_events_as_they_happen_in_the_order_json_writes() -> None:
    seen = []
    for event in agent_cli.iter_events(QUESTION, today="2026-10-13"):
        seen.append(event)
    cli_run = runner.invoke(app, ["ask", QUESTION, "--json", "--today", "2026-10-13"])
    cli = json_lines(cli_run.stdout)
    assert [event.kind for event in seen] == [record["event"] for record in cli]
    assert isinstance(seen[0], agent_cli.RunStarted)
    assert isinstance(seen[-1], agent_cli.RunFinished)
    assert len({event.run_id for event in seen}) == 1


def test_options_are_agent_asks(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    result = agent_cli.ask(QUESTION, dry_run=True, today="2026-10-13", max_steps=5, trace=trace)
    records = json_lines(trace.read_text())
    assert normalised(records) == normalised(result.records())
    assert records[0]["max_steps"] == 5 and records[0]["today"] == "2026-10-13"
    assert "delivered 2026-10-01, 12 days ago" in (result.answer or "")


def test_a_date_object_is_a_date(tmp_path: Path) -> None:
    from datetime import date

    result = agent_cli.ask(QUESTION, dry_run=True, today=date(2026, 10, 13))
    assert result.records()[0]["today"] == "2026-10-13"


def test_runs_are_logged_as_agent_ask_logs_them_and_a_dry_run_is_not() -> None:
    first = agent_cli.ask(QUESTION)
    agent_cli.ask("Is order A101 refundable?", dry_run=True)
    log = RunLog.open(configured_log_path(None), keep_runs=100)
    try:
        runs = log.runs()
    finally:
        log.close()
    assert [(run.run_id, run.kind, run.status) for run in runs] == [
        (first.run_id, "ask", "answered")
    ]


def test_a_limit_is_a_result_with_the_clis_exit_code_and_error() -> None:
    result = agent_cli.ask(QUESTION, max_steps=1)
    assert result.status == "max_steps"
    assert not result.ok
    assert result.exit_code == 3
    assert isinstance(result.error, MaxStepsExceeded)
    with pytest.raises(MaxStepsExceeded, match=r"Max steps \(1\)"):
        result.raise_for_status()
    assert result.events[-1].kind == "run_finished"


def test_a_question_nobody_answers_ends_the_run_needing_input(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    asking = {"type": "ask_user", "question": "Which order do you mean?"}
    script.write_text(json.dumps([asking, {"type": "final", "answer": "never"}]))
    result = agent_cli.ask("Is my order refundable?", script=script)
    assert result.status == "needs_input"
    assert result.asked == "Which order do you mean?"
    assert result.exit_code == 4


def test_a_refund_asked_in_one_call_waits_for_the_customer_s_yes(tmp_path: Path) -> None:
    """The Python API's `ask` is one message: the refund is proposed and put to the customer,
    and nothing is queued or paid until a yes that this call cannot carry."""
    delivered_recently("A100")
    config = refunds_config(tmp_path)
    script = refund_script(tmp_path, "A100")
    result = agent_cli.ask(QUESTION, script=str(script), config=str(config))
    assert (result.status, result.exit_code) == ("needs_input", 4)
    assert result.asked is not None and "P1" in result.asked
    assert not any(isinstance(e, agent_cli.ApprovalRequested) for e in result.events)
    store = OrderStore.open(Path(os.environ["AGENT_DB"]))
    try:
        assert listed(store) == []  # nothing queued
        assert store.refunds("A100") == []  # nothing paid
    finally:
        store.close()


def test_a_real_provider_is_reached_by_its_options(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    fake_llm.queue(
        openai_calls(("lookup_order", {"order_code": "A101"})),
        openai_text("Order A101 is not refundable: it is still shipping."),
    )
    result = agent_cli.ask(
        "Is order A101 refundable?", provider="openai", base_url=fake_llm.url, stream=False
    )
    assert result.status == "answered", result.records()[-1]
    assert result.answer == "Order A101 is not refundable: it is still shipping."
    assert len(fake_llm.bodies()) == 2


def test_a_missing_key_raises_before_any_request(fake_llm: FakeLLM) -> None:
    with pytest.raises(MissingApiKey, match="OPENAI_API_KEY"):
        agent_cli.ask(QUESTION, provider="openai", base_url=fake_llm.url)
    assert fake_llm.bodies() == []


@pytest.mark.parametrize(
    ("question", "options", "error"),
    [
        ("", {}, UsageError),
        ("a\x00b", {}, UsageError),
        (QUESTION, {"max_steps": 0}, ConfigError),
        (QUESTION, {"today": "yesterday"}, UsageError),
        (QUESTION, {"provider": "nope"}, ConfigError),
    ],
)
def test_bad_input_raises_the_clis_error(
    question: str, options: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error) as raised:
        agent_cli.ask(question, **options)
    assert "\n" not in str(raised.value)


def test_the_iterator_checks_its_options_and_question_when_called() -> None:
    with pytest.raises(UsageError, match="empty"):
        agent_cli.iter_events("   ")
    with pytest.raises(ConfigError):
        agent_cli.iter_events(QUESTION, max_steps=0)


def test_an_unknown_option_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match=r"'max_step'.*max_steps"):
        agent_cli.ask(QUESTION, max_step=3)  # type: ignore[call-arg]


def test_leaving_the_iterator_early_still_ends_the_record(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    events = agent_cli.iter_events(QUESTION, trace=str(trace))
    first = next(events)
    assert first.kind == "run_started"
    events.close()
    records = json_lines(trace.read_text())
    assert records[-1]["event"] == "run_finished"
    assert records[-1]["status"] == "interrupted"
    log = RunLog.open(configured_log_path(None), keep_runs=100)
    try:
        assert [run.status for run in log.runs()] == ["interrupted"]
    finally:
        log.close()


def test_leaving_after_the_last_event_changes_nothing(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    events = agent_cli.iter_events(QUESTION, trace=trace)
    for event in events:
        if event.kind == "run_finished":
            break
    events.close()
    records = json_lines(trace.read_text())
    assert [r["status"] for r in records if r["event"] == "run_finished"] == ["answered"]


def test_ctrl_c_is_the_hosts_and_the_run_is_recorded_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Interrupting:
        provider, model = "test", "interrupting"

        def decide(self, request: object) -> object:
            raise KeyboardInterrupt

    monkeypatch.setattr("agent_cli.runtime.assemble.choose_model", lambda *_: Interrupting())
    trace = tmp_path / "run.jsonl"
    with pytest.raises(KeyboardInterrupt):
        agent_cli.ask(QUESTION, trace=trace)
    records = json_lines(trace.read_text())
    assert records[-1]["status"] == "interrupted"


def test_the_api_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    agent_cli.ask(QUESTION)  # no key: the offline model, whose notice `agent ask` prints
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")
    assert "offline playbook model" in runner.invoke(app, ["ask", QUESTION]).stderr


def test_importing_the_package_stays_light_and_names_are_found_on_use() -> None:
    code = (
        "import sys, agent_cli\n"
        "heavy = ['pydantic', 'httpx', 'rich', 'typer', 'agent_cli.runtime.api']\n"
        "print([m for m in heavy if m in sys.modules])\n"
        "print(agent_cli.ask.__module__, agent_cli.RunFinished.kind, 'ask' in dir(agent_cli))\n"
        "try:\n    agent_cli.nothing\nexcept AttributeError as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "[]",
        "agent_cli.runtime.api run_finished True",
        "module 'agent_cli' has no attribute 'nothing'",
    ]


def test_the_package_is_typed_for_its_users(tmp_path: Path) -> None:
    if "MUTANT_UNDER_TEST" in os.environ:
        pytest.skip("tests/mutate.sh: a mutated copy is no typed package, and types are not run")
    package = Path(agent_cli.__file__).parent
    assert (package / "py.typed").exists()
    user = tmp_path / "user.py"
    user.write_text(
        "import agent_cli\n"
        "result: agent_cli.RunResult = agent_cli.ask('A100?', max_steps=3, dry_run=True)\n"
        "status: str = result.status\n"
        "for event in agent_cli.iter_events('A100?'):\n"
        "    kind: str = event.kind\n"
        "agent_cli.ask('A100?', max_steps='3')\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(user)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(package.parent)},  # an editable install hides it
    )
    assert out.returncode == 1, out.stdout
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and "user.py:6:" in errors[0] and "max_steps" in errors[0]


def test_the_iterator_ends_at_a_limit_with_its_record_not_an_exception() -> None:
    events = list(agent_cli.iter_events(QUESTION, max_steps=1))
    finished = events[-1]
    assert isinstance(finished, agent_cli.RunFinished)
    assert finished.status == "max_steps" and "Max steps (1)" in (finished.error or "")
