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
    made = runner.invoke(
        app, ["eval", "run", *argv, "--dry-run", "--record", str(recorded), "--json"]
    )
    assert made.exit_code == 0, made.stderr
    return recorded


def replay(recorded: Path) -> tuple[int, list[dict[str, object]]]:
    result = runner.invoke(app, ["eval", "replay", str(recorded), "--json"])
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


def test_a_yes_given_to_the_answer_before_is_replayed_with_that_answer(tmp_path: Path) -> None:
    """The change is put to the customer in one run's answer and said yes to in the next turn:
    the replay shows the second run the first one's answer, or the yes would answer nothing."""
    cancel = {"order_id": "B200", "reason": "no longer needed"}
    script = tmp_path / "s.json"
    script.write_text(
        json.dumps(
            [
                {"type": "tool", "tool": "find_user_id_by_email",
                 "args": {"email": "kaito.yamamoto@example.com"}},
                {"type": "tool", "tool": "cancel_pending_order", "args": cancel},
                {"type": "final", "answer": "Shall I make change P1, cancelling B200? Yes or no?"},
                {"type": "tool", "tool": "cancel_pending_order", "args": cancel},
                {"type": "final", "answer": "B200 is cancelled."},
            ]
        )
    )  # fmt: skip
    cases = tmp_path / "cases.toml"
    cases.write_text(
        '[[cases]]\nid = "yes-next-turn"\napprove = true\nmust_call = ["cancel_pending_order"]\n'
        'turns = ["Please cancel B200, I am kaito.yamamoto@example.com", "yes"]\n'
    )
    recorded = tmp_path / "rec"
    argv = ["eval", "run", str(cases), "--script", str(script), "--record", str(recorded), "--json"]
    made = runner.invoke(app, argv)
    assert made.exit_code == 0, made.stdout + made.stderr
    (trace,) = recorded.rglob("*.jsonl")
    written = [json.loads(line) for line in trace.read_text().splitlines()]
    changed = [e for e in written if e.get("observation", "").startswith("CHANGED: change #1")]
    assert len(changed) == 1  # made in the second run, on the first run's question
    code, checked = replay(recorded)
    assert code == 0, checked
    assert [(c["matches"], c["recorded_status"], c["status"]) for c in checked] == [
        (True, "answered", "answered")
    ] * 2
    assert set(checked[0]) == {
        "event", "trace", "run_id", "goal", "matches", "compared", "recorded_status", "status",
        "problem", "not_replayed", "differences",
    }  # fmt: skip


def test_a_replay_never_writes_the_configured_store(tmp_path: Path) -> None:
    """A chat that cancelled B200, replayed after B200 was put back: the replay's cancel runs
    dry (and so differs), and the store is as it was."""
    import os
    import sqlite3

    trace = tmp_path / "chat.jsonl"
    config = tmp_path / "c.toml"  # the shop's rule approves cancels: no one need be asked
    config.write_text(
        '[[refunds.rules]]\nname = "cancels"\ndecision = "auto"\nbelow = { JPY = 100000 }\n'
        'tools = ["cancel_pending_order"]\n'
    )
    turns = "Please cancel B200\nkaito.yamamoto@example.com\nyes\n"
    argv = ["chat", "--trace", str(trace), "--config", str(config)]
    chat = runner.invoke(app, argv, input=turns)
    assert chat.exit_code == 0, chat.stderr
    assert "CHANGED: change #1" in trace.read_text()
    with sqlite3.connect(os.environ["AGENT_DB"]) as db:  # as if it had never been cancelled
        db.execute("UPDATE orders SET status = 'PENDING', cancel_reason = NULL WHERE code = 'B200'")
        changes = db.execute("SELECT COUNT(*) FROM order_changes").fetchone()[0]
    checked = runner.invoke(app, ["replay", str(trace), "--check", "--config", str(config)])
    assert checked.exit_code == 3  # the cancel ran dry: not what was recorded
    shown = json.loads(runner.invoke(app, ["orders", "show", "B200", "--json"]).stdout)
    assert shown["status"] == "PENDING"
    with sqlite3.connect(os.environ["AGENT_DB"]) as db:
        assert db.execute("SELECT COUNT(*) FROM order_changes").fetchone()[0] == changes


def test_a_recorded_call_the_replay_does_not_make_is_a_difference(tmp_path: Path) -> None:
    recorded = record(tmp_path, "--builtin")
    trace = next(p for p in sorted(recorded.rglob("conv-address.jsonl")))
    lines = trace.read_text().splitlines()
    last = max(i for i, line in enumerate(lines) if '"event":"observation"' in line)
    lines.insert(last + 1, lines[last])  # a call recorded twice: the replay makes it once
    trace.write_text("\n".join(lines) + "\n")
    code, checked = replay(recorded)
    assert code == 3
    (differs,) = [c for c in checked if not c["matches"]]
    (difference,) = differs["differences"]  # type: ignore[misc]
    assert difference["now"] is None and difference["recorded"]
