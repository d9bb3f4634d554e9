"""`agent replay FILE`: a recorded run shown again, or checked (commands/replay.py)."""

from pathlib import Path
from typing import Annotated

import typer

from agent_cli.cli._apps import app
from agent_cli.cli._options import (
    ConfigOption,
)


@app.command()
def replay(
    file: Annotated[Path, typer.Argument(help="A trace written by --trace or --json.")],
    run: Annotated[
        str | None, typer.Option("--run", help="Only the run whose id starts with this.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the answers.")] = False,
    list_runs: Annotated[
        bool, typer.Option("--list", help="List the runs in the file (id, time, status, question).")
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Re-run the recorded decisions against today's tools and store and report "
            "every observation that differs (exit 3 when any does).",
        ),
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Show the runs recorded in a trace again, step by step, as they were shown live.

    A torn last line (a killed run) is skipped with a warning. Exit code 2 when the file is
    missing or holds no runs; with --check, 3 when a replayed run observes something else.
    """
    from agent_cli.commands.replay import replay_command

    replay_command(file, run_id=run, quiet=quiet, check=check, config=config, list_runs=list_runs)
