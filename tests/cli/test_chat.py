"""`agent chat` driven through piped stdin: turns, memory, questions, commands, traces, EOF."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from agent_cli.cli import app
from agent_cli.core.seams import Exchange
from agent_cli.runtime.memory import Memory
from tests.fakellm import FakeLLM, openai_calls, openai_text

KEY = "sk-test-SECRET-0123456789abcdef"
runner = CliRunner()


def chat(lines: str, *args: str, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(app, ["chat", "--today", "2026-10-13", *args], input=lines, env=env or {})


def test_each_line_is_a_turn_and_piped_output_has_no_prompts() -> None:
    result = chat("Is A100 refundable?\nand A101?\n", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert "Order A100 is refundable" in result.stdout
    assert "Order A101 is not refundable" in result.stdout
    assert "agent>" not in result.stdout and "agent chat ·" not in result.stdout
    assert result.stderr == ""


def test_end_of_input_and_exit_leave_with_code_0() -> None:
    assert chat("", "--dry-run").exit_code == 0
    result = chat("/exit\nIs A100 refundable?\n", "--dry-run")
    assert result.exit_code == 0 and "A100" not in result.stdout


def test_a_clarifying_question_takes_the_next_line_as_the_reply() -> None:
    result = chat("Is my order refundable?\na100\n", "--dry-run")
    assert result.exit_code == 0
    assert "? Which order is this about?" in result.stdout
    assert "→ a100" in result.stdout
    assert "Order A100 is refundable" in result.stdout


def test_a_question_at_end_of_input_ends_the_turn_cleanly() -> None:
    result = chat("Is my order refundable?\n", "--dry-run")
    assert result.exit_code == 1  # piped input, and a turn did not get its answer
    assert "agent: error: The agent needs an answer" in result.stderr


def test_a_failing_turn_prints_one_line_and_the_session_goes_on(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"type": "tool", "tool": "refund_policy"}]))
    result = chat("first\nsecond\n", "--script", str(script))
    assert result.exit_code == 1
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 2  # the script ran out on the first turn, and stays empty
    assert all(line.startswith("agent: error: The script s.json ran out") for line in errors)


def test_a_too_long_line_is_refused_and_the_session_goes_on() -> None:
    result = chat("x" * 5000 + "\nIs A100 refundable?\n", "--dry-run")
    assert result.exit_code == 1  # the refused line counts as a failed turn
    assert "The question is 5,000 characters" in result.stderr
    assert "Order A100 is refundable" in result.stdout


def test_slash_commands() -> None:
    lines = (
        "/help\n/tools\nIs A100 refundable?\n/history\n/reset\n/history\n"
        "/model gpt-x\n/nope\n/exit\n"
    )
    result = chat(lines, "--dry-run")
    assert result.exit_code == 2  # piped: an unknown command is the script's mistake
    out = result.stdout
    for name in ("/help", "/tools", "/history", "/reset", "/trace FILE", "/model NAME", "/exit"):
        assert name in out
    assert "lookup_order" in out and "order_code: string" in out
    assert "1. Is A100 refundable?" in out
    assert "Conversation forgotten." in out and "No conversation yet." in out
    assert result.stderr.splitlines() == [
        "agent: error: The offline model has no other models",
        "agent: error: Unknown command /nope; try /help",
    ]


def read_trace(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_session_trace_holds_every_turn_in_order(tmp_path: Path) -> None:
    trace = tmp_path / "s.jsonl"
    result = chat("Is A100 refundable?\nIs A101 refundable?\n", "--dry-run", "--trace", str(trace))
    assert result.exit_code == 0
    records = read_trace(trace)
    assert len({r["session_id"] for r in records}) == 1
    runs = list(dict.fromkeys(r["run_id"] for r in records))
    assert len(runs) == 2
    starts = [i for i, r in enumerate(records) if r["event"] == "run_started"]
    ends = [i for i, r in enumerate(records) if r["event"] == "run_finished"]
    assert starts[0] < ends[0] < starts[1] < ends[1] == len(records) - 1
    assert records[starts[1]]["remembered_turns"] == 1


def test_trace_can_start_and_stop_mid_session(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    lines = (
        f"Is A100 refundable?\n/trace {trace}\nIs A101 refundable?\n"
        "/trace off\nIs A103 refundable?\n"
    )
    result = chat(lines, "--dry-run")
    assert result.exit_code == 0
    goals = [r["goal"] for r in read_trace(trace) if r["event"] == "run_started"]
    assert goals == ["Is A101 refundable?"]
    assert f"Tracing to {trace}" in result.stdout and "Trace stopped." in result.stdout


def test_an_unwritable_trace_is_one_error_and_the_session_goes_on(tmp_path: Path) -> None:
    result = chat(f"/trace {tmp_path}/no/t.jsonl\nIs A100 refundable?\n", "--dry-run")
    assert result.exit_code == 0
    assert "Cannot write the trace file" in result.stderr
    assert "Order A100 is refundable" in result.stdout


def test_memory_reaches_the_provider(fake_llm: FakeLLM) -> None:
    fake_llm.queue(
        openai_calls(("lookup_order", {"order_code": "A100"})),
        openai_text("A100 is refundable."),
        openai_calls(("lookup_order", {"order_code": "A101"})),
        openai_text("A101 is not: it is still shipping."),
    )
    result = chat(
        "Is order A100 refundable?\nand what about A101?\n",
        "--provider",
        "openai",
        "--base-url",
        fake_llm.url,
        env={"OPENAI_API_KEY": KEY},
    )
    assert result.exit_code == 0, result.stderr
    third = fake_llm.bodies()[2]["messages"]
    assert [m["role"] for m in third] == ["system", "user", "assistant", "user"]
    assert third[1]["content"] == "Is order A100 refundable?"
    assert third[2]["content"] == "A100 is refundable."
    assert third[3]["content"] == "and what about A101?"
    assert fake_llm.violations == [] and fake_llm.connections == 1


def test_model_switches_the_model(fake_llm: FakeLLM) -> None:
    fake_llm.queue(openai_text("one"), openai_text("two"))
    result = chat(
        "first\n/model gpt-other\nsecond\n",
        "--provider",
        "openai",
        "--base-url",
        fake_llm.url,
        env={"OPENAI_API_KEY": KEY},
    )
    assert result.exit_code == 0, result.stderr
    assert [b["model"] for b in fake_llm.bodies()] == ["gpt-4o-mini", "gpt-other"]
    assert "Model: openai/gpt-other" in result.stdout


def test_memory_keeps_the_newest_turns_within_its_bounds() -> None:
    memory = Memory(max_turns=2, max_chars=1000, turns=[])
    for n in range(4):
        memory.add(f"q{n}", f"a{n}")
    assert memory.recent() == (Exchange("q2", "a2"), Exchange("q3", "a3"))
    small = Memory(max_turns=10, max_chars=25, turns=[])
    small.add("old question", "old answer")  # 22 characters
    small.add("new question", "new answer")
    assert small.recent() == (Exchange("new question", "new answer"),)
    assert Memory(max_turns=0, max_chars=1000, turns=[Exchange("q", "a")]).recent() == ()


def test_history_file_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_cli.commands.chat import history_path

    monkeypatch.delenv("XDG_STATE_HOME")
    assert history_path(None) == Path.home() / ".local" / "state" / "agent-cli" / "history"
    assert history_path("") is None
    assert history_path("~/h") == Path.home() / "h"


def test_switching_models_keeps_the_sessions_refund_count(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextlib import ExitStack

    from agent_cli.commands.chat import Session
    from agent_cli.runtime.options import ProviderOptions, RunOptions

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    options = RunOptions(provider=ProviderOptions("openai", base_url=fake_llm.url))
    with ExitStack() as stack:
        session = Session(options, options.settings(), stack)
        session.runtime.refunds.add()
        session.command("/model other-model")
        assert session.runtime.model.model == "other-model"
        assert session.runtime.refunds.session == 1


def test_piped_chat_exits_0_when_every_line_worked() -> None:
    assert chat("/help\nIs A100 refundable?\n/history\n", "--dry-run").exit_code == 0


def test_a_chat_session_is_one_customer_conversation(tmp_path: Path) -> None:
    """The customer found in one turn is the session's: a later turn reads their orders, and
    never another customer's."""
    script = tmp_path / "s.json"
    find = {"type": "tool", "tool": "find_user_id_by_email"}
    script.write_text(
        json.dumps(
            [
                {**find, "args": {"email": "aoi.suzuki@example.com"}},
                {"type": "final", "answer": "Found you."},
                {"type": "tool", "tool": "track_order", "args": {"order_id": "A101"}},
                {"type": "final", "answer": "A101 is on its way."},
                {"type": "tool", "tool": "get_order_details", "args": {"order_id": "A100"}},
                {"type": "final", "answer": "I cannot show you A100."},
            ]
        )
    )
    turns = "I am aoi.suzuki@example.com\nwhere is A101?\nand A100?\n"
    trace = tmp_path / "t.jsonl"
    result = chat(turns, "--script", str(script), "--trace", str(trace))
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    observed = [r["observation"] for r in records if r.get("event") == "observation"]
    assert observed[0] == "aoi_suzuki_1002"
    assert 'carrier="Yamato Transport"' in observed[1]  # identified in an earlier turn
    assert "is not the identified customer's" in observed[2]  # Haruki Sato's


