"""What every settings section shares: strict validation (a TOML string is not a bool), and an
http(s) URL type that refuses what would be retried and blamed on a server never reached."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict


class Section(BaseModel):
    # Strict: a TOML string is not a bool ("yes" would turn refunds on), a float not an int.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _http_url(value: str | None) -> str | None:
    """An http(s) URL with a host, or None; anything else would be retried and blamed on a
    server that was never reached."""
    if value is None:
        return None
    parsed = urlsplit(value)
    example = "(e.g. http://localhost:11434/v1)"
    host = parsed.hostname or ""
    if parsed.scheme not in ("http", "https") or not host or any(c.isspace() for c in value):
        raise ValueError(f"{value!r} is not an http:// or https:// URL with a host {example}")
    try:
        port = parsed.port  # ValueError: not a number, or past 65535
    except ValueError:
        port = -1
    if port is not None and not 0 < port <= 65_535:
        raise ValueError(f"{value!r} has no valid port (a number from 1 to 65535) {example}")
    return value


HttpUrl = Annotated[str, AfterValidator(_http_url)]
