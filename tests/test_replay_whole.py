"""`agent eval --record DIR` then `agent eval --replay DIR` (issue 50, section 3): a recorded
conversation replays whole, the customer's replies, the consent given in a later turn and the
approvals as they were, so a commit stays a commit and a ticket a ticket."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agent_cli.cli import app

runner = CliRunner()


def record(tmp_path: Path, *argv: str) -> Path:
    recorded = tmp_path / "rec"
    made = runner.invoke(app, ["eval", *argv, "--dry-run", "--record", str(recorded), "--json"])
    assert made.exit_code == 0, made.stderr
    return recorded


def replay(recorded: Path) -> tuple[int, list[dict[str, object]]]:
    result = runner.invoke(app, ["eval", "--replay", str(recorded), "--json"])
    return result.exit_code, [json.loads(line) for line in result.stdout.splitlines()]


def test_every_run_of_the_builtin_set_replays_as_it_was_recorded(tmp_path: Path) -> None:
    code, checked = replay(record(tmp_path, "--builtin"))
    differing = [(c["trace"], c["differences"]) for c in checked if not c["matches"]]
    assert code == 0 and differing == []
    assert len(checked) > 200  # every run of every case, conversations turn by turn
    assert any(c["goal"].startswith("yes") or c["compared"] > 3 for c in checked)


def test_a_commit_made_in_a_later_turn_is_made_again_on_replay(tmp_path: Path) -> None:
    cases = tmp_path / "cases.toml"
    cases.write_text(
        """
[[cases]]
id = "cancel-over-two-turns"
turns = ["Please cancel B200", "kaito.yamamoto@example.com", "hmm, wait",
         "OK, please cancel B200 after all", "yes"]
approve = true
must_call = ["cancel_pending_order"]
"""
    )
    recorded = record(tmp_path, str(cases))
    (trace,) = recorded.rglob("*.jsonl")
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    turns = [e["remembered_turns"] for e in events if e["event"] == "run_started"]
    later = events[[e["event"] for e in events].index("run_started", 1) :]
    assert len(turns) == 2 and turns[1] > 0  # the second run continues the first
    assert any(
        e.get("observation", "").startswith("CHANGED: change #1: cancel B200") for e in later
    )
    code, checked = replay(recorded)
    assert code == 0, checked
    assert [(c["matches"], c["status"]) for c in checked] == [(True, "answered")] * 2


def test_a_replay_that_observes_something_else_still_says_so(tmp_path: Path) -> None:
    recorded = record(tmp_path, "--builtin")
    trace = next(p for p in sorted(recorded.rglob("conv-address.jsonl")))
    lines = trace.read_text().splitlines()
    changed = [
        line.replace("CHANGED: change #1", "CHANGED: change #7")
        if '"observation"' in line
        else line
        for line in lines
    ]
    trace.write_text("\n".join(changed) + "\n")
    code, checked = replay(recorded)
    assert code == 3
    (differs,) = [c for c in checked if not c["matches"]]
    assert differs["trace"] == str(trace)
