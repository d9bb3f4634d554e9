"""`agent serve`'s bearer tokens: each has a name, a scope (`customer`: starts conversations and
speaks in them; `identify`: may also say who the customer is; `staff`: everything), and only a
SHA-256 digest of the token is kept: the token itself is shown once, when made, and cannot be
read back. A revoked token stays listed, and is refused."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import Any, Literal

from agent_cli.errors import UsageError
from agent_cli.store.conversations import now
from agent_cli.store.sqlite import OrderStore
from agent_cli.store.tables import TOKEN_SCOPES

Scope = Literal["customer", "identify", "staff"]
SCOPES: tuple[str, ...] = TOKEN_SCOPES
PREFIX = "agt_"  # a token's first characters: a secret scanner can tell one
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_COLUMNS = "name, scope, created_at, created_by, revoked_at, revoked_by"


@dataclass(frozen=True, slots=True, kw_only=True)
class Token:
    name: str
    scope: Scope
    created_at: str
    created_by: str
    revoked_at: str | None = None
    revoked_by: str | None = None

    def may(self, scope: Scope) -> bool:
        """Whether this token may do what `scope` allows (staff may do all; identify, what a
        customer token may too)."""
        order = {"customer": 0, "identify": 1, "staff": 2}
        return order[self.scope] >= order[scope]


def _token(row: Any) -> Token:
    return Token(
        name=str(row[0]),
        scope=row[1],
        created_at=str(row[2]),
        created_by=str(row[3]),
        revoked_at=row[4],
        revoked_by=row[5],
    )


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def checked_name(name: str) -> str:
    folded = name.strip().lower()
    if _NAME.fullmatch(folded) is None:
        raise UsageError(
            f"{name!r} is not a token name: 1 to 64 of a-z, 0-9, '.', '_' and '-', starting "
            "with a letter or digit (e.g. web-chat)"
        )
    return folded


def create(store: OrderStore, name: str, scope: str, *, by: str) -> str:
    """A new token named `name`; the token itself (shown once). UsageError for a bad name or
    scope, or a name in use (revoked ones too: names stay unique in the record)."""
    name = checked_name(name)
    if scope not in SCOPES:
        raise UsageError(f"--scope {scope!r} is not a scope; use {', '.join(SCOPES)}")
    token = PREFIX + secrets.token_urlsafe(32)

    def work() -> None:
        if store.query("SELECT 1 FROM api_tokens WHERE name = ?", (name,)):
            raise UsageError(
                f"a token named {name!r} exists already; choose another name (agent tokens list)"
            )
        store.execute(
            "INSERT INTO api_tokens (name, scope, digest, created_at, created_by)"
            " VALUES (?, ?, ?, ?, ?)",
            (name, scope, digest(token), now(), by),
        )

    store.atomically(work)
    return token


def verified(store: OrderStore, token: str) -> Token | None:
    """The live token `token` is, or None (unknown, revoked, or not a token at all)."""
    if not token.startswith(PREFIX) or len(token) > 200:
        return None
    rows = store.query(
        f"SELECT {_COLUMNS} FROM api_tokens WHERE digest = ? AND revoked_at IS NULL",
        (digest(token),),
    )
    return _token(rows[0]) if rows else None


def listed(store: OrderStore) -> list[Token]:
    rows = store.query(f"SELECT {_COLUMNS} FROM api_tokens ORDER BY created_at, name")
    return [_token(row) for row in rows]


def revoke(store: OrderStore, name: str, *, by: str) -> bool:
    """Revoke the token named `name`; False when it was revoked already. UsageError when no
    token has that name."""
    name = checked_name(name)

    def work() -> bool:
        rows = store.query(
            f"SELECT revoked_at FROM api_tokens WHERE name = ?{store.FOR_UPDATE}", (name,)
        )
        if not rows:
            raise UsageError(f"No token named {name!r}; see agent tokens list")
        if rows[0][0] is not None:
            return False
        store.execute(
            "UPDATE api_tokens SET revoked_at = ?, revoked_by = ? WHERE name = ?",
            (now(), by, name),
        )
        return True

    return store.atomically(work)
