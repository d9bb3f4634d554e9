"""`agent tokens create | list | revoke`: the bearer tokens `agent serve` accepts, kept in the
store (only their digests)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from agent_cli.config import load_settings
from agent_cli.errors import UsageError
from agent_cli.runtime.assemble import operator_name
from agent_cli.runtime.stores import opened_store
from agent_cli.store import tokens
from agent_cli.text import print_json_lines
from agent_cli.ui import make_console
from agent_cli.ui.tokens_view import show_tokens


def create_token(name: str, *, scope: str, by: str | None, config: Path | None) -> None:
    """Make a token and print it once, alone on the last line (stdout), for a script to keep."""
    who = (by or "").strip() or operator_name()
    with opened_store(load_settings(config)) as store:
        token = tokens.create(store, name, scope.strip().lower(), by=who)
    print(token)


def list_tokens(*, json_output: bool, config: Path | None) -> None:
    with opened_store(load_settings(config)) as store:
        found = tokens.listed(store)
    if json_output:
        print_json_lines(dataclasses.asdict(t) for t in found)
        return
    show_tokens(make_console(), found)


def revoke_token(name: str, *, by: str | None, config: Path | None) -> None:
    who = (by or "").strip() or operator_name()
    with opened_store(load_settings(config)) as store:
        changed = tokens.revoke(store, name, by=who)
    if not changed:
        raise UsageError(f"token {name!r} was revoked already; nothing changed")
    print(f"Revoked token {tokens.checked_name(name)}.")
