"""`agent ask` on a real pseudo-terminal: colour when allowed, plain text under NO_COLOR."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest


def run_on_a_terminal(*args: str, env: dict[str, str]) -> tuple[int, str]:
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_cli", *args],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env={**os.environ, "COLUMNS": "100", "TERM": "xterm-256color", **env},
        close_fds=True,
    )
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(controller)
    return process.wait(timeout=30), b"".join(chunks).decode("utf-8", "replace")


ASK = ("ask", "Is order A100 refundable?", "--dry-run", "--today", "2026-10-13")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_a_terminal_gets_colour() -> None:
    code, out = run_on_a_terminal(*ASK, env={})
    assert code == 0
    assert "\x1b[" in out
    assert "Order A100 is refundable" in out


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_no_color_means_no_escape_codes_at_all() -> None:
    code, out = run_on_a_terminal(*ASK, env={"NO_COLOR": "1"})
    assert code == 0
    assert "\x1b" not in out
    assert "Order A100 is refundable" in out


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_nothing_is_drawn_under_the_footer() -> None:
    """The spinner is for waiting on the model: once the footer is out, nothing is awaited, and
    a terminal recording (script, asciinema) shows no spinner frame after it."""
    code, out = run_on_a_terminal(*ASK, env={})
    assert code == 0
    assert "waiting for the model" in out  # the spinner ran while the run did...
    after = out[out.index(" steps · ") :]
    assert "waiting for the model" not in after  # ...and not after the end
