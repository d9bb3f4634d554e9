"""Shell completion for values: providers and profiles for `--provider`, order codes for
`orders show`, order and run statuses, queue states, approval item numbers and recent run ids.
A completion runs on every Tab press, so it reads the config, the store or the run log at most,
creates nothing, and offers nothing rather than fail."""

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

        settings = load_settings()
        if not _store_exists(settings):
            return []
        with opened_store(settings) as store:
            codes = [order.code for order in store.orders(limit=None)]
    except Exception:
        return []
    prefix = incomplete.upper()
    return [code for code in codes if code.startswith(prefix)][:MAX_OFFERED]


def _starting(choices: tuple[str, ...], incomplete: str) -> list[str]:
    """The choices that start with what is typed, in any case, written in the case typed (the
    shell keeps only what starts with it; the commands read any case)."""
    typed = incomplete.casefold()
    found = [choice for choice in choices if choice.casefold().startswith(typed)]
    lower = incomplete.islower()
    return [
        choice.lower() if lower and not choice.startswith(incomplete) else choice
        for choice in found
    ]


def complete_order_status(incomplete: str) -> list[str]:
    from agent_cli.domain.orders import STATUSES

    return _starting(STATUSES, incomplete)


def complete_run_status(incomplete: str) -> list[str]:
    from typing import get_args

    from agent_cli.core.events import RunStatus

    return _starting((*get_args(RunStatus), "unfinished"), incomplete)


def complete_queue_state(incomplete: str) -> list[str]:
    from agent_cli.store.approval_items import ITEM_STATUSES

    return _starting((*ITEM_STATUSES, "unreadable"), incomplete)


def complete_approval_item(incomplete: str) -> list[str]:
    """The queue's item numbers that start with what is typed, pending ones first."""
    try:
        from agent_cli.config import load_settings
        from agent_cli.store.approval_items import Approval
        from agent_cli.store.approval_queue import listed, now_utc

        settings = load_settings()
        if not _store_exists(settings):
            return []
        from agent_cli.runtime.stores import opened_store

        with opened_store(settings) as store:
            items = listed(store)
        now = now_utc()
        waiting = [i for i in items if isinstance(i, Approval) and i.state(now) == "pending"]
        ordered = [*waiting, *(i for i in items if i not in waiting)]
    except Exception:
        return []
    numbers = [str(item.id) for item in ordered]
    return [n for n in numbers if n.startswith(incomplete)][:MAX_OFFERED]


def complete_ticket(incomplete: str) -> list[str]:
    """The ticket numbers that start with what is typed, open ones first, then claimed."""
    try:
        from agent_cli.config import load_settings
        from agent_cli.store.tickets import listed

        settings = load_settings()
        if not _store_exists(settings):
            return []
        from agent_cli.runtime.stores import opened_store

        with opened_store(settings) as store:
            found = listed(store)
    except Exception:
        return []
    rank = {"open": 0, "claimed": 1, "closed": 2}
    ordered = sorted(found, key=lambda t: (rank.get(t.status, 3), t.id))
    numbers = [str(t.id) for t in ordered]
    return [n for n in numbers if n.startswith(incomplete)][:MAX_OFFERED]


def complete_conversation(incomplete: str) -> list[str]:
    """The most recently active conversations' ids that start with what is typed."""
    try:
        from agent_cli.config import load_settings
        from agent_cli.store.conversations import listed

        settings = load_settings()
        if not _store_exists(settings):
            return []
        from agent_cli.runtime.stores import opened_store

        with opened_store(settings) as store:
            found = listed(store, limit=200)
    except Exception:
        return []
    return [c.id for c in found if c.id.startswith(incomplete)][:MAX_OFFERED]


def complete_run_id(incomplete: str) -> list[str]:
    """The newest logged runs' ids that start with what is typed."""
    try:
        from agent_cli.commands.logs import recent_run_ids

        return [run for run in recent_run_ids(MAX_OFFERED) if run.startswith(incomplete)]
    except Exception:
        return []


def _store_exists(settings: object) -> bool:
    from agent_cli.store.configured import configured_path

    store = settings.store  # type: ignore[attr-defined]
    return store.url is not None or configured_path(store.path).exists()
