"""`agent chat` and `agent ask` on a pseudo-terminal: prompts, line history, Ctrl-C and Ctrl-D."""

from __future__ import annotations

import io
import json
import os
import stat
import sys
import time
from pathlib import Path

import pexpect
import pytest

from tests.fakellm import FakeLLM, Reply, openai_text
from tests.helpers import consented_refund, delivered_recently, identify_for

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


def spawn(*args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "agent_cli", *args],
        env={**os.environ, "NO_COLOR": "1", "TERM": "dumb", **(env or {})},
        encoding="utf-8",
        timeout=90,  # only a failing test waits this long; a loaded machine is slow
        dimensions=(40, 120),
    )
    return child


def history_file() -> Path:
    if "XDG_STATE_HOME" in os.environ:
        return Path(os.environ["XDG_STATE_HOME"]) / "agent-cli" / "history"
    return Path(os.environ["HOME"]) / ".local" / "state" / "agent-cli" / "history"


def test_interactive_chat_prompts_remembers_lines_and_leaves_on_ctrl_d() -> None:
    history = history_file()
    history.parent.mkdir(parents=True)
    history.write_text("")
    history.chmod(0o644)  # left readable by an older version: made private on the first line
    child = spawn("chat", "--dry-run", "--today", "2026-10-13")
    child.expect("agent chat · offline/playbook")
    child.expect("agent> ")
    child.sendline("Is A100 refundable?")
    child.expect("Order A100 is refundable")
    child.expect("agent> ")
    time.sleep(0.3)  # a person is slower than pexpect; CPython can miss a SIGINT sent within
    child.send("half a line")  # microseconds of the prompt, before readline starts waiting
    child.expect("half a line")
    child.sendintr()  # Ctrl-C at the prompt clears the line
    child.expect("agent> ")
    child.sendline("Is A101 refundable?")
    child.expect("Order A101 is not refundable")
    child.expect("agent> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    lines = history.read_text().splitlines()
    assert "Is A100 refundable?" in lines and "Is A101 refundable?" in lines
    assert "half a line" not in lines
    assert stat.S_IMODE(history.stat().st_mode) == 0o600


def test_ctrl_c_during_a_run_cancels_it_and_the_session_goes_on(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.queue(Reply(body=openai_text("too late"), delay=8), openai_text("Second answer."))
    trace = tmp_path / "t.jsonl"
    child = spawn(
        "chat",
        "--provider",
        "openai",
        "--base-url",
        fake_llm.url,
        "--trace",
        str(trace),
        env={"OPENAI_API_KEY": "sk-test-0123456789abcdef"},
    )
    child.expect("agent> ")
    child.sendline("slow question")
    child.expect("max 12 steps")
    child.sendintr()
    child.expect("agent: error: Interrupted")
    child.expect("agent> ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert records[-1]["event"] == "run_finished" and records[-1]["status"] == "interrupted"


def test_ask_answers_a_clarifying_question_from_the_terminal() -> None:
    child = spawn("ask", "Is my order refundable?", "--dry-run", "--today", "2026-10-13")
    child.expect("Which order is this about?")
    child.expect("reply> ")
    child.sendline("A100")
    child.expect("Order A100 is refundable")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def refund_run(
    tmp_path: Path,
    *amounts: int,
    extra: tuple[str, ...] = (),
    reason: str = "damaged",
    command: str = "ask",
) -> pexpect.spawn:
    """`agent ask` (or a chat turn) on a terminal with refunds enabled and a script asking for
    these refunds (A100 made recent: the refund window is judged on the system date)."""
    delivered_recently("A100")
    config = tmp_path / "c.toml"
    config.write_text("[refunds]\nenabled = true\nmax_per_run = 5\n")
    script = tmp_path / "s.json"
    calls: list[dict[str, object]] = []
    for n, amount in enumerate(amounts, start=1):  # each proposed, put to the customer, called
        args = {"order_code": "A100", "amount": amount, "reason": reason}
        steps = consented_refund(args, proposal=f"P{n}")
        calls += steps[1:]
    answer = {"type": "final", "answer": "Refund handled."}
    script.write_text(json.dumps([identify_for("A100"), *calls, answer]))
    options = ("--script", str(script), "--config", str(config), "--today", "2026-10-13", *extra)
    if command == "ask":
        return spawn("ask", "Refund A100", *options)
    child = spawn("chat", *options)
    child.expect("agent> ")
    child.sendline("Refund A100")
    return child


def customer_says_yes(child: pexpect.spawn) -> None:
    """The customer's yes to the refund put to them, typed at the reply prompt."""
    child.expect(r"P\d, the refund on A100\? yes or no")
    child.expect("reply> ")
    child.sendline("yes")


@pytest.mark.parametrize("command", ["ask", "chat"])
def test_q_at_the_approval_prompt_sends_it_to_the_queue(tmp_path: Path, command: str) -> None:
    """An operator who may not approve need not deny: q puts the refund in the approval queue
    for a person who may, and nothing is refunded now."""
    child = refund_run(tmp_path, 1000, command=command)
    customer_says_yes(child)
    child.expect(r"pprove\? \[y/N/q\] ")
    child.sendline("q")
    child.expect("QUEUED: the refund of 1,000 JPY on order A100")
    child.expect("Refund handled.")
    if command == "chat":
        child.expect("agent> ")
        child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == (5 if command == "ask" else 0)
    shown = subprocess_json("orders", "show", "A100", "--json")
    assert shown["refunds"] == []
    (waiting,) = shown["approvals"]
    assert waiting["state"] == "pending"


def test_refund_approval_at_the_terminal_is_per_exact_call(tmp_path: Path) -> None:
    child = refund_run(tmp_path, 1000, 2000)
    customer_says_yes(child)
    child.expect(r"needs approval: refund 1,000 JPY on order A100 \(reason: 'damaged'")
    child.expect(r"Approve\? \[y/N/q\] ")  # the line above says what: not said twice
    child.sendline("y")
    child.expect("REFUNDED: refund #2 of 1,000 JPY")
    customer_says_yes(child)
    child.expect(r"needs approval: refund 2,000 JPY on order A100")
    child.expect(r"Approve\? \[y/N/q\] ")
    child.sendline("maybe")  # not an answer: asked again, not taken as a silent No
    child.expect(
        r"Please answer y \(approve\), n \(deny\) or q \(send it to the approval queue\)\."
    )
    child.expect(r"Approve\? \[y/N/q\] ")
    child.sendline("n")
    child.expect("DENIED: refund 2,000 JPY")
    child.expect("Refund handled.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    shown = subprocess_json("orders", "show", "A100", "--json")
    assert [r["amount"] for r in shown["refunds"]] == [1000]


@pytest.mark.parametrize("command", ["ask", "chat"])
def test_just_enter_at_the_approval_prompt_is_a_no(tmp_path: Path, command: str) -> None:
    child = refund_run(tmp_path, 1000, command=command)
    customer_says_yes(child)
    child.expect(r"needs approval: refund 1,000 JPY on order A100")
    child.expect(r"pprove\? \[y/N/q\] ")
    child.sendline("")
    child.expect("DENIED: refund 1,000 JPY")
    child.expect("Refund handled.")
    if command == "chat":
        child.expect("agent> ")
        child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert subprocess_json("orders", "show", "A100", "--json")["refunds"] == []


def subprocess_json(*args: str) -> dict[str, object]:
    import subprocess

    out = subprocess.run(
        [sys.executable, "-m", "agent_cli", *args], capture_output=True, text=True, check=True
    )
    return dict(json.loads(out.stdout))


def test_sigterm_at_the_chat_prompt_ends_the_session_with_143() -> None:
    _terminated_at_prompt(spawn("chat", "--dry-run"), "agent> ")


def test_a_dry_run_refund_is_approved_but_writes_nothing(tmp_path: Path) -> None:
    child = refund_run(tmp_path, 1000, extra=("--dry-run",))
    customer_says_yes(child)
    child.expect(r"needs approval: refund 1,000 JPY on order A100")
    child.expect(r"Approve\? \[y/N/q\] ")
    child.sendline("y")
    child.expect("DRY RUN: would refund 1,000 JPY on order A100; nothing was written")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert subprocess_json("orders", "show", "A100", "--json")["refunds"] == []


def _terminated_at_prompt(child: pexpect.spawn, prompt: str, trace: Path | None = None) -> None:
    import signal

    child.expect(prompt)
    time.sleep(0.3)
    child.kill(signal.SIGTERM)
    child.expect("Terminated \\(SIGTERM\\)")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 143
    if trace is None:
        return
    last = json.loads(trace.read_text().splitlines()[-1])
    assert last["event"] == "run_finished" and last["status"] == "interrupted"


@pytest.mark.parametrize("command", ["ask", "chat"])
def test_sigterm_at_the_reply_prompt_exits_143(tmp_path: Path, command: str) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"type": "ask_user", "question": "Which order?"}]))
    trace = tmp_path / "t.jsonl"
    args = ["--script", str(script), "--trace", str(trace)]
    child = spawn("ask", "Refund?", *args) if command == "ask" else spawn("chat", *args)
    if command == "chat":
        child.expect("agent> ")
        child.sendline("Refund?")
    _terminated_at_prompt(child, "reply> ", trace)


