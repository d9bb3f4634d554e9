"""The commands around the agent: doctor, config, tools, orders and logs."""

from pathlib import Path
from typing import Annotated

import typer

from agent_cli.cli.apps import app, config_app, orders_app, tools_app
from agent_cli.cli.completion import (
    complete_order_code,
    complete_order_status,
)
from agent_cli.cli.options import (
    BaseUrlOption,
    ConfigOption,
    ModelOption,
    ProviderOption,
    TraceOption,
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
    from agent_cli.commands.doctor import init_config

    init_config(path)


@config_app.command(name="path")
def config_path_command(config: ConfigOption = None) -> None:
    """Print the config file runs read (--config, else $AGENT_CONFIG, else the default), whether
    or not it exists yet."""
    from agent_cli.commands.settings import config_path

    config_path(config)


@config_app.command(name="get")
def config_get_command(
    key: Annotated[str, typer.Argument(help="A setting, e.g. limits.max_steps.")],
    json_output: Annotated[
        bool, typer.Option("--json", help="One JSON line: key, value, source.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Print a setting's effective value (the default, the file, or the environment)."""
    from agent_cli.commands.settings import config_get

    config_get(key, config=config, json_output=json_output)


@config_app.command(name="set")
def config_set_command(
    key: Annotated[str, typer.Argument(help="A setting, e.g. limits.max_steps.")],
    value: Annotated[str, typer.Argument(help='Its value: TOML (8, true, ["A"]) or text.')],
    config: ConfigOption = None,
) -> None:
    """Write a setting into the config file, keeping its comments; the file is created when
    missing. Exit code 2, and nothing written, when the settings would not load with it."""
    from agent_cli.commands.settings import config_set

    config_set(key, value, config=config)


@config_app.command(name="unset")
def config_unset_command(
    key: Annotated[str, typer.Argument(help="A setting, e.g. limits.max_steps.")],
    config: ConfigOption = None,
) -> None:
    """Take a setting out of the config file: its default applies again."""
    from agent_cli.commands.settings import config_unset

    config_unset(key, config=config)


@config_app.command(name="edit")
def config_edit_command(config: ConfigOption = None) -> int:
    """Open the config file in $VISUAL or $EDITOR (else vi), then check it: exit code 2 and
    the problem when it does not load (the file is kept, to fix)."""
    from agent_cli.commands.settings import config_edit

    return config_edit(config)


@config_app.command(name="push")
def config_push_command(
    json_output: Annotated[
        bool, typer.Option("--json", help="One JSON line: version, pushed.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Write this config's [policy], [refunds] and instructions to the team's store as the
    shop's rules, a new version (nothing when unchanged). Every run on the store then decides
    money by them; a machine's own config may only tighten them. Needs [store] url (a team's
    PostgreSQL): exit code 2 on one machine's SQLite."""
    from agent_cli.commands.shop_rules import push

    push(config=config, json_output=json_output)


@config_app.command(name="shop")
def config_shop_command(
    json_output: Annotated[
        bool, typer.Option("--json", help="One JSON line: the version and the rules in force.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Show the shop's rules pushed to the team's store (version, who, when) and the rules in
    force on this machine, its own config's tightening included."""
    from agent_cli.commands.shop_rules import show

    show(config=config, json_output=json_output)


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
    from agent_cli.commands.doctor import show_config
    from agent_cli.runtime.options import ProviderOptions

    show_config(ProviderOptions(provider, model, base_url, None, config), json_output=json_output)


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

    call_tool(ToolCall(name, arguments, yes, operator, json_output, trace, config))


@orders_app.command(name="init")
def orders_init(
    sample: Annotated[
        bool, typer.Option("--sample", help="Add the sample orders (A100...C300).")
    ] = False,
    today: Annotated[
        str | None,
        typer.Option(
            help="Date the sample orders as of this day, YYYY-MM-DD (default: today; A100 is "
            "delivered 12 days before it)."
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Create the order database at AGENT_DB / store.path (or the default location).

    A path you name is never created by other commands, so a typo cannot leave a stray sample
    database behind. With --sample, a database with no orders gets the samples; exit code 2
    when the database exists already (and, with --sample, holds orders).
    """
    from agent_cli.commands.orders import init_orders

    init_orders(sample=sample, config=config, today=today)


@orders_app.command(name="list")
def orders_list(
    json_output: Annotated[bool, typer.Option("--json", help="Print the orders as JSON.")] = False,
    limit: Annotated[
        int | None,
        typer.Option(help="At most this many orders (default: 50 on a terminal, else all)."),
    ] = None,
    status: Annotated[
        str | None,
        typer.Option(
            help="Only orders with this status, e.g. DELIVERED.",
            autocompletion=complete_order_status,
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """List the orders in the store, by code."""
    from agent_cli.commands.orders import list_orders

    list_orders(json_output=json_output, config=config, limit=limit, status=status)


@orders_app.command(name="show")
def orders_show(
    code: Annotated[
        str, typer.Argument(help="The order code, e.g. A100.", autocompletion=complete_order_code)
    ],
    json_output: Annotated[bool, typer.Option("--json", help="Print the order as JSON.")] = False,
    config: ConfigOption = None,
) -> None:
    """Show one order. Exit code 1 if there is no such order."""
    from agent_cli.commands.orders import show_order_command

    show_order_command(code, json_output=json_output, config=config)


@orders_app.command(name="import")
def orders_import(
    file: Annotated[Path | None, typer.Argument(help="A .csv or .json file of orders.")] = None,
    from_sqlite: Annotated[
        Path | None,
        typer.Option(
            "--from-sqlite",
            help="Instead: move this SQLite order database whole (orders, the desk's "
            "customers and products, refunds, approvals, tickets, articles) into the "
            "configured store (e.g. the team's PostgreSQL), which must be empty.",
        ),
    ] = None,
    file_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="orders: a .csv or .json file of orders (the default); tau2: τ²-bench "
            "retail's db.json (users, products, orders).",
        ),
    ] = "orders",
    replace: Annotated[
        bool,
        typer.Option(
            "--replace",
            help="With --format tau2: empty the store's desk data (customers, products, "
            "orders) first; refunds and approval items stay. With --from-sqlite: empty the "
            "whole store first, in the same transaction.",
        ),
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Import orders (columns code, status, total, delivered_at, currency, customer): all or none.

    An order whose code already exists is replaced. A malformed file is rejected with the line
    and the reason (exit code 2), and nothing is imported. With --from-sqlite, every table of
    the store, in one transaction, counted and summed on both sides after (a store that is not
    empty is refused, exit 2, unless --replace). With --format tau2, τ²-bench's users, products
    and orders, every record checked first.
    """
    from agent_cli.commands.orders import import_orders, import_sqlite

    if (file is None) == (from_sqlite is None):
        raise typer.BadParameter("give a FILE of orders, or --from-sqlite DATABASE (one of them)")
    if file_format not in ("orders", "tau2"):
        raise typer.BadParameter(f"--format {file_format!r}: use orders or tau2")
    if replace and file_format != "tau2" and from_sqlite is None:
        raise typer.BadParameter("--replace goes with --format tau2 or --from-sqlite")
    if from_sqlite is not None:
        if file_format != "orders":
            raise typer.BadParameter("--from-sqlite copies a store; --format does not apply")
        import_sqlite(from_sqlite, replace=replace, config=config)
    elif file_format == "tau2":
        from agent_cli.commands.desk_files import import_tau2

        assert file is not None
        import_tau2(file, replace=replace, config=config)
    else:
        assert file is not None
        import_orders(file, config=config)


@orders_app.command(name="export")
def orders_export(
    file_format: Annotated[
        str, typer.Option("--format", help="tau2: τ²-bench retail's db.json (the only one yet).")
    ] = "tau2",
    output: Annotated[
        Path | None,
        typer.Option(
            "-o", "--output", help="Write to this file (replaced whole) instead of stdout."
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Export the store's customers, products and orders as τ²-bench retail's db.json.

    τ²'s fields only: what the store holds beyond them (dates, shipment events, carriers)
    stays out, and orders with no customer (the seed's rows) are left out, said on stderr.
    """
    from agent_cli.commands.desk_files import export_tau2

    if file_format != "tau2":
        raise typer.BadParameter(f"--format {file_format!r}: use tau2")
    export_tau2(output, config=config)
