"""The commands that run the agent: ask, chat, eval and replay."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

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

if TYPE_CHECKING:
    from agent_cli.runtime.options import ProviderOptions


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


@app.command(name="eval")
def eval_(
    cases: Annotated[
        Path | None, typer.Argument(help="A case file (.toml or .json); or use --builtin.")
    ] = None,
    builtin: Annotated[
        bool, typer.Option("--builtin", help="Run the case set shipped with agent-cli.")
    ] = False,
    replay_dir: Annotated[
        Path | None,
        typer.Option(
            "--replay",
            help="Instead of cases: replay every trace in this directory against today's tools "
            "and store; exit 3 when an observation differs.",
        ),
    ] = None,
    provider: ProviderOption = None,
    model: Annotated[
        list[str] | None,
        typer.Option("--model", help="A model to evaluate; repeat to compare models side by side."),
    ] = None,
    base_url: BaseUrlOption = None,
    mode: ModeOption = None,
    dry_run: DryRunOption = False,
    script: ScriptOption = None,
    concurrency: Annotated[
        int | None,
        typer.Option(help="Cases run at once (default: 4 for HTTP providers, 1 offline)."),
    ] = None,
    trials: Annotated[
        int | None,
        typer.Option(
            help="Run each case this many times, each on a fresh copy of its store; the "
            "summary gives pass^1..pass^k (τ²-bench's consistency measure)."
        ),
    ] = None,
    repeat: Annotated[
        int | None, typer.Option(hidden=True, help="The old name of --trials.")
    ] = None,
    timeout: TimeoutOption = None,
    no_grounding: NoGroundingOption = False,
    no_stream: NoStreamOption = False,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print JSON Lines: one per case, then one per model.")
    ] = False,
    report: Annotated[
        Path | None,
        typer.Option(
            help="Write a self-contained HTML report to this file (0600): failures first, "
            "a column per model, trace links."
        ),
    ] = None,
    record: Annotated[
        Path | None, typer.Option(help="Keep each case's trace in this directory.")
    ] = None,
    min_pass: Annotated[
        float, typer.Option(help="Exit 3 unless every model passes this fraction of cases.")
    ] = 1.0,
    min_heard: Annotated[
        float,
        typer.Option(
            help="With --builtin: exit 3 unless every model passes this fraction of the heard "
            "cases (held-out customer messages, reported in a row of their own)."
        ),
    ] = 0.0,
    instructions: Annotated[
        list[Path] | None,
        typer.Option(
            "--instructions",
            help="The shop's instructions from this file; repeat to compare them side by side.",
        ),
    ] = None,
    list_cases: Annotated[
        bool,
        typer.Option(
            "--list", help="List the cases (id, kind, question), one per line; run nothing."
        ),
    ] = False,
    tau2: Annotated[
        Path | None,
        typer.Option(
            "--tau2",
            help="Instead of cases: τ²-bench retail tasks (its tasks.json), each a simulated "
            "customer, its gold actions the reference; needs --store-file.",
        ),
    ] = None,
    store_file: Annotated[
        Path | None,
        typer.Option(
            help="Every case starts from this store: a τ²-bench db.json (for --tau2, its own)."
        ),
    ] = None,
    store_url: Annotated[
        str | None,
        typer.Option(
            help="Run every case on this PostgreSQL server, each in a schema of its own, "
            "dropped after it (default: an in-memory SQLite store per case)."
        ),
    ] = None,
    max_cost: Annotated[
        float | None,
        typer.Option(
            help="Stop the eval before a model request that would bring its cost over this "
            '(every model needs [prices."MODEL"] in the config); exit 3.'
        ),
    ] = None,
    customer_model: Annotated[
        str | None,
        typer.Option(
            help="The model that plays the cases' simulated customers (τ²'s user simulator)."
        ),
    ] = None,
    customer_provider: Annotated[
        str | None,
        typer.Option(help="The customer model's provider (default: the agent's)."),
    ] = None,
    customer_base_url: Annotated[
        str | None,
        typer.Option(help="The customer model's server (default: the agent's)."),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Measure answer quality: run a case set on one or more models and judge every answer.

    Each case runs against a throwaway copy of the sample orders plus the case's own orders;
    your order database is never touched. Exit codes: 0 when every model passes --min-pass of
    its cases (default: all), 3 when one does not, 2 for a bad case file, 130 on Ctrl-C.
    """
    from agent_cli.commands.evaluate import EvalOptions, eval_command
    from agent_cli.runtime.options import ProviderOptions, RunOptions

    run_options = RunOptions(
        dry_run=dry_run,
        script=script,
        timeout=timeout,
        grounding=False if no_grounding else None,
        provider=ProviderOptions(
            provider, None, base_url, mode, config, stream=False if no_stream else None
        ),
    )
    eval_command(
        EvalOptions(
            cases=cases,
            builtin=builtin,
            replay=replay_dir,
            models=tuple(model or ()),
            run=run_options,
            concurrency=concurrency,
            repeat=_trials(trials, repeat),
            json_output=json_output,
            report=report,
            record=record,
            min_pass=min_pass,
            min_heard=min_heard,
            instructions=tuple(instructions or ()),
            list_cases=list_cases,
            customer=_customer(customer_model, customer_provider, customer_base_url),
            tau2=tau2,
            store_file=store_file,
            max_cost=max_cost,
            store_url=store_url,
        )
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


def _customer(
    model: str | None, provider: str | None, base_url: str | None
) -> "ProviderOptions | None":
    """--customer-model and its provider and server; the others without it are a mistake."""
    from agent_cli.errors import UsageError
    from agent_cli.runtime.options import ProviderOptions

    if model is None:
        if provider is not None or base_url is not None:
            raise UsageError("--customer-provider and --customer-base-url need --customer-model")
        return None
    return ProviderOptions(provider, model, base_url)


def _trials(trials: int | None, repeat: int | None) -> int:
    """--trials, or its old name --repeat; both, and different, is a usage error."""
    from agent_cli.errors import UsageError

    if trials is not None and repeat is not None and trials != repeat:
        raise UsageError("--repeat is the old name of --trials: give one of them")
    chosen = trials if trials is not None else repeat
    return 1 if chosen is None else chosen
