"""Build a real LLM adapter from a resolved provider choice: the one place keys become headers."""

from __future__ import annotations

import httpx

from agent_cli._version import __version__
from agent_cli.config import ProviderSettings
from agent_cli.providers import server_memory
from agent_cli.providers.anthropic import ANTHROPIC_VERSION, AnthropicMessages, AnthropicOptions
from agent_cli.providers.choice import ProviderChoice
from agent_cli.providers.http import Channel, Endpoint
from agent_cli.providers.openai import OpenAIChat, OpenAIOptions
from agent_cli.providers.retries import RetryPolicy


def channel_for(
    choice: ProviderChoice,
    settings: ProviderSettings,
    key: str | None,
    *,
    transport: httpx.BaseTransport | None = None,
    max_retries: int | None = None,
) -> Channel:
    headers = {"user-agent": f"agent-cli/{__version__}", "accept": "application/json"}
    if choice.kind == "anthropic":
        headers["anthropic-version"] = ANTHROPIC_VERSION
        if key:
            headers["x-api-key"] = key
    elif key:
        headers["authorization"] = f"Bearer {key}"
    retries = settings.max_retries if max_retries is None else max_retries
    return Channel(
        Endpoint(
            base_url=choice.base_url,
            headers=headers,
            secret=key,
            key_env=choice.api_key_env or None,
            connect_timeout=settings.connect_timeout,
            read_timeout=settings.read_timeout,
            retry=RetryPolicy(max_retries=retries, max_retry_after=settings.max_retry_wait),
        ),
        transport=transport,
    )


def connect(
    choice: ProviderChoice, settings: ProviderSettings, key: str | None
) -> OpenAIChat | AnthropicMessages:
    """An adapter with its own httpx.Client: one connection pool for the whole run. A server
    that refused streaming lately is not asked to stream (see server_memory)."""
    channel = channel_for(choice, settings, key)
    stream = settings.stream and not server_memory.refused(choice.base_url, "stream")
    adapter = _adapter(choice, settings, channel, stream=stream)

    def remember(feature: str) -> None:
        if feature == "stream":
            server_memory.remember_refusal(choice.base_url, feature)

    adapter.on_refused = remember
    adapter.provider = choice.name  # what the user chose (ollama, a profile), not the dialect
    return adapter


def _adapter(
    choice: ProviderChoice, settings: ProviderSettings, channel: Channel, *, stream: bool
) -> OpenAIChat | AnthropicMessages:
    if choice.kind == "anthropic":
        options = AnthropicOptions(
            model=choice.model,
            mode=settings.mode,
            temperature=settings.temperature,
            max_output_tokens=_output_cap(settings),
            stream=stream,
        )
        return AnthropicMessages(channel, options)
    return OpenAIChat(
        channel,
        OpenAIOptions(
            model=choice.model,
            mode=settings.mode,
            temperature=settings.temperature,
            max_output_tokens=_output_cap(settings),
            max_tokens_param=choice.max_tokens_param,
            response_format=settings.response_format,
            stream=stream,
        ),
    )


def _output_cap(settings: ProviderSettings) -> int:
    """The most tokens one reply may have: a decision in JSON mode, any reply in tools mode."""
    return settings.max_decision_tokens if settings.mode == "json" else settings.max_output_tokens
