"""The approval queue: a run with nobody to approve a refund queues it and ends
pending_approval (exit 5); any other process decides it later, once, after checking every rule
again on the order as it is then."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from agent_cli.cli import app
from tests.helpers import consented_refund, delivered_recently, json_lines

runner = CliRunner()


def config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "c.toml"
    path.write_text(f"[refunds]\nenabled = true\nmax_amount = 50000\n{extra}")
    return path


def queue_a_refund(tmp_path: Path, amount: int = 1000, reason: str = "damaged") -> Result:
    """A customer's conversation with no terminal (`agent chat` fed by a pipe: CliRunner's
    stdin is not one): the customer says yes to the refund, nobody here can approve it, so it
    is queued."""
    delivered_recently("A100")
    script = tmp_path / "s.json"
    refund = {"order_code": "A100", "amount": amount, "reason": reason}
    decisions = [
        *consented_refund(refund),
        {"type": "final", "answer": "Your refund is pending approval."},
    ]
    script.write_text(json.dumps(decisions))
    argv = ["chat", "--script", str(script)]
    argv += ["--config", str(config(tmp_path)), "--trace", str(tmp_path / "t.jsonl")]
    turns = "Refund A100, it arrived broken\nyes\n"
    return runner.invoke(app, argv, input=turns, env={"AGENT_OPERATOR": "night-bot"})


def agent_process(*args: str) -> subprocess.Popen[str]:
    """The agent in a process of its own, as a second operator would run it."""
    return subprocess.Popen(
        [sys.executable, "-m", "agent_cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )


def order_a100() -> dict[str, Any]:
    return dict(json.loads(runner.invoke(app, ["orders", "show", "A100", "--json"]).stdout))


def items() -> list[dict[str, Any]]:
    return json_lines(runner.invoke(app, ["approvals", "list", "--json"]).stdout)


def test_a_headless_run_queues_the_refund_and_another_process_approves_it(
    tmp_path: Path,
) -> None:
    result = queue_a_refund(tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "awaiting approval: agent approvals show 1" in result.stdout
    records = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    decided = next(r for r in records if r["event"] == "approval_decided")
    assert (decided["approved"], decided["queued"]) == (False, 1)
    refunds = [r for r in records if r.get("tool") == "issue_refund" and "observation" in r]
    proposed, observed = refunds
    assert proposed["observation"].startswith("PROPOSED (nothing is changed yet) as change P1")
    assert observed["observation"].startswith("QUEUED: the refund of 1,000 JPY on order A100")
    assert records[-1]["status"] == "pending_approval"
    assert records[-1]["answer"] == "Your refund is pending approval."
    assert order_a100()["refunds"] == []  # nothing moved yet
    (item,) = items()
    assert item["state"] == "pending" and item["proposed_by"] == "night-bot"
    assert item["question"] == "Refund A100, it arrived broken"
    assert item["run_id"] == records[0]["run_id"]

    lead = agent_process("approvals", "approve", "1", "--as", "lead")
    out, err = lead.communicate(timeout=60)
    assert lead.returncode == 0, err
    assert out.startswith("#1: approved: refund #2 of 1,000 JPY recorded")
    shown = order_a100()
    assert [r["amount"] for r in shown["refunds"]] == [1000]
    (approved,) = shown["approvals"]
    assert (approved["state"], approved["decided_by"], approved["refund_id"]) == (
        "approved",
        "lead",
        2,  # refund #1 is the sample A106's
    )


def test_approving_twice_makes_one_refund(tmp_path: Path) -> None:
    assert queue_a_refund(tmp_path).exit_code == 0
    assert runner.invoke(app, ["approvals", "approve", "1"]).exit_code == 0
    again = runner.invoke(app, ["approvals", "approve", "1"])
    assert again.exit_code == 1
    assert "#1: already approved" in again.stderr and "nothing done" in again.stderr
    assert len(order_a100()["refunds"]) == 1


def test_two_processes_approving_at_once_make_one_refund(tmp_path: Path) -> None:
    assert queue_a_refund(tmp_path).exit_code == 0
    both = [agent_process("approvals", "approve", "1") for _ in range(2)]
    codes = sorted(p.wait(timeout=60) for p in both)
    assert codes == [0, 1]
    assert len(order_a100()["refunds"]) == 1


def test_an_expired_item_cannot_be_approved(tmp_path: Path) -> None:
    assert queue_a_refund(tmp_path).exit_code == 0
    with sqlite3.connect(os.environ["AGENT_DB"]) as db:  # as if 72 hours had passed
        db.execute("UPDATE approvals SET expires_at = '2000-01-01T00:00:00+00:00'")
    assert items()[0]["state"] == "expired"
    result = runner.invoke(app, ["approvals", "approve", "1"])
    assert result.exit_code == 1
    assert "#1: expired: expired at 2000-01-01T00:00:00+00:00; no refund" in result.stdout
    assert order_a100()["refunds"] == []


def test_an_order_changed_since_it_was_queued_is_refused_at_commit(tmp_path: Path) -> None:
    assert queue_a_refund(tmp_path).exit_code == 0
    with sqlite3.connect(os.environ["AGENT_DB"]) as db:  # cancelled meanwhile
        db.execute("UPDATE orders SET status = 'CANCELLED' WHERE code = 'A100'")
    result = runner.invoke(app, ["approvals", "approve", "1"])
    assert result.exit_code == 1
    assert "order A100 changed since it was queued (status DELIVERED -> CANCELLED)" in result.stdout
    assert order_a100()["refunds"] == []
    assert items()[0]["state"] == "failed"


def test_a_refund_made_meanwhile_is_counted_at_commit(tmp_path: Path) -> None:
    assert queue_a_refund(tmp_path, amount=50_000).exit_code == 0
    with sqlite3.connect(os.environ["AGENT_DB"]) as db:  # most of it refunded another way
        db.execute(
            "INSERT INTO refunds (order_code, amount, reason, created_at, idempotency_key)"
            " VALUES ('A100', 230000, 'by phone', '2026-01-01', 'phone-1')"
        )
    result = runner.invoke(app, ["approvals", "approve", "1"])
    assert result.exit_code == 1
    assert "only 20,000 JPY of order A100 is still refundable" in result.stdout
    assert [r["amount"] for r in order_a100()["refunds"]] == [230000]


def test_a_denied_item_is_closed_with_its_reason(tmp_path: Path) -> None:
    assert queue_a_refund(tmp_path).exit_code == 0
    denied = runner.invoke(app, ["approvals", "deny", "1", "--reason", "photo shows no damage"])
    assert denied.exit_code == 0 and "#1: denied: denied: photo shows no damage" in denied.stdout
    assert runner.invoke(app, ["approvals", "approve", "1"]).exit_code == 1
    assert order_a100()["refunds"] == []
    shown = runner.invoke(app, ["approvals", "show", "1", "--json"])
    assert json.loads(shown.stdout)["outcome"] == "denied: photo shows no damage"


def test_the_same_refund_proposed_twice_waits_as_one_item(tmp_path: Path) -> None:
    assert queue_a_refund(tmp_path).exit_code == 0
    assert queue_a_refund(tmp_path).exit_code == 0
    assert len(items()) == 1


def refund_script(tmp_path: Path, answer: str) -> Path:
    delivered_recently("A100")
    script = tmp_path / "s.json"
    refund = {"order_code": "A100", "amount": 1000, "reason": "damaged"}
    script.write_text(json.dumps([*consented_refund(refund), {"type": "final", "answer": answer}]))
    return script


def chat_refund(tmp_path: Path, script: Path, *options: str) -> Result:
    """The customer asks for the refund and says yes to it, in a piped `agent chat`."""
    argv = ["chat", "--script", str(script), "--config", str(config(tmp_path)), *options]
    return runner.invoke(app, argv, input="Refund A100\nyes\n")


def test_a_dry_run_never_queues(tmp_path: Path) -> None:
    result = chat_refund(tmp_path, refund_script(tmp_path, "ok"), "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert "was not approved: no one could be asked" in result.stdout  # it got this far
    assert items() == []


def test_unknown_items_and_states_are_clear_errors() -> None:
    missing = runner.invoke(app, ["approvals", "show", "99"])
    assert missing.exit_code == 1 and "No approval #99" in missing.stderr
    bad = runner.invoke(app, ["approvals", "list", "--state", "waiting"])
    assert bad.exit_code == 2 and "--state 'waiting' is not a state" in bad.stderr
    none = runner.invoke(app, ["approvals", "approve", "99"])
    assert none.exit_code == 1 and "#99: no such item" in none.stderr


def test_the_run_and_its_log_show_which_item_waits(tmp_path: Path) -> None:
    shown = chat_refund(tmp_path, refund_script(tmp_path, "It is pending."))
    assert shown.exit_code == 0, shown.stderr
    assert "queued as #1" in shown.stdout
    assert "awaiting approval: agent approvals show 1" in shown.stdout
    logged = runner.invoke(app, ["logs", "show"])
    assert "queued as #1" in logged.stdout
    assert "awaiting approval: agent approvals show 1" in logged.stdout
    assert runner.invoke(app, ["approvals", "approve", "1", "--as", "lead"]).exit_code == 0
    decided = runner.invoke(app, ["logs", "show"])  # the decision, added to the run's log
    assert "#1 approved by lead: refund #2 of 1,000 JPY recorded" in decided.stdout
    lines = runner.invoke(app, ["logs", "show", "--json"]).stdout.splitlines()
    last = json.loads(lines[-1])
    assert (last["event"], last["item"], last["decided_by"]) == ("queue_decided", 1, "lead")
    replayed = runner.invoke(app, ["replay", str(_saved(tmp_path, lines))])
    assert replayed.exit_code == 0, replayed.stderr


def _saved(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "logged.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def many_pending(count: int) -> list[str]:
    """`count` refunds waiting in the test's store, each on its own order: their item numbers."""
    from datetime import UTC, date, datetime, timedelta

    from agent_cli.domain.orders import Order, refund_key
    from agent_cli.store.approval_queue import judged_json
    from agent_cli.store.sqlite import OrderStore

    delivered = date.today() - timedelta(days=3)
    orders = [Order(f"M{n}", "DELIVERED", 10_000, delivered) for n in range(count)]
    now = datetime.now(UTC)
    rows = [
        (
            "issue_refund",
            o.code,
            1000,
            "damaged",
            refund_key(o.code, 1000, "damaged"),
            judged_json(o),
            "run",
            "refund?",
            "bot",
            now.isoformat(timespec="seconds"),
            (now + timedelta(hours=1)).isoformat(timespec="seconds"),
        )
        for o in orders
    ]
    store = OrderStore.open(Path(os.environ["AGENT_DB"]))
    try:
        store.import_orders(orders)
    finally:
        store.close()
    db = sqlite3.connect(os.environ["AGENT_DB"])
    with db:
        db.executemany(
            "INSERT INTO approvals (kind, order_code, amount, summary, key, judged, run_id,"
            " question, proposed_by, created_at, expires_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
    db.close()
    return [str(n) for n in range(1, count + 1)]


def approved_in_store() -> set[int]:
    db = sqlite3.connect(os.environ["AGENT_DB"])
    try:
        return {row[0] for row in db.execute("SELECT id FROM approvals WHERE status='approved'")}
    finally:
        db.close()


def test_sigterm_while_approving_many_items_exits_143_with_every_commit_printed() -> None:
    import signal

    numbers = many_pending(1500)
    process = agent_process("approvals", "approve", *numbers, "--as", "lead")
    assert process.stdout is not None
    first = process.stdout.readline()  # one item decided: the rest are still to come
    assert first.startswith("#1: approved")
    os.kill(process.pid, signal.SIGSTOP)  # both signals wait while it is stopped
    os.kill(process.pid, signal.SIGTERM)
    os.kill(process.pid, signal.SIGCONT)
    rest = process.stdout.read()  # through the same buffer as the first line
    assert process.stderr is not None
    err = process.stderr.read()
    assert process.wait(timeout=120) == 143, err
    assert "Terminated (SIGTERM)" in err and "internal error" not in err
    printed = {int(line.split(":")[0][1:]) for line in [first, *rest.splitlines()] if line}
    assert printed == approved_in_store()  # every committed item printed, none more
    assert 0 < len(printed) < 1500


def test_a_deny_reason_is_printed_safely_and_kept_within_bounds() -> None:
    numbers = many_pending(2)
    hostile = "no\x1b[2J\x1b]0;owned\x07 \u202efdp.exe"
    denied = runner.invoke(app, ["approvals", "deny", numbers[0], "--reason", hostile])
    assert denied.exit_code == 0, denied.stderr
    assert "\x1b" not in denied.stdout and "\u202e" not in denied.stdout
    assert "#1: denied: denied: no fdp.exe" in denied.stdout
    long = runner.invoke(app, ["approvals", "deny", numbers[1], "--reason", "x" * 1001])
    assert long.exit_code == 2 and "--reason is 1,001 characters; at most 1,000" in long.stderr
    assert items()[1]["state"] == "pending"  # nothing was done


def test_an_approver_on_another_machine_decides_without_a_run_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue_a_refund(tmp_path)  # logged in this machine's run log
    elsewhere = tmp_path / "laptop-state"
    monkeypatch.setenv("XDG_STATE_HOME", str(elsewhere))  # a machine with no run log at all
    listed = runner.invoke(app, ["approvals", "list"])
    assert listed.exit_code == 0 and "A100" in listed.stdout and listed.stderr == ""
    assert runner.invoke(app, ["approvals", "show", "1"]).exit_code == 0
    approved = runner.invoke(app, ["approvals", "approve", "1", "--as", "lead"])
    assert approved.exit_code == 0, approved.stderr
    assert "#1: approved: refund #2 of 1,000 JPY recorded" in approved.stdout
    assert "no run log here" in approved.stderr and "kept in the order store" in approved.stderr
    assert order_a100()["refunds"][0]["amount"] == 1000


def test_a_decision_on_a_machine_whose_log_lacks_the_run_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue_a_refund(tmp_path)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "laptop-state"))
    runner.invoke(app, ["ask", "Is order A101 refundable?"])  # this machine's own log
    approved = runner.invoke(app, ["approvals", "approve", "1", "--as", "lead"])
    assert approved.exit_code == 0
    assert "1 decision(s) not added to the run log: their runs were logged on another" in (
        approved.stderr
    )


