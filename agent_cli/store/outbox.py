"""The outbox: what the serving processes owe the channels (issue 53). A desk reply, a person's
words or a queued change's outcome in a conversation that has a channel's address gets a row in
the same transaction that wrote the message (conversations.py), so a process that dies after a
turn loses nothing: any serving process delivers it later.

One process at a time delivers a conversation's rows, in order: it claims every pending row of
the conversation for a while (`claimed_by`, `claimed_until`), sends them one by one, and marks
each sent the moment the channel took it. A row that failed waits (`next_at`, backoff) and the
rows after it wait behind it; a claim left by a killed process expires. Each row carries an
idempotency key (`key`) a channel that has one is sent, so a row sent just before a crash and sent
again is taken once."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from agent_cli.store.sqlite import OrderStore

DeliveryKind = Literal["message", "handover"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Delivery:
    """One row to deliver, with what the channel needs: where and what."""

    id: int
    conversation_id: str
    channel: str
    external_id: str | None
    address: dict[str, Any]
    kind: DeliveryKind
    key: str  # the idempotency key
    text: str | None  # the message (None for a hand-over)
    role: str | None  # desk or staff
    attempts: int  # tries before this one


def _at(seconds: float = 0.0) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat(timespec="milliseconds")


def owe(
    store: OrderStore, conversation_id: str, kind: DeliveryKind, message_id: int | None
) -> None:
    """A row for the conversation, if it has a channel's address (call inside the transaction
    that wrote the message: the two are one)."""
    at = _at()
    store.execute(
        "INSERT INTO outbox (conversation_id, message_id, kind, key, status, attempts, next_at,"
        " created_at) SELECT id, ?, ?, ?, 'pending', 0, ?, ? FROM conversations"
        " WHERE id = ? AND address IS NOT NULL",
        (message_id, kind, uuid.uuid4().hex, at, at, conversation_id),
    )


def due_conversations(store: OrderStore, *, limit: int) -> list[str]:
    """Conversations with a row due and not held by a live claim, the longest waiting first."""
    at = _at()
    rows = store.query(
        "SELECT conversation_id FROM outbox WHERE status = 'pending' AND next_at <= ? AND"
        " (claimed_until IS NULL OR claimed_until < ?) GROUP BY conversation_id"
        f" ORDER BY MIN(id) LIMIT {int(limit)}",
        (at, at),
    )
    return [str(row[0]) for row in rows]


def claim(
    store: OrderStore, conversation_id: str, owner: str, seconds: float, *, most: int = 5
) -> list[Delivery]:
    """The conversation's first `most` pending rows, in order, held by `owner` for `seconds`
    (few enough to be sent within it, each send being bounded); [] when another process holds
    any of them or the first still waits for its retry."""
    at = _at()

    def work() -> bool:
        rows = store.query(
            "SELECT id, next_at, claimed_by, claimed_until FROM outbox WHERE conversation_id = ?"
            f" AND status = 'pending' ORDER BY id{store.FOR_UPDATE}",
            (conversation_id,),
        )
        held = any(by not in (None, owner) and str(until) >= at for _, _, by, until in rows)
        if not rows or held or str(rows[0][1]) > at:
            return False
        for row in rows[:most]:
            store.execute(
                "UPDATE outbox SET claimed_by = ?, claimed_until = ? WHERE id = ?",
                (owner, _at(seconds), row[0]),
            )
        return True

    return _claimed(store, conversation_id, owner) if store.atomically(work) else []


def _claimed(store: OrderStore, conversation_id: str, owner: str) -> list[Delivery]:
    rows = store.query(
        "SELECT o.id, o.conversation_id, c.channel, c.external_id, c.address, o.kind, o.key,"
        " m.text, m.role, o.attempts FROM outbox o JOIN conversations c ON c.id ="
        " o.conversation_id LEFT JOIN conversation_messages m ON m.id = o.message_id"
        " WHERE o.conversation_id = ? AND o.status = 'pending' AND o.claimed_by = ?"
        " ORDER BY o.id",
        (conversation_id, owner),
    )
    return [
        Delivery(
            id=int(row[0]),
            conversation_id=str(row[1]),
            channel=str(row[2]),
            external_id=row[3],
            address=_address(row[4]),
            kind=row[5],
            key=str(row[6]),
            text=row[7],
            role=row[8],
            attempts=int(row[9]),
        )
        for row in rows
    ]


def _address(text: object) -> dict[str, Any]:
    try:
        found = json.loads(str(text)) if text else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def sent(store: OrderStore, delivery: int, owner: str) -> None:
    """The channel took the row: it is never sent again."""
    store.atomically(
        lambda: store.execute(
            "UPDATE outbox SET status = 'sent', sent_at = ?, claimed_by = NULL, claimed_until ="
            " NULL WHERE id = ? AND claimed_by = ?",
            (_at(), delivery, owner),
        )
    )


def failed(
    store: OrderStore, delivery: int, owner: str, error: str, *, retry_in: float | None
) -> None:
    """The channel did not take the row: tried again in `retry_in` seconds, or (None) given up
    (status `failed`, shown by `agent conversations show`)."""
    status = "pending" if retry_in is not None else "failed"
    store.atomically(
        lambda: store.execute(
            "UPDATE outbox SET status = ?, attempts = attempts + 1, next_at = ?, last_error = ?,"
            " claimed_by = NULL, claimed_until = NULL WHERE id = ? AND claimed_by = ?",
            (status, _at(retry_in or 0.0), error[:500], delivery, owner),
        )
    )


def let_go(store: OrderStore, conversation_id: str, owner: str) -> None:
    """The rows `owner` claimed and did not try (they wait behind a failed one): free again."""
    store.atomically(
        lambda: store.execute(
            "UPDATE outbox SET claimed_by = NULL, claimed_until = NULL WHERE conversation_id = ?"
            " AND status = 'pending' AND claimed_by = ?",
            (conversation_id, owner),
        )
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """A row as `agent conversations show` and the metrics tell it."""

    id: int
    message_id: int | None
    kind: str
    status: str
    attempts: int
    last_error: str | None
    sent_at: str | None


def of_conversation(store: OrderStore, conversation_id: str) -> list[Row]:
    rows = store.query(
        "SELECT id, message_id, kind, status, attempts, last_error, sent_at FROM outbox"
        " WHERE conversation_id = ? ORDER BY id",
        (conversation_id,),
    )
    return [
        Row(
            id=int(r[0]),
            message_id=None if r[1] is None else int(r[1]),
            kind=str(r[2]),
            status=str(r[3]),
            attempts=int(r[4]),
            last_error=r[5],
            sent_at=r[6],
        )
        for r in rows
    ]


def counts(store: OrderStore) -> dict[str, int]:
    """Rows by status (the metrics' outbox depth)."""
    return {
        str(s): int(n)
        for s, n in store.query("SELECT status, COUNT(*) FROM outbox GROUP BY status")
    }
