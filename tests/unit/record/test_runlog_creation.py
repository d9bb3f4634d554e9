"""The run log written by many processes, each with many threads, at once (`agent serve`'s turns;
cron jobs started together). Two ways it was corrupted (`disk I/O error`, `database disk image
is malformed`, duplicate ids), both pinned here: a process opened the empty new file while
another migrated it and switched it to WAL (now made whole beside its path and linked into
place: `_create_whole`); and opening the log closed a file descriptor on it, which dropped the
locks the process's other connections held (now made private by its path: `_made_private`)."""

from __future__ import annotations

import json
import multiprocessing
import threading
import uuid
from pathlib import Path

from agent_cli.record.runlog import LoggedRun, RunLog

THREADS, RUNS = 6, 4


def _open_many(path: str) -> list[str]:
    errors: list[str] = []

    def one() -> None:
        try:
            for _ in range(RUNS):  # opened again for each run, as each turn's recorder does
                log = RunLog.open(Path(path))
                run_id = uuid.uuid4().hex
                at = "2026-12-07T00:00:00+00:00"
                fields = ("q", "offline", "playbook", "running", None, 0, 0, 0, None, None)
                run = LoggedRun(run_id, None, "conversation", at, *fields)
                log.started(run, json.dumps({"event": "run_started", "run_id": run_id}))
                log.close()
        except Exception as error:  # every failure is the finding
            errors.append(repr(error))

    threads = [threading.Thread(target=one) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_a_log_made_by_many_processes_at_once_is_whole(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")  # fresh interpreters, as separate agents
    with context.Pool(4) as pool:
        for trial in range(6):
            path = str(tmp_path / f"runs{trial}.db")
            errors = [e for found in pool.map(_open_many, [path] * 4) for e in found]
            assert errors == []
            log = RunLog.open(Path(path))
            assert log._db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            assert log._db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
            assert log._db.execute("SELECT COUNT(*) FROM runs").fetchone() == (4 * THREADS * RUNS,)
            log.close()
    assert sorted(p.name for p in tmp_path.iterdir() if ".new" in p.name) == []
