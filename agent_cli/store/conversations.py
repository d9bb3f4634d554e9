"""Conversations kept in the store, so a customer's next message may reach any process: who the
conversation is with, where it stands, the desk's memory of it (`state`, JSON: who was
identified, what was proposed and consented) and every message in order.

A process answering a message holds the conversation's lease (conversation_leases.py); a second
message of the same conversation meanwhile finds it leased (`ConversationBusy`: send it again in
a moment), and `finish_turn` writes nothing for a turn whose lease was lost. A customer message
carries the caller's message id (`message_key`), unique in its conversation, and once answered
the turn's outcome (`reply`): the same id again is answered from the store and runs nothing."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, Required, TypedDict, Unpack

from agent_cli.errors import ConversationAmbiguous, ConversationBusy, ConversationNotFound
from agent_cli.store import outbox
from agent_cli.store.sqlite import OrderStore
from agent_cli.store.tables import CONVERSATION_STATUSES

ConversationStatus = Literal[
    "open", "awaiting_customer", "awaiting_approval", "handed_over", "closed"
]
Role = Literal["customer", "desk", "staff"]
ReplyKind = Literal["message", "answer", "question", "proposal", "notice"]
STATUSES: tuple[str, ...] = CONVERSATION_STATUSES
SHORTEST_PREFIX = 6  # an id's first characters that name it, typed by a person
COLUMNS = (
    "id, channel, status, customer_id, asserted_by, state, created_at, updated_at, closed_by,"
    " external_id, address, opened_by"
)
_MESSAGE_COLUMNS = "id, role, kind, text, at, run_id, message_key, reply"


@dataclass(frozen=True, slots=True, kw_only=True)
class Conversation:
    id: str
    channel: str
    status: ConversationStatus
    customer_id: str | None  # who it is with, once identified (or asserted by a trusted caller)
    asserted_by: str | None  # the trusted caller who said who the customer is; None: identified
    state: dict[str, Any]  # the desk's memory of it (tools/identity.py's CustomerSession.state)
    created_at: str
    updated_at: str
    closed_by: str | None = None
    external_id: str | None = None  # the channel's own id of it (a Chatwoot conversation, ...)
    address: dict[str, Any] | None = None  # where the channel reaches the customer; None: the
    # caller reads the replies from its own request (the API), so nothing goes to the outbox
    opened_by: str | None = None  # the API token that opened it (`token:NAME`); None: not the API

    @property
    def proposal(self) -> dict[str, str] | None:
        """The change waiting for the customer's yes (id, summary), as its memory holds it."""
        consent = self.state.get("consent")
        pending = consent.get("pending") if isinstance(consent, dict) else None
        if not isinstance(pending, dict):
            return None
        return {"id": str(pending.get("id", "")), "summary": str(pending.get("summary", ""))}


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    id: int
    role: Role
    kind: ReplyKind
    text: str
    at: str
    run_id: str | None = None
    message_key: str | None = None  # the caller's id of a customer message
    reply: str | None = None  # a customer message's turn, once answered (JSON)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def from_row(row: Any) -> Conversation:
    state = _state(row[5])
    return Conversation(
        id=str(row[0]),
        channel=str(row[1]),
        status=row[2],
        customer_id=row[3],
        asserted_by=row[4],
        state=state if isinstance(state, dict) else {},
        created_at=str(row[6]),
        updated_at=str(row[7]),
        closed_by=row[8],
        external_id=row[9],
        address=address_of(row[10]),
        opened_by=row[11],
    )


def address_of(text: object) -> dict[str, Any] | None:
    found = _state(text) if text is not None else None
    return found if isinstance(found, dict) else None


def _state(text: object) -> Any:
    """The desk's memory as stored; {} for a row that is not JSON (a damaged memory loses what
    it held, a customer's yes above all; it never makes one)."""
    try:
        return json.loads(str(text)) if text else {}
    except ValueError:
        return {}


def _message(row: Any) -> Message:
    return Message(
        id=int(row[0]),
        role=row[1],
        kind=row[2],
        text=str(row[3]),
        at=str(row[4]),
        run_id=row[5],
        message_key=row[6],
        reply=row[7],
    )


class Opening(TypedDict, total=False):
    """What a new conversation opens with: its channel (always); the customer a caller vouched
    for and who vouched; the channel's own id of it and where the channel reaches the
    customer; the API token that opened it."""

    channel: Required[str]
    customer_id: str | None
    asserted_by: str | None
    external_id: str | None
    address: dict[str, Any] | None
    opened_by: str | None


def create(
    store: OrderStore, *, conversation_id: str | None = None, **opening: Unpack[Opening]
) -> Conversation:
    """A new open conversation with an unguessable id (128 random bits, or `conversation_id`,
    one `new_id` made)."""
    made = conversation_id or new_id()
    store.atomically(lambda: insert_row(store, made, opening))
    return found(store, made)


def new_id() -> str:
    """A conversation's id: 128 random bits, in hex."""
    return secrets.token_hex(16)


