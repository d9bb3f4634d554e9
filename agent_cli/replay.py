"""Reading traces back into events, so a recorded run can be shown again (`agent replay`).

The reader is tolerant: a torn last line (a killed process) or a record it cannot read is
skipped with a warning naming the line, and event kinds it does not know are passed over.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_cli.decisions import DecisionError, Usage, parse_decision
from agent_cli.errors import UsageError
from agent_cli.events import EVENT_TYPES, Event, RunFinished, RunStarted
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


MAX_WARNINGS = 3  # a file that is not a trace would otherwise warn once per line


def load_runs(
    path: Path, *, warn: Callable[[str], None], run_id: str | None = None
) -> list[list[Event]]:
    """The runs recorded in a trace file, each a list of events in order, optionally only the
    run(s) whose id starts with `run_id`. A file with no trace records in it is a UsageError;
    warnings about skipped lines stop after a few, with a count of the rest."""
    if not path.is_file():
        raise UsageError(f"No trace file {path}; pass a file written by --trace or --json")
    skipped: list[str] = []
    runs: dict[str, list[Event]] = {}
    for number, record in enumerate(read_trace(path, warn=skipped.append), start=1):
        try:
            event = event_from_record(record)
        except (ValueError, TypeError, KeyError) as exc:
            kind = record.get("event")
            skipped.append(f"{path}: record {number} ({kind}) is not readable: {exc}")
            continue
        if event is not None:
            runs.setdefault(event.run_id, []).append(event)
    if not runs:
        raise UsageError(f"{path} is not a trace: no line in it is a trace event (see --trace)")
    for message in skipped[:MAX_WARNINGS]:
        warn(message)
    if len(skipped) > MAX_WARNINGS:
        warn(f"{path}: {len(skipped) - MAX_WARNINGS} more lines skipped")
    if run_id is None:
        return list(runs.values())
    chosen = [events for rid, events in runs.items() if rid.startswith(run_id)]
    if not chosen:
        ids = ", ".join(rid[:8] for rid in list(runs)[:10])
        more = f" and {len(runs) - 10} more" if len(runs) > 10 else ""
        raise UsageError(f"No run {run_id!r} in {path}; its runs are {ids}{more} (see --list)")
    return chosen


@dataclasses.dataclass(frozen=True, slots=True)
class RunSummary:
    """What tells one recorded run from another."""

    run_id: str
    started: datetime | None
    goal: str
    status: str  # "unfinished" when the trace has no run_finished for it
    steps: int


def summarize_run(events: list[Event]) -> RunSummary:
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    finished = next((e for e in events if isinstance(e, RunFinished)), None)
    return RunSummary(
        run_id=events[0].run_id,
        started=datetime.fromtimestamp(started.ts, UTC) if started else None,
        goal=started.goal if started else "(its start is not in the file)",
        status=finished.status if finished else "unfinished",
        steps=finished.steps if finished else 0,
    )
