"""Text that came from outside (a model, a tool, a server, a user's file): always valid Unicode,
safe to print (no terminal control sequences), never a key or a password.

A JSON string may hold a lone surrogate (`"\ud800"`), which no encoder accepts: printing it,
validating it or sending it on would fail. Such code points are replaced with U+FFFD, so one bad
character costs one character, never the run.

JSON from outside (a provider's reply, a trace line, a logged record) is read by `read_json`:
`json.loads` alone recurses once per level (a reply nested 100,000 deep raises RecursionError),
keeps lone surrogates, and reads a bare NaN as a float no request can carry.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agent_cli.files import FileRefused, read_file_bytes


def valid_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (valid pairs are joined)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


# CSI (colours, cursor moves), OSC (titles, hyperlinks), other ESC sequences, C0/C1 controls
# except tab and newline, and the bidirectional overrides and isolates (U+202A-U+202E,
# U+2066-U+2069), which reorder what follows them on screen: text from a model, a tool or an
# operator must not be able to drive the terminal or disguise what it says.
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
)


# What a stored id, name or address may not hold: a NUL or any control (a newline in a name
# would forge a line of a tool's record for the model), nor a bidirectional override. A note,
# written in lines, may hold tabs and newlines (it is always shown quoted).
_STORED_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_NOTE_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def plain_value(text: str) -> str:
    """`text` as a stored id, name or address may be; ValueError naming the first control."""
    return _refuse(_STORED_CONTROL, text, "ids, names and addresses are one line of plain text")


def plain_note(text: str) -> str:
    """`text` as a stored note may be (tabs and line breaks allowed); ValueError otherwise."""
    return _refuse(_NOTE_CONTROL, text, "free text holds no control but tabs and line breaks")


def _refuse(pattern: re.Pattern[str], text: str, rule: str) -> str:
    if (found := pattern.search(text)) is not None:
        raise ValueError(f"holds a control character (U+{ord(found.group()):04X}): {rule}")
    return text


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
    """A user's UTF-8 file (a BOM is dropped; a regular file, at most `max_bytes`: see
    agent_cli/files.py), or `error` naming the path and the problem."""
    try:
        return read_file_bytes(path, max_bytes).decode("utf-8-sig")
    except FileRefused as exc:
        raise error(f"{path}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None


def read_json_file(path: Path, *, max_bytes: int, error: type[Exception]) -> Any:
    """A user's JSON file decoded, or `error` naming the path and the problem (the line of a
    syntax error; nesting too deep to read)."""
    text = read_text_file(path, max_bytes=max_bytes, error=error)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{path}: line {exc.lineno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise error(f"{path}: nested too deeply to read") from None


MAX_DEPTH = 64  # a real reply nests about 6 deep; tool arguments a few levels more


class JsonTextError(ValueError):
    """The text is not JSON this program will read; the message says why."""


class NonFinite(str):
    """A bare NaN, Infinity or -Infinity, which JSON has no room for. It is read as its name,
    so no float that JSON cannot write gets past a reader (a request built from it would fail),
    and marked, so a reader of tool arguments can refuse it (`non_finite_in`)."""


def non_finite_in(value: Any) -> str | None:
    """The first NaN or Infinity `read_json` met inside `value`, or None."""
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, NonFinite):
            return str(node)
        if isinstance(node, dict):
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return None


def read_json(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """Decode JSON, refusing anything nested deeper than `max_depth`, with every string (keys
    included) made valid Unicode."""
    try:
        # strict=False: a raw line break inside a string (small models write them) is read.
        value = json.loads(text, parse_constant=NonFinite, strict=False)
    except RecursionError:
        raise JsonTextError(f"nested deeper than {max_depth} levels") from None
    except UnicodeDecodeError:
        raise JsonTextError("not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise JsonTextError(exc.msg) from None
    if _nothing_to_tidy(text, max_depth):
        return value
    return tidy(value, max_depth=max_depth)


def _nothing_to_tidy(text: str | bytes, max_depth: int) -> bool:
    """Whether the decoded value can hold neither a lone surrogate nor nesting past
    `max_depth`, so `tidy`'s walk would change nothing (a stream's every chunk is read: the walk
    was the largest cost of our own per reply). Only an ASCII text without a \\u escape has no
    surrogate to hide, and one with no more brackets than the limit cannot nest past it."""
    if not text.isascii():
        return False
    ascii_text = text.decode("ascii") if isinstance(text, bytes) else text
    brackets = ascii_text.count("[") + ascii_text.count("{")
    return "\\u" not in ascii_text and brackets <= max_depth


def tidy(value: Any, *, max_depth: int = MAX_DEPTH) -> Any:
    """Check the nesting depth without recursion and repair strings (in place in containers)."""
    if isinstance(value, str):
        return valid_text(value)
    if not isinstance(value, dict | list):  # null, a number, a boolean: nothing inside
        return value
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        node, depth = pending.pop()
        if depth > max_depth:
            raise JsonTextError(f"nested deeper than {max_depth} levels")
        if isinstance(node, dict):
            _tidy_keys(node)
        for key, item in list(node.items() if isinstance(node, dict) else enumerate(node)):
            if isinstance(item, str):
                node[key] = valid_text(item)
            elif isinstance(item, dict | list):
                pending.append((item, depth + 1))
    return value


def _tidy_keys(node: dict[str, Any]) -> None:
    for key in [key for key in node if valid_text(key) != key]:
        node[valid_text(key)] = node.pop(key)


def print_json_lines(records: Iterable[Any]) -> None:
    """`--json` output, the one rule for every command: one compact JSON object per line (an
    order, a run, a tool, a setting, a check...), written as it comes."""
    for record in records:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        print(escaped_controls(line), flush=True)


# JSON escapes C0 controls but not DEL, C1 (U+009B is a CSI on some terminals) or the
# bidirectional overrides: JSON piped to a screen must not drive or reorder it. They only occur
# inside strings, so writing them as \u escapes reads back the same.
_UNESCAPED = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def escaped_controls(line: str) -> str:
    """A JSON text with the controls JSON leaves as they are written as \\u escapes."""
    return _UNESCAPED.sub(lambda found: f"\\u{ord(found.group()):04x}", line)