def insert_row(store: OrderStore, conversation_id: str, opening: Opening) -> None:
    at = now()
    address = opening.get("address")
    store.execute(
        f"INSERT INTO conversations ({COLUMNS}) VALUES (?, ?, 'open', ?, ?, '{{}}', ?, ?, NULL,"
        " ?, ?, ?)",
        (
            conversation_id,
            opening["channel"],
            opening.get("customer_id"),
            opening.get("asserted_by"),
            at,
            at,
            opening.get("external_id"),
            None if address is None else json.dumps(address, ensure_ascii=False),
            opening.get("opened_by"),
        ),
    )


def get(store: OrderStore, conversation_id: str) -> Conversation | None:
    rows = store.query(f"SELECT {COLUMNS} FROM conversations WHERE id = ?", (conversation_id,))
    return from_row(rows[0]) if rows else None


def found(store: OrderStore, given: str) -> Conversation:
    """The conversation `given` names: its id, or (for a person typing) its first characters
    when they name one only. ConversationNotFound otherwise, saying what to do."""
    wanted = given.strip().lower()
    if (exact := get(store, wanted)) is not None:
        return exact
    if len(wanted) >= SHORTEST_PREFIX and wanted.isalnum():
        rows = store.query(
            f"SELECT {COLUMNS} FROM conversations WHERE id LIKE ? ORDER BY id LIMIT 2",
            (wanted + "%",),
        )
        if len(rows) == 1:
            return from_row(rows[0])
        if rows:
            raise ConversationAmbiguous(
                f"{given!r} starts more than one conversation's id; give more of it"
            )
    raise ConversationNotFound(
        f"No conversation {given!r}; see 'agent conversations list --status all'"
    )


def listed(
    store: OrderStore, *, status: str | None = None, limit: int | None = None
) -> list[Conversation]:
    """Conversations, the most recently active first: of one status, "live" (all but the
    closed), or all (None)."""
    params: tuple[object, ...] = ()
    if status == "live":
        clause = " WHERE status <> 'closed'"
    elif status:
        clause, params = " WHERE status = ?", (status,)
    else:
        clause = ""
    bound = f" LIMIT {int(limit)}" if limit is not None else ""
    rows = store.query(
        f"SELECT {COLUMNS} FROM conversations{clause} ORDER BY updated_at DESC, id{bound}",
        params,
    )
    return [from_row(row) for row in rows]


def newest(store: OrderStore, *, channel: str, opened_by: str) -> Conversation | None:
    """The most recently active conversation of the channel that `opened_by` opened and is not
    closed (of two active in the same second, the one with the latest message)."""
    latest = (
        "COALESCE((SELECT MAX(m.id) FROM conversation_messages m WHERE m.conversation_id = c.id),"
        " 0)"
    )
    rows = store.query(
        f"SELECT {COLUMNS} FROM conversations c WHERE channel = ? AND opened_by = ?"
        f" AND status <> 'closed' ORDER BY updated_at DESC, {latest} DESC LIMIT 1",
        (channel, opened_by),
    )
    return from_row(rows[0]) if rows else None


def messages(store: OrderStore, conversation_id: str) -> list[Message]:
    """Every message of the conversation, in the order they came."""
    rows = store.query(
        f"SELECT {_MESSAGE_COLUMNS} FROM conversation_messages WHERE conversation_id = ?"
        " ORDER BY id",
        (conversation_id,),
    )
    return [_message(row) for row in rows]


def messages_after(store: OrderStore, conversation_id: str, after: int | None) -> list[Message]:
    """The conversation's messages written after the one numbered `after`, in order; None: its
    latest message alone (where a reader starts from)."""
    if after is None:
        rows = store.query(
            f"SELECT {_MESSAGE_COLUMNS} FROM conversation_messages WHERE conversation_id = ?"
            " ORDER BY id DESC LIMIT 1",
            (conversation_id,),
        )
    else:
        rows = store.query(
            f"SELECT {_MESSAGE_COLUMNS} FROM conversation_messages WHERE conversation_id = ?"
            " AND id > ? ORDER BY id",
            (conversation_id, after),
        )
    return [_message(row) for row in rows]


def by_key(store: OrderStore, conversation_id: str, key: str) -> Message | None:
    """The customer message the caller sent with this id, if it was received."""
    rows = store.query(
        f"SELECT {_MESSAGE_COLUMNS} FROM conversation_messages"
        " WHERE conversation_id = ? AND message_key = ?",
        (conversation_id, key),
    )
    return _message(rows[0]) if rows else None


def of_run(store: OrderStore, run_id: str) -> Conversation | None:
    """The conversation one of whose turns was the run `run_id`, if any."""
    rows = store.query(
        "SELECT conversation_id FROM conversation_messages WHERE run_id = ? LIMIT 1", (run_id,)
    )
    return get(store, str(rows[0][0])) if rows else None


def set_status(store: OrderStore, conversation_id: str, status: ConversationStatus) -> None:
    """Where the conversation stands, as something outside a turn changed it (a closed one
    stays closed)."""
    store.atomically(lambda: status_written(store, conversation_id, status))


