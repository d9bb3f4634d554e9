"""Reading traces back into events, so a recorded run can be shown again (`agent replay`).

The reader is tolerant: a torn last line (a killed process) or a record it cannot read is
skipped with a warning naming the line, and event kinds it does not know are passed over.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_cli.decisions import DecisionError, Usage, parse_decision
from agent_cli.errors import UsageError
from agent_cli.events import EVENT_TYPES, Event
from agent_cli.tracing import read_trace

_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "decision": parse_decision,
    "usage": lambda value: Usage(**value),
    "tools": tuple,
}


def event_from_record(record: dict[str, Any]) -> Event | None:
    """The event a trace record describes; None for a kind this version does not know.
    Raises ValueError for a record of a known kind that is malformed."""
    kind = EVENT_TYPES.get(str(record.get("event")))
    if kind is None:
        return None
    values: dict[str, Any] = {}
    for item in dataclasses.fields(kind):
        if item.name not in record:
            continue
        value = record[item.name]
        if item.name == "ts":
            value = datetime.fromisoformat(value).timestamp()
        elif item.name in _CONVERTERS and value is not None:
            value = _CONVERTERS[item.name](value)
        values[item.name] = value
    try:
        return kind(**values)
    except (TypeError, DecisionError) as exc:
        raise ValueError(str(exc)) from None


def load_runs(
    path: Path, *, warn: Callable[[str], None], run_id: str | None = None
) -> list[list[Event]]:
    """The runs recorded in a trace file, each a list of events in order, optionally only the
    run(s) whose id starts with `run_id`."""
    if not path.is_file():
        raise UsageError(f"No trace file {path}; pass a file written by --trace or --json")
    runs: dict[str, list[Event]] = {}
    for number, record in enumerate(read_trace(path, warn=warn), start=1):
        try:
            event = event_from_record(record)
        except (ValueError, TypeError, KeyError) as exc:
            warn(f"{path}: record {number} ({record.get('event')}) is not readable: {exc}")
            continue
        if event is not None and (run_id is None or event.run_id.startswith(run_id)):
            runs.setdefault(event.run_id, []).append(event)
    if not runs:
        which = f" for run {run_id}" if run_id else ""
        raise UsageError(f"No runs in {path}{which}")
    return list(runs.values())
