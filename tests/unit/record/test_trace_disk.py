"""A disk that fills mid-run: short writes are caught, the approval is on disk before any money
moves, and a refund the trace could not take is reported on stderr with its id."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.commands import ask as commands
from agent_cli.core.seams import ApprovalVerdict
from tests.cli.test_refunds import refund_script, refunds_config
from tests.helpers import delivered_recently

runner = CliRunner()


class FillingDisk(io.RawIOBase):
    """A real trace file whose disk fills when a line containing `full_at` is written: the
    write is short (`short=True`: every write takes 10 bytes), fails with ENOSPC, or (as a real
    disk does) takes 10 bytes and then fails (`partial=True`)."""

    def __init__(self, path: Path, full_at: bytes, *, short: bool, partial: bool = False) -> None:
        self._file = path.open("ab", buffering=0)
        self._full_at, self._short, self._partial, self._full = full_at, short, partial, False
        self._room = 10  # bytes left once full, for `partial`

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._full = self._full or self._full_at in bytes(data)
        if not self._full:
            return int(self._file.write(data) or 0)
        if self._short:
            return int(self._file.write(bytes(data)[:10]) or 0)
        if self._partial and self._room:
            taken, self._room = bytes(data)[: self._room], 0
            return int(self._file.write(taken) or 0)
        raise OSError(28, "No space left on device")

    def fileno(self) -> int:
        return self._file.fileno()

    def close(self) -> None:
        self._file.close()
        super().close()


def approved_refund(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trace: Path) -> Any:
    """`agent ask` refunding 1,000 JPY of A100, the customer's yes given at the terminal's
    reply prompt and the operator's approval, traced to `trace`."""
    monkeypatch.setattr(
        commands, "terminal_approver", lambda **_: lambda request: ApprovalVerdict(True, "operator")
    )
    monkeypatch.setattr(commands, "terminal_responder", lambda **_: lambda question: "yes")
    delivered_recently("A100")
    argv = ["ask", "refund A100", "--script", str(refund_script(tmp_path, "A100")), "-q"]
    return runner.invoke(
        app, [*argv, "--config", str(refunds_config(tmp_path)), "--trace", str(trace)]
    )


def refund_with_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, full_at: bytes, *, short: bool
) -> tuple[Any, Path]:
    trace = tmp_path / "t.jsonl"
    monkeypatch.setattr(
        commands, "open_trace_file", lambda path: FillingDisk(path, full_at, short=short)
    )
    return approved_refund(tmp_path, monkeypatch, trace), trace


def refunds() -> list[Any]:
    shown = json.loads(runner.invoke(app, ["orders", "show", "A100", "--json"]).stdout)
    return list(shown["refunds"])


@pytest.mark.parametrize("short", [False, True])
def test_a_refund_the_trace_cannot_take_is_reported_with_its_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, short: bool
) -> None:
    result, trace = refund_with_full_disk(tmp_path, monkeypatch, b"REFUNDED:", short=short)
    assert result.exit_code == 2
    (error,) = result.stderr.strip().splitlines()
    assert error.startswith("agent: error: Cannot write the trace: ")
    assert ("short write" in error) == short
    assert not short or re.search(r"short write \(20 of \d+ bytes\)", error)  # 10, twice
    assert (
        "the store has recorded what the trace could not: REFUNDED: refund #2 of 1,000 JPY" in error
    )
    assert [r["amount"] for r in refunds()] == [1000]
    events = [json.loads(line)["event"] for line in trace.read_text().splitlines()]
    assert events[-2:] == ["approval_requested", "approval_decided"]  # on disk before the money


def test_no_money_moves_when_the_approval_cannot_be_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, trace = refund_with_full_disk(tmp_path, monkeypatch, b"approval_decided", short=True)
    assert result.exit_code == 2
    assert "Cannot write the trace" in result.stderr and "short write" in result.stderr
    assert refunds() == []
    # The half-written line was taken back: every line left is whole.
    text = trace.read_text()
    assert text.endswith("\n")
    events = [json.loads(line)["event"] for line in text.splitlines()]
    assert events[-1] == "approval_requested"


def test_the_approval_is_synced_to_disk_before_the_refund_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from agent_cli.record import tracing

    trace = tmp_path / "t.jsonl"
    synced: list[tuple[str, int]] = []  # (the last line's event, refunds in the store) per fsync
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        real_fsync(fd)
        last = json.loads(trace.read_text().splitlines()[-1])["event"]
        synced.append((last, len(refunds())))

    monkeypatch.setattr(tracing.os, "fsync", fsync)
    result = approved_refund(tmp_path, monkeypatch, trace)
    assert result.exit_code == 0, result.stderr
    assert ("approval_decided", 0) in synced  # on disk while no money had moved
    assert [r["amount"] for r in refunds()] == [1000]


@pytest.mark.parametrize(
    "full_at",
    [b'"decision"', b'"approval_requested"', b'"approval_decided"', b"REFUNDED:", b"run_finished"],
)
def test_a_disk_that_fills_part_way_through_any_line_leaves_only_whole_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, full_at: bytes
) -> None:
    """A real disk takes what fits, then fails the rest with ENOSPC: the torn line goes."""
    trace = tmp_path / "t.jsonl"
    monkeypatch.setattr(
        commands,
        "open_trace_file",
        lambda path: FillingDisk(path, full_at, short=False, partial=True),
    )
    result = approved_refund(tmp_path, monkeypatch, trace)
    assert result.exit_code == 2, result.stderr
    (error,) = result.stderr.strip().splitlines()
    assert error.startswith("agent: error: Cannot write the trace: No space left on device")
    text = trace.read_text()
    assert text.endswith("\n")
    assert all(json.loads(line) for line in text.splitlines())
    if not refunds():
        assert error == (
            "agent: error: Cannot write the trace: No space left on device; free some space or "
            "choose another --trace path"
        )
    if refunds():  # the money moved before the trace failed: the error line names it
        assert "the store has recorded what the trace could not" in error or (
            b"run_finished" in full_at
        )


@pytest.fixture
def small_disk(tmp_path: Path) -> Any:
    """A real 64 KiB tmpfs, mounted for the test (root only; skipped where mounting is not
    allowed, as in most containers)."""
    import os
    import subprocess

    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small disk needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.parametrize("room", [300, 900, 1700, 2500, 3400])
def test_a_real_disk_filling_mid_run_keeps_only_whole_lines(small_disk: Path, room: int) -> None:
    """The trace's last page has `room` bytes left and the disk is full: the run fills it at a
    different line for each `room`."""
    trace = small_disk / "t.jsonl"
    trace.write_text("{}\n" * ((4096 - room) // 3), encoding="utf-8")  # whole lines first
    with (small_disk / "filler").open("wb", buffering=0) as out:
        try:
            while out.write(b"x" * 512):
                pass
        except OSError:
            pass  # full
    result = runner.invoke(
        app, ["ask", "Are A100, A101 and A105 refundable?", "--dry-run", "--trace", str(trace)]
    )
    assert result.exit_code == 2, result.stderr
    (error,) = result.stderr.strip().splitlines()
    assert error.startswith("agent: error: Cannot write the trace: ")
    text = trace.read_text(encoding="utf-8")
    assert text.endswith("\n")
    assert all(json.loads(line) is not None for line in text.splitlines())
