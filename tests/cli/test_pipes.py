"""agent-cli in a pipeline: questions from stdin, a reader that leaves early, piped chat."""

from __future__ import annotations

import subprocess
import sys

from typer.testing import CliRunner

from agent_cli.cli import app

runner = CliRunner()
ASK = ["ask", "--dry-run", "--today", "2026-10-13", "-q"]


def test_the_question_can_come_from_stdin() -> None:
    for argv in ([*ASK, "-"], ASK):
        result = runner.invoke(app, argv, input="Is order A100 refundable?\n")
        assert result.exit_code == 0, result.stderr
        assert result.stdout.startswith("Order A100 is refundable:")


def test_an_empty_stdin_is_an_empty_question() -> None:
    result = runner.invoke(app, [*ASK, "-"], input="")
    assert result.exit_code == 2 and "The question is empty" in result.stderr


def test_a_reader_that_leaves_early_ends_the_run_quietly_with_141() -> None:
    for extra in ([], ["--json"]):
        argv = [sys.executable, "-m", "agent_cli", "ask", "Is order A100 refundable?", "--dry-run"]
        agent = subprocess.Popen([*argv, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert agent.stdout is not None
        agent.stdout.close()  # the reader left before the first line (`| head -0`)
        assert agent.wait(timeout=30) == 141, extra
        assert agent.stderr is not None and agent.stderr.read() == b""


def test_a_reader_that_leaves_early_leaves_the_trace_file_whole(tmp_path: object) -> None:
    import json
    from pathlib import Path

    trace = Path(str(tmp_path)) / "t.jsonl"
    argv = [sys.executable, "-m", "agent_cli", "ask", "Is order A100 refundable?", "--dry-run"]
    agent = subprocess.Popen(
        [*argv, "--trace", str(trace)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert agent.stdout is not None
    agent.stdout.close()  # `| head -c 0`
    assert agent.wait(timeout=30) == 141
    last = json.loads(trace.read_text().splitlines()[-1])
    assert last["event"] == "run_finished" and last["status"] == "interrupted"


def test_piped_chat_exits_1_when_a_turn_failed() -> None:
    ok = runner.invoke(app, ["chat", "--dry-run"], input="Is A100 refundable?\n")
    assert ok.exit_code == 0
    failed = runner.invoke(
        app, ["chat", "--dry-run", "--max-steps", "1"], input="Is A100 refundable?\n/exit\n"
    )
    assert failed.exit_code == 1
    assert "agent: error: Max steps (1) exceeded" in failed.stderr
