"""The provider a run uses, resolved from the settings and the environment: a named provider
or profile, else the first API key found, else the offline playbook. Imports no httpx."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from agent_cli.config import (
    BUILTIN_PROFILES,
    ProfileSettings,
    ProviderSettings,
    Settings,
)
from agent_cli.errors import ConfigError, InvalidApiKey, MissingApiKey


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderChoice:
    """The provider a run will use, resolved from settings and the environment."""

    name: str  # offline, or a profile name (openai, anthropic, ollama, [profiles.X])
    kind: Literal["offline", "openai", "anthropic"]
    model: str = "playbook"
    base_url: str = ""
    api_key_env: str = ""  # empty: no key needed
    max_tokens_param: str = "max_tokens"
    automatic: bool = False  # nothing named it: chosen from the keys in the environment

    def api_key(self, env: Mapping[str, str]) -> str | None:
        """The key, trimmed (a pasted key often ends in a newline); MissingApiKey if unset."""
        if not self.api_key_env:
            return None
        key = env.get(self.api_key_env, "").strip()
        if not key:
            raise MissingApiKey(
                f"No API key for {self.name}: set {self.api_key_env} "
                "(or api_key_env under [provider] in the config)"
            )
        if problem := key_problem(key):
            raise InvalidApiKey(
                f"{self.api_key_env} {problem}; set it to the key alone (the value is not shown)"
            )
        return key


def key_problem(key: str) -> str | None:
    """Why `key` (already trimmed) cannot be a key, or None. A key with a line break or a control
    character inside would be refused by the HTTP library, which quotes the whole header."""
    if any(char.isspace() for char in key):
        return "contains whitespace inside the key"
    if not key.isascii() or not key.isprintable():
        return "contains a control or non-ASCII character"
    return None


OFFLINE = ProviderChoice(name="offline", kind="offline")


def choose_provider(settings: Settings, env: Mapping[str, str]) -> ProviderChoice:
    """A named provider, else the first key found (OPENAI_API_KEY, ANTHROPIC_API_KEY), else a
    server named by its base URL alone (OpenAI-compatible, no key), else the offline playbook
    model."""
    name, automatic = settings.provider.name, False
    if name is None:
        automatic = True
        key_envs = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
        name = next((n for n, var in key_envs.items() if env.get(var, "").strip()), "offline")
        if name == "offline" and settings.provider.base_url is not None:
            return _server_at(settings.provider)
    if name == "offline":
        return ProviderChoice(name="offline", kind="offline", automatic=automatic)
    profiles = {**BUILTIN_PROFILES, **settings.profiles}
    profile = profiles.get(name)
    if profile is None:
        known = ", ".join(["offline", *profiles])
        raise ConfigError(f"Unknown provider {name!r}; choose one of: {known}")
    chosen = settings.provider
    base_url = str(chosen.base_url or profile.base_url)
    return ProviderChoice(
        name=name,
        kind=profile.kind,
        model=chosen.model or profile.model,
        base_url=base_url,
        api_key_env=profile.api_key_env if chosen.api_key_env is None else chosen.api_key_env,
        max_tokens_param=_max_tokens_param(chosen, profile, base_url),
        automatic=automatic,
    )


def _max_tokens_param(chosen: ProviderSettings, profile: ProfileSettings, base_url: str) -> str:
    """The parameter that caps a reply, as the server at `base_url` honours it: the setting,
    else OpenAI's own name on OpenAI's API, else the profile's for its own server, else
    `max_tokens` (compatible servers ignore max_completion_tokens and write on and on)."""
    if chosen.max_tokens_param is not None:
        return chosen.max_tokens_param
    host = urlsplit(base_url).hostname or ""
    if host == "api.openai.com":
        return "max_completion_tokens"
    if base_url.rstrip("/") != str(profile.base_url).rstrip("/"):
        return "max_tokens"
    return profile.max_tokens_param


SERVER = "openai-compatible"  # a server named by --base-url alone: llama.cpp, vLLM, LM Studio


def _server_at(chosen: ProviderSettings) -> ProviderChoice:
    """The OpenAI-compatible server at the configured base URL, asked without a key (a local
    server needs none), for the model named (llama.cpp answers whatever is named)."""
    return ProviderChoice(
        name=SERVER,
        kind="openai",
        model=chosen.model or "default",
        base_url=str(chosen.base_url),
        api_key_env=chosen.api_key_env or "",
        max_tokens_param=chosen.max_tokens_param or "max_tokens",
        automatic=True,
    )


def key_in_clear(choice: ProviderChoice, env: Mapping[str, str]) -> str | None:
    """A warning when the API key would cross a network unencrypted: plain http to a host that
    is not this machine. None when it goes over https, stays on loopback, or there is no key."""
    if choice.kind == "offline" or not choice.api_key_env or not env.get(choice.api_key_env):
        return None
    parts = urlsplit(choice.base_url)
    host = (parts.hostname or "").lower()
    if parts.scheme != "http" or _loopback(host):
        return None
    return (
        f"agent: warning: {choice.api_key_env} goes to {parts.scheme}://{parts.netloc} "
        "unencrypted (http, and not this machine): anyone on the way can read it; use https "
        "or a loopback address"
    )


def _loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost") or host == "::1":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
