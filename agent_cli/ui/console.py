"""Consoles that print model- and tool-made text literally and safely."""

from __future__ import annotations

import os
from typing import TextIO

from rich.console import Console

from agent_cli.text import clean_text

__all__ = ["clean_text", "make_console"]


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
