"""`RunRecorder`: the sink that writes each run into the run log at its start and its end,
and turns a log that cannot be written into one warning."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from agent_cli.core.events import Event, QuestionAsked, RunFinished, RunStarted
from agent_cli.errors import StoreError
from agent_cli.record.desk_facts import RunFacts
from agent_cli.record.log_place import LogPlace
from agent_cli.record.runlog import UNFINISHED, LoggedRun, RunLog
from agent_cli.record.tracing import dumps_event
from agent_cli.text import mask_secrets


class RunRecorder:
    """A sink that logs every run whose events it is handed (one recorder may see many runs,
    interleaved, as an eval's threads do). The log is opened at the first run; if it cannot be
    opened or written, `warn` is called once and recording stops: the runs go on."""

    def __init__(
        self,
        place: Path | LogPlace,
        *,
        kind: str,
        session_id: str | None = None,
        keep_runs: int = 10_000,
        warn: Callable[[str], None],
        make_dirs: bool = True,
        log: RunLog | None = None,  # a log kept open by the caller (KeptLog): not closed here
    ) -> None:
        if isinstance(place, Path):
            place = LogPlace(place, keep_runs=keep_runs, make_dirs=make_dirs)
        self.place = place
        self._log: RunLog | None = log
        self._owns_log = log is None
        self._failed = False
        self.kind = kind
        self.session_id = session_id
        self._warn = warn
        self._runs: dict[str, tuple[LoggedRun, list[str], RunFacts]] = {}
        self._asked: dict[str, str] = {}  # each run's last question to the customer
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        if self._failed:
            return
        line = dumps_event(event, session_id=self.session_id)
        with self._lock:
            if isinstance(event, RunStarted):
                run, facts = self._row(event), RunFacts()
                facts.add(event)  # the question's intent
                self._runs[event.run_id] = (run, [line], facts)
                self._write(lambda log: log.started(run, line))
                return
            entry = self._runs.get(event.run_id)
            if entry is None:
                return
            entry[1].append(line)
            entry[2].add(event)
            if isinstance(event, QuestionAsked):
                self._asked[event.run_id] = event.question
            if isinstance(event, RunFinished):
                del self._runs[event.run_id]
                done = _finish(entry[0], event, self._asked.pop(event.run_id, None))
                self._write(lambda log: log.finished(done, entry[1], entry[2].row()))

    def close(self) -> None:
        if self._log is not None and self._owns_log:
            self._log.close()
        self._log = None

    def _row(self, event: RunStarted) -> LoggedRun:
        started = datetime.fromtimestamp(event.ts, UTC).isoformat(timespec="milliseconds")
        return LoggedRun(
            run_id=event.run_id,
            session_id=self.session_id,
            kind=self.kind,
            started_at=started,
            question=mask_secrets(event.goal),  # as the trace keeps it: secrets redacted
            provider=event.provider,
            model=event.model,
            status=UNFINISHED,
            answer=None,
            steps=0,
            input_tokens=0,
            output_tokens=0,
            cost=None,
            elapsed_ms=None,
        )

    def _write(self, action: Callable[[RunLog], None]) -> None:
        try:
            if self._log is None:
                self._log = self.place.open()
            action(self._log)
        except (sqlite3.Error, OSError, StoreError) as exc:
            self._failed = True
            self._warn(
                f"runs are not being logged: {self.place}: {exc}; "
                "check [log] path (AGENT_LOG), or set [log] enabled = false"
            )


def _finish(run: LoggedRun, event: RunFinished, asked: str | None) -> LoggedRun:
    """The run's row at its end. A run that stopped on a question nobody answered keeps that
    question as the desk's last words: a chat resumed later (`--continue`, `--session`) then
    takes the next line as its answer, as the turn would have."""
    unanswered = event.status == "needs_input" and event.answer is None
    return run._replace(
        status=event.status,
        answer=asked if unanswered else event.answer,
        steps=event.steps,
        input_tokens=event.usage.input_tokens,
        output_tokens=event.usage.output_tokens,
        cost=event.cost,
        elapsed_ms=event.elapsed_ms,
    )


class KeptLog:
    """The run log kept open by a process that logs many runs at once (`agent serve`'s turns):
    opened at the first run, shared by every recorder (RunLog serialises its writes), closed
    when the process ends. Opening and closing the log for each run cost 4-5 ms a turn (the last
    connection's close checkpoints the WAL)."""

    def __init__(self, place: LogPlace) -> None:
        self.place = place
        self._log: RunLog | None = None
        self._lock = threading.Lock()

    def get(self) -> RunLog | None:
        """The open log; None when it cannot be opened (a recorder then tries, and warns)."""
        with self._lock:
            if self._log is None:
                try:
                    self._log = self.place.open()
                except (sqlite3.Error, OSError, StoreError):
                    return None
            return self._log

    def close(self) -> None:
        with self._lock:
            if self._log is not None:
                self._log.close()
                self._log = None
