"""Text that came from outside (a model, a tool, a server, a user's file): always valid Unicode,
safe to print (no terminal control sequences), never a key or a password.

A JSON string may hold a lone surrogate (`"\\ud800"`), which no encoder accepts: printing it,
validating it or sending it on would fail. Such code points are replaced with U+FFFD, so one bad
character costs one character, never the run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path


def valid_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (valid pairs are joined)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


# CSI (colours, cursor moves), OSC (titles, hyperlinks), other ESC sequences, and C0/C1 controls
# except tab and newline: text from a model or a tool must not be able to drive the terminal.
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


def clean_text(text: str) -> str:
    """`text` without terminal control sequences, safe to print anywhere (stderr included);
    Rich markup is never interpreted either: the UI prints Text objects."""
    return _CONTROL.sub("", text)


MIN_SECRET_CHARS = 8  # shorter "keys" are not searched for: every "x" would become "***"
_TOKEN_SHAPES = (
    (re.compile(r"\b(Bearer)\s+[A-Za-z0-9._~+/=-]+", re.IGNORECASE), r"\1 ***"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), "sk-***"),
    # password=..., token: ..., api_key='...' (connection strings, config dumps, URLs' queries)
    (
        re.compile(
            r"\b(password|passwd|pwd|secret|token|api[_-]?key)(\s*[=:]\s*)"
            r"(?:\"[^\"]*\"|'[^']*'|[^\s'\";&,]+)",
            re.IGNORECASE,
        ),
        r"\1\2***",
    ),
    (re.compile(r"(://[^/\s:@]+):[^/\s@]+@"), r"\1:***@"),  # scheme://user:password@host
)


def mask_secrets(text: str, secret: str | None = None) -> str:
    """`text` with `secret` (when it is long enough to be one), its escaped forms, and
    Bearer/`sk-` shaped tokens replaced by `***`.

    Short keys are safe without it: no message we print carries the request headers."""
    if secret and len(secret) >= MIN_SECRET_CHARS:
        for form in dict.fromkeys((secret, repr(secret)[1:-1], json.dumps(secret)[1:-1])):
            text = text.replace(form, "***")
    for pattern, replacement in _TOKEN_SHAPES:
        text = pattern.sub(replacement, text)
    return text


def read_text_file(path: Path, *, max_bytes: int, error: type[Exception]) -> str:
    """A user's UTF-8 file (a BOM is dropped), or `error` naming the path and the problem."""
    try:
        if path.stat().st_size > max_bytes:
            raise error(f"{path}: larger than {max_bytes // 2**20} MiB; split it")
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
