"""`agent tokens create | list | revoke`: agent serve's bearer tokens (commands/tokens.py)."""

from typing import Annotated

import typer

from agent_cli.cli._apps import tokens_app
from agent_cli.cli._options import AsOption, ConfigOption, JsonOption


@tokens_app.command(name="create")
def tokens_create(
    name: Annotated[str, typer.Argument(help="A name for the token, e.g. web-chat.")],
    scope: Annotated[
        str,
        typer.Option(
            help="customer: start conversations and speak in them; identify: also say who the "
            "customer is; staff: everything."
        ),
    ] = "customer",
    by: AsOption = None,
    config: ConfigOption = None,
) -> None:
    """Make a token for agent serve and print it once, alone on the last line: it is kept only
    as a digest, and cannot be shown again."""
    from agent_cli.commands.tokens import create_token

    create_token(name, scope=scope, by=by, config=config)


@tokens_app.command(name="list")
def tokens_list(json_output: JsonOption = False, config: ConfigOption = None) -> None:
    """List the tokens (never the tokens themselves): name, scope, when made and by whom, and
    when revoked."""
    from agent_cli.commands.tokens import list_tokens

    list_tokens(json_output=json_output, config=config)


@tokens_app.command(name="revoke")
def tokens_revoke(
    name: Annotated[str, typer.Argument(help="The token's name.")],
    by: AsOption = None,
    config: ConfigOption = None,
) -> None:
    """Revoke a token: agent serve refuses it from the next request on. Exit code 2 if no token
    has that name or it was revoked already."""
    from agent_cli.commands.tokens import revoke_token

    revoke_token(name, by=by, config=config)