def test_a_sigterm_just_after_a_commit_waits_for_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The signal lands between an item's commit and its printed line: the line comes first."""
    import signal
    import threading

    from agent_cli.store import approval_queue

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    numbers = many_pending(3)
    real = approval_queue.approve

    def approve_then_terminated(*args: Any, **kwargs: Any) -> Any:
        decided = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)  # committed, not yet printed
        return decided

    monkeypatch.setattr(approval_queue, "approve", approve_then_terminated)
    result = runner.invoke(app, ["approvals", "approve", *numbers, "--as", "lead"])
    assert result.exit_code == 143, result.stderr
    assert result.stdout.splitlines() == ["#1: approved: refund #2 of 1,000 JPY recorded"]
    assert approved_in_store() == {1}


def test_every_decision_names_who_made_it_and_when(tmp_path: Path) -> None:
    from agent_cli.domain.orders import Order
    from agent_cli.store.approval_queue import judged_json

    many_pending(3)
    _expire = sqlite3.connect(os.environ["AGENT_DB"])
    with _expire:
        _expire.execute(
            "UPDATE approvals SET expires_at = '2020-01-01T00:00:00+00:00' WHERE id = 1"
        )
        _expire.execute("UPDATE orders SET status = 'CANCELLED' WHERE code = 'M1'")  # #2 fails
    _expire.close()
    runner.invoke(app, ["approvals", "approve", "1", "2", "--as", "lead"])
    runner.invoke(app, ["approvals", "deny", "3", "--as", "lead", "--reason", "no"])
    decided = items()
    assert [(i["state"], i["decided_by"]) for i in decided] == [
        ("expired", "lead"),
        ("failed", "lead"),
        ("denied", "lead"),
    ]
    assert all(i["decided_at"] and i["decided_at"].endswith("+00:00") for i in decided)
    undelivered = Order("X1", "PENDING", 10)
    assert json.loads(judged_json(undelivered))["delivered_at"] is None


