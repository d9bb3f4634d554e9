"""Shell completion for values: providers and profiles for `--provider`, order codes for
`orders show`. A completion runs on every Tab press, so it reads the config and the store at
most, creates nothing, and offers nothing rather than fail."""

from __future__ import annotations

BUILT_IN_PROVIDERS = ("offline", "openai", "anthropic", "ollama")
MAX_OFFERED = 200


def complete_provider(incomplete: str) -> list[str]:
    """The built-in providers and the config's `[profiles.NAME]`."""
    names = list(BUILT_IN_PROVIDERS)
    try:
        from agent_cli.config import load_settings

        names += sorted(load_settings().profiles)
    except Exception:
        pass
    return [name for name in dict.fromkeys(names) if name.startswith(incomplete)]


def complete_order_code(incomplete: str) -> list[str]:
    """The codes in the configured store that start with what is typed (never creating it)."""
    try:
        from agent_cli.config import load_settings
        from agent_cli.runtime.stores import opened_store
        from agent_cli.store.configured import configured_path

        settings = load_settings()
        if settings.store.url is None and not configured_path(settings.store.path).exists():
            return []
        with opened_store(settings) as store:
            codes = [order.code for order in store.orders(limit=None)]
    except Exception:
        return []
    prefix = incomplete.upper()
    return [code for code in codes if code.startswith(prefix)][:MAX_OFFERED]
