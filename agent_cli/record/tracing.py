"""Trace events as JSON Lines: one complete object per line, written and flushed as it happens.

Every line has `event`, `run_id` and `ts` (ISO 8601, UTC). A line is serialised in full before it
is written, so an error can never leave half a line; values JSON cannot hold (NaN, dates, bytes)
are converted, and text that cannot be UTF-8 (lone surrogates) is escaped. Trace files are opened
for appending, created owner-only (0600): an existing file is never overwritten.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import io
import json
import math
import os
import stat
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from pydantic import BaseModel

from agent_cli.core.events import ApprovalDecided, Event, RunFinished, RunStarted, ToolObserved
from agent_cli.core.tool_outcomes import acted
from agent_cli.errors import TraceFileError
from agent_cli.files import open_regular
from agent_cli.text import JsonTextError, escaped_controls, mask_secrets, read_json


def event_record(event: Event, *, session_id: str | None = None) -> dict[str, Any]:
    """The trace record of an event: `event`, `run_id`, `ts`, `session_id` (chat only), then
    the event's own fields."""
    record: dict[str, Any] = {
        "event": event.kind,
        "run_id": event.run_id,
        "ts": datetime.fromtimestamp(event.ts, UTC).isoformat(timespec="milliseconds"),
    }
    if session_id is not None:
        record["session_id"] = session_id
    for item in dataclasses.fields(event):
        if item.name not in ("run_id", "ts") and item.metadata.get("trace", True):
            record[item.name] = _jsonable(getattr(event, item.name))
    if isinstance(event, RunStarted):  # a customer may paste a key or a password into it
        record["goal"] = mask_secrets(event.goal)
    return record


def dumps_event(event: Event, *, session_id: str | None = None) -> str:
    """One JSON line (without the newline) that is always valid UTF-8."""
    record = event_record(event, session_id=session_id)
    line = json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: keep them, as JSON escapes
        line = json.dumps(record, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return escaped_controls(line)  # a trace piped to a screen must not drive it


def _jsonable(value: Any) -> Any:  # noqa: PLR0911 - one return per kind of value
    if isinstance(value, BaseModel):
        return _jsonable(value.model_dump(mode="python", exclude_none=True))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(item) for item in value]
    if isinstance(value, float):
        return round(value, 3) if math.isfinite(value) else str(value)
    if value is None or isinstance(value, str | int | bool):
        return value
    if isinstance(value, date | datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return str(value)


STEP_BOUNDARIES = (ToolObserved, ApprovalDecided, RunFinished)


class TraceWriter:
    """Writes each event as one line and flushes it, so a killed run keeps every finished step.

    On a raw binary file (see `open_trace_file`) each line is one write(2) to an O_APPEND file,
    so two runs tracing to the same file never interleave inside a line.
    """

    def __init__(self, stream: TextIO | BinaryIO, *, session_id: str | None = None) -> None:
        self._stream = stream
        self._session_id = session_id

    def write(self, event: Event) -> None:
        line = dumps_event(event, session_id=self._session_id) + "\n"
        if isinstance(self._stream, io.TextIOBase):
            self._stream.write(line)
            self._stream.flush()
            return
        try:
            _write_whole(self._stream, line.encode("utf-8"))  # type: ignore[arg-type]
            if isinstance(event, STEP_BOUNDARIES):  # on disk for sure, not only in the cache
                os.fsync(self._stream.fileno())
        except OSError as exc:  # a full disk: at the first line, before any model call, or later
            raise TraceFileError(
                f"Cannot write the trace: {exc.strerror or exc}; free some space or choose "
                f"another --trace path{_unrecorded(event)}"
            ) from None


class _ShortWrite(OSError):
    def __init__(self, written: int, wanted: int) -> None:
        super().__init__(errno.ENOSPC, f"short write ({written} of {wanted} bytes)")
        self.written = written


def _write_whole(stream: BinaryIO, data: bytes) -> None:
    """The line whole, or nothing of it: when the disk fills part-way (a short write, or a write
    that fails after another wrote part of the line) the file is cut back to where the line
    began, so every reader still meets only complete lines. Not when another writer appended
    meanwhile: their lines matter more than our half one."""
    fd = stream.fileno()
    start = os.fstat(fd).st_size
    written = 0
    try:
        written = stream.write(data) or 0  # one write(2): O_APPEND keeps lines whole
        if written < len(data):  # a disk filling up: one more try for the rest
            written += stream.write(data[written:]) or 0
        if written < len(data):
            raise _ShortWrite(written, len(data))
    except OSError:
        with contextlib.suppress(OSError):
            if written and os.fstat(fd).st_size == start + written:
                os.ftruncate(fd, start)
        raise


def _unrecorded(event: Event) -> str:
    """What the store holds that the trace now lacks: a refund or a change must be reported
    somewhere."""
    if isinstance(event, ToolObserved) and acted(event.outcome):
        return f"; the store has recorded what the trace could not: {event.observation}"
    return ""


def open_trace_file(path: Path) -> BinaryIO:
    """Open `path` unbuffered for appending, created 0600 (an existing file of ours that others
    could read is made 0600 too: it holds customers' questions); TraceFileError if it cannot
    be opened."""
    # Never through a link, never into a FIFO or a device (O_NONBLOCK: opening a FIFO with
    # no reader fails at once instead of waiting for one; --json is how to trace to stdout).
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK
    if _is_database(path):  # lines appended to the order store or the run log would break it
        raise TraceFileError(
            f"Cannot write the trace file {path}: it is a SQLite database (the order store or "
            "the run log?); choose another --trace path"
        )
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        why = {
            errno.ELOOP: "a symbolic link",
            errno.ENXIO: "not a regular file (a FIFO or a device)",  # a FIFO with no reader
        }.get(exc.errno or 0, exc.strerror or str(exc))
        raise TraceFileError(
            f"Cannot write the trace file {path}: {why}; choose another --trace path"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise TraceFileError(
            f"Cannot write the trace file {path}: not a regular file (a FIFO or a device); "
            "choose another --trace path"
        )
    os.set_blocking(fd, True)
    private(fd)
    return os.fdopen(fd, "ab", buffering=0)


def _is_database(path: Path) -> bool:
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        with path.open("rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def private(fd: int) -> None:
    """Make a regular file we own readable by its owner only (a FIFO or a device is left as it
    is; so is another user's file, which we cannot change)."""
    info = os.fstat(fd)
    if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & 0o077:
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o600)


MAX_RECORD_DEPTH = 100  # a record nests a model's arguments (at most 64 deep) a few levels down


def read_record(line: str) -> Any:
    """One trace line as JSON, nesting bounded and text made valid (JsonTextError if not)."""
    return read_json(line, max_depth=MAX_RECORD_DEPTH)


def read_trace(path: Path, *, warn: Callable[[str], None]) -> Iterator[dict[str, Any]]:
    """Yield each record; a torn (unparseable) line is skipped with a warning naming it. Only
    a regular file is read (FileRefused for a FIFO or a device: agent_cli/files.py)."""
    with io.TextIOWrapper(open_regular(path), encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = read_record(line)
            except JsonTextError:
                warn(f"{path}: line {number} is incomplete or not JSON; skipped")
                continue
            if isinstance(record, dict):
                yield record
            else:
                warn(f"{path}: line {number} is not a trace record; skipped")
