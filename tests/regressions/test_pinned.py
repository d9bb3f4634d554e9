"""Behaviours deliberate breakages (the reviews' mutants) went past unnoticed: each pinned here
by a test that fails when it breaks (tests/mutate.sh checks the modules behind them). Each test
names the module it pins in a comment above it (the word Pins and the module's path)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.core import interrupts
from agent_cli.evaluation.report import render_report
from agent_cli.evaluation.summary import summarize
from tests.cli.test_approval_queue import items, queue_a_refund
from tests.fakellm import FakeLLM, Reply, openai_text
from tests.helpers import json_lines
from tests.unit.evaluation.test_report import context, result

runner = CliRunner()
KEY = "sk-test-0123456789"


def _tamper(sql: str) -> None:
    db = sqlite3.connect(os.environ["AGENT_DB"])
    with db:
        db.execute(sql)
    db.close()


# Pins agent_cli/store/approval_queue.py.
def test_a_refund_denied_or_expired_earlier_is_queued_again_as_a_new_item(tmp_path: Path) -> None:
    assert "awaiting approval" in queue_a_refund(tmp_path).stdout
    assert runner.invoke(app, ["approvals", "deny", "1", "--reason", "no"]).exit_code == 0
    assert "awaiting approval" in queue_a_refund(tmp_path).stdout
    _tamper("UPDATE approvals SET expires_at = '2020-01-01T00:00:00+00:00' WHERE id = 2")
    assert "awaiting approval" in queue_a_refund(tmp_path).stdout
    states = [(item["id"], item["state"]) for item in items()]
    assert states == [(1, "denied"), (2, "expired"), (3, "pending")]


# Pins agent_cli/store/approval_queue.py.
def test_state_filters_list_exactly_the_items_in_that_state(tmp_path: Path) -> None:
    queue_a_refund(tmp_path, amount=1000)
    queue_a_refund(tmp_path, amount=2000)
    _tamper("UPDATE approvals SET expires_at = '2020-01-01T00:00:00+00:00' WHERE id = 1")

    def listed(state: str) -> list[int]:
        out = runner.invoke(app, ["approvals", "list", "--state", state, "--json"]).stdout
        return [item["id"] for item in json_lines(out)]

    assert listed("expired") == [1]
    assert listed("pending") == [2]
    assert listed("approved") == []


# Pins agent_cli/tools/orders.py.
def test_after_a_partial_refund_the_lookup_says_what_is_left(tmp_path: Path) -> None:
    from agent_cli.store.sqlite import OrderStore

    store = OrderStore.open(Path(os.environ["AGENT_DB"]))
    store.record_refund("A100", 1000, "scratched", key="k")
    store.close()
    result = runner.invoke(app, ["ask", "Is A100 refundable?", "--json", "--today", "2026-10-13"])
    observed = next(r for r in json_lines(result.stdout) if r["event"] == "observation")
    assert observed["observation"].splitlines()[0] == (
        "order=A100 status=DELIVERED total=250000 currency=JPY delivered_at=2026-10-01 "
        "refunded=1000 left=249000"
    )
    assert "refundable_now=yes" in observed["observation"]
    assert "refunded in full" not in observed["observation"]


# Pins agent_cli/tools/orders.py.
def test_after_a_full_refund_nothing_is_left() -> None:
    from agent_cli.domain.orders import Order
    from agent_cli.tools.orders import format_order

    order = Order("A104", "REFUNDED", 32_000)
    assert format_order(order, refunded=32_000).endswith("refunded=32000 left=0")
    assert format_order(order, refunded=40_000).endswith("refunded=40000 left=0")


# Pins agent_cli/policy/instructions.py.
def test_instructions_given_as_an_option_win_over_the_configured_file(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    (tmp_path / "configured.md").write_text("Sign off as Kenji.")
    (tmp_path / "given.md").write_text("Sign off as Mika.")
    config = tmp_path / "c.toml"
    config.write_text(f'[agent]\ninstructions_file = "{tmp_path / "configured.md"}"\n')
    fake_llm.queue(openai_text("Order A100 is refundable."))
    argv = ["ask", "Is A100 refundable?", "--provider", "openai", "--base-url", fake_llm.url]
    argv += ["--config", str(config), "--instructions", str(tmp_path / "given.md")]
    runner.invoke(app, [*argv, "--no-grounding", "--no-stream"], env={"OPENAI_API_KEY": KEY})
    system = fake_llm.bodies()[0]["messages"][0]["content"]
    assert "Sign off as Mika." in system and "Kenji" not in system


# Pins agent_cli/providers/http.py.
@pytest.mark.parametrize("surface", ["chat", "eval"])
def test_every_run_on_a_reused_channel_keeps_its_own_deadline(
    fake_llm: FakeLLM, tmp_path: Path, surface: str
) -> None:
    """The second run on a chat's (or an eval worker's) HTTP client meets a trickling server
    too: it must end at its own deadline, not wait out the minutes of trickle."""
    for _ in range(2):
        # Headers a byte per 0.5 s: each read is in time (no read timeout), the whole takes a
        # minute: only the run's own deadline (the watchdog) ends it.
        fake_llm.queue(Reply(body=openai_text("late"), trickle_head=0.5))
    provider = ["--provider", "openai", "--base-url", fake_llm.url, "--timeout", "1"]
    provider += ["--no-stream"]
    if surface == "chat":
        argv = ["chat", *provider]
        stdin = "Is A100 refundable?\nIs A101 refundable?\n"
    else:
        cases = tmp_path / "cases.toml"
        cases.write_text(
            '[[cases]]\nquestion = "Is A100 refundable?"\nmust_call = ["lookup_order"]\n'
            '[[cases]]\nquestion = "Is A101 refundable?"\nmust_call = ["lookup_order"]\n'
        )
        argv, stdin = ["eval", "run", str(cases), *provider, "--concurrency", "1", "--json"], ""
    started = time.monotonic()
    done = runner.invoke(app, argv, input=stdin, env={"OPENAI_API_KEY": KEY})
    assert time.monotonic() - started < 30  # two 1 s deadlines; the trickle takes a minute each
    assert done.exit_code != 0
    said = done.stdout + done.stderr
    assert said.count("timed out after 1 s") + said.count('"timeout"') >= 2, said
    assert len([r for r in fake_llm.requests if r.method == "POST"]) == 2


def _reading_stdin(pid: int) -> bool:
    """Whether the process sits in read(2) on fd 0 (x86-64 and arm64 Linux name it so)."""
    try:
        call = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    return len(call) > 1 and call[0] in ("0", "63") and call[1] == "0x0"


# Pins agent_cli/cli/_boundary.py.
def test_sigterm_while_ask_waits_on_stdin_exits_143_with_its_message() -> None:
    if not Path(f"/proc/{os.getpid()}/syscall").exists():
        pytest.skip("needs /proc/PID/syscall to see the process wait on stdin")
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_cli", "ask", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not _reading_stdin(process.pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _reading_stdin(process.pid), "the agent never waited on stdin"
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143
    assert err.strip() == "agent: error: Terminated (SIGTERM)"


# Pins agent_cli/core/interrupts.py.
def test_a_second_ctrl_c_while_an_interrupted_run_ends_is_ignored() -> None:
    """Once a signal has ended a driven run, later ones are held to the end of the process."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt), interrupts.driving():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler raises long before
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # the next Ctrl-C: ignored
        os.kill(os.getpid(), signal.SIGINT)  # would raise here if it were not
        interrupts.release()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        interrupts.reset()
        signal.signal(signal.SIGINT, previous)


