"""Files a user names (a config, a script, an orders or τ² file, a case file, an article, the
shop's examples): each is read only when it is a regular file, and never more than its bound.

A FIFO named as an input would block the open (and then the read) for ever, `/dev/zero` would
be read until memory runs out, and a directory is no file: each is refused in one line before a
byte is read. The file is opened without blocking and checked on the open descriptor (`fstat`),
so what is checked is what is read; a file that grows while it is read stops at its bound.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

_CHUNK = 1 << 20


class FileRefused(ValueError):
    """The named path is not a file this program reads; the message says why, to follow the
    path in a one-line error."""


def size_words(count: int) -> str:
    """A byte count as people read it: 1 MiB, 200 MiB, 64 KiB."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if count >= 1 << shift and count % (1 << shift) == 0:
            return f"{count >> shift} {unit}"
    return f"{count:,} bytes"


def read_file_bytes(path: Path, max_bytes: int) -> bytes:
    """The bytes of the regular file at `path` (a link to one is followed), at most
    `max_bytes`; FileRefused for anything else or anything larger, OSError when it cannot be
    opened or read (FileNotFoundError, PermissionError, ...)."""
    fd = _open_regular(path)
    try:
        return _bounded(fd, max_bytes)
    finally:
        os.close(fd)


def open_regular(path: Path) -> BinaryIO:
    """The regular file at `path`, open for reading as a stream (a trace read line by line);
    FileRefused or OSError as `read_file_bytes`."""
    fd = _open_regular(path)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _open_regular(path: Path) -> int:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)  # without blocking: a FIFO opens at once, and is refused below
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise FileRefused("is a directory; name a file")
        if not stat.S_ISREG(mode):
            raise FileRefused("is not a regular file (a FIFO, a socket or a device); name a file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _bounded(fd: int, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    left = max_bytes + 1  # one byte more than allowed tells a file that is too large
    while left > 0:
        chunk = os.read(fd, min(left, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    if left <= 0:
        raise FileRefused(f"larger than {size_words(max_bytes)}; split it")
    return b"".join(chunks)
