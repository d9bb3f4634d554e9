"""Who answers what a run asks: a person at the terminal (a question at `reply>`, an approval
at `[y/N/q]`), or nobody. Nobody means fail closed: a question goes unanswered (the run ends
needs_input) and an approval is denied by rule, or waits in the approval queue for a person
elsewhere. Only `y` or `yes` approves, and only the exact call shown."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from agent_cli.core.events import ApprovalRequested
from agent_cli.core.seams import FAIL_CLOSED, QUEUE, ApprovalVerdict
from agent_cli.text import clean_text

Responder = Callable[[str], "str | None"]


def nobody(question: str) -> str | None:
    """The responder when no one can answer: the run ends with status needs_input."""
    return None


Approver = Callable[[ApprovalRequested], ApprovalVerdict]


def refuse(request: ApprovalRequested) -> ApprovalVerdict:
    """The approver when no one can be asked: every approval is denied (fail closed)."""
    return FAIL_CLOSED


def wait_in_queue(request: ApprovalRequested) -> ApprovalVerdict:
    """The approver when no one is at this terminal: the action waits in the approval queue
    for a person elsewhere, if it can wait (a refund can), else it is denied."""
    return QUEUE


def terminal_responder(*, show_question: bool, stream: TextIO) -> Responder:
    """Answer questions from the terminal when stdin is one; otherwise nobody can (fail closed)."""
    if not sys.stdin.isatty():
        return nobody

    def ask(question: str) -> str | None:
        if show_question:
            stream.write(f"{clean_text(question)}\n")
        while True:  # an empty line asks again; Ctrl-D (end of input) gives no answer
            line = _prompted_line("reply> ", stream)
            if line is None:
                stream.write("\n")
                return None
            if line.strip():
                return line.strip()

    return ask


def _prompted_line(prompt: str, stream: TextIO) -> str | None:
    """One line typed after `prompt`, None at end of input. Ctrl-C leaves the cursor on a fresh
    line, so what is printed next (the run's footer) does not start on the prompt's."""
    stream.write(prompt)
    stream.flush()
    try:
        line = sys.stdin.readline()
    except KeyboardInterrupt:
        stream.write("\n")
        stream.flush()
        raise
    return line or None


def terminal_approver(*, stream: TextIO, show_summary: bool = True) -> Approver:
    """Ask at the terminal; only `y` or `yes` approves, and only this exact call. Without a
    terminal on stdin, nobody here can approve: the action waits in the approval queue (or,
    when it cannot wait, is denied by rule). `show_summary`: the prompt names the call (off
    where the live view has just printed it)."""
    if not sys.stdin.isatty():
        return wait_in_queue

    def approve(request: ApprovalRequested) -> ApprovalVerdict:
        def say(text: str) -> None:
            stream.write(text + "\n")

        shown = f" {clean_text(request.summary)}" if show_summary else ""
        prompt = f"Approve{shown}? [y/N/q] "
        line = read_approval(lambda asked: _prompted_line(asked, stream), prompt, say)
        if line is None:
            stream.write("\n")
        return verdict_from(line)

    return approve


# An empty line is the default, No; q sends it to the approval queue, for a person who may
# approve it (an operator who may not approve need not deny it).
_ANSWERS = ("y", "yes", "n", "no", "q", "queue", "")


def read_approval(
    read: Callable[[str], str | None], prompt: str, say: Callable[[str], None]
) -> str | None:
    """The answer at an approval prompt, asked again until it is one (`maybe` is not a silent
    No); None at end of input."""
    while True:
        line = read(prompt)
        if line is None or line.strip().lower() in _ANSWERS:
            return line
        say("Please answer y (approve), n (deny) or q (send it to the approval queue).")


def verdict_from(line: str | None) -> ApprovalVerdict:
    if line is None or not line:
        return ApprovalVerdict(False, "rule", "no answer (end of input); denied")
    answer = line.strip().lower()
    if answer in ("y", "yes"):
        return ApprovalVerdict(True, "operator")
    if answer in ("q", "queue"):
        return ApprovalVerdict(
            False, "operator", "sent to the approval queue by the operator", queue=True
        )
    return ApprovalVerdict(False, "operator", "the operator said no")