# Pins agent_cli/core/interrupts.py.
def test_a_signal_in_a_deferred_section_is_raised_as_it_ends() -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    done = []
    with pytest.raises(KeyboardInterrupt), interrupts.deferred():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # a handler that raised at once would end the section here
        done.append("the whole section ran")
    assert done == ["the whole section ran"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# Pins agent_cli/evaluation/report.py.
@pytest.mark.parametrize("name", ['x" onmouseover="alert(1)', "a'b<c>&d"])
def test_a_case_or_model_name_cannot_break_out_of_the_reports_attributes(
    tmp_path: Path, name: str
) -> None:
    results = [result(name, name, passed=False)]
    page = render_report(results, summarize(results, [name]), context(tmp_path, {}))
    assert 'onmouseover="' not in page and "<c>" not in page
    assert 'data-case="x&quot; onmouseover=&quot;alert(1)"' in page or "&#x27;" in page


# Pins agent_cli/record/runlog.py.
def test_a_session_is_found_by_its_first_characters_only(fake_llm: FakeLLM) -> None:
    provider = ["--provider", "openai", "--base-url", fake_llm.url, "--no-stream"]
    fake_llm.queue(openai_text("Yes."))
    runner.invoke(app, ["chat", *provider], input="Hello\n", env={"OPENAI_API_KEY": KEY})
    (run,) = json_lines(runner.invoke(app, ["logs", "list", "--kind", "chat", "--json"]).stdout)
    session = run["session_id"]

    def found(prefix: str) -> int:
        argv = ["logs", "list", "--kind", "chat", "--session", prefix, "--json"]
        return len(json_lines(runner.invoke(app, argv).stdout))

    assert found(session[:4]) == 1
    assert found(session[2:8]) == 0  # inside the id, not its start


# Pins agent_cli/commands/logs.py.
def test_a_pipe_gets_every_run_not_the_newest_twenty() -> None:
    for number in range(23):
        runner.invoke(app, ["ask", f"Is A10{number % 6} refundable?", "-q"])
    piped = runner.invoke(app, ["logs", "list"]).stdout.splitlines()  # CliRunner: not a tty
    assert len(piped) == 1 + 23  # the header, then every run


# Pins agent_cli/ui/tables.py.
def test_a_piped_table_keeps_a_tab_or_a_newline_inside_its_row(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[agent]\ninstructions = "Be warm.\\nSign off\\tas Mika."\n')
    out = runner.invoke(app, ["config", "show", "--config", str(config)]).stdout
    row = next(line for line in out.splitlines() if line.startswith("agent.instructions\t"))
    assert row.split("\t")[1] == "Be warm.\\nSign off\\tas Mika."
    header = out.splitlines()[0].split("\t")
    assert all(len(line.split("\t")) == len(header) for line in out.splitlines())


@pytest.mark.parametrize(
    "question",
    [
        "Where is my order A101? I am aoi.suzuki@example.com",
        "A101はいつ届きますか？ aoi.suzuki@example.com",
    ],
)
# Pins agent_cli/providers/playbook/desk.py.
def test_a_tracking_answer_gives_the_latest_event_not_the_first(question: str) -> None:
    """A101's parcel was picked up in Osaka, sorted in Tokyo, and is out for delivery from
    Shibuya: the customer is told the last of these."""
    result = runner.invoke(app, ["ask", question, "-q"])
    assert result.exit_code == 0, result.stderr
    assert "Out for delivery tomorrow" in result.stdout and "Shibuya depot" in result.stdout
    assert "Picked up" not in result.stdout and "Osaka hub" not in result.stdout
