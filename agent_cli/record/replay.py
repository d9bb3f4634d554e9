"""Reading traces back into events, so a recorded run can be shown again (`agent replay`).

The reader is tolerant: a torn last line (a killed process) or a record it cannot read is
skipped with a warning naming the line, and event kinds it does not know are passed over.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from agent_cli.core.decisions import describe_validation_error, parse_decision
from agent_cli.core.events import EVENT_TYPES, Event, RunFinished, RunStarted
from agent_cli.errors import UsageError
from agent_cli.record.tracing import read_trace


def event_from_record(record: dict[str, Any]) -> Event | None:
    """The event a trace record describes; None for a kind this version does not know.
    Raises ValueError for a record of a known kind that is malformed: a field of the wrong
    type, a time or date that is not one, a decision that is not a decision."""
    kind = EVENT_TYPES.get(str(record.get("event")))
    if kind is None:
        return None
    names = {item.name for item in dataclasses.fields(kind)}
    values = {name: value for name, value in record.items() if name in names}
    if not isinstance(values.get("ts"), str):
        raise ValueError("ts: expected an ISO 8601 time")
    values["ts"] = datetime.fromisoformat(values["ts"]).timestamp()
    if values.get("decision") is not None:
        values["decision"] = parse_decision(values["decision"])
    try:
        event = _validator(kind).validate_python(values)
    except ValidationError as exc:
        raise ValueError(describe_validation_error(exc)) from None
    if isinstance(event, RunStarted):
        date.fromisoformat(event.today)  # ValueError: a replay runs as of this date
    return event


_VALIDATORS: dict[str, TypeAdapter[Event]] = {}


def _validator(kind: type[Event]) -> TypeAdapter[Event]:
    """Each field checked against its type (a trace is outside data: any value may be wrong);
    built on first use, once per kind of event."""
    if kind.kind not in _VALIDATORS:
        _VALIDATORS[kind.kind] = TypeAdapter(kind)
    return _VALIDATORS[kind.kind]


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
