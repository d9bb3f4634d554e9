"""Notices said once per terminal session: the offline model answering for want of a key is worth
one line, not one on every run of a loop (`for q in ...; do agent ask "$q"; done`).

A terminal session is the process's session (`getsid`), told apart from a later one with the
same id by its leader's start time; what was said is kept in the state directory
(`notices.json`, 0600). Where none of this can be known or kept, the notice is said every time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from agent_cli.config import state_dir
from agent_cli.runtime.assemble import OFFLINE_NOTICE

_ONCE = (OFFLINE_NOTICE,)  # the notices said once a session; every other is said each time
MAX_KEPT = 64  # sessions remembered per notice: old ones are dropped


def once_per_terminal(say: Callable[[str], None]) -> Callable[[str], None]:
    """`say`, except that a notice of `_ONCE` is said once per terminal session."""

    def say_once(message: str) -> None:
        if message not in _ONCE or _first_time(message):
            say(message)

    return say_once


def _first_time(message: str) -> bool:
    session = terminal_session()
    if session is None:
        return True
    path = state_dir() / "notices.json"
    seen = _read(path)
    key = hashlib.sha256(message.encode()).hexdigest()[:16]
    sessions = seen.get(key, [])
    if session in sessions:
        return False
    seen[key] = [*sessions, session][-MAX_KEPT:]
    _write(path, seen)
    return True


def terminal_session() -> str | None:
    """This process's session, as `SID:START` (the leader's start time, in clock ticks since
    boot); None where it cannot be told."""
    try:
        sid = os.getsid(0)
        stat = Path(f"/proc/{sid}/stat").read_text()
        started = stat.rsplit(")", 1)[1].split()[19]  # field 22: the 20th after the name
    except (OSError, IndexError):
        return None
    return f"{sid}:{started}"


def _read(path: Path) -> dict[str, list[str]]:
    """What was said, by notice: the sessions it was said in (anything else in the file is
    not ours to trust, and is dropped)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        key: [s for s in value if isinstance(s, str)]
        for key, value in data.items()
        if isinstance(value, list)
    }


def _write(path: Path, seen: dict[str, list[str]]) -> None:
    with contextlib.suppress(OSError):  # it only saves a line
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(seen, out)