def test_a_refund_recorded_meanwhile_under_the_same_key_fails_the_item(tmp_path: Path) -> None:
    from agent_cli.domain.orders import refund_key
    from agent_cli.store.sqlite import OrderStore

    many_pending(1)
    store = OrderStore.open(Path(os.environ["AGENT_DB"]))
    made = store.record_refund("M0", 1000, "damaged", key=refund_key("M0", 1000, "damaged"))
    store.close()
    result = runner.invoke(app, ["approvals", "approve", "1", "--as", "lead"])
    assert result.exit_code == 1
    assert f"#1: failed: refund #{made.refund.id} existed already; no new refund" in result.stdout
    (item,) = items()
    assert (item["state"], item["decided_by"]) == ("failed", "lead")


def test_the_logged_decision_carries_its_refund(tmp_path: Path) -> None:
    queue_a_refund(tmp_path)
    runner.invoke(app, ["approvals", "approve", "1", "--as", "lead"])
    last = json.loads(runner.invoke(app, ["logs", "show", "--json"]).stdout.splitlines()[-1])
    assert (last["event"], last["status"], last["refund_id"]) == ("queue_decided", "approved", 2)


def test_items_are_listed_by_order(tmp_path: Path) -> None:
    many_pending(2)  # M0 and M1
    only = runner.invoke(app, ["approvals", "list", "--order", "m1", "--json"]).stdout
    assert [item["order_code"] for item in json_lines(only)] == ["M1"]
    shown = json.loads(runner.invoke(app, ["orders", "show", "M0", "--json"]).stdout)
    assert [item["order_code"] for item in shown["approvals"]] == ["M0"]


