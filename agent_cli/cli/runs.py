"""The commands that run the agent: ask, chat and replay (eval: cli/evals.py)."""

from pathlib import Path
from typing import Annotated

import typer

from agent_cli.cli.apps import app
from agent_cli.cli.boundary import EXIT_CODES_HELP
from agent_cli.cli.completion import complete_conversation
from agent_cli.cli.options import (
    BaseUrlOption,
    ConfigOption,
    DryRunOption,
    InstructionsOption,
    MaxCostOption,
    MaxStepsOption,
    MaxTokensOption,
    ModelOption,
    ModeOption,
    NoGroundingOption,
    NoStreamOption,
    ProviderOption,
    ScriptOption,
    TimeoutOption,
    TodayOption,
    TraceOption,
)


@app.command(epilog=EXIT_CODES_HELP)
def ask(
    question: Annotated[
        str | None,
        typer.Argument(
            help="The customer's question, in quotes; '-' (or nothing, with stdin piped) reads "
            "it from stdin."
        ),
    ] = None,
    provider: ProviderOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    mode: ModeOption = None,
    dry_run: DryRunOption = False,
    script: ScriptOption = None,
    max_steps: MaxStepsOption = None,
    timeout: TimeoutOption = None,
    max_tokens: MaxTokensOption = None,
    max_cost: MaxCostOption = None,
    today: TodayOption = None,
    trace: TraceOption = None,
    no_grounding: NoGroundingOption = False,
    no_stream: NoStreamOption = False,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the trace events as JSON Lines on stdout only.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the answer.")] = False,
    instructions: InstructionsOption = None,
    conversation: Annotated[
        str | None,
        typer.Option(
            help="Continue this conversation kept in the store (its id, or its first 6+ "
            "characters; agent conversations start makes one): the question is the "
            "customer's next message, and a question the desk asks is answered by the next.",
            autocompletion=complete_conversation,
        ),
    ] = None,
    message_id: Annotated[
        str | None,
        typer.Option(
            help="With --conversation: your id for this message; sent again, it is answered "
            "from the store and nothing runs twice."
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Answer one question, showing every step live."""
    from agent_cli.commands.ask import AskOptions, ask_once
    from agent_cli.runtime.options import ProviderOptions, RunOptions

    run_options = RunOptions(
        dry_run=dry_run,
        script=script,
        max_steps=max_steps,
        timeout=timeout,
        max_tokens=max_tokens,
        max_cost=max_cost,
        today=today,
        trace=trace,
        grounding=False if no_grounding else None,
        quiet=quiet,
        provider=ProviderOptions(
            provider, model, base_url, mode, config, stream=False if no_stream else None
        ),
        instructions=instructions,
    )
    ask_once(AskOptions(question, json_output, run_options, conversation, message_id))


@app.command(epilog="Exit code 0 when the session ends (Ctrl-D or /exit); 143 on SIGTERM.")
def chat(
    provider: ProviderOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    mode: ModeOption = None,
    dry_run: DryRunOption = False,
    script: ScriptOption = None,
    max_steps: MaxStepsOption = None,
    timeout: TimeoutOption = None,
    max_tokens: MaxTokensOption = None,
    max_cost: MaxCostOption = None,
    today: TodayOption = None,
    trace: TraceOption = None,
    no_grounding: NoGroundingOption = False,
    no_stream: NoStreamOption = False,
    resume: Annotated[
        bool,
        typer.Option(
            "--continue", help="Resume the last chat session: its answered turns are remembered."
        ),
    ] = False,
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            help="Resume this chat session instead (its id or first characters; "
            "agent logs list --kind chat shows them).",
        ),
    ] = None,
    instructions: InstructionsOption = None,
    config: ConfigOption = None,
    json_output: Annotated[
        bool, typer.Option("--json", hidden=True, help="Not here: use --trace FILE.")
    ] = False,
) -> None:
    """Talk to the agent question after question; /help lists the commands.

    Each line is a turn, rendered live; earlier questions and answers are remembered (the
    oldest are dropped first). Ctrl-C cancels a run, Ctrl-D or /exit leaves. Works with stdin
    piped from a file too.
    """
    from agent_cli.commands.chat import chat as run_chat
    from agent_cli.errors import UsageError
    from agent_cli.runtime.options import ProviderOptions, RunOptions

    if json_output:
        raise UsageError(
            "agent chat has no --json: --trace FILE writes the session's events as JSON Lines, "
            "and agent ask --json answers one question so"
        )

    options = RunOptions(
        dry_run=dry_run,
        script=script,
        max_steps=max_steps,
        timeout=timeout,
        max_tokens=max_tokens,
        max_cost=max_cost,
        today=today,
        trace=trace,
        grounding=False if no_grounding else None,
        provider=ProviderOptions(
            provider, model, base_url, mode, config, stream=False if no_stream else None
        ),
        instructions=instructions,
    )
    raise typer.Exit(run_chat(options, resume=session if session is not None else resume))


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
