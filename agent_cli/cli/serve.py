"""`agent serve` and `agent tokens create | list | revoke`."""

from typing import Annotated

import typer

from agent_cli.cli.apps import app, tokens_app
from agent_cli.cli.options import AsOption, ConfigOption, JsonOption


@app.command(
    epilog="Exit codes: 0 stopped (Ctrl-C exits 130); 1 the store cannot be opened; 2 a bad "
    "option, a taken port, or the serve extra missing."
)
def serve(
    host: Annotated[str, typer.Option(help="The address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="The port to listen on.")] = 8080,
    config: ConfigOption = None,
) -> None:
    """Serve the desk over HTTP: conversations under /v1, each message answered by whichever
    process on the store receives it (docs/serve.md); the channels under /channels (Chatwoot,
    LINE, a signed webhook) and a web chat at /chat (docs/channels/). Needs the serve extra and
    a token (agent tokens create)."""
    from agent_cli.commands.serve import serve_command

    serve_command(host=host, port=port, config=config)


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
