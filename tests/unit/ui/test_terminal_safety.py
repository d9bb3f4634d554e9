"""Nothing a server or a model writes can drive the terminal: each path that reaches a screen
(the error line, a clarifying question, the approval prompt, chat) on a real pseudo-terminal."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pexpect
import pytest

from agent_cli.core.events import ToolObserved
from agent_cli.record.tracing import dumps_event
from tests.cli.test_chat_terminal import customer_says_yes, refund_run, spawn
from tests.fakellm import FakeLLM, error

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

# Set the title, write the clipboard, a hyperlink, clear the screen; a C1 CSI too.
HOSTILE = (
    "\x1b]0;pwned\x07\x1b]52;c;SGVsbG8=\x07\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\"
    "\x1b[2J\x9b2J"
)
ESCAPES = ("\x1b]0;", "\x1b]52;", "\x1b]8;", "\x1b[2J", "\x9b")


def run(*args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
    """`agent ARGS` on a pseudo-terminal, keeping everything it writes to the screen."""
    child = spawn(*args, env=env)
    child.logfile_read = io.StringIO()
    return child


def screen(child: pexpect.spawn) -> str:
    child.expect(pexpect.EOF)
    child.close()
    return str(child.logfile_read.getvalue())


def assert_clean(text: str) -> None:
    found = [escape for escape in ESCAPES if escape in text]
    assert found == [], repr(text)


def write_script(tmp_path: Path, *decisions: dict[str, object]) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(list(decisions)))
    return path


def test_a_provider_error_message_is_cleaned_on_the_error_line(fake_llm: FakeLLM) -> None:
    fake_llm.queue(error(400, f"bad request {HOSTILE} end"))
    child = run(
        "ask",
        "Is A100 refundable?",
        "--provider",
        "openai",
        "--base-url",
        fake_llm.url + "/v1",
        env={"OPENAI_API_KEY": "test-key"},
    )
    out = screen(child)
    assert child.exitstatus == 1
    assert "agent: error:" in out and "bad request" in out and "end" in out
    assert_clean(out)


@pytest.mark.parametrize("flags", [("-q",), ("--json",)])
def test_a_clarifying_question_is_cleaned_at_the_reply_prompt(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    script = write_script(
        tmp_path,
        {"type": "ask_user", "question": f"Which order? {HOSTILE}"},
        {"type": "final", "answer": "Thanks."},
    )
    child = run("ask", "Refund?", "--script", str(script), *flags)
    child.expect("reply> ")
    child.sendline("A100")
    out = screen(child)
    assert "Which order?" in out
    assert_clean(out)


def test_a_hostile_refund_reason_never_reaches_the_approval_prompt(tmp_path: Path) -> None:
    """A reason holding terminal escapes is refused as the call's arguments (nothing is stored
    or put to anyone), and the screen shows the refusal clean."""
    child = refund_run(tmp_path, 1000, reason=f"damaged {HOSTILE}")
    child.logfile_read = io.StringIO()
    customer_says_yes(child)
    child.expect(pexpect.EOF)
    out = screen(child)
    assert "invalid arguments for issue_refund" in out and "(U+001B)" in out, out
    assert "needs approval" not in out
    assert_clean(out)


def test_chat_cleans_answers_errors_and_prompts(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.queue(error(503, f"overloaded {HOSTILE}"), error(503, HOSTILE), error(503, HOSTILE))
    child = run(
        "chat",
        "--provider",
        "openai",
        "--base-url",
        fake_llm.url + "/v1",
        env={"OPENAI_API_KEY": "test-key"},
    )
    child.expect("agent> ")
    child.sendline("Is A100 refundable?")
    child.expect("agent: error:")
    child.expect("agent> ")
    child.sendeof()
    out = screen(child)
    assert "overloaded" in out
    assert_clean(out)


def test_trace_lines_escape_c1_controls_so_a_piped_trace_is_safe() -> None:
    event = ToolObserved(
        run_id="r",
        ts=0.0,
        step=1,
        tool="t",
        args={},
        observation=HOSTILE,
        is_error=False,
        duration_ms=0.0,
    )
    line = dumps_event(event)
    assert_clean(line)
    assert json.loads(line)["observation"] == HOSTILE  # escaped, not lost
