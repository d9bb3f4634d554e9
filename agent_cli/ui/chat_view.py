"""What `agent chat` prints around the runs: a welcome, notes, errors, help and history.
Errors go to stderr as one line; the welcome only to a terminal, so piped output stays clean."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from agent_cli.core.seams import Exchange
from agent_cli.ui.console import clean_text, make_console


class ChatView:
    def __init__(self, console: Console, *, interactive: bool) -> None:
        self.console = console
        self.errors = make_console(sys.stderr)
        self.interactive = interactive

    def welcome(self, provider: str, model: str) -> None:
        if self.interactive:
            line = f"agent chat · {provider}/{model} · /help for commands · Ctrl-D to leave"
            self.console.print(Text(clean_text(line), style="dim"))

    def newline(self) -> None:
        if self.interactive:
            self.console.print()

    def note(self, text: str) -> None:
        self.console.print(Text(clean_text(text), style="cyan"), soft_wrap=True)

    def error(self, message: str) -> None:
        self.errors.print(Text(f"agent: error: {clean_text(message)}"), soft_wrap=True)

    def help(self, commands: Mapping[str, str]) -> None:
        width = max(len(name) for name in commands)
        for name, meaning in commands.items():
            line = Text(f"{name:<{width}}  ", style="bold")
            line.append(meaning)
            self.console.print(line)

    def history(self, remembered: Sequence[Exchange], total: int) -> None:
        if not remembered:
            self.note("No conversation yet." if not total else "Nothing is remembered now.")
            return
        dropped = total - len(remembered)
        if dropped:
            self.note(f"({dropped} older turn{'s' if dropped > 1 else ''} no longer remembered)")
        for number, exchange in enumerate(remembered, start=1):
            question = Text(f"{number}. ", style="bold")
            question.append(clean_text(exchange.question), style="bold")
            self.console.print(question)
            self.console.print(
                Padding(Text(clean_text(exchange.answer)), (0, 0, 0, 3), expand=False)
            )
