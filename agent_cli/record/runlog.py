"""The log of runs: every ask, chat turn and eval case, kept in a SQLite file in the user's state
directory (owner-only), searchable with FTS5 (`agent logs`).

A run is written twice: when it starts (status `unfinished`, so a killed process still leaves
its question behind) and when it finishes (status, answer, figures and every trace line). The
log is a record, not a part of the run: a log that cannot be written is one warning, and the
run goes on. Old runs beyond `keep_runs` are deleted as new ones arrive.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from agent_cli.config import state_dir
from agent_cli.core.seams import Exchange
from agent_cli.errors import UsageError
from agent_cli.record.run_filters import RunFilter, like_pattern
from agent_cli.store.schema import migrate, schema_version

T = TypeVar("T")
UNFINISHED = "unfinished"  # the status of a run whose end was never recorded
BUSY_WAIT_S = 2.0  # another agent writing the log at the same moment
MIN_TRIGRAM = 3  # FTS5's trigram index finds substrings of at least three characters

FACTS = ("intent", "proposed", "approved", "denied", "queued", "refused")  # the desk's, per run

# Each entry moves the file one version up (store/schema.py).
_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL UNIQUE,
            session_id TEXT,
            kind TEXT NOT NULL,
            started_at TEXT NOT NULL,
            question TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            status TEXT NOT NULL,
            answer TEXT,
            steps INTEGER NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cost REAL,
            elapsed_ms REAL,
            trace TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX runs_by_start ON runs (started_at)",
        "CREATE INDEX runs_by_session ON runs (session_id, id)",
        """CREATE VIRTUAL TABLE runs_text USING fts5(
            question, answer, content='runs', content_rowid='id', tokenize='trigram'
        )""",
        """CREATE TRIGGER runs_text_insert AFTER INSERT ON runs BEGIN
            INSERT INTO runs_text (rowid, question, answer)
            VALUES (new.id, new.question, new.answer);
        END""",
        """CREATE TRIGGER runs_text_delete AFTER DELETE ON runs BEGIN
            INSERT INTO runs_text (runs_text, rowid, question, answer)
            VALUES ('delete', old.id, old.question, old.answer);
        END""",
        """CREATE TRIGGER runs_text_update AFTER UPDATE OF question, answer ON runs BEGIN
            INSERT INTO runs_text (runs_text, rowid, question, answer)
            VALUES ('delete', old.id, old.question, old.answer);
            INSERT INTO runs_text (rowid, question, answer)
            VALUES (new.id, new.question, new.answer);
        END""",
    ),
    # The trace lines move to a table of their own: kept beside the figures they filled most of
    # each row's page, so listing or searching 10,000 runs read 26 MB instead of a few hundred KB.
    # runs.trace stays, always empty (dropping a column rewrites the table).
    (
        "CREATE TABLE traces (id INTEGER PRIMARY KEY REFERENCES runs (id), lines TEXT NOT NULL)",
        "INSERT INTO traces (id, lines) SELECT id, trace FROM runs",
        "UPDATE runs SET trace = ''",
        """CREATE TRIGGER traces_delete AFTER DELETE ON runs BEGIN
            DELETE FROM traces WHERE id = old.id;
        END""",
    ),
    # The desk's figures of each run, for `agent logs report` (record/desk_facts.py); a run
    # logged before them has none (NULL intent: counted as "unknown").
    (
        "ALTER TABLE runs ADD COLUMN intent TEXT",
        *(f"ALTER TABLE runs ADD COLUMN {name} INTEGER NOT NULL DEFAULT 0" for name in FACTS[1:]),
    ),
)
SCHEMA_VERSION = len(_MIGRATIONS)

_COLUMNS = (
    "run_id, session_id, kind, started_at, question, provider, model, status, answer, steps, "
    "input_tokens, output_tokens, cost, elapsed_ms"
)


def default_log_path() -> Path:
    return state_dir() / "runs.db"


def configured_log_path(configured: Path | None) -> Path:
    """The log file in use: log.path (which AGENT_LOG sets), else the default location."""
    return configured.expanduser() if configured is not None else default_log_path()


class LoggedRun(NamedTuple):
    """One row of the log: what `agent logs list` shows. A named tuple, not a frozen
    dataclass: a search may return every run in the log, and this is built 5x faster."""

    run_id: str
    session_id: str | None
    kind: str  # ask, chat, conversation, eval or tool (agent tools call)
    started_at: str  # ISO 8601, UTC
    question: str
    provider: str
    model: str
    status: str
    answer: str | None
    steps: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    elapsed_ms: float | None
    unreadable: str | None = None  # the fields of the row that were not what the log holds

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


_TEXTS = ("run_id", "kind", "started_at", "question", "provider", "model", "status")
_COUNTS = ("steps", "input_tokens", "output_tokens")


def logged_run(row: tuple[Any, ...]) -> LoggedRun:
    """A row of the runs table as a `LoggedRun`, every field checked: a value of the wrong
    type (a hand-edited log, a copy from elsewhere) is shown as a blank (`?`, 0 or none) and
    named in `unreadable`, so one bad row never stops a listing."""
    run = LoggedRun(*row)
    blanks: dict[str, Any] = {}
    for name in _TEXTS:
        if not isinstance(getattr(run, name), str):
            blanks[name] = "?"
    for name in _COUNTS:
        if not _count(getattr(run, name)):
            blanks[name] = 0
    for name in ("session_id", "answer"):
        if not isinstance(getattr(run, name), (str, type(None))):
            blanks[name] = None
    for name in ("cost", "elapsed_ms"):
        if not _number(getattr(run, name)):
            blanks[name] = None
    if not blanks:
        return run
    shown = ", ".join(f"{name} {str(getattr(run, name))[:20]!r}" for name in blanks)
    return run._replace(**blanks, unreadable=f"not what the log holds: {shown}")


def _number(value: object) -> bool:
    """None, or a number that is not a bool."""
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class RunLog:
    """The log database. One connection, usable from the threads of an eval (writes are
    serialised by a lock)."""

    INDEXED = True  # words of three letters or more are found by the FTS5 trigram index
    LIKE = "LIKE"  # SQLite's LIKE ignores the case of ASCII letters

    def __init__(self, connection: sqlite3.Connection, path: Path, keep_runs: int) -> None:
        self._db = connection
        self._lock = threading.RLock()
        self.path = path
        self.keep_runs = keep_runs

    @classmethod
    def open(
        cls, path: Path, *, keep_runs: int = 10_000, create: bool = True, make_dirs: bool = True
    ) -> RunLog:
        """The log at `path`, created owner-only when missing (it holds customers' questions),
        its directory too unless `make_dirs` is false (a path the user named: a typo must not
        leave directories behind); with `create` false a missing log is a UsageError.
        sqlite3.Error/OSError otherwise."""
        if not path.exists():
            if not create:
                raise UsageError(f"No runs logged yet: {path} does not exist (every run adds one)")
            if not make_dirs and not path.parent.is_dir():
                raise FileNotFoundError(f"no directory {path.parent}")
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            _create_whole(path)
        _made_private(path)
        connection = sqlite3.connect(
            path, isolation_level=None, timeout=BUSY_WAIT_S, check_same_thread=False
        )
        try:
            if schema_version(connection, SCHEMA_VERSION) < SCHEMA_VERSION:
                _migrate(connection)
            connection.execute("PRAGMA synchronous = NORMAL")
        except BaseException:
            connection.close()
            raise
        return cls(connection, path, keep_runs)

    def close(self) -> None:
        self._db.close()

    # What the queries below stand on, so a team's log on PostgreSQL (record/team_log.py) runs
    # the same queries: rows read, a write transaction, a write, an INSERT's new id.

    def _rows(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[Any]:
        return self._db.execute(sql, params).fetchall()

    def _exec(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        self._db.execute(sql, params)

    def _insert(self, sql: str, params: tuple[Any, ...]) -> int:
        row_id = self._db.execute(sql, params).lastrowid
        assert row_id is not None  # an INSERT always sets it
        return row_id

    def _atomically(self, work: Callable[[], T]) -> T:
        with self._lock, self._transaction():
            return work()

    def started(self, run: LoggedRun, first_line: str) -> None:
        def write() -> None:
            row_id = self._insert(
                f"INSERT INTO runs ({_COLUMNS}) VALUES ({', '.join('?' * 14)})", run[:14]
            )
            self._exec("INSERT INTO traces (id, lines) VALUES (?, ?)", (row_id, first_line + "\n"))
            self._prune(row_id - self.keep_runs)

        self._atomically(write)

    def _prune(self, last: int) -> None:
        self._exec("DELETE FROM runs WHERE id <= ?", (last,))  # its trace by a trigger

    def finished(
        self, run: LoggedRun, lines: list[str], facts: tuple[object, ...] = (None, 0, 0, 0, 0, 0)
    ) -> None:
        """The run's end: its figures, its desk figures (`FACTS`) and every trace line."""
        names = [*_COLUMNS.split(", ")[1:], *FACTS]
        assignments = ", ".join(f"{name} = ?" for name in names)

        def write() -> None:
            self._exec(
                f"UPDATE runs SET {assignments} WHERE run_id = ?", (*run[1:14], *facts, run.run_id)
            )
            self._exec(
                "UPDATE traces SET lines = ? WHERE id = (SELECT id FROM runs WHERE run_id = ?)",
                ("".join(line + "\n" for line in lines), run.run_id),
            )

        self._atomically(write)

    def append(self, run_id: str, line: str) -> bool:
        """Add a line to a logged run's trace (a decision made after it ended); False when
        the run is not in the log (never logged, or since deleted)."""

        def write() -> bool:
            found = self._rows("SELECT id FROM runs WHERE run_id = ?", (run_id,))
            if found:
                self._exec(
                    "UPDATE traces SET lines = lines || ? WHERE id = ?", (line + "\n", found[0][0])
                )
            return bool(found)

        return self._atomically(write)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def runs(self, *, limit: int | None = None, only: RunFilter | None = None) -> list[LoggedRun]:
        """The newest runs first, those `only` lets through (default: all but eval cases)."""
        where, params = (only or RunFilter()).where()
        return self._select(f"{where} ORDER BY id DESC LIMIT ?", (*params, self._limit(limit)))

    def _limit(self, limit: int | None) -> int | None:
        return _sql_limit(limit)

    def count(self, *, only: RunFilter | None = None) -> int:
        where, params = (only or RunFilter()).where()
        return int(self._rows(f"SELECT count(*) FROM runs {where}", params)[0][0])

    def search(self, text: str, *, limit: int | None = None) -> list[LoggedRun]:
        """Runs whose question or answer holds every word of `text` (case-insensitive
        substrings), newest first. Words under three characters are matched by a scan."""
        words = text.split()
        if not words:
            raise UsageError('Nothing to search for: agent logs search "A100"')
        if self.INDEXED and all(len(word) >= MIN_TRIGRAM for word in words):
            match = " ".join('"' + word.replace('"', '""') + '"' for word in words)
            where = "WHERE id IN (SELECT rowid FROM runs_text WHERE runs_text MATCH ?)"
            return self._select(f"{where} ORDER BY id DESC LIMIT ?", (match, self._limit(limit)))
        like = self.LIKE
        clauses = " AND ".join(
            f"(question {like} ? ESCAPE '\\' OR coalesce(answer, '') {like} ? ESCAPE '\\')"
            for _ in words
        )
        params = [pattern for word in words for pattern in (like_pattern(word),) * 2]
        return self._select(
            f"WHERE {clauses} ORDER BY id DESC LIMIT ?", (*params, self._limit(limit))
        )

    def find(self, prefix: str) -> LoggedRun:
        """The one run whose id starts with `prefix`; UsageError for none or several."""
        if not prefix or any(char not in "0123456789abcdef" for char in prefix.lower()):
            raise UsageError(f"{prefix!r} is not a run id; agent logs list shows them")
        found = self._select(
            "WHERE run_id >= ? AND run_id < ? ORDER BY id DESC LIMIT 6",
            (prefix.lower(), prefix.lower() + "g"),
        )
        if not found:
            raise UsageError(f"No logged run {prefix}; agent logs list shows the ids")
        if len(found) > 1:
            shown = ", ".join(run.run_id[:12] for run in found[:5])
            raise UsageError(f"Run id {prefix} is ambiguous ({shown}...); give more of it")
        return found[0]

    def trace_lines(self, run_id: str) -> list[str]:
        rows = self._rows(
            "SELECT lines FROM traces JOIN runs USING (id) WHERE run_id = ?", (run_id,)
        )
        return str(rows[0][0]).splitlines() if rows else []

    def last_session(self, prefix: str | None = None) -> tuple[str, list[Exchange]] | None:
        """The newest chat session (or the one whose id starts with `prefix`: a UsageError when
        none or several do): its id, and its turns the desk answered or asked back (a question
        left unanswered is the desk's last words), oldest first."""
        where = "kind = 'chat' AND session_id IS NOT NULL"
        if prefix is not None:
            found = self._rows(
                f"SELECT DISTINCT session_id FROM runs WHERE {where} AND session_id LIKE ?"
                " ESCAPE '\\' LIMIT 2",
                (like_pattern(prefix).removeprefix("%"),),
            )
            if len(found) != 1:
                problem = "matches several sessions; give more of it" if found else "is no session"
                raise UsageError(
                    f"Chat session {prefix!r} {problem}; see agent logs list --kind chat"
                )
        else:
            found = self._rows(
                f"SELECT session_id FROM runs WHERE {where} ORDER BY id DESC LIMIT 1"
            )
        if not found:
            return None
        row = found[0]
        turns = self._rows(
            "SELECT question, answer FROM runs WHERE session_id = ? AND kind = 'chat' "
            "AND status IN ('answered', 'pending_approval', 'handed_over', 'needs_input') "
            "AND answer IS NOT NULL "
            "ORDER BY id",
            (row[0],),
        )
        return str(row[0]), [Exchange(question, answer) for question, answer in turns]

    def report_rows(self, since: datetime | None, kinds: tuple[str, ...]) -> list[tuple[Any, ...]]:
        """What `agent logs report` counts, oldest first, no text nor trace read: (started_at,
        conversation: the session or the run, provider, model, status, elapsed_ms, tokens,
        cost, *FACTS, run_id)."""
        marks = ", ".join("?" * len(kinds))
        where, params = f"kind IN ({marks})", list(kinds)
        if since is not None:
            where += " AND started_at >= ?"
            params.append(since.astimezone(UTC).isoformat(timespec="milliseconds"))
        return self._rows(
            "SELECT started_at, COALESCE(session_id, run_id), provider, model, status, elapsed_ms,"
            f" input_tokens + output_tokens, cost, {', '.join(FACTS)}, run_id FROM runs"
            f" WHERE {where}"
            " ORDER BY id",
            params,
        )

    def _select(self, tail: str, params: tuple[Any, ...]) -> list[LoggedRun]:
        return [
            logged_run(row) for row in self._rows(f"SELECT {_COLUMNS} FROM runs {tail}", params)
        ]


def _made_private(path: Path) -> None:
    """A log left readable by others is made private, by its path: opening and closing a file
    descriptor on it would drop this process's locks on it, which the other threads' SQLite
    connections hold (SQLite's "how to corrupt" 2.2: `agent serve`'s turns run in threads)."""
    with contextlib.suppress(OSError):
        info = path.stat()
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & 0o077:
            path.chmod(0o600)


def _create_whole(path: Path) -> None:
    """A new log, made whole beside `path` (its tables, WAL mode) and then linked into place in
    one step, so no process ever opens it half made. Opening an empty file while another process
    migrates it and switches it to WAL corrupts it (`disk I/O error`, `database disk image is
    malformed`): `agent serve`'s first turns in two processes at once did. When another process
    links its log first, its log is kept and this one dropped."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.new")
    try:
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        connection = sqlite3.connect(partial, isolation_level=None)
        try:
            _migrate(connection)
        finally:
            connection.close()  # the last connection: the WAL is checkpointed into the file
        try:
            os.link(partial, path)
        except FileExistsError:  # another agent was first
            pass
        except OSError:  # a file system without links: made empty, migrated where it lies
            with contextlib.suppress(FileExistsError):
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    finally:
        for leftover in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()


def _migrate(connection: sqlite3.Connection) -> None:
    """Every missing migration in one write transaction."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        migrate(connection, _MIGRATIONS)
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    # Kept in the file: readers never wait for a writer, and a commit is not an fsync.
    connection.execute("PRAGMA journal_mode = WAL")


def _sql_limit(limit: int | None) -> int:
    return -1 if limit is None else limit  # SQLite: a negative LIMIT is none
