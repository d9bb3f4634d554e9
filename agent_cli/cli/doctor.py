"""`agent doctor`: what works, what does not, and what to do (commands/doctor.py)."""

from typing import Annotated

import typer

from agent_cli.cli._apps import app
from agent_cli.cli._options import (
    BaseUrlOption,
    ConfigOption,
    ModelOption,
    ProviderOption,
)


@app.command()
def doctor(
    provider: ProviderOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="One JSON line per check: check, ok, detail.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Check the configuration, the API key, the provider and each MCP server; say what to fix.

    Exit code 0 when every check passes, 1 when one fails.
    """
    from agent_cli.commands.doctor import doctor as run_doctor
    from agent_cli.runtime.options import ProviderOptions

    options = ProviderOptions(provider, model, base_url, None, config)
    raise typer.Exit(run_doctor(options, json_output=json_output))
