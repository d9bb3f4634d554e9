"""One date story: every example in the README and docs/ that runs offline gives the answer it
shows, on a fresh home, whatever the system date (moved with AGENT_TODAY to dates a year apart)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.store.samples import sample_orders

ROOT = Path(__file__).parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DATES = ["2026-03-01", "2027-02-28", "2028-02-29"]  # a year apart, and a leap day
BIN = Path(sys.executable).parent  # the venv's `agent` and `python`
# Examples that cannot run here, and why: each names a server, a placeholder id, or a config.
NOT_HERE = {
    "--provider ollama": "needs an Ollama server",
    "--base-url http://localhost:8000": "needs a vLLM server",
    "3f2a": "a placeholder run id",
    "approvals show 7": "a placeholder queue item",
    "approvals approve 7": "a placeholder queue item",
    "approvals deny 9": "a placeholder queue item",
    "agent doctor": "its comment shows an MCP server configured",
}
runner = CliRunner()


def readme_commands() -> list[str]:
    """The `$ ` lines of the console blocks of the README and docs/, comments removed, that can
    run here."""
    text = "\n".join(path.read_text(encoding="utf-8") for path in DOCUMENTS)
    commands = []
    for block in re.findall(r"```console\n(.*?)```", text, re.DOTALL):
        for line in block.splitlines():
            if not line.startswith("$ "):
                continue
            command = re.sub(r"\s+#\s.*$", "", line[2:]).strip()
            if not any(marker in command for marker in NOT_HERE):
                commands.append(command)
    return list(dict.fromkeys(commands))  # an example shown twice runs once


def test_the_readme_examples_are_found() -> None:
    commands = readme_commands()
    assert 'agent ask "Is order A100 refundable?"' in commands
    assert any("注文A100" in command and "--today 2026-10-13" in command for command in commands)
    assert len(commands) >= 12


def _dated(command: str) -> bool:
    """Whether what the example prints depends on the date: an answer, or the samples' dates."""
    return "agent ask" in command or "orders init" in command


@pytest.mark.parametrize("today", DATES)
def test_every_readme_example_answers_as_shown_on_any_date(tmp_path: Path, today: str) -> None:
    home = tmp_path / "fresh-home"  # nothing of the test session's own
    home.mkdir()
    env = {
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "AGENT_TODAY": today,
        "LANG": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
    }
    for command in readme_commands():
        if today != DATES[0] and not _dated(command):
            continue  # its output is not about dates: once is enough
        done = subprocess.run(
            command,
            shell=True,
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=240,
            check=False,
        )
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
        if "agent ask" in command and "A100" in command:
            said = done.stdout
            assert "refundable" in said or "返金可能" in said, (command, said)
            assert "not refundable" not in said and "判断できません" not in said, (command, said)


@pytest.mark.parametrize("today", DATES)
def test_no_sample_order_is_delivered_after_its_day(today: str) -> None:
    day = date.fromisoformat(today)
    delivered = [o.delivered_at for o in sample_orders(day) if o.delivered_at is not None]
    assert delivered and max(delivered) <= day
    a100 = next(o for o in sample_orders(day) if o.code == "A100")
    assert a100.delivered_at is not None and (day - a100.delivered_at).days == 12


@pytest.mark.parametrize("today", DATES)
def test_eval_and_ask_agree_and_a_recorded_eval_replays_unchanged_a_year_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, today: str
) -> None:
    cases = tmp_path / "cases.toml"
    cases.write_text(
        '[[cases]]\nid = "plain"\nquestion = "Is order A100 refundable?"\n'
        'verdict = { A100 = "refundable" }\n'
        '[[cases]]\nid = "own-order"\nquestion = "Is order N501 refundable?"\n'
        'today = 2026-10-13\nverdict = { N501 = "refundable" }\n'
        '[[cases.orders]]\ncode = "N501"\nstatus = "DELIVERED"\ntotal = 100\n'
        "delivered_at = 2026-10-10\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("AGENT_TODAY", today)
    runs = tmp_path / "runs"
    argv = ["eval", "run", str(cases), "--dry-run", "--record", str(runs), "--json"]
    result = runner.invoke(app, argv)
    assert result.exit_code == 0, result.stdout
    monkeypatch.setenv("AGENT_TODAY", "2031-01-01")  # replayed years later, on another day
    result = runner.invoke(app, ["eval", "replay", str(runs), "--json"])
    assert result.exit_code == 0, result.stdout
    checks = [json.loads(line) for line in result.stdout.splitlines()]
    assert [c["matches"] for c in checks] == [True, True]


def test_a_misspelled_agent_today_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TODAY", "2026-13-01")
    result = runner.invoke(app, ["ask", "Is order A100 refundable?", "--dry-run"])
    assert result.exit_code == 2
    assert "AGENT_TODAY='2026-13-01' is not a date" in result.stderr
