"""`agent serve`: the HTTP server over the same runtime (commands/serve.py)."""

from typing import Annotated

import typer

from agent_cli.cli._apps import app
from agent_cli.cli._options import ConfigOption


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
