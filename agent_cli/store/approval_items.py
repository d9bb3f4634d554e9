"""The approval queue's items as read from the store: every field of a row checked, as any
record read from outside is.

The queue is shared: a hand-edited row, a store copied from elsewhere or a bug may leave an
`expires_at` that is no timestamp, a `judged` that is no JSON, an amount of 0 or an amount that
is not the one its own refund key names. Such a row becomes `Unreadable` (its id and what is
wrong), so one bad row never takes the queue down, and nothing acts on it.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from datetime import date, datetime
from typing import Any, TypeGuard

from agent_cli.domain.currencies import major_number
from agent_cli.domain.orders import ORDER_CODE_PATTERN, ORDER_ID_PATTERN, STATUSES, refund_key
from agent_cli.domain.write_tools import DESK_WRITES

ITEM_STATUSES = ("pending", "approved", "denied", "expired", "failed")
MAX_ID = 2**63 - 1  # an id the store can hold: SQLite's INTEGER, PostgreSQL's BIGINT
ITEM_COLUMNS = (  # an `Approval`'s fields, in order
    "id, kind, order_code, amount, summary, key, judged, run_id, question, proposed_by, "
    "created_at, expires_at, status, decided_by, decided_at, outcome, refund_id"
)
_CODE = re.compile(ORDER_CODE_PATTERN)
_ORDER_ID = re.compile(ORDER_ID_PATTERN)  # a desk write's order: τ²'s `#W2611340` too


@dataclass(frozen=True, slots=True)
class Approval:
    """One item of the queue. `status` is as stored; `state` also says `expired`."""

    id: int
    kind: str  # the tool: issue_refund, or one of the desk's writes (domain/writes/)
    order_code: str  # a write to a customer's own record (their address) has none: ""
    amount: int
    summary: str  # a refund's reason; a write's change in words
    key: str  # a refund's idempotency key; a write's proposal (its tool and arguments)
    judged: str  # JSON: the order as it was judged (a write: its records' version, its call)
    run_id: str
    question: str
    proposed_by: str
    created_at: str  # ISO 8601, UTC
    expires_at: str
    status: str  # pending | approved | denied | expired | failed
    decided_by: str | None = None
    decided_at: str | None = None
    outcome: str | None = None  # what the decision did, in words
    refund_id: int | None = None

    def state(self, now: datetime) -> str:
        if self.status == "pending" and now >= datetime.fromisoformat(self.expires_at):
            return "expired"
        return self.status

    @property
    def currency(self) -> str:
        """The order's currency as it was judged."""
        return str(json.loads(self.judged)["currency"])

    @property
    def is_write(self) -> bool:
        return self.kind != "issue_refund"

    @property
    def write(self) -> dict[str, Any]:
        """A write's call as it was proposed: `customer_id`, `args`, `version`."""
        fields: dict[str, Any] = json.loads(self.judged)
        return fields


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A row of the queue that cannot be read: shown with what is wrong, never acted on."""

    id: int
    problem: str

    def state(self, now: datetime) -> str:
        return "unreadable"


Item = Approval | Unreadable


class _Bad(ValueError):
    """One field of a row is not what the queue holds."""


def read_item(row: tuple[Any, ...]) -> Item:
    """A stored row (the columns of `Approval`, in order) as an item, or what is wrong with it."""
    item_id = row[0]
    if not _is_int(item_id):
        return Unreadable(0, f"id {_shown(item_id)} is not a number")
    try:
        if row[1] in DESK_WRITES:
            return _checked_write(Approval(row[0], row[1], row[2] or "", *row[3:]))
        return _checked(Approval(*row))
    except _Bad as exc:
        return Unreadable(item_id, str(exc))


def _checked(item: Approval) -> Approval:
    for name in ("kind", "summary", "key", "judged", "run_id", "question", "proposed_by"):
        _text(item, name)
    if item.kind != "issue_refund":
        raise _Bad(f"kind {_shown(item.kind)} is not issue_refund")
    if not isinstance(item.order_code, str) or not _CODE.match(item.order_code):
        raise _Bad(f"order_code {_shown(item.order_code)} is not an order code")
    if not _is_int(item.amount) or not 0 < item.amount <= MAX_ID:
        raise _Bad(f"amount {_shown(item.amount)} is not a positive whole amount")
    if item.key != refund_key(item.order_code, item.amount, item.summary):
        raise _Bad(
            f"key {_shown(item.key)} names another refund than "
            f"{item.amount:,} on {item.order_code} for its reason"
        )
    _judged(item.judged)
    for name in ("created_at", "expires_at"):
        _timestamp(name, getattr(item, name))
    if item.status not in ITEM_STATUSES:
        raise _Bad(f"status {_shown(item.status)} is not one of {', '.join(ITEM_STATUSES)}")
    _decision(item)
    return item


def _checked_write(item: Approval) -> Approval:
    """A desk write's item: its call, the version of the records it was judged on."""
    for name in ("summary", "key", "judged", "run_id", "question", "proposed_by"):
        _text(item, name)
    if item.order_code and not _ORDER_ID.match(item.order_code):
        raise _Bad(f"order_code {_shown(item.order_code)} is not an order id")
    if not _is_int(item.amount) or not 0 <= item.amount <= MAX_ID:
        raise _Bad(f"amount {_shown(item.amount)} is not a whole amount")
    try:
        fields = json.loads(item.judged)
    except (ValueError, RecursionError):
        raise _Bad("judged is not JSON") from None
    if not isinstance(fields, dict) or not isinstance(fields.get("args"), dict):
        raise _Bad("judged holds no call's arguments")
    for name in ("customer_id", "version", "currency"):
        if not isinstance(fields.get(name), str):
            raise _Bad(f"judged.{name} {_shown(fields.get(name))} is not text")
    for name in ("created_at", "expires_at"):
        _timestamp(name, getattr(item, name))
    if item.status not in ITEM_STATUSES:
        raise _Bad(f"status {_shown(item.status)} is not one of {', '.join(ITEM_STATUSES)}")
    _decision(item)
    return item


