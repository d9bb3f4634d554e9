"""The options several commands share, with their help text."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent_cli.cli._completion import complete_provider

ConfigOption = Annotated[Path | None, typer.Option(help="Read settings from this TOML file.")]
ProviderOption = Annotated[
    str | None,
    typer.Option(
        "--provider",
        help="offline, openai, anthropic, ollama, or a \\[profiles.NAME] of the config "
        "(default: AGENT_PROVIDER, the config, else OPENAI_API_KEY / ANTHROPIC_API_KEY, "
        "else offline).",
        autocompletion=complete_provider,
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
InstructionsOption = Annotated[
    Path | None,
    typer.Option(
        "--instructions",
        help="The shop's own instructions (tone, language, sign-off) from this file, for this "
        "run; added before our rules, never in their place.",
    ),
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


LimitOption = Annotated[
    int | None,
    typer.Option(
        "-n", "--limit", help="At most this many runs (default: 20 on a terminal, else all)."
    ),
]
LogsJsonOption = Annotated[
    bool, typer.Option("--json", help="One JSON object per run (JSON Lines).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
AsOption = Annotated[
    str | None,
    typer.Option(
        "--as", help="Who decides or does it (default: $AGENT_OPERATOR, else the OS user)."
    ),
]


# `agent eval run | tau2` (cli/evals.py): declared once, shared by both and the old spelling.
EvalModelsOption = Annotated[
    list[str] | None,
    typer.Option("--model", help="A model to evaluate; repeat to compare models side by side."),
]
ConcurrencyOption = Annotated[
    int | None, typer.Option(help="Cases run at once (default: 4 for HTTP providers, 1 offline).")
]
TrialsOption = Annotated[
    int | None,
    typer.Option(
        help="Run each case this many times, each on a fresh copy of its store; the summary "
        "gives pass^1..pass^k (τ²-bench's consistency measure)."
    ),
]
RepeatOption = Annotated[int | None, typer.Option(hidden=True, help="The old name of --trials.")]
EvalJsonOption = Annotated[
    bool, typer.Option("--json", help="Print JSON Lines: one per case, then one per model.")
]
ReportOption = Annotated[
    Path | None,
    typer.Option(
        help="Write a self-contained HTML report to this file (0600): failures first, a column "
        "per model, trace links."
    ),
]
RecordOption = Annotated[
    Path | None, typer.Option(help="Keep each case's trace in this directory.")
]
MinPassOption = Annotated[
    float, typer.Option(help="Exit 3 unless every model passes this fraction of cases.")
]
MinHeardOption = Annotated[
    float,
    typer.Option(
        help="With --builtin: exit 3 unless every model passes this fraction of the heard cases "
        "(held-out customer messages, reported in a row of their own)."
    ),
]
EvalInstructionsOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--instructions",
        help="The shop's instructions from this file; repeat to compare them side by side.",
    ),
]
StoreFileOption = Annotated[
    Path | None,
    typer.Option(
        help="Every case starts from this store: a τ²-bench db.json (for --tau2, its own)."
    ),
]
StoreUrlOption = Annotated[
    str | None,
    typer.Option(
        help="Run every case on this PostgreSQL server, each in a schema of its own, dropped "
        "after it (default: an in-memory SQLite store per case)."
    ),
]
EvalMaxCostOption = Annotated[
    float | None,
    typer.Option(
        help="Stop the eval before a model request that would bring its cost over this (every "
        'model needs [prices."MODEL"] in the config); exit 3.'
    ),
]
CustomerModelOption = Annotated[
    str | None,
    typer.Option(help="The model that plays the cases' simulated customers (τ²'s user simulator)."),
]
CustomerProviderOption = Annotated[
    str | None, typer.Option(help="The customer model's provider (default: the agent's).")
]
CustomerBaseUrlOption = Annotated[
    str | None, typer.Option(help="The customer model's server (default: the agent's).")
]
