"""What a provider's error says: the message and codes of an error body (either dialect), the
error each status becomes, and refusals of optional features (FeatureRejected)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from agent_cli.errors import (
    FeatureRejected,
    ProviderAuthError,
    ProviderError,
    ProviderRequestError,
)
from agent_cli.text import JsonTextError, mask_secrets, read_json

MAX_MESSAGE_CHARS = 300
CONTEXT_CODES = {"context_length_exceeded", "request_too_large"}
_BILLING_CODES = {"insufficient_quota", "billing_error", "enforced_spend_limit_reached"}


@dataclass(frozen=True, slots=True)
class ApiError:
    """What an error body says, whichever dialect: OpenAI `{"error": {...}}` or Anthropic's."""

    message: str
    codes: frozenset[str]

    @classmethod
    def parse(cls, body: bytes, secret: str | None) -> ApiError:
        try:
            data = read_json(body)
        except JsonTextError:
            return cls("(the response body is not JSON)", frozenset())
        error = data.get("error") if isinstance(data, dict) else None
        if not isinstance(error, dict):
            return cls("(no error message)", frozenset())
        details = error.get("details")
        detail_code = details.get("error_code") if isinstance(details, dict) else None
        codes = frozenset(str(v) for v in (error.get("type"), error.get("code"), detail_code))
        message = str(error.get("message") or "(no error message)")
        return cls(clean_message(message, secret), codes)

    @property
    def is_billing(self) -> bool:
        return bool(self.codes & _BILLING_CODES)


def clean_message(text: str, secret: str | None) -> str:
    """One short line, with the key (if the server echoed it) masked."""
    text = " ".join(mask_secrets(text, secret).split())
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + "..."


STATUS_ERRORS: dict[int, tuple[type[ProviderError], str]] = {
    401: (ProviderAuthError, "Authentication failed (401): {key} was rejected: {message}"),
    403: (ProviderAuthError, "Permission denied (403): {message}"),
    404: (
        ProviderRequestError,
        "Not found (404) at {url}: {message}; check --model and --base-url",
    ),
    413: (
        ProviderRequestError,
        "Request too large (413): {message}; the history is too big for this provider",
    ),
}


def check_features(
    features: Mapping[str, re.Pattern[str]],
    error: ApiError,
    *,
    status: int,
    latency_ms: float,
    attempt: int,
    url: str,
) -> None:
    """Raise FeatureRejected when the error says the server refused an optional feature."""
    for feature, refusal in features.items():
        if refusal.search(error.message):
            raise FeatureRejected(
                f"The server at {url} refused {feature} ({status}): {error.message}"
                + FEATURE_HINTS.get(feature, ""),
                feature=feature,
                status=status,
                attempt=attempt,
                latency_ms=latency_ms,
            )


FEATURE_HINTS = {
    "tools": "; this server or model does not support tool calling: use --mode json "
    '(provider.mode = "json")',
}