def test_an_operators_q_queues_and_says_so_when_the_action_cannot_wait() -> None:
    from agent_cli.core.seams import FAIL_CLOSED, QUEUE
    from agent_cli.runtime.answerers import verdict_from

    sent = verdict_from(" Q ")
    assert (sent.approved, sent.by, sent.queue) == (False, "operator", True)
    assert verdict_from("queue").queue and not verdict_from("n").queue
    assert not verdict_from("").queue and verdict_from("").by == "rule"  # Enter: No
    kept = sent.cannot_wait()  # a dry run: nothing can wait; the operator's no, said why
    assert (kept.approved, kept.by, kept.queue) == (False, "operator", False)
    assert "cannot wait in the approval queue" in kept.reason
    assert QUEUE.cannot_wait() == FAIL_CLOSED  # nobody at a terminal: as before


@pytest.mark.parametrize("closed", ["denied", "expired", "approved"])
def test_a_refund_asked_again_after_its_item_closed_waits_as_a_new_item(
    tmp_path: Path, closed: str
) -> None:
    """A closed item (denied, expired, or approved and its refund made) is never the answer to
    a new request: the same refund asked again waits as its own item, and the old one keeps
    its decision."""
    assert queue_a_refund(tmp_path).exit_code == 0
    if closed == "denied":
        assert runner.invoke(app, ["approvals", "deny", "1", "--reason", "no"]).exit_code == 0
    elif closed == "expired":
        with sqlite3.connect(os.environ["AGENT_DB"]) as db:
            db.execute("UPDATE approvals SET expires_at = '2000-01-01T00:00:00+00:00'")
    else:
        assert runner.invoke(app, ["approvals", "approve", "1"]).exit_code == 0
    again = queue_a_refund(tmp_path)
    listed = {item["id"]: item["state"] for item in items()}
    if closed == "approved":  # the refund was made: asked again, nothing more waits for it
        assert listed == {1: "approved"} and len(order_a100()["refunds"]) == 1
        return
    assert again.exit_code == 0, again.stderr
    assert listed == {1: closed, 2: "pending"}
    assert "#2" in again.stdout or "item 2" in again.stdout
