"""Shared fixtures: every test gets its own home, data directory and database, and no network."""

from __future__ import annotations

import atexit
import shutil
import signal
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_cli.store.samples import SAMPLE_SHOP
from agent_cli.store.sqlite import OrderStore

from .fakellm import FakeLLM

# Tests send Ctrl-C to the agents they start. A shell that runs the suite in the background
# (`tests/stress.sh`, a CI runner) starts it with SIGINT ignored, and every child inherits that,
# so the agent would never see its Ctrl-C: give the tests, and so their children, the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: object) -> None:
    host = address[0] if isinstance(address, tuple) else address
    if (
        isinstance(host, str)
        and host not in ("127.0.0.1", "::1", "localhost")
        and self.family
        in (
            socket.AF_INET,
            socket.AF_INET6,
        )
    ):
        raise OSError(f"tests must not reach the network (tried {host})")
    _real_connect(self, address)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(tmp_path, monkeypatch)


SHARED_CACHE = Path(tempfile.mkdtemp(prefix="agent-cli-test-cache-"))
# One directory per test process, gone when it ends (1,580 of them had piled up in /tmp).
atexit.register(shutil.rmtree, SHARED_CACHE, True)


def isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A home, an order database and an environment of the test's own: never the user's (a
    fixture of a wider scope than a test's calls this itself)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    # What can be rebuilt (the trained intent model) is shared by the session's tests, so a
    # subprocess loads it instead of training it again.
    monkeypatch.setenv("XDG_CACHE_HOME", str(SHARED_CACHE))
    monkeypatch.setenv("AGENT_DB", str(tmp_path / "orders.db"))
    # A named database is never created on first use: make it, with the sample orders at the
    # dates the tests are written for (--today 2026-10-13).
    OrderStore.open(tmp_path / "orders.db", seed=SAMPLE_SHOP).close()
    for name in (
        "AGENT_CONFIG",
        "AGENT_DEBUG",
        "AGENT_LOG",
        "NO_COLOR",
        "FORCE_COLOR",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[OrderStore]:
    opened = OrderStore.open(tmp_path / "orders.db")
    yield opened
    opened.close()


@pytest.fixture(params=["sqlite", "postgres"])
def either_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OrderStore]:
    """The store contract on both backends: the test's SQLite file, or a new database on the
    session's PostgreSQL server; each holds the sample orders at the dates the tests are
    written for."""
    if request.param == "sqlite":
        opened = OrderStore.open(tmp_path / "orders.db")
    else:
        from agent_cli.store.postgres import PostgresStore

        url = request.getfixturevalue("pg_server").database()
        opened = PostgresStore.connect(url, seed=SAMPLE_SHOP)
    yield opened
    opened.close()


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    server = FakeLLM().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A real PostgreSQL server for this test session (tests/postgres.py)."""
    from . import postgres

    if postgres.find("initdb") is None:
        pytest.skip("PostgreSQL is not installed (initdb not found): its tests are skipped")
    yield from postgres.running()
