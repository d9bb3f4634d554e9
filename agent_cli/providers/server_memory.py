"""What servers refused, remembered between runs: a server that refuses streaming is asked
without it from the first request of the next run, rather than once with and once without on
every run. Kept per base URL in the state directory (`servers.json`, 0600), and forgotten after
a week, so an upgraded server gets streaming again. A file that cannot be read or written is
ignored: it only saves a request."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from agent_cli.config import state_dir

FORGET_AFTER_S = 7 * 86_400.0


def memory_path() -> Path:
    return state_dir() / "servers.json"


def refused(base_url: str, feature: str) -> bool:
    """Whether the server at `base_url` refused `feature` within the last week."""
    when = _read().get(base_url.rstrip("/"), {}).get(feature)
    return isinstance(when, int | float) and time.time() - when < FORGET_AFTER_S


def remember_refusal(base_url: str, feature: str) -> None:
    memory = _read()
    memory.setdefault(base_url.rstrip("/"), {})[feature] = time.time()
    path = memory_path()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fresh = path.with_suffix(f".{os.getpid()}.tmp")
        handle = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(memory, out)
        fresh.replace(path)  # whole or not at all, whoever writes at the same time


def _read() -> dict[str, dict[str, object]]:
    try:
        memory = json.loads(memory_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(memory, dict):
        return {}
    return {url: entry for url, entry in memory.items() if isinstance(entry, dict)}
