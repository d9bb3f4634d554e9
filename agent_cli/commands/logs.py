"""`agent logs`: the logged runs (see record/runlog.py) listed, searched, and shown again as `agent
replay` shows a trace."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, get_args

from agent_cli.config import Settings, load_settings
from agent_cli.core.events import Event, RunStatus
from agent_cli.errors import RunLogError, UsageError
from agent_cli.record.log_place import log_place
from agent_cli.record.replay import event_from_record, summarize_run
from agent_cli.record.run_filters import RunFilter
from agent_cli.record.runlog import UNFINISHED, LoggedRun, RunLog
from agent_cli.record.tracing import read_record
from agent_cli.runtime.drive import warn
from agent_cli.ui import RunView, make_console, show_logged_runs, show_run_header
from agent_cli.ui.console import notice
from agent_cli.validation_text import near_miss

STATUSES = (*get_args(RunStatus), UNFINISHED)
KINDS = ("ask", "chat", "conversation", "eval", "tool", "all")
DEFAULT_LIMIT = 20  # on a terminal; a pipe gets every run
_RELATIVE = re.compile(r"(\d+)\s*([mhdw])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


@contextmanager
def opened_log(settings: Settings) -> Iterator[RunLog]:
    """The log, for reading: a missing one is a UsageError that says why it is missing."""
    place = log_place(settings)
    if not place.exists() and not settings.log.enabled:
        raise RunLogError("The run log is off ([log] enabled = false), so no runs were logged")
    if not place.exists():
        raise RunLogError(f"No runs logged yet: {place} is made by the first run ('agent ask')")
    try:
        log = place.open(create=False)
    except (sqlite3.Error, OSError) as exc:
        raise _unreadable(place.path, exc) from None
    try:
        yield log
    except sqlite3.Error as exc:
        raise _unreadable(place.path, exc) from None
    finally:
        log.close()


def _unreadable(path: Path, exc: Exception) -> RunLogError:
    return RunLogError(
        f"Cannot read the run log {path}: {exc}; move the file away (a new one is started) "
        "or point [log] path / AGENT_LOG elsewhere"
    )


@dataclass(frozen=True, slots=True)
class ListOptions:
    """`agent logs list`'s filters, as typed."""

    status: str | None = None
    since: str | None = None
    kind: str | None = None
    provider: str | None = None
    model: str | None = None
    session: str | None = None

    def filter(self) -> RunFilter:
        if self.status is not None and self.status.lower() not in STATUSES:
            hint = near_miss(self.status, STATUSES)
            raise UsageError(
                f"--status {self.status!r} is not a status{hint}; use {', '.join(STATUSES)}"
            )
        if self.kind is not None and self.kind.lower() not in KINDS:
            hint = near_miss(self.kind, KINDS)
            raise UsageError(f"--kind {self.kind!r} is not a kind{hint}; use {', '.join(KINDS)}")
        return RunFilter(
            status=self.status.lower() if self.status else None,
            since=parse_since(self.since) if self.since is not None else None,
            kind=self.kind.lower() if self.kind else None,
            provider=self.provider,
            model=self.model,
            session=self.session,
        )


def list_logs(
    *, json_output: bool, config: Path | None, limit: int | None = None, options: ListOptions
) -> None:
    """`agent logs list`: the newest runs first (eval cases only with --kind eval or all)."""
    console = make_console()
    limit = _limit(limit, default=console.is_terminal and not json_output)
    only = options.filter()
    settings = load_settings(config)
    if not has_log(settings):
        return
    with opened_log(settings) as log:
        runs = log.runs(limit=limit, only=only)
        total = log.count(only=only) if limit is not None else len(runs)
    _show(runs, total, json_output=json_output, none="No logged runs match")


def has_log(settings: Settings) -> bool:
    """Whether there is a log to read; a missing one is said in a dim line, not an error
    (and so is a log that is off)."""
    place = log_place(settings)
    if not settings.log.enabled:
        notice("The run log is off ([log] enabled = false): new runs are not logged")
    if not place.exists():
        notice(f"No runs logged yet ({place} is made by the first run)")
        return False
    return True


def log_path(*, config: Path | None) -> None:
    """`agent logs path`: where the run log is (whether or not it exists yet): on a team's
    PostgreSQL, the team's store."""
    print(log_place(load_settings(config)))


