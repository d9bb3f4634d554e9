"""Text that came from outside (a model, a tool, a server): always valid Unicode.

A JSON string may hold a lone surrogate (`"\\ud800"`), which no encoder accepts: printing it,
validating it or sending it on would fail. Such code points are replaced with U+FFFD, so one bad
character costs one character, never the run.
"""

from __future__ import annotations


def valid_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (valid pairs are joined)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text