def test_sigterm_at_the_approval_prompt_exits_143(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    child = refund_run(tmp_path, 1000, extra=("--trace", str(trace)))
    customer_says_yes(child)
    _terminated_at_prompt(child, r"\[y/N/q\] ", trace)
    assert subprocess_json("orders", "show", "A100", "--json")["refunds"] == []


def test_at_reply_an_empty_line_asks_again_and_ctrl_d_gives_no_answer() -> None:
    child = spawn("ask", "Is my order refundable?", "--dry-run", "--today", "2026-10-13")
    child.expect("reply> ")
    child.sendline("")
    child.expect("reply> ")  # asked again, not taken as "no answer"
    child.sendeof()
    child.expect("none was given: answer at the reply> prompt")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 4
    assert "run it in a terminal" not in str(child.before)


def test_ctrl_c_at_reply_puts_the_footer_on_a_new_line() -> None:
    child = spawn("ask", "Is my order refundable?", "--dry-run", "--today", "2026-10-13")
    child.logfile_read = __import__("io").StringIO()
    child.expect("reply> ")
    time.sleep(0.2)
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    screen = child.logfile_read.getvalue()
    assert "reply> \r\n" in screen or "reply> ^C\r\n" in screen
    assert "reply> 1 step" not in screen and "reply> ^C1 step" not in screen


def test_slash_commands_work_at_the_chat_reply_prompt() -> None:
    child = spawn("chat", "--dry-run", "--today", "2026-10-13")
    child.expect("agent> ")
    child.sendline("Is my order refundable?")
    child.expect("reply> ")
    child.sendline("/help")
    child.expect("/exit")  # the help lists the commands
    child.expect("reply> ")  # and the question is asked again
    child.sendline("A100")
    child.expect("Order A100 is refundable")
    child.expect("agent> ")
    child.sendline("/reset")  # else "my order" is A100, the order given at reply>
    child.expect("agent> ")
    child.sendline("Is my order refundable?")
    child.expect("reply> ")
    child.logfile_read = io.StringIO()
    child.sendline("/exit")  # leaves the session from the reply prompt
    child.expect("Left unanswered: Which order")  # a note, not an error to answer at reply>
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "error" not in child.logfile_read.getvalue()


def test_a_write_called_by_hand_on_a_terminal_asks_the_operator(tmp_path: Path) -> None:
    delivered_recently("A100")
    config = tmp_path / "c.toml"
    config.write_text("[refunds]\nenabled = true\n")
    args = '{"order_code": "A100", "amount": 1500, "reason": "late delivery"}'
    child = spawn("tools", "call", "issue_refund", args, "--config", str(config))
    child.expect(r"Approve refund 1,500 JPY on order A100 .*\? \[y/N/q\] ")
    child.sendline("n")
    child.expect("DENIED")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1  # refused: nothing done
    child = spawn("tools", "call", "issue_refund", args, "--config", str(config))
    child.expect(r"\[y/N/q\] ")
    child.sendline("y")
    child.expect("REFUNDED: refund #2 of 1,500 JPY on order A100 recorded")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    shown = subprocess_json("orders", "show", "A100", "--json")
    assert [r["amount"] for r in shown["refunds"]] == [1500]


def test_a_desk_write_on_a_terminal_asks_the_customer_then_the_operator(tmp_path: Path) -> None:
    """`agent ask` at a terminal: the change proposed, the customer's yes at `reply>`, the
    operator's y at `[y/N]`, then the change, once."""
    cancel = {"type": "tool", "tool": "cancel_pending_order",
              "args": {"order_id": "B200", "reason": "no longer needed"}}  # fmt: skip
    script = tmp_path / "cancel.json"
    script.write_text(
        json.dumps([
            {"type": "tool", "tool": "find_user_id_by_email",
             "args": {"email": "kaito.yamamoto@example.com"}},
            cancel,
            {"type": "ask_user", "question": "Change P1: cancel B200, refund 5,400 JPY?"},
            cancel,
            {"type": "final", "answer": "I have cancelled B200; 5,400 JPY is on its way back."},
        ])
    )  # fmt: skip
    child = spawn("ask", "Please cancel B200 (kaito.yamamoto@example.com)", "--script", str(script))
    child.expect("reply> ")
    child.sendline("はい、お願いします")
    child.expect("needs approval: cancel B200")
    child.expect(r"Approve\? \[y/N/q\] ")
    child.sendline("y")
    child.expect("I have cancelled B200")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    shown = subprocess_json("orders", "show", "B200", "--json")
    assert shown["status"] == "CANCELLED" and len(shown["changes"]) == 1
