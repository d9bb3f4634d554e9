"""`agent approvals list | show | approve | deny`."""

from typing import Annotated

import typer

from agent_cli.cli._apps import approvals_app
from agent_cli.cli._completion import complete_approval_item, complete_queue_state
from agent_cli.cli._options import AsOption, ConfigOption, JsonOption

ItemsArgument = Annotated[
    list[int],
    typer.Argument(help="Item numbers, e.g. 7 8 9.", autocompletion=complete_approval_item),
]


@approvals_app.command(name="list")
def approvals_list(
    state: Annotated[
        str | None,
        typer.Option(
            help="Only items in this state: pending, approved, denied, expired, failed, "
            "unreadable.",
            autocompletion=complete_queue_state,
        ),
    ] = None,
    order: Annotated[str | None, typer.Option(help="Only items of this order.")] = None,
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """List the queue, oldest first (piped: one tab-separated line per item)."""
    from agent_cli.commands.approvals import list_approvals

    list_approvals(state=state, order=order, json_output=json_output, config=config)


@approvals_app.command(name="show")
def approvals_show(
    item: Annotated[
        int, typer.Argument(help="The item number.", autocompletion=complete_approval_item)
    ],
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """Show one item: the refund, the order as it was judged, the run and its question, who
    proposed and who decided. Exit code 1 if there is no such item."""
    from agent_cli.commands.approvals import show_approval_command

    show_approval_command(item, json_output=json_output, config=config)


@approvals_app.command(name="approve")
def approvals_approve(
    items: ItemsArgument, by: AsOption = None, config: ConfigOption = None
) -> None:
    """Commit each item's refund, after checking every rule again on the order as it is now.

    Exit code 1 if any item was not approved (expired, refused at commit, or closed already).
    """
    from agent_cli.commands.approvals import decide

    decide(items, approve=True, reason=None, by=by, config=config)


@approvals_app.command(name="deny")
def approvals_deny(
    items: ItemsArgument,
    reason: Annotated[str | None, typer.Option(help="Why, kept on the item.")] = None,
    by: AsOption = None,
    config: ConfigOption = None,
) -> None:
    """Close each item without a refund. Exit code 1 if any was closed already."""
    from agent_cli.commands.approvals import decide

    decide(items, approve=False, reason=reason, by=by, config=config)


@approvals_app.command(name="explain")
def approvals_explain(
    code: Annotated[str, typer.Argument(help="The order code, e.g. A100.")],
    amount: Annotated[
        str, typer.Argument(help="The refund, in the order's currency as written: 5000, 12.50.")
    ],
    reason: Annotated[str, typer.Option(help="The refund's reason.")] = "",
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """Say what would happen to a refund: denied by a check in code (status, window, cap, what
    is left), else which [[refunds.rules]] rule decides (auto, ask, queue or deny) and why each
    earlier rule does not apply. Runs and writes nothing."""
    from agent_cli.commands.approvals import explain

    explain(code, amount, reason, json_output=json_output, config=config)
