"""The `agent` command line: options -> settings -> model -> tools -> loop -> renderers.

This is the only module that imports Typer, and the one error boundary: every AgentError (and any
Typer usage error) becomes one line on stderr and a documented exit code, never a traceback.
Heavy modules are imported inside the commands, so `agent --help` pays only for Typer.
"""

from __future__ import annotations

import inspect
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperArgument, TyperGroup

from agent_cli import __version__
from agent_cli.errors import AgentError, Terminated

EXIT_CODES_HELP = (
    "Exit codes: 0 answered; 1 runtime error; 2 usage or configuration error; "
    "3 a limit was reached (max steps, timeout, tokens); 4 the agent asked a question and no "
    "one could answer; 130 interrupted (Ctrl-C); 141 stdout closed by its reader; "
    "143 terminated (SIGTERM)."
)


def _fail(message: str) -> None:
    # Messages quote servers and models: a hostile one must not drive the terminal.
    from agent_cli.text import clean_text

    print(f"agent: error: {clean_text(message)}", file=sys.stderr, flush=True)


class AgentGroup(TyperGroup):
    """The top-level command, wrapped in the single error boundary."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        _name_values(self)
        code = _guarded(
            lambda: super(AgentGroup, self).main(
                args, "agent", complete_var, standalone_mode=False, **extra
            )
        )
        if standalone_mode:
            sys.exit(code)
        return code


def _name_values(command: Any) -> None:
    """Metavars for the help pages: none for a flag, NAME-like words for values (Typer's own
    are type names: `<bool>`, `<str>`)."""
    for parameter in getattr(command, "params", []):
        if parameter.metavar is None:
            parameter.metavar = (
                "" if getattr(parameter, "is_flag", False) else parameter.name.upper()
            )
        if isinstance(parameter, TyperArgument):  # its name is the metavar: no type beside it
            setattr(parameter, "display_type_rich", lambda ctx: None)  # noqa: B010
            shown = parameter.metavar if parameter.required else f"[{parameter.metavar}]"
            setattr(parameter, "_usage_display_name", lambda shown=shown: shown)  # noqa: B010
    original = command.get_help_option  # made on first use: a flag too

    def help_option(ctx: Any, original: Any = original) -> Any:
        option = original(ctx)
        if option is not None:
            option.metavar = ""
        return option

    setattr(command, "get_help_option", help_option)  # noqa: B010
    for sub in getattr(command, "commands", {}).values():
        _name_values(sub)


_terminated = False


def _on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C (so every run records `interrupted`), then exits 143."""
    global _terminated  # noqa: PLW0603 - a signal handler can only talk through module state
    _terminated = True
    raise Terminated


def _guarded(call: Any) -> int:
    global _terminated  # noqa: PLW0603
    _terminated = False
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _exit_code(call)
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _exit_code(call: Any) -> int:  # noqa: PLR0911 - one return per kind of ending
    try:
        result = call()
    except AgentError as exc:
        _fail(str(exc))
        return exc.exit_code
    except typer.Abort:
        _fail("aborted")
        return 1
    except BrokenPipeError:  # `agent ... | head`: the reader left; stop quietly, as cat does
        _silence_stdout()
        return 141
    except SystemExit as exc:  # Click turns a broken pipe into exit 1; it is not an error
        if isinstance(exc.__context__, BrokenPipeError):
            _silence_stdout()
            return 141
        raise
    except typer.TyperException as exc:  # Click's usage errors: bad option, missing argument...
        return _usage_error(exc)
    except Exception as exc:
        if os.environ.get("AGENT_DEBUG"):
            raise
        _fail(f"internal error ({type(exc).__name__}: {exc}); set AGENT_DEBUG=1 for details")
        return 1
    if _terminated:  # outside a run Typer turns it into a plain exit: say what happened
        _fail("Terminated (SIGTERM)")
        return 143
    return result if isinstance(result, int) else 0


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _usage_error(exc: typer.TyperException) -> int:
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError":  # the help was printed as it was raised
        return 2
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    _fail(exc.format_message().rstrip(".") + hint)
    return getattr(exc, "exit_code", 2)


