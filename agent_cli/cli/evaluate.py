"""`agent eval run | tau2 | replay | list`: four jobs, once five under flags of one command. The
old spellings (`agent eval FILE`, `--builtin`, `--tau2 TASKS`, `--replay DIR`, `--list`) still
work for one release, each with a one-line notice naming the new one."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from agent_cli.cli._apps import app
from agent_cli.cli._options import (
    BaseUrlOption,
    ConcurrencyOption,
    ConfigOption,
    CustomerBaseUrlOption,
    CustomerModelOption,
    CustomerProviderOption,
    DryRunOption,
    EvalInstructionsOption,
    EvalJsonOption,
    EvalMaxCostOption,
    EvalModelsOption,
    MinHeardOption,
    MinPassOption,
    ModeOption,
    NoGroundingOption,
    NoStreamOption,
    ProviderOption,
    RecordOption,
    RepeatOption,
    ReportOption,
    ScriptOption,
    StoreFileOption,
    StoreUrlOption,
    TimeoutOption,
    TrialsOption,
)

SUBCOMMANDS = ("run", "tau2", "replay", "list")


class _EvalGroup(TyperGroup):
    """`agent eval`'s subcommands; anything else is the old spelling, run as it always was."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # ctx: Typer's own Context
        first = args[0] if args else None
        if first is not None and first not in (*SUBCOMMANDS, "--help", "-h", "old"):
            args = ["old", *args]
        return super().parse_args(ctx, args)


eval_app = typer.Typer(
    cls=_EvalGroup,
    help="Measure answer quality: run case sets on one or more models and judge every answer "
    "(run), run τ²-bench tasks (tau2), replay recorded traces against today's tools (replay), or "
    "list the cases (list).",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
)
app.add_typer(eval_app, name="eval")


@eval_app.command(name="run")
def eval_run(
    cases: Annotated[
        Path | None, typer.Argument(help="A case file (.toml or .json); or use --builtin.")
    ] = None,
    builtin: Annotated[
        bool, typer.Option("--builtin", help="Run the case set shipped with agent-cli.")
    ] = False,
    provider: ProviderOption = None,
    model: EvalModelsOption = None,
    base_url: BaseUrlOption = None,
    mode: ModeOption = None,
    dry_run: DryRunOption = False,
    script: ScriptOption = None,
    concurrency: ConcurrencyOption = None,
    trials: TrialsOption = None,
    repeat: RepeatOption = None,
    timeout: TimeoutOption = None,
    no_grounding: NoGroundingOption = False,
    no_stream: NoStreamOption = False,
    json_output: EvalJsonOption = False,
    report: ReportOption = None,
    record: RecordOption = None,
    min_pass: MinPassOption = 1.0,
    min_heard: MinHeardOption = 0.0,
    instructions: EvalInstructionsOption = None,
    store_file: StoreFileOption = None,
    store_url: StoreUrlOption = None,
    max_cost: EvalMaxCostOption = None,
    customer_model: CustomerModelOption = None,
    customer_provider: CustomerProviderOption = None,
    customer_base_url: CustomerBaseUrlOption = None,
    config: ConfigOption = None,
) -> None:
    """Run a case set on one or more models and judge every answer.

    Each case runs against a throwaway copy of the sample orders plus the case's own orders;
    your order database is never touched. Exit codes: 0 when every model passes --min-pass of
    its cases (default: all), 3 when one does not, 2 for a bad case file, 130 on Ctrl-C.
    """
    _evaluate(locals())


@eval_app.command(name="tau2")
def eval_tau2(
    tasks: Annotated[
        Path,
        typer.Argument(
            help="τ²-bench retail tasks (its tasks.json), each a simulated customer, its gold "
            "actions the reference; 'retail' for the copy shipped with agent-cli."
        ),
    ],
    store_file: StoreFileOption = None,
    provider: ProviderOption = None,
    model: EvalModelsOption = None,
    base_url: BaseUrlOption = None,
    mode: ModeOption = None,
    dry_run: DryRunOption = False,
    script: ScriptOption = None,
    concurrency: ConcurrencyOption = None,
    trials: TrialsOption = None,
    repeat: RepeatOption = None,
    timeout: TimeoutOption = None,
    no_grounding: NoGroundingOption = False,
    no_stream: NoStreamOption = False,
    json_output: EvalJsonOption = False,
    report: ReportOption = None,
    record: RecordOption = None,
    min_pass: MinPassOption = 1.0,
    instructions: EvalInstructionsOption = None,
    store_url: StoreUrlOption = None,
    max_cost: EvalMaxCostOption = None,
    customer_model: CustomerModelOption = None,
    customer_provider: CustomerProviderOption = None,
    customer_base_url: CustomerBaseUrlOption = None,
    config: ConfigOption = None,
) -> None:
    """Run τ²-bench retail tasks: each a simulated customer, its gold actions the reference, on
    the task set's own store (--store-file db.json; 'retail' brings its own).

    Exit codes as agent eval run's; --provider reference plays each task's gold actions.
    """
    _evaluate({**locals(), "tau2": tasks})


