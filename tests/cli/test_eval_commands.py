"""`agent eval` as four subcommands (issue 51, point 2): `run FILE|--builtin`, `tau2 TASKS`,
`replay DIR`, `list`; the old spellings run as they did, with one line naming the new one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from agent_cli.cli import app

runner = CliRunner()
FIXTURES = Path(__file__).parents[1] / "fixtures"
CASES = """
[[cases]]
id = "one"
question = "Is order A100 refundable?"
must_call = ["lookup_order"]
"""


def agent(*argv: str) -> Result:
    return runner.invoke(app, list(argv))


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    path = tmp_path / "cases.toml"
    path.write_text(CASES)
    return path


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "db.json"
    gold = json.loads((FIXTURES / "tau2-gold.json").read_text("utf-8"))
    path.write_text(json.dumps(gold["db"]), encoding="utf-8")
    return path


def test_the_subcommands_do_what_the_flags_did(cases: Path, tmp_path: Path, db: Path) -> None:
    ran = agent("eval", "run", str(cases), "--dry-run", "--json", "--record", str(tmp_path / "r"))
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.stdout.splitlines()[0])["case"] == "one"
    assert "agent: note" not in ran.stderr
    listed = agent("eval", "list", str(cases))
    assert listed.exit_code == 0 and listed.stdout.startswith("one\t")
    builtin = agent("eval", "list", "--builtin")
    assert builtin.exit_code == 0 and len(builtin.stdout.splitlines()) > 100
    replayed = agent("eval", "replay", str(tmp_path / "r"), "--json")
    assert replayed.exit_code == 0, replayed.output
    tau2 = agent(
        "eval", "tau2", str(FIXTURES / "tau2-tasks.json"), "--store-file", str(db),
        "--provider", "reference", "--json",
    )  # fmt: skip
    assert tau2.exit_code == 0, tau2.output
    assert all(json.loads(line) for line in tau2.stdout.splitlines())


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (["--builtin", "--list"], "agent eval list"),
        (["--list", "CASES"], "agent eval list"),
        (["CASES", "--dry-run"], "agent eval run [FILE | --builtin]"),
        (["--replay", "RECORDED"], "agent eval replay DIR"),
    ],
)
def test_the_old_spellings_still_work_and_say_the_new_one(
    old: list[str], new: str, cases: Path, tmp_path: Path
) -> None:
    recorded = tmp_path / "r"
    assert agent("eval", "run", str(cases), "--dry-run", "--record", str(recorded)).exit_code == 0
    argv = [str(cases) if a == "CASES" else str(recorded) if a == "RECORDED" else a for a in old]
    result = agent("eval", *argv)
    assert result.exit_code == 0, result.output
    notes = [line for line in result.stderr.splitlines() if line.startswith("agent: note:")]
    assert notes == [
        f"agent: note: this spelling of agent eval is now {new}; the old one works until the "
        "next release"
    ]
    assert result.stdout.strip()  # the job still done


def test_eval_alone_shows_its_subcommands_and_a_bad_one_is_a_usage_error() -> None:
    shown = agent("eval")
    assert "run" in shown.stdout and "tau2" in shown.stdout and "replay" in shown.stdout
    wrong = agent("eval", "run", "--builtin", "--tau2", "x")
    assert wrong.exit_code == 2 and "Traceback" not in wrong.output
