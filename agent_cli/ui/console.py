"""Consoles that print model- and tool-made text literally and safely."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.text import Text

from agent_cli.text import clean_text

__all__ = ["clean_text", "make_console", "notice", "progress_bar"]


def make_console(stream: TextIO | None = None, *, width: int | None = None) -> Console:
    """A console that prints plain text (no styles at all) when `stream` is not a terminal or
    NO_COLOR is set: Rich alone would keep bold and dim under NO_COLOR."""
    plain = bool(os.environ.get("NO_COLOR"))
    console = Console(
        file=stream,
        width=width,
        color_system=None if plain else "auto",
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=False,
    )
    # A pipe or a file gets whole lines: hard-wrapping at 80 columns splits what scripts grep.
    console.soft_wrap = not console.is_terminal
    console.on_broken_pipe = _reader_left  # type: ignore[method-assign]
    return console


def _reader_left() -> None:
    """Rich's own handler exits 1 (an error); a reader that left (`| head`) is the CLI's to
    report: 141, as for other programs killed by SIGPIPE, and nothing on stderr."""
    raise BrokenPipeError


def notice(text: str) -> None:
    """One dim line on stderr: said, not shouted (plain when stderr is not a terminal)."""
    make_console(sys.stderr).print(Text(clean_text(text), style="dim"), soft_wrap=True)


@contextmanager
def progress_bar(what: str, total: int) -> Iterator[Callable[[int], None]]:
    """A bar on stderr while `what` is done (`advance(n)` after each n records), only when
    stderr is a terminal: a pipe or a log file gets no bar and no control characters."""
    console = make_console(sys.stderr)
    if not console.is_terminal:
        yield lambda _n: None
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task(what, total=total)
        yield lambda n: progress.advance(task, n)
