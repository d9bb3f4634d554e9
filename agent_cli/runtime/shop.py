"""The shop's rules in force for one process: on a team's PostgreSQL, the version pushed to the
store (`agent config push`), which this machine's config may only tighten (config/shop.py);
on SQLite (one machine), the config file alone, as always. Read when a runtime opens, so every
run, `agent serve`'s turns and `agent tools call` decide money by the same rules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent_cli.config import Settings
from agent_cli.config.shop import combined_instructions, read_body, tightened
from agent_cli.policy.instructions import shop_instructions
from agent_cli.store import shop_rules
from agent_cli.store.sqlite import OrderStore


def in_force(
    settings: Settings, store: Callable[[], OrderStore], given: Path | None = None
) -> tuple[Settings, str]:
    """The settings and instructions in force: `settings` (this machine's) tightened by the
    shop's pushed rules when the store is a team's and holds some. `given` is --instructions."""
    if settings.store.url is None:
        return settings, shop_instructions(settings, given).text
    # a damaged version: a ConfigError saying what to do
    return applied(settings, shop_rules.latest(store()), given)


def applied(
    settings: Settings, pushed: shop_rules.Pushed | None, given: Path | None = None
) -> tuple[Settings, str]:
    """`settings` tightened by the version `pushed` (read already), and the instructions."""
    local = shop_instructions(settings, given).text
    if pushed is None:
        return settings, local
    sections = read_body(pushed.body, pushed.version)
    return tightened(settings, sections, pushed.version), combined_instructions(sections[2], local)
