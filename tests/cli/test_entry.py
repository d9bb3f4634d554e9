"""The process entry (`agent`, `python -m agent_cli`): the collector is off only while the CLI is
imported, so a long chat or eval still frees its garbage, and the command's exit code is kept."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

import agent_cli.cli
from agent_cli.__main__ import main


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    yield
    gc.unfreeze()  # main() freezes what exists; give this test process its collector back
    gc.enable()


def test_the_command_runs_with_the_collector_on_and_keeps_its_exit_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[bool] = []

    def command(prog_name: str) -> None:
        seen.append(gc.isenabled())
        raise SystemExit(3)

    monkeypatch.setattr(agent_cli.cli, "app", command)
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 3
    assert seen == [True]


def test_garbage_made_by_a_command_is_still_collected(monkeypatch: pytest.MonkeyPatch) -> None:
    collected: list[int] = []

    class Cycle:
        def __init__(self) -> None:
            self.me = self

        def __del__(self) -> None:
            collected.append(1)

    def command(prog_name: str) -> None:
        for _ in range(5_000):  # far past the collector's threshold
            Cycle()
        raise SystemExit(0)

    monkeypatch.setattr(agent_cli.cli, "app", command)
    with pytest.raises(SystemExit):
        main()
    assert len(collected) > 4_000