def _decision(item: Approval) -> None:
    for name in ("decided_by", "outcome"):
        if getattr(item, name) is not None:
            _text(item, name)
    if item.decided_at is not None:
        _timestamp("decided_at", item.decided_at)
    if item.refund_id is not None and not (_is_int(item.refund_id) and item.refund_id > 0):
        raise _Bad(f"refund_id {_shown(item.refund_id)} is not a refund's id")


def _judged(judged: str) -> None:
    try:
        fields = json.loads(judged)
    except (ValueError, RecursionError):
        raise _Bad("judged is not JSON") from None
    if not isinstance(fields, dict):
        raise _Bad("judged is not a JSON object")
    if fields.get("status") not in STATUSES:
        raise _Bad(f"judged.status {_shown(fields.get('status'))} is not an order status")
    total, currency = fields.get("total"), fields.get("currency")
    if not _is_int(total) or total < 0:
        raise _Bad(f"judged.total {_shown(total)} is not a whole amount")
    if not isinstance(currency, str) or not re.fullmatch(r"[A-Z]{3}", currency):
        raise _Bad(f"judged.currency {_shown(currency)} is not a currency code")
    delivered = fields.get("delivered_at")
    if delivered is not None:
        try:
            date.fromisoformat(delivered)
        except (TypeError, ValueError):
            raise _Bad(f"judged.delivered_at {_shown(delivered)} is not a date") from None


def _timestamp(name: str, value: object) -> None:
    try:
        parsed = datetime.fromisoformat(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise _Bad(f"{name} {_shown(value)} is not a timestamp") from None
    if parsed.tzinfo is None:
        raise _Bad(f"{name} {_shown(value)} has no time zone")


def _text(item: Approval, name: str) -> None:
    if not isinstance(getattr(item, name), str):
        raise _Bad(f"{name} {_shown(getattr(item, name))} is not text")


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value: object) -> str:
    """A stored value as a message may quote it: short, one line."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


# The JSON an item is shown as (`approvals --json`, the API) keeps the names it had before the
# columns were named for any item: a reader of it does not break.
_JSON_NAMES = {"kind": "tool", "summary": "reason", "key": "refund_key"}


def item_json(item: Item, now: datetime) -> dict[str, object]:
    """An item as JSON: `state` (the stored status, or expired, or unreadable), the judged
    order as an object, the amount with its currency."""
    if isinstance(item, Unreadable):
        return {"id": item.id, "state": "unreadable", "problem": item.problem}
    fields = {_JSON_NAMES.get(name, name): value for name, value in asdict(item).items()}
    del fields["status"]  # `state` says it, and says expired too
    moves_none = item.is_write and item.amount == 0  # an address: no money, no currency
    return {
        **fields,
        "order_code": item.order_code or None,
        "amount": None if moves_none else major_number(item.amount, item.currency),
        "state": item.state(now),
        "currency": None if moves_none else item.currency,
        "judged": json.loads(item.judged),
    }
