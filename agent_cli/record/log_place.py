"""Where this process logs its runs: this machine's SQLite file (record/runlog.py), or, on a
team's PostgreSQL, the team's store (record/team_log.py), so every machine's runs are in one
log (issue 52, point 5)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_cli.config import Settings
from agent_cli.record.runlog import RunLog, configured_log_path


@dataclass(frozen=True, slots=True)
class LogPlace:
    """Where runs are logged: a file, or the team's store when `url` is set."""

    path: Path
    url: str | None = None
    keep_runs: int = 10_000
    make_dirs: bool = True  # a path the user named (AGENT_LOG) makes no directories

    def exists(self) -> bool:
        return self.url is not None or self.path.exists()

    def __str__(self) -> str:
        return "the team's store ([store] url)" if self.url is not None else str(self.path)

    def open(self, *, create: bool = True) -> RunLog:
        """The log, opened (created when missing and `create`); sqlite3.Error, OSError, or the
        store's StoreError."""
        if self.url is not None:
            from agent_cli.record.team_log import TeamRunLog  # noqa: PLC0415 - psycopg, a team's

            return TeamRunLog.connect(self.url, keep_runs=self.keep_runs)
        return RunLog.open(
            self.path, keep_runs=self.keep_runs, create=create, make_dirs=self.make_dirs
        )


def log_place(settings: Settings) -> LogPlace:
    """Where this process logs its runs, by the settings."""
    return LogPlace(
        configured_log_path(settings.log.path),
        settings.store.url,
        settings.log.keep_runs,
        make_dirs=settings.log.path is None,
    )
