"""Consoles that print model- and tool-made text literally and safely."""

from __future__ import annotations

import os
import re
from typing import TextIO

from rich.console import Console

# CSI (colours, cursor moves), OSC (titles, hyperlinks), other ESC sequences, and C0/C1 controls
# except tab and newline: text from a model or a tool must not be able to drive the terminal.
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


def clean_text(text: str) -> str:
    """Remove terminal control sequences; Rich markup is never interpreted (we print Text)."""
    return _CONTROL.sub("", text)


def make_console(stream: TextIO | None = None, *, width: int | None = None) -> Console:
    """A console that prints plain text (no styles at all) when `stream` is not a terminal or
    NO_COLOR is set: Rich alone would keep bold and dim under NO_COLOR."""
    plain = bool(os.environ.get("NO_COLOR"))
    return Console(
        file=stream,
        width=width,
        color_system=None if plain else "auto",
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=False,
    )