@eval_app.command(name="replay")
def eval_replay(
    directory: Annotated[
        Path, typer.Argument(help="A directory of traces (agent eval run --record DIR).")
    ],
    json_output: EvalJsonOption = False,
    config: ConfigOption = None,
) -> None:
    """Replay every trace in a directory against today's tools and store, conversations whole;
    exit 3 when an observation differs."""
    _evaluate({"replay": directory, "json_output": json_output, "config": config})


@eval_app.command(name="list")
def eval_list(
    cases: Annotated[Path | None, typer.Argument(help="A case file; or use --builtin.")] = None,
    builtin: Annotated[
        bool, typer.Option("--builtin", help="The case set shipped with agent-cli.")
    ] = False,
    tau2: Annotated[Path | None, typer.Option(help="τ²-bench tasks (or 'retail').")] = None,
    config: ConfigOption = None,
) -> None:
    """List the cases (id, kind, question), one per line; run nothing."""
    _evaluate({"cases": cases, "builtin": builtin, "tau2": tau2, "config": config, "list": True})


@eval_app.command(name="old", hidden=True)
def eval_old(
    cases: Annotated[Path | None, typer.Argument(help="A case file (agent eval run FILE).")] = None,
    builtin: Annotated[
        bool, typer.Option("--builtin", help="The shipped cases (agent eval run --builtin).")
    ] = False,
    replay_dir: Annotated[
        Path | None, typer.Option("--replay", help="Traces to replay (agent eval replay DIR).")
    ] = None,
    tau2: Annotated[
        Path | None, typer.Option("--tau2", help="τ²-bench tasks (agent eval tau2 TASKS).")
    ] = None,
    list_cases: Annotated[
        bool, typer.Option("--list", help="List the cases (agent eval list).")
    ] = False,
    provider: ProviderOption = None,
    model: EvalModelsOption = None,
    base_url: BaseUrlOption = None,
    mode: ModeOption = None,
    dry_run: DryRunOption = False,
    script: ScriptOption = None,
    concurrency: ConcurrencyOption = None,
    trials: TrialsOption = None,
    repeat: RepeatOption = None,
    timeout: TimeoutOption = None,
    no_grounding: NoGroundingOption = False,
    no_stream: NoStreamOption = False,
    json_output: EvalJsonOption = False,
    report: ReportOption = None,
    record: RecordOption = None,
    min_pass: MinPassOption = 1.0,
    min_heard: MinHeardOption = 0.0,
    instructions: EvalInstructionsOption = None,
    store_file: StoreFileOption = None,
    store_url: StoreUrlOption = None,
    max_cost: EvalMaxCostOption = None,
    customer_model: CustomerModelOption = None,
    customer_provider: CustomerProviderOption = None,
    customer_base_url: CustomerBaseUrlOption = None,
    config: ConfigOption = None,
) -> None:
    """The old spelling, `agent eval [FILE] [--builtin|--tau2|--replay|--list]`: run as it was,
    with a notice naming the new one."""
    values = locals()
    print(f"agent: note: {_renamed(values)}", file=sys.stderr)
    _evaluate({**values, "replay": replay_dir, "list": list_cases})


def _renamed(values: dict[str, Any]) -> str:
    if values["replay_dir"] is not None:
        new = "agent eval replay DIR"
    elif values["list_cases"]:
        new = "agent eval list"
    elif values["tau2"] is not None:
        new = "agent eval tau2 TASKS"
    else:
        new = "agent eval run [FILE | --builtin]"
    return f"this spelling of agent eval is now {new}; the old one works until the next release"


def _evaluate(values: dict[str, Any]) -> None:
    """The eval the command's values describe (missing ones at their defaults)."""
    from agent_cli.commands.evaluate import EvalOptions, eval_command
    from agent_cli.runtime.options import ProviderOptions, RunOptions

    given = {k: v for k, v in values.items() if v is not None}
    run_options = RunOptions(
        dry_run=given.get("dry_run", False),
        script=given.get("script"),
        timeout=given.get("timeout"),
        grounding=False if given.get("no_grounding") else None,
        provider=ProviderOptions(
            given.get("provider"),
            None,
            given.get("base_url"),
            given.get("mode"),
            given.get("config"),
            stream=False if given.get("no_stream") else None,
        ),
    )
    eval_command(
        EvalOptions(
            cases=given.get("cases"),
            builtin=given.get("builtin", False),
            replay=given.get("replay"),
            models=tuple(given.get("model") or ()),
            run=run_options,
            concurrency=given.get("concurrency"),
            repeat=_trials(given.get("trials"), given.get("repeat")),
            json_output=given.get("json_output", False),
            report=given.get("report"),
            record=given.get("record"),
            min_pass=given.get("min_pass", 1.0),
            min_heard=given.get("min_heard", 0.0),
            instructions=tuple(given.get("instructions") or ()),
            list_cases=given.get("list", False),
            customer=_customer(
                given.get("customer_model"),
                given.get("customer_provider"),
                given.get("customer_base_url"),
            ),
            tau2=given.get("tau2"),
            store_file=given.get("store_file"),
            max_cost=given.get("max_cost"),
            store_url=given.get("store_url"),
        )
    )


def _customer(model: str | None, provider: str | None, base_url: str | None) -> Any:
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
