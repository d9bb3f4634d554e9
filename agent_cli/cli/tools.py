"""`agent tools [list] | call NAME` (commands/tools.py)."""

from typing import Annotated

import typer

from agent_cli.cli._apps import tools_app
from agent_cli.cli._options import (
    ConfigOption,
    TraceOption,
)


@tools_app.callback()
def tools_group(
    ctx: typer.Context,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print names, descriptions and JSON schemas as JSON.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """List the tools the agent can call (ours, then each MCP server's), with descriptions.

    'agent tools call NAME [JSON]' runs one by hand.
    """
    if ctx.invoked_subcommand is None:
        from agent_cli.commands.tools import show_tools_command

        show_tools_command(json_output=json_output, config=config)


@tools_app.command(name="list")
def tools_list(
    json_output: Annotated[
        bool, typer.Option("--json", help="Print names, descriptions and JSON schemas as JSON.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """List the tools the agent can call, as 'agent tools' does."""
    from agent_cli.commands.tools import show_tools_command

    show_tools_command(json_output=json_output, config=config)


@tools_app.command(name="call")
def tools_call(
    name: Annotated[str, typer.Argument(help="The tool, e.g. get_order_details.")],
    arguments: Annotated[
        str | None,
        typer.Argument(help='Its arguments as a JSON object, e.g. \'{"order_id": "A100"}\'.'),
    ] = None,
    yes: Annotated[
        bool,
        typer.Option("--yes", help="Approve a write as the operator (a read needs nothing)."),
    ] = False,
    operator: Annotated[
        str | None,
        typer.Option("--as", help="Who approves with --yes (default: the login name)."),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print one JSON object: the observation, or the error.")
    ] = False,
    trace: TraceOption = None,
    config: ConfigOption = None,
) -> None:
    """Run one tool by hand, as staff: no customer to identify, the same schema validation, and
    for a write the same approval path as the model's calls (--yes approves it as you; on a
    terminal without --yes you are asked y/N/q; with no terminal it waits in the approval queue).

    Exit 0 done, 1 refused or failed (an ERROR or DENIED observation), 2 usage (an unknown tool,
    bad JSON, arguments the schema refuses), 5 queued. Every call is in the run log (kind tool).
    """
    from agent_cli.commands.tool_call import ToolCall, call_tool

    call_tool(
        ToolCall(
            name=name,
            arguments=arguments,
            yes=yes,
            operator=operator,
            json_output=json_output,
            trace=trace,
            config=config,
        )
    )
