"""A real PostgreSQL server for the tests: made with `initdb` on a temporary directory, listening
on a Unix socket only, stopped at the end. As root (CI), the server runs as the `postgres` user,
which initdb requires. Without initdb installed the PostgreSQL tests are skipped, saying so."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path


def find(program: str) -> str | None:
    found = shutil.which(program)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{program}"))
    return candidates[-1] if candidates else None


class Server:
    """One server; `database()` makes a fresh, empty database on it for each test."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="agent-pg-"))
        self.socket = self.root / "socket"
        self.socket.mkdir()
        self._as: list[str] = []
        if os.geteuid() == 0:  # initdb refuses root
            owner = pwd.getpwnam("postgres")
            for path in (self.root, self.socket):
                os.chown(path, owner.pw_uid, owner.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]

    def start(self) -> None:
        initdb, pg_ctl = find("initdb"), find("pg_ctl")
        assert initdb and pg_ctl
        data = self.root / "data"
        self._run(initdb, "-D", str(data), "-U", "agent", "--auth=trust", "-E", "UTF8", "--no-sync")
        options = f"-k {self.socket} -c listen_addresses='' -c fsync=off -c max_connections=60"
        self._run(
            pg_ctl, "-D", str(data), "-o", options, "-w", "-l", str(self.root / "log"), "start"
        )

    def stop(self) -> None:
        pg_ctl = find("pg_ctl")
        assert pg_ctl
        self._run(pg_ctl, "-D", str(self.root / "data"), "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://agent@/{database}?host={self.socket}"

    def database(self) -> str:
        """A new empty database; its URL."""
        import psycopg

        name = f"t{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")  # type: ignore[call-overload]
        return self.url(name)

    def _run(self, *argv: str) -> None:
        subprocess.run([*self._as, *argv], check=True, capture_output=True)


def running() -> Iterator[Server]:
    server = Server()
    server.start()
    try:
        yield server
    finally:
        server.stop()
