"""`agent orders init | list | show | import | export` (commands/orders.py)."""

from pathlib import Path
from typing import Annotated

import typer

from agent_cli.cli._apps import orders_app
from agent_cli.cli._completion import (
    complete_order_code,
    complete_order_status,
)
from agent_cli.cli._options import (
    ConfigOption,
)


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
