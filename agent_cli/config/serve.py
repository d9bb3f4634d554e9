"""`[serve]`: `agent serve`'s limits, its outbox, and its channels (docs/serve.md,
docs/channels/)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field

from agent_cli.config.sections import HttpUrl, Section


class ChatwootSettings(Section):
    """Chatwoot's agent bot (docs/channels/chatwoot.md): where its API is, the account, and the
    names of the environment variables holding the API token and the bot's webhook secret."""

    base_url: HttpUrl | None = None  # e.g. https://app.chatwoot.com; unset: the channel is off
    account_id: int | None = Field(default=None, ge=1)
    api_token_env: str = "CHATWOOT_API_TOKEN"
    secret_env: str = "CHATWOOT_BOT_SECRET"


class LineSettings(Section):
    """LINE's Messaging API (docs/channels/line.md): the API's base, the names of the
    environment variables holding the channel secret and access token, and how long a reply
    token is used before a push replaces it (LINE's tokens last about a minute)."""

    api_base_url: HttpUrl = "https://api.line.me"
    channel_secret_env: str = "LINE_CHANNEL_SECRET"
    access_token_env: str = "LINE_CHANNEL_ACCESS_TOKEN"
    reply_window_s: float = Field(default=50.0, gt=0, le=60)


class WebhookSettings(Section):
    """The generic signed webhook (docs/channels/webhook.md): the name of the environment variable
    holding the shared secret, and where replies are posted (unset: in the response)."""

    secret_env: str = "AGENT_WEBHOOK_SECRET"
    reply_url: HttpUrl | None = None


def _origin(value: str) -> str:
    """An origin as browsers send it: scheme, host and port, no path."""
    parsed = urlsplit(value)
    if (
        parsed.scheme not in ("http", "https")
        or not parsed.hostname
        or value.rstrip("/") != (f"{parsed.scheme}://{parsed.netloc}")
    ):
        raise ValueError(f"{value!r} is not an origin (e.g. https://shop.example.com, no path)")
    return value.rstrip("/")


class WebSettings(Section):
    """The web chat (docs/channels/web.md): the shop's origins that may frame the page and call
    the API from their own pages (CORS)."""

    allowed_origins: list[Annotated[str, AfterValidator(_origin)]] = Field(default_factory=list)


class ServeSettings(Section):
    """`agent serve` (docs/serve.md): a request body's size, and how often, per minute, one
    token may call and one conversation may be written to (0: no limit), in each process."""

    max_body_bytes: int = Field(default=1_000_000, ge=1_024, le=100_000_000)
    token_rate: int = Field(default=6_000, ge=0, le=1_000_000)  # a channel's token carries a shop
    conversation_rate: int = Field(default=30, ge=0, le=100_000)
    # The outbox (docs/channels/README.md): how often rows written by other processes are looked
    # for, and how many tries a message gets before it is given up.
    outbox_poll_s: float = Field(default=1.0, ge=0.01, le=60)
    outbox_attempts: int = Field(default=8, ge=1, le=100)
    chatwoot: ChatwootSettings = Field(default_factory=ChatwootSettings)
    line: LineSettings = Field(default_factory=LineSettings)
    webhook: WebhookSettings = Field(default_factory=WebhookSettings)
    web: WebSettings = Field(default_factory=WebSettings)


def channels_on(serve: ServeSettings, environ: Mapping[str, str]) -> list[str]:
    """The channels whose settings and secrets are all there (`agent doctor`; serve/channels/
    setup.py makes them)."""
    on = []
    if environ.get(serve.webhook.secret_env):
        on.append("webhook")
    cw = serve.chatwoot
    if cw.base_url and cw.account_id and all(map(environ.get, (cw.api_token_env, cw.secret_env))):
        on.append("chatwoot")
    if all(map(environ.get, (serve.line.channel_secret_env, serve.line.access_token_env))):
        on.append("line")
    return on
