"""The shop's rules a team pushed to its store (`agent config push`): the settings that decide
money and what the desk may do, as JSON, one row a version, the newest in force. Only the
store is here; what a version holds and how a machine's own file may tighten it is
config/shop.py's."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agent_cli.errors import ConfigError
from agent_cli.store.conversations import now
from agent_cli.store.sqlite import OrderStore


@dataclass(frozen=True, slots=True, kw_only=True)
class Pushed:
    """One version of the shop's rules as stored."""

    version: int
    body: dict[str, Any]  # sections by name (config/shop.py reads them)
    pushed_by: str
    pushed_at: str


def latest(store: OrderStore) -> Pushed | None:
    """The rules in force (the newest version), or None when none was pushed; a ConfigError,
    saying to push again, for a row that is not a JSON table (damaged)."""
    rows = store.query(
        "SELECT id, body, pushed_by, pushed_at FROM shop_rules ORDER BY id DESC LIMIT 1"
    )
    if not rows:
        return None
    version, body, by, at = rows[0]
    try:
        parsed = json.loads(str(body))
    except RecursionError:  # nested deeper than Python's stack: damaged, as any bad JSON is
        raise _damaged(version, "nested too deeply") from None
    except ValueError:
        raise _damaged(version, "not JSON") from None
    if not isinstance(parsed, dict):
        raise _damaged(version, "not a table of sections")
    return Pushed(version=int(version), body=parsed, pushed_by=str(by), pushed_at=str(at))


def _damaged(version: object, why: str) -> ConfigError:
    return ConfigError(
        f"the shop's rules in the store (version {version}) cannot be read ({why}); push them "
        "again with 'agent config push'"
    )


def versions(store: OrderStore) -> int:
    return int(store.query("SELECT COUNT(*) FROM shop_rules")[0][0])


def push(store: OrderStore, body: dict[str, Any], *, by: str) -> tuple[int, bool]:
    """Store `body` as the next version; (its version, True). When it is what is in force
    already, nothing is written: (that version, False)."""
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

    def work() -> tuple[int, bool]:
        # No FOR UPDATE: a runner needs only SELECT here (INSERT is the pusher's), and two pushes
        # at once are two versions, the later in force.
        rows = store.query("SELECT id, body FROM shop_rules ORDER BY id DESC LIMIT 1")
        if rows and rows[0][1] == text:
            return int(rows[0][0]), False
        version = store.insert(
            "INSERT INTO shop_rules (body, pushed_by, pushed_at) VALUES (?, ?, ?)",
            (text, by, now()),
        )
        return version, True

    return store.atomically(work)
