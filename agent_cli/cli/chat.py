"""`agent chat`: an operator's session, line after line (commands/chat.py)."""

from typing import Annotated

import typer

from agent_cli.cli._apps import app
from agent_cli.cli._options import (
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
