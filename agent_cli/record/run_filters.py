"""Which logged runs a listing asks for (`agent logs list|count`): the filter as SQL over the
run log's `runs` table (record/runlog.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class RunFilter:
    """Which logged runs to list. Eval cases are kept apart: listed only with kind "eval" (or
    "all"), so an eval of 100 cases does not bury the operators' runs."""

    status: str | None = None
    since: datetime | None = None
    kind: str | None = None  # ask, chat, conversation, eval, tool or all; None: all but eval
    provider: str | None = None
    model: str | None = None
    session: str | None = None  # a session id or its first characters

    def where(self) -> tuple[str, tuple[Any, ...]]:
        clauses, params = [], []
        for column, value in (
            ("status", self.status),
            ("provider", self.provider),
            ("model", self.model),
            ("kind", None if self.kind == "all" else self.kind),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if self.kind is None:
            clauses.append("kind != 'eval'")
        if self.session is not None:
            clauses.append("session_id LIKE ? ESCAPE '\\'")
            params.append(like_pattern(self.session).removeprefix("%"))
        if self.since is not None:
            clauses.append("started_at >= ?")
            params.append(self.since.astimezone(UTC).isoformat(timespec="milliseconds"))
        return ("WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)


def like_pattern(word: str) -> str:
    """`word` anywhere in a text, as a LIKE pattern (ESCAPE '\\'): its % and _ taken as they are."""
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
