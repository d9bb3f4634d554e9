"""`agent replay`: recorded runs shown again, or re-run against today's tools (`--check`)."""

from __future__ import annotations

from pathlib import Path

from agent_cli.config import load_settings
from agent_cli.runtime.drive import warn
from agent_cli.ui import (
    RunView,
    make_console,
    show_run_header,
    show_runs,
)


def replay_command(
    file: Path,
    *,
    run_id: str | None,
    quiet: bool,
    check: bool = False,
    config: Path | None = None,
    list_runs: bool = False,
) -> None:
    """`agent replay`: show recorded runs again, as `agent ask` showed them live; with
    `check`, re-run their decisions against today's tools and store instead (exit 3 on any
    difference)."""
    from agent_cli.record.replay import load_runs, summarize_run

    if check:
        from agent_cli.commands.evaluate import check_replays

        check_replays([file], settings=load_settings(config), run_id=run_id, json_output=False)
        return
    console = make_console()
    runs = load_runs(file, warn=warn, run_id=run_id)
    if list_runs:
        show_runs(console, [summarize_run(events) for events in runs])
        return
    for events in runs:
        if not quiet:
            show_run_header(console, summarize_run(events))
        view = RunView(console, quiet=quiet)
        for event in events:
            view.show(event)