def search_logs(
    text: str, *, json_output: bool, config: Path | None, limit: int | None = None
) -> None:
    """`agent logs search TEXT`: runs whose question or answer holds every word of TEXT."""
    console = make_console()
    limit = _limit(limit, default=console.is_terminal and not json_output)
    settings = load_settings(config)
    if not has_log(settings):
        return
    with opened_log(settings) as log:
        runs = log.search(text, limit=None if limit is None else limit + 1)
    shown = runs[:limit] if limit is not None else runs
    total = len(runs) if len(runs) <= len(shown) else None
    _show(shown, total, json_output=json_output, none=f"No logged run mentions {text!r}")


def _limit(limit: int | None, *, default: bool) -> int | None:
    if limit is not None and limit < 1:
        raise UsageError("-n must be 1 or more")
    return DEFAULT_LIMIT if limit is None and default else limit


def _show(runs: list[LoggedRun], total: int | None, *, json_output: bool, none: str) -> None:
    """`total` is None when only "more" is known, not how many."""
    for run in runs:
        if run.unreadable:
            warn(f"logged run {run.run_id[:8]}: {run.unreadable} (shown as ? or 0)")
    if json_output:
        for run in runs:
            print(json.dumps(run._asdict(), ensure_ascii=False, separators=(",", ":")), flush=True)
    elif runs:
        show_logged_runs(make_console(), runs)
    if not runs:
        notice(none)
    elif total is None or len(runs) < total:
        of = f" of {total:,}" if total is not None else ""
        noun = "run" if len(runs) == 1 and total is None else "runs"
        notice(f"{len(runs)}{of} {noun} shown (newest first); -n N shows more")


def show_log(run_id: str | None, *, json_output: bool, quiet: bool, config: Path | None) -> None:
    """`agent logs show [ID]`: one run (the newest by default) as it was shown live; with
    --json its trace lines, which `agent replay` reads."""
    with opened_log(load_settings(config)) as log:
        run = log.find(run_id) if run_id is not None else _newest(log)
        lines = log.trace_lines(run.run_id)
    if json_output:
        for line in lines:
            print(line, flush=True)
        return
    events = _events(lines, warn)
    if not events:  # every line damaged: nothing to show as it was, but the lines are kept
        warn(
            f"logged run {run.run_id[:8]}: none of its {len(lines)} trace line(s) could be "
            f"read; 'agent logs show {run.run_id[:8]} --json' prints them as stored"
        )
        return
    console = make_console()
    if not quiet:
        show_run_header(console, summarize_run(events))
    view = RunView(console, quiet=quiet)
    for event in events:
        view.show(event)


def recent_run_ids(count: int) -> list[str]:
    """The newest runs' ids, of every kind (for shell completion): none when there is no log,
    which is never created here."""
    settings = load_settings()
    if not log_place(settings).exists():
        return []
    with opened_log(settings) as log:
        return [run.run_id for run in log.runs(limit=count, only=RunFilter(kind="all"))]


def _newest(log: RunLog) -> LoggedRun:
    newest = log.runs(limit=1, only=RunFilter(kind="all"))
    if not newest:
        raise RunLogError("No runs logged yet; 'agent ask QUESTION' logs one")
    return newest[0]


def _events(lines: list[str], warn: Callable[[str], None]) -> list[Event]:
    events: list[Event] = []
    for number, line in enumerate(lines, start=1):
        try:
            record: Any = read_record(line)
            if not isinstance(record, dict):
                raise ValueError("not a trace record")
            event = event_from_record(record)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:  # JsonTextError too
            warn(f"logged trace line {number} is not readable: {exc}")
            continue
        if event is not None:
            events.append(event)
    return events


def parse_since(value: str, *, now: datetime | None = None) -> datetime:
    """A start time: a date (local midnight), a date and time (local unless it says), `today`,
    `yesterday`, or an age such as 30m, 2h, 7d, 1w."""
    text = value.strip().lower()
    now = now or datetime.now().astimezone()
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if text in ("today", "yesterday"):
        return midnight - timedelta(days=1 if text == "yesterday" else 0)
    if found := _RELATIVE.fullmatch(text):
        return now - timedelta(**{_UNITS[found.group(2)]: int(found.group(1))})
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise UsageError(
            f"--since {value!r} is not a date: use 2026-12-01, 2026-12-01T09:30, today, "
            "yesterday, or an age such as 2h or 7d"
        ) from None
    return moment if moment.tzinfo is not None else moment.astimezone()
