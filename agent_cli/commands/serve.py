"""`agent serve`: the HTTP API (serve/app.py) on a host and port, until Ctrl-C or SIGTERM, which
finish the requests in flight first (a SIGTERM then exits 0: a service manager's stop is not a
failure). Needs the `serve` extra (starlette and uvicorn), imported here only."""

from __future__ import annotations

import signal
import socket
import sys
from pathlib import Path
from types import FrameType
from typing import Any

from agent_cli.errors import UsageError
from agent_cli.runtime.converse import setup_for
from agent_cli.runtime.stores import opened_store

INSTALL = "pip install 'agent-cli[serve]'"


def serve_command(*, host: str, port: int, config: Path | None) -> None:
    uvicorn, make_app = _imported()
    setup = setup_for({} if config is None else {"config": config})
    with opened_store(setup.settings) as store:  # an unreachable store fails here, not later
        where = store.where
    app = make_app(setup)  # a channel half set up is one line here, before anything listens
    _port_is_free(host, port)
    print(
        f"agent: serving on http://{host}:{port} (store {where}); Ctrl-C or SIGTERM stops "
        "after the requests in flight",
        file=sys.stderr,
        flush=True,
    )
    # uvicorn finishes in-flight requests on SIGTERM, then raises the signal again: by then a
    # stop asked for is done, so it ends the command with 0, not the CLI's 143.
    signal.signal(signal.SIGTERM, lambda *_: None)
    server = uvicorn.Server(
        uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    )
    stop = server.handle_exit

    def handle_exit(sig: int, frame: FrameType | None) -> None:
        app.state.hub.close()  # open event streams end, so the turns in flight are all it waits for
        stop(sig, frame)

    server.handle_exit = handle_exit
    server.run()


def _imported() -> tuple[Any, Any]:
    try:
        import uvicorn

        from agent_cli.serve.app import make_app
    except ImportError as missing:
        raise UsageError(
            f"agent serve needs the serve extra ({missing.name} is not installed): {INSTALL}"
        ) from None
    return uvicorn, make_app


def _port_is_free(host: str, port: int) -> None:
    """A taken port or an unknown host is one line before anything listens."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(infos[0][4])
    except OSError as error:
        raise UsageError(
            f"cannot listen on {host}:{port}: {error.strerror or error}; choose another --port "
            "or --host"
        ) from None