def status_written(store: OrderStore, conversation_id: str, status: ConversationStatus) -> None:
    """`set_status`'s statement, inside the caller's own transaction."""
    store.execute(
        "UPDATE conversations SET status = ?, updated_at = ? WHERE id = ? AND status <> 'closed'",
        (status, now(), conversation_id),
    )


def hand_over(store: OrderStore, conversation_id: str) -> bool:
    """A person holds the conversation from now (a ticket of it claimed): `handed_over`, and its
    channel told (an outbox row), unless it was so already or is closed; whether it changed."""

    def work() -> bool:
        rows = store.query(
            f"SELECT status FROM conversations WHERE id = ?{store.FOR_UPDATE}", (conversation_id,)
        )
        if not rows or rows[0][0] in ("handed_over", "closed"):
            return False
        store.execute(
            "UPDATE conversations SET status = 'handed_over', updated_at = ? WHERE id = ?",
            (now(), conversation_id),
        )
        outbox.owe(store, conversation_id, "handover", None)
        return True

    return store.atomically(work)


def awaits_approval(store: OrderStore, conversation_id: str) -> bool:
    """Whether a change one of its turns queued still waits for a person's decision."""
    rows = store.query(
        "SELECT 1 FROM approvals WHERE status = 'pending' AND run_id IN (SELECT run_id FROM"
        " conversation_messages WHERE conversation_id = ? AND run_id IS NOT NULL) LIMIT 1",
        (conversation_id,),
    )
    return bool(rows)


def add_message(
    store: OrderStore,
    conversation_id: str,
    role: Role,
    kind: ReplyKind,
    text: str,
    *,
    key: str | None = None,
) -> Message:
    """A message received (written before anything answers it: nothing said is lost)."""
    at = now()

    def work() -> int:
        store.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (at, conversation_id))
        number = store.insert(
            "INSERT INTO conversation_messages (conversation_id, role, kind, text, at,"
            " message_key) VALUES (?, ?, ?, ?, ?, ?)",
            (conversation_id, role, kind, text, at, key),
        )
        if role != "customer":  # the customer's channel is owed what the desk or a person says
            outbox.owe(store, conversation_id, "message", number)
        return number

    number = store.atomically(work)
    return Message(id=number, role=role, kind=kind, text=text, at=at, message_key=key)


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnRecord:
    """What one turn leaves in the store: the desk's replies, where the conversation stands
    and its memory, and the outcome kept on the customer's message for a retry to read."""

    answered: int  # the customer message's id
    replies: tuple[tuple[ReplyKind, str], ...]
    run_id: str | None  # None: nothing ran (a person holds the conversation)
    status: ConversationStatus
    customer_id: str | None
    state: dict[str, Any]
    outcome: str  # JSON


def finish_turn(store: OrderStore, conversation_id: str, owner: str, turn: TurnRecord) -> None:
    """One transaction: the desk's replies, the outcome on the customer's message, the
    conversation's status and memory, and the lease given back; nothing at all when the lease
    is not `owner`'s any more (ConversationBusy)."""
    at = now()

    def work() -> None:
        holder = store.query(
            f"SELECT lease_owner FROM conversations WHERE id = ?{store.FOR_UPDATE}",
            (conversation_id,),
        )
        if not holder or holder[0][0] != owner:  # expired, and another process answers now
            raise ConversationBusy(
                f"conversation {conversation_id[:8]}'s turn lost its lease (the process stalled "
                "past it): nothing of it was written; send the message again"
            )
        for kind, text in turn.replies:
            number = store.insert(
                "INSERT INTO conversation_messages (conversation_id, role, kind, text, at,"
                " run_id) VALUES (?, 'desk', ?, ?, ?, ?)",
                (conversation_id, kind, text, at, turn.run_id),
            )
            outbox.owe(store, conversation_id, "message", number)
        if turn.status == "handed_over" and turn.run_id is not None:  # this turn handed over
            outbox.owe(store, conversation_id, "handover", None)
        store.execute(
            "UPDATE conversation_messages SET reply = ?, run_id = ? WHERE id = ?",
            (turn.outcome, turn.run_id, turn.answered),
        )
        store.execute(
            "UPDATE conversations SET status = CASE WHEN status = 'closed' THEN status ELSE ?"
            " END, customer_id = ?, state = ?, updated_at = ?, lease_owner = NULL,"
            " lease_until = NULL WHERE id = ? AND lease_owner = ?",
            (turn.status, turn.customer_id, json.dumps(turn.state), at, conversation_id, owner),
        )

    store.atomically(work)


def close(store: OrderStore, conversation_id: str, *, by: str) -> tuple[Conversation, bool]:
    """The conversation closed by `by` (no more messages are answered in it); and whether it
    was open before (False: it was closed already, nothing changed)."""
    held = found(store, conversation_id)

    def work() -> bool:
        rows = store.query(
            f"SELECT status FROM conversations WHERE id = ?{store.FOR_UPDATE}", (held.id,)
        )
        if rows[0][0] == "closed":
            return False
        store.execute(
            "UPDATE conversations SET status = 'closed', closed_by = ?, updated_at = ?,"
            " external_id = NULL WHERE id = ?",
            (by, now(), held.id),
        )
        return True

    changed = store.atomically(work)
    return found(store, held.id), changed
