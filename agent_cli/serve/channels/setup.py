"""Which channels this server runs, from `[serve.*]` and the environment variables they name
(secrets never sit in a config file): a channel with none of its settings is off (its route
says how to set it up); one half set up is an error at start, naming what is missing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agent_cli.config.serve import ServeSettings
from agent_cli.errors import UsageError
from agent_cli.serve.channels import chatwoot, inbox, line, webhook
from agent_cli.serve.channels.base import Channel
from agent_cli.serve.errors import ApiError

Handler = Callable[[Request], Awaitable[Response]]


def channels(
    host: inbox.Host, serve: ServeSettings, environ: Mapping[str, str]
) -> dict[str, Channel]:
    """The channels set up, by name."""
    made: dict[str, Channel] = {}
    hook = serve.webhook
    if secret := environ.get(hook.secret_env):
        made[webhook.NAME] = webhook.Webhook(host, secret, hook.reply_url)
    elif hook.reply_url:
        raise _half("webhook", [hook.secret_env])
    cw = serve.chatwoot
    cw_needs = {
        "[serve.chatwoot] base_url": cw.base_url,
        "[serve.chatwoot] account_id": cw.account_id,
        cw.api_token_env: environ.get(cw.api_token_env),
        cw.secret_env: environ.get(cw.secret_env),
    }
    if all(cw_needs.values()):
        made[chatwoot.NAME] = chatwoot.Chatwoot(
            host,
            base_url=str(cw.base_url),
            account=int(cw.account_id or 0),
            token=environ[cw.api_token_env],
            secret=environ[cw.secret_env],
        )
    elif cw.base_url or cw.account_id:
        raise _half("chatwoot", [name for name, value in cw_needs.items() if not value])
    ln = serve.line
    ln_needs = {
        ln.channel_secret_env: environ.get(ln.channel_secret_env),
        ln.access_token_env: environ.get(ln.access_token_env),
    }
    if all(ln_needs.values()):
        made[line.NAME] = line.Line(
            host,
            api=ln.api_base_url,
            secret=environ[ln.channel_secret_env],
            token=environ[ln.access_token_env],
            reply_window_s=ln.reply_window_s,
        )
    elif any(ln_needs.values()):
        raise _half("line", [name for name, value in ln_needs.items() if not value])
    return made


def _half(name: str, missing: list[str]) -> UsageError:
    return UsageError(
        f"the {name} channel is half set up: set {', '.join(missing)} "
        f"(docs/channels/{name}.md), or remove its settings"
    )


_SETUP = {
    webhook.NAME: "set the environment variable [serve.webhook] secret_env names",
    chatwoot.NAME: "set [serve.chatwoot] base_url and account_id, and the variables its "
    "api_token_env and secret_env name",
    line.NAME: "set the variables [serve.line] channel_secret_env and access_token_env name",
}


def routes(made: Mapping[str, Channel], guard: Callable[[Handler], Handler]) -> list[Route]:
    """`POST /channels/NAME` for each channel: its receiver, or a 404 that says how to set it up."""
    found: list[Route] = []
    for name, how in _SETUP.items():
        channel = made.get(name)
        receive = channel.receive if channel is not None else _off(name, how)
        found.append(Route(f"/channels/{name}", guard(receive), methods=["POST"]))
    return found


def _off(name: str, how: str) -> Handler:
    async def off(request: Request) -> Response:
        raise ApiError(404, "channel_off", f"the {name} channel is not set up: {how}")

    return off