app = typer.Typer(
    cls=AgentGroup,
    help="A command-line support agent: an LLM in an observe-reason-act loop.\n\n"
    + EXIT_CODES_HELP,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
orders_app = typer.Typer(
    help="Browse and import the orders in the local SQLite store.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(orders_app, name="orders")
config_app = typer.Typer(
    help="Inspect the configuration.", context_settings={"help_option_names": ["-h", "--help"]}
)
app.add_typer(config_app, name="config")
logs_app = typer.Typer(
    help="List, search and show the logged runs (every ask, chat turn and eval case).",
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(logs_app, name="logs")


def _version(value: bool) -> None:
    if value:
        print(f"agent-cli {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """A command-line support agent: an LLM in an observe-reason-act loop."""


ConfigOption = Annotated[Path | None, typer.Option(help="Read settings from this TOML file.")]
ProviderOption = Annotated[
    str | None,
    typer.Option(
        "--provider",
        help="offline, openai, anthropic, ollama, or a \\[profiles.NAME] of the config "
        "(default: AGENT_PROVIDER, the config, else OPENAI_API_KEY / ANTHROPIC_API_KEY, "
        "else offline).",
    ),
]
ModelOption = Annotated[str | None, typer.Option("--model", help="The model name to ask for.")]
BaseUrlOption = Annotated[
    str | None,
    typer.Option("--base-url", help="The API's base URL, e.g. http://localhost:11434/v1."),
]
ModeOption = Annotated[
    str | None,
    typer.Option("--mode", help="tools (native tool calling, the default) or json."),
]


DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Use the offline playbook model: no network, no writes.")
]
ScriptOption = Annotated[
    Path | None,
    typer.Option(help="Replay the decisions in this JSON file instead of calling a model."),
]
MaxStepsOption = Annotated[
    int | None, typer.Option(help="Stop a run after this many model decisions (default: 8).")
]
TimeoutOption = Annotated[
    float | None, typer.Option(help="Stop a run after this many seconds (default: 120).")
]
MaxTokensOption = Annotated[
    int | None, typer.Option(help="Stop before a request would pass this many tokens.")
]
MaxCostOption = Annotated[
    float | None,
    typer.Option(help="Stop before a request would pass this cost (needs \\[prices] in config)."),
]
TodayOption = Annotated[
    str | None, typer.Option(help="Today's date for the model, YYYY-MM-DD (reproducible runs).")
]
TraceOption = Annotated[Path | None, typer.Option(help="Append the JSON Lines trace to this file.")]
NoStreamOption = Annotated[
    bool,
    typer.Option(
        "--no-stream",
        help="Ask for whole replies, not streamed ones: the answer appears when complete "
        "(provider.stream = false).",
    ),
]
NoGroundingOption = Annotated[
    bool,
    typer.Option(
        "--no-grounding",
        help="Accept answers naming orders the run did not look up (limits.grounding = false).",
    ),
]


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
    config: ConfigOption = None,
) -> None:
    """Answer one question, showing every step live."""
    from agent_cli.commands import AskOptions, ask_once
    from agent_cli.runtime import ProviderOptions, RunOptions

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
    )
    ask_once(AskOptions(question, json_output, run_options))


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
    config: ConfigOption = None,
) -> None:
    """Talk to the agent question after question; /help lists the commands.

    Each line is a turn, rendered live; earlier questions and answers are remembered (the
    oldest are dropped first). Ctrl-C cancels a run, Ctrl-D or /exit leaves. Works with stdin
    piped from a file too.
    """
    from agent_cli.chat import chat as run_chat
    from agent_cli.runtime import ProviderOptions, RunOptions

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
    )
    raise typer.Exit(run_chat(options, resume=resume))


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
    repeat: Annotated[int, typer.Option(help="Run each case this many times.")] = 1,
    timeout: TimeoutOption = None,
    no_grounding: NoGroundingOption = False,
    no_stream: NoStreamOption = False,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print JSON Lines: one per case, then one per model.")
    ] = False,
    report: Annotated[
        Path | None, typer.Option(help="Write a self-contained HTML report to this file.")
    ] = None,
    record: Annotated[
        Path | None, typer.Option(help="Keep each case's trace in this directory.")
    ] = None,
    min_pass: Annotated[
        float, typer.Option(help="Exit 3 unless every model passes this fraction of cases.")
    ] = 1.0,
    config: ConfigOption = None,
) -> None:
    """Measure answer quality: run a case set on one or more models and judge every answer.

    Each case runs against a throwaway copy of the sample orders plus the case's own orders;
    your order database is never touched. Exit codes: 0 when every model passes --min-pass of
    its cases (default: all), 3 when one does not, 2 for a bad case file, 130 on Ctrl-C.
    """
    from agent_cli.evaluation.command import EvalOptions, eval_command
    from agent_cli.runtime import ProviderOptions, RunOptions

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
            repeat=repeat,
            json_output=json_output,
            report=report,
            record=record,
            min_pass=min_pass,
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
    from agent_cli.commands import replay_command

    replay_command(file, run_id=run, quiet=quiet, check=check, config=config, list_runs=list_runs)


@app.command()
def doctor(
    provider: ProviderOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    config: ConfigOption = None,
) -> None:
    """Check the configuration, the API key, the provider and each MCP server; say what to fix.

    Exit code 0 when every check passes, 1 when one fails.
    """
    from agent_cli.diagnostics import doctor as run_doctor
    from agent_cli.runtime import ProviderOptions

    raise typer.Exit(run_doctor(ProviderOptions(provider, model, base_url, None, config)))


@config_app.command(name="init")
def config_init(
    path: Annotated[
        Path | None,
        typer.Option("--path", help="Write here (default: ~/.config/agent-cli/config.toml)."),
    ] = None,
) -> None:
    """Write the example configuration file, every setting with its default, to edit.

    Exit code 2 when the file exists already: nothing is overwritten.
    """
    from agent_cli.diagnostics import init_config

    init_config(path)


@config_app.command(name="show")
def config_show(
    provider: ProviderOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the settings as JSON.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Print the effective configuration, where each value came from, with secrets masked."""
    from agent_cli.diagnostics import show_config
    from agent_cli.runtime import ProviderOptions

    show_config(ProviderOptions(provider, model, base_url, None, config), json_output=json_output)


@app.command(name="tools")
def list_tools(
    json_output: Annotated[
        bool, typer.Option("--json", help="Print names, descriptions and JSON schemas as JSON.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """List the tools the agent can call (ours, then each MCP server's), with descriptions."""
    from agent_cli.commands import show_tools_command

    show_tools_command(json_output=json_output, config=config)


@orders_app.command(name="init")
def orders_init(
    sample: Annotated[
        bool, typer.Option("--sample", help="Add the sample orders (A100...C300).")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Create the order database at AGENT_DB / store.path (or the default location).

    A path you name is never created by other commands, so a typo cannot leave a stray sample
    database behind. Exit code 2 when the database exists already.
    """
    from agent_cli.commands import init_orders

    init_orders(sample=sample, config=config)


@orders_app.command(name="list")
def orders_list(
    json_output: Annotated[bool, typer.Option("--json", help="Print the orders as JSON.")] = False,
    limit: Annotated[
        int | None,
        typer.Option(help="At most this many orders (default: 50 on a terminal, else all)."),
    ] = None,
    status: Annotated[
        str | None, typer.Option(help="Only orders with this status, e.g. DELIVERED.")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """List the orders in the store, by code."""
    from agent_cli.commands import list_orders

    list_orders(json_output=json_output, config=config, limit=limit, status=status)


@orders_app.command(name="show")
def orders_show(
    code: Annotated[str, typer.Argument(help="The order code, e.g. A100.")],
    json_output: Annotated[bool, typer.Option("--json", help="Print the order as JSON.")] = False,
    config: ConfigOption = None,
) -> None:
    """Show one order. Exit code 1 if there is no such order."""
    from agent_cli.commands import show_order_command

    show_order_command(code, json_output=json_output, config=config)


@orders_app.command(name="import")
def orders_import(
    file: Annotated[Path, typer.Argument(help="A .csv or .json file of orders.")],
    config: ConfigOption = None,
) -> None:
    """Import orders (columns code, status, total, delivered_at, currency, customer): all or none.

    An order whose code already exists is replaced. A malformed file is rejected with the line
    and the reason (exit code 2), and nothing is imported.
    """
    from agent_cli.commands import import_orders

    import_orders(file, config=config)


def _reflow(doc: str) -> str:
    """A docstring's paragraphs each on one line: this Typer keeps the source's line breaks in
    every paragraph but the first, which breaks the help text at odd places."""
    return "\n\n".join(" ".join(p.split()) for p in inspect.cleandoc(doc).split("\n\n"))


LimitOption = Annotated[
    int | None,
    typer.Option(
        "-n", "--limit", help="At most this many runs (default: 20 on a terminal, else all)."
    ),
]
LogsJsonOption = Annotated[
    bool, typer.Option("--json", help="One JSON object per run (JSON Lines).")
]


@logs_app.command(name="list")
def logs_list(
    limit: LimitOption = None,
    status: Annotated[
        str | None,
        typer.Option(help="Only runs that ended so, e.g. answered, timeout, unfinished."),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(help="Only runs started since: 2026-12-01, 2026-12-01T09:30, today, 2h, 7d."),
    ] = None,
    json_output: LogsJsonOption = False,
    config: ConfigOption = None,
) -> None:
    """List the logged runs (ask, chat turns, eval cases), newest first."""
    from agent_cli.logs import list_logs

    list_logs(json_output=json_output, config=config, limit=limit, status=status, since=since)


@logs_app.command(name="show")
def logs_show(
    run_id: Annotated[
        str | None, typer.Argument(help="A run id or its first characters; default: the newest.")
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the run's trace lines (agent replay reads them).")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the answer.")] = False,
    config: ConfigOption = None,
) -> None:
    """Show one logged run again, as it was shown live (as agent replay shows a trace)."""
    from agent_cli.logs import show_log

    show_log(run_id, json_output=json_output, quiet=quiet, config=config)


@logs_app.command(name="search")
def logs_search(
    text: Annotated[str, typer.Argument(help="Words that must all appear, in any case.")],
    limit: LimitOption = None,
    json_output: LogsJsonOption = False,
    config: ConfigOption = None,
) -> None:
    """Find logged runs whose question or answer holds every word of TEXT, newest first."""
    from agent_cli.logs import search_logs

    search_logs(text, json_output=json_output, config=config, limit=limit)


EXAMPLES = {  # by the command's function
    "ask": [
        'agent ask "Is order A100 refundable?"',
        'agent ask "Is A101 refundable?" --provider ollama --model qwen2.5',
        'echo "Is A100 refundable?" | agent ask - --json',
    ],
    "chat": ["agent chat", "agent chat --continue", "agent chat --dry-run < questions.txt"],
    "eval_": [
        "agent eval --builtin --dry-run",
        "agent eval cases.toml --model gpt-4o-mini --model gpt-4o --report report.html",
    ],
    "replay": ["agent replay runs.jsonl --list", "agent replay runs.jsonl --check"],
    "doctor": ["agent doctor", "agent doctor --provider ollama"],
    "list_tools": ["agent tools --json"],
    "orders_init": ["agent orders init --sample"],
    "orders_list": ["agent orders list --status DELIVERED", "agent orders list --json"],
    "orders_show": ["agent orders show A100"],
    "orders_import": ["agent orders import orders.csv"],
    "config_show": ["agent config show --json"],
    "config_init": ["agent config init"],
    "logs_list": ["agent logs list --status timeout --since 7d", "agent logs list --json"],
    "logs_show": ["agent logs show", "agent logs show 3f2a --json > run.jsonl"],
    "logs_search": ["agent logs search A100", 'agent logs search "refund window" -n 5'],
}


def _help_text(name: str, doc: str) -> str:
    examples = EXAMPLES.get(name, [])
    lines = "\n".join(f"  $ {example}" for example in examples)
    return _reflow(doc) + (f"\n\nExamples:\n{lines}" if lines else "")


for _typer in (app, orders_app, config_app, logs_app):
    for _command in _typer.registered_commands:
        if _command.help is None and _command.callback is not None and _command.callback.__doc__:
            _command.help = _help_text(_command.callback.__name__, _command.callback.__doc__)
