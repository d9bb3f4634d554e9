"""`agent orders import FILE --format tau2` and `agent orders export --format tau2`: τ²-bench's
retail `db.json` into the configured store (checked whole first, then written in one
transaction) and back out in the same shape."""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from pathlib import Path

from agent_cli.config import load_settings
from agent_cli.errors import AgentError, UsageError
from agent_cli.runtime.drive import warn
from agent_cli.runtime.stores import opened_store
from agent_cli.store.bulk_writes import save_desk
from agent_cli.store.formats.tau2 import read_tau2, tau2_json
from agent_cli.store.record_reads import UnreadableRecord, load_desk
from agent_cli.ui.console import progress_bar


def import_tau2(file: Path, *, replace: bool, config: Path | None) -> None:
    data = read_tau2(file)  # every record checked before the store is opened
    records = len(data.customers) + len(data.products) + len(data.orders)
    with opened_store(load_settings(config)) as store, progress_bar("importing", records) as bar:
        save_desk(store, data, replace=replace, progress=bar)
    emptied = " (the store's desk data replaced)" if replace else ""
    print(
        f"Imported {len(data.customers)} users, {len(data.products)} products and "
        f"{len(data.orders)} orders from {file} (τ²-bench retail){emptied}"
    )
    if data.orders:  # what a team expects of its own orders, and τ²'s data has not
        warn(
            "τ²-bench's orders have no delivery dates and no carriers: their returns and "
            "exchanges are not held to the window (no date to judge on), issue_refund refuses "
            "them (its window needs one), and tracking names no carrier"
        )


def export_tau2(output: Path | None, *, config: Path | None) -> None:
    """The store's desk data as a τ²-bench db.json, to `output` (replaced whole, never left
    half-written) or stdout."""
    with opened_store(load_settings(config)) as store:
        try:
            data = load_desk(store)
        except UnreadableRecord as exc:
            raise AgentError(
                f"Cannot export: {exc}; fix that row, or import the data again"
            ) from None
    shaped = tau2_json(data)
    left_out = len(data.orders) - len(shaped["orders"])
    if left_out:
        warn(f"{left_out} order(s) with no customer left out: τ²-bench's orders name a user")
    text = json.dumps(shaped, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        sys.stdout.write(text)
        return
    _write_whole(output, text)
    print(
        f"Exported {len(shaped['users'])} users, {len(shaped['products'])} products and "
        f"{len(shaped['orders'])} orders to {output}",
        file=sys.stderr,
    )


def _write_whole(path: Path, text: str) -> None:
    """Beside the file, then moved over it: a reader sees the old file or the new, never half.
    Owner-only (0600: it holds customers' names, emails and addresses). Never over a link, a
    directory, a FIFO or a device, nor over an SQLite database (the order store, the run log)."""
    _refuse_to_clobber(path)
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent or Path("."), prefix=".export-")
    except OSError as exc:
        raise UsageError(f"-o {path}: cannot write there: {exc.strerror or exc}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise AgentError(
            f"Cannot write {path}: {exc.strerror or exc}; it was left as it was"
        ) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _refuse_to_clobber(path: Path) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UsageError(f"-o {path}: cannot be checked: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        raise UsageError(f"-o {path}: is a symbolic link; name the file itself")
    if stat.S_ISDIR(info.st_mode):
        raise UsageError(f"-o {path}: is a directory; name a file")
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"-o {path}: is not a regular file (a FIFO or a device); name a file")
    try:
        with path.open("rb") as handle:
            database = handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        database = False
    if database:
        raise UsageError(
            f"-o {path}: is an SQLite database (the order store or the run log?); nothing was "
            "written: name another file"
        )