def test_an_earlier_turn_s_figures_may_be_said_again(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(
        json.dumps(
            [
                {"type": "tool", "tool": "lookup_order", "args": {"order_code": "A100"}},
                {"type": "final", "answer": "Order A100 (250,000 JPY) is refundable."},
                {"type": "final", "answer": "As I said: 250,000 JPY."},
                {"type": "final", "answer": "And 999,999 JPY more."},
                {"type": "final", "answer": "Sorry, I have nothing more to add."},
            ]
        )
    )
    trace = tmp_path / "t.jsonl"
    turns = "Is A100 refundable?\nhow much again?\nanything else?\n"
    result = chat(turns, "--script", str(script), "--trace", str(trace))
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    repairs = [r["problem"] for r in records if r["event"] == "repair"]
    assert len(repairs) == 1 and "999,999 JPY" in repairs[0]  # said by nobody before
    answers = [r["answer"] for r in records if r["event"] == "run_finished"]
    assert answers[1] == "As I said: 250,000 JPY."  # its figure is the earlier answer's


def test_an_answer_given_at_reply_is_remembered_with_its_turn() -> None:
    """The email given when the agent asked for it is the customer's for the next turn: the
    agent does not ask for it again."""
    result = chat(
        "Where is my order A100?\nharuki.sato@example.com\nAnd where is my order A106?\n",
        "--dry-run",
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count("what is the email address on your account") == 1
    assert "Order A100 was delivered on 2026-10-01" in result.stdout
    assert "Order A106 was delivered on 2026-10-03" in result.stdout


def test_memory_keeps_a_turns_replies_with_its_question() -> None:
    memory = Memory(max_turns=5, max_chars=1000)
    memory.add("Where is A100?", "Delivered.", ["haruki.sato@example.com"])
    assert memory.recent() == (Exchange("Where is A100?\nharuki.sato@example.com", "Delivered."),)


def test_a_model_switch_keeps_the_conversation_the_customer_and_the_session(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """`/model` changes who answers, not whom: the next turn is shown the earlier ones, the
    customer identified before the switch is still identified, and the runs stay one session."""
    fake_llm.queue(
        openai_calls(("find_user_id_by_email", {"email": "aoi.suzuki@example.com"})),
        openai_text("Found you."),
        openai_calls(("track_order", {"order_id": "A101"})),
        openai_text("A101 is on its way."),
    )
    trace = tmp_path / "t.jsonl"
    turns = "I am aoi.suzuki@example.com\n/model gpt-other\nwhere is A101?\n"
    argv = ["--provider", "openai", "--base-url", fake_llm.url, "--trace", str(trace)]
    result = chat(turns, *argv, env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 0, result.stderr
    bodies = fake_llm.bodies()
    assert [b["model"] for b in bodies] == ["gpt-4o-mini"] * 2 + ["gpt-other"] * 2
    shown = [m.get("content") for m in bodies[2]["messages"]]
    assert "I am aoi.suzuki@example.com" in shown and "Found you." in shown
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    observed = [r["observation"] for r in records if r["event"] == "observation"]
    assert 'carrier="Yamato Transport"' in observed[1]  # identified before the switch
    sessions = {r.get("session_id") for r in records if r["event"] == "run_started"}
    assert len(sessions) == 1 and None not in sessions
