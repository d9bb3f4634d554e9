"""`agent logs`: the run log listed, shown, searched, and the desk's numbers reported."""

from pathlib import Path
from typing import Annotated

import typer

from agent_cli.cli._apps import logs_app
from agent_cli.cli._completion import complete_run_id, complete_run_status
from agent_cli.cli._options import ConfigOption, LimitOption, LogsJsonOption


@logs_app.command(name="list")
def logs_list(
    limit: LimitOption = None,
    status: Annotated[
        str | None,
        typer.Option(
            help="Only runs that ended so, e.g. answered, timeout, unfinished.",
            autocompletion=complete_run_status,
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(help="Only runs started since: 2026-12-01, 2026-12-01T09:30, today, 2h, 7d."),
    ] = None,
    kind: Annotated[
        str | None,
        typer.Option(
            help="Only ask, chat, conversation, eval or tool runs (agent tools call), or all "
            "(default: all but eval cases)."
        ),
    ] = None,
    provider: Annotated[str | None, typer.Option(help="Only runs of this provider.")] = None,
    model: Annotated[str | None, typer.Option(help="Only runs of this model.")] = None,
    session: Annotated[
        str | None, typer.Option(help="Only the turns of this chat session (id or its start).")
    ] = None,
    json_output: LogsJsonOption = False,
    config: ConfigOption = None,
) -> None:
    """List the logged runs (ask, chat turns; eval cases with --kind eval), newest first."""
    from agent_cli.commands.logs import ListOptions, list_logs

    options = ListOptions(status, since, kind, provider, model, session)
    list_logs(json_output=json_output, config=config, limit=limit, options=options)


@logs_app.command(name="report")
def logs_report(
    since: Annotated[
        str | None,
        typer.Option(help="Only runs started since: 2026-12-01, 2026-12-01T09:30, today, 2h, 7d."),
    ] = None,
    by: Annotated[
        str | None, typer.Option(help="One row per day, model or intent (default: all in one).")
    ] = None,
    html: Annotated[
        Path | None, typer.Option(help="Write the report as a self-contained HTML page (0600).")
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="One JSON object per row (JSON Lines).")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """The desk's numbers from the run log: conversations, resolved without a person, handed
    over, refused, stopped at a limit, writes proposed/approved/denied/queued, the median and
    p95 time to answer, tokens and cost (ask and chat runs; eval cases are not customers)."""
    from agent_cli.commands.logs import parse_since
    from agent_cli.commands.logs_report import BY, desk_report

    if by is not None and by not in BY:
        raise typer.BadParameter(f"--by {by!r}: use {', '.join(BY)}")
    desk_report(
        since=parse_since(since) if since is not None else None,
        by=by,
        json_output=json_output,
        html=html,
        config=config,
    )


@logs_app.command(name="path")
def logs_path(config: ConfigOption = None) -> None:
    """Print where the run log is (AGENT_LOG / [log] path, else the state directory)."""
    from agent_cli.commands.logs import log_path

    log_path(config=config)


@logs_app.command(name="show")
def logs_show(
    run_id: Annotated[
        str | None,
        typer.Argument(
            help="A run id or its first characters; default: the newest.",
            autocompletion=complete_run_id,
        ),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the run's trace lines (agent replay reads them).")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the answer.")] = False,
    config: ConfigOption = None,
) -> None:
    """Show one logged run again, as it was shown live (as agent replay shows a trace)."""
    from agent_cli.commands.logs import show_log

    show_log(run_id, json_output=json_output, quiet=quiet, config=config)


@logs_app.command(name="search")
def logs_search(
    text: Annotated[str, typer.Argument(help="Words that must all appear, in any case.")],
    limit: LimitOption = None,
    json_output: LogsJsonOption = False,
    config: ConfigOption = None,
) -> None:
    """Find logged runs whose question or answer holds every word of TEXT, newest first."""
    from agent_cli.commands.logs import search_logs

    search_logs(text, json_output=json_output, config=config, limit=limit)
