"""SQLite's errors as ours, one place for every way a file-backed store fails: a lock held too
long (StoreBusy: the run can go on), a full disk or a read-only file (StoreFull, StoreReadOnly:
said as what they are, the transaction rolled back), and a file that cannot be read."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agent_cli.errors import StoreBusy, StoreError, StoreFull, StoreReadOnly


@contextmanager
def unwritable(path: Path) -> Iterator[None]:
    """A write the file cannot take, said as what it is: the disk is full, or the database is
    read-only (another user's file, a read-only disk). The transaction is rolled back, so what
    the store held before is kept whole."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        message = str(exc).lower()
        if "disk is full" in message or "database or disk is full" in message:
            raise StoreFull(
                f"The order database {path} could not be written: the disk is full. Nothing "
                "was changed; what the store held before is kept: free some space and try again"
            ) from None
        if "readonly" in message or "read-only" in message:
            raise StoreReadOnly(
                f"The order database {path} is read-only (another user's file, or a read-only "
                "disk): nothing was changed; point AGENT_DB (or store.path) at a file you may "
                "write, or ask its owner"
            ) from None
        raise


@contextmanager
def busy_as_error(path: Path | None = None) -> Iterator[None]:
    """SQLite's errors as ours: a lock held too long is StoreBusy (the run can go on); with a
    `path`, any other failure to read the file (corrupt, unreadable) is a StoreError naming it."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise StoreBusy(
                "the order database is busy: another process holds a lock on it; "
                "try again in a moment"
            ) from None
        if path is None:
            raise
        raise StoreError(f"The order database {path} cannot be read: {exc}") from None
    except sqlite3.DatabaseError as exc:
        if path is None:
            raise
        raise StoreError(f"The order database {path} cannot be read: {exc}") from None
