"""`agent ask`: one question, every step rendered live (commands/ask.py)."""

from typing import Annotated

import typer

from agent_cli.cli._apps import app
from agent_cli.cli._boundary import EXIT_CODES_HELP
from agent_cli.cli._completion import complete_conversation
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
