"""The approval queue: refunds that wait for a person who is not at the run's terminal.

A run with nobody to approve a refund (a pipe, `--json`, CI, a cron job, a bot) records it here
as pending, with the exact arguments, the order as it was judged, the run and its question, who
proposed it and when it expires; the run goes on and ends `pending_approval`. Later, anyone with
access to the order store decides: `agent approvals approve ID` commits the refund in the same
transaction that closes the item, after every rule is checked again on the order as it is then
(a changed order, an expired item or a refund made meanwhile means no refund, and says why);
`deny` closes it. An item is decided once: a second approval, from this process or another at
the same moment, finds it closed and makes no refund.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from agent_cli.dates import system_today
from agent_cli.domain.currencies import money
from agent_cli.domain.orders import Order, RefundRefused, refund_key
from agent_cli.domain.writes import Plan, Refused, ReturnWindow
from agent_cli.store.approval_items import (
    ITEM_COLUMNS,
    MAX_ID,
    Approval,
    Item,
    Unreadable,
    read_item,
)
from agent_cli.store.sqlite import OrderStore
from agent_cli.store.write_commits import Agreed, Target, commit_locked


@dataclass(frozen=True, slots=True, kw_only=True)
class RefundProposal:
    """What a run queues: one refund exactly as it was proposed and judged."""

    order: Order
    amount: int
    reason: str
    run_id: str
    question: str
    proposed_by: str
    expires_in: timedelta

    @property
    def key(self) -> str:
        """The refund it proposes, as the refunds table keys it: never given, so never another."""
        return refund_key(self.order.code, self.amount, self.reason)


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteProposal:
    """What a run queues for a desk write: the call, the change in words, the version of the
    records it was planned on (the commit refuses when they changed meanwhile)."""

    plan: Plan
    args: dict[str, object]
    target: Target
    run_id: str
    question: str
    proposed_by: str
    expires_in: timedelta
    window_days: int | None = None  # returns' and exchanges' window, judged again at approval

    @property
    def key(self) -> str:
        """The proposal, as the queue keys it: one waiting item for the same call."""
        call = json.dumps({"tool": self.plan.tool, "args": self.args}, sort_keys=True)
        return f"{self.plan.tool}:{hashlib.sha256(call.encode()).hexdigest()[:16]}"

    @property
    def judged(self) -> str:
        fields: dict[str, object] = {
            "customer_id": self.target.customer_id,
            "args": self.args,
            "version": self.plan.version,
            "currency": self.plan.currency or "-",
        }
        if self.window_days is not None:
            fields["window_days"] = self.window_days
        return json.dumps(fields, sort_keys=True, ensure_ascii=False)


# Checks a queued refund again inside the deciding transaction, on the order as it is then and
# what is refunded of it already; raises RefundRefused naming the rule it breaks.
Recheck = Callable[[Approval, Order, int], None]


def now_utc() -> datetime:
    return datetime.now(UTC)


def judged_json(order: Order) -> str:
    delivered = order.delivered_at.isoformat() if order.delivered_at else None
    fields = {"status": order.status, "total": order.total, "currency": order.currency}
    return json.dumps({**fields, "delivered_at": delivered}, sort_keys=True)


def queue(store: OrderStore, proposal: RefundProposal | WriteProposal) -> Approval:
    """Record the proposal as pending (unless the same one waits already); the item."""
    created = now_utc()
    if isinstance(proposal, WriteProposal):
        columns: tuple[object, ...] = (
            proposal.plan.tool,
            proposal.target.order_code,
            proposal.plan.amount,
            proposal.plan.summary,
            proposal.key,
            proposal.judged,
        )
    else:
        columns = (
            "issue_refund",
            proposal.order.code,
            proposal.amount,
            proposal.reason,
            proposal.key,
            judged_json(proposal.order),
        )
    values = (
        *columns,
        proposal.run_id,
        proposal.question,
        proposal.proposed_by,
        created.isoformat(timespec="seconds"),
        (created + proposal.expires_in).isoformat(timespec="seconds"),
    )
    key = str(columns[4])

    def pending_or_new() -> Approval | int:
        waiting = store.query(
            f"SELECT {ITEM_COLUMNS} FROM approvals WHERE key = ? AND status = 'pending'",
            (key,),
        )
        now = now_utc()
        still = [
            i
            for i in map(read_item, waiting)
            if isinstance(i, Approval) and i.state(now) == "pending"
        ]
        if still:  # the same refund, queued by an earlier run and still waiting: one is enough
            return still[0]
        return store.insert(
            "INSERT INTO approvals (kind, order_code, amount, summary, key, judged, run_id,"
            " question, proposed_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?,"
            " ?, ?)",
            values,
        )

    item = store.atomically(pending_or_new)
    if isinstance(item, Approval):
        return item
    found = get(store, item)
    assert isinstance(found, Approval)  # written just now, by us
    return found


def get(store: OrderStore, item: int, *, lock: bool = False) -> Item | None:
    """The item (or what is wrong with its row); None when there is none, whatever number is
    asked for. With `lock`, held until the caller's transaction ends (PostgreSQL)."""
    if not 0 < item <= MAX_ID:  # no row has such an id, and the store could not be asked
        return None
    held = store.FOR_UPDATE if lock else ""
    rows = store.query(f"SELECT {ITEM_COLUMNS} FROM approvals WHERE id = ?{held}", (item,))
    return read_item(rows[0]) if rows else None


def listed(store: OrderStore, *, order: str | None = None) -> list[Item]:
    """Items, oldest first: all, or those of one order; a row that cannot be read is listed as
    `Unreadable`, never dropped and never fatal."""
    clause, params = (" WHERE order_code = ?", (order,)) if order is not None else ("", ())
    rows = store.query(f"SELECT {ITEM_COLUMNS} FROM approvals{clause} ORDER BY id", params)
    return [read_item(row) for row in rows]


@dataclass(frozen=True, slots=True)
class Decided:
    item: Item  # as it is after this decision (or as it was: closed already, or unreadable)
    changed: bool  # False: the item was closed already, or unreadable, and nothing was done


def approve(store: OrderStore, item: int, *, by: str, recheck: Recheck) -> Decided | None:
    """Commit the queued refund and close the item, in one transaction; None: no such item."""
    return store.atomically(lambda: _approve(store, item, by=by, recheck=recheck))


def _approve(store: OrderStore, item: int, *, by: str, recheck: Recheck) -> Decided | None:
    found, closed = _decidable(store, item)
    if found is None:
        return closed
    if found.state(now_utc()) == "expired":
        outcome = f"expired at {found.expires_at}; no refund"
        return _close(store, found, "expired", by=by, outcome=outcome)
    if found.is_write:
        return _commit_write(store, found, by=by)
    try:
        recorded = store.record_refund_locked(
            found.order_code,
            found.amount,
            found.summary,
            key=found.key,
            check=lambda order, refunded: recheck(found, order, refunded),
        )
    except RefundRefused as exc:
        return _close(store, found, "failed", by=by, outcome=f"{exc}; no refund")
    if not recorded.created:
        outcome = f"refund #{recorded.refund.id} existed already; no new refund"
        return _close(store, found, "failed", by=by, outcome=outcome)
    outcome = f"refund #{recorded.refund.id} of {money(found.amount, found.currency)} recorded"
    return _close(store, found, "approved", by=by, outcome=outcome, refund_id=recorded.refund.id)


def _commit_write(store: OrderStore, found: Approval, *, by: str) -> Decided:
    """Inside the caller's transaction: a queued desk write, planned again on the records as
    they are now (refused when they changed since it was queued), and its item closed."""
    write = found.write
    target = Target(write["customer_id"], found.order_code or None)
    days = write.get("window_days")  # judged on the day of the approval
    window = ReturnWindow(days, system_today()) if isinstance(days, int) else None
    try:
        done = commit_locked(
            store,
            Agreed(tool=found.kind, version=write["version"], args=write["args"]),
            target,
            by=by,
            run_id=found.run_id,
            window=window,
        )
    except Refused as exc:
        return _close(store, found, "failed", by=by, outcome=f"{exc}")
    outcome = f"change #{done.change_id} made: {done.plan.summary}"
    return _close(store, found, "approved", by=by, outcome=outcome)


def deny(store: OrderStore, item: int, *, by: str, reason: str) -> Decided | None:
    """Close the item without a refund; None: no such item."""

    def close() -> Decided | None:
        found, closed = _decidable(store, item)
        if found is None:
            return closed
        return _close(store, found, "denied", by=by, outcome=f"denied: {reason}")

    return store.atomically(close)


def _decidable(store: OrderStore, item: int) -> tuple[Approval | None, Decided | None]:
    """Inside the caller's transaction: the item if it is pending; else what to answer (None:
    no such item; or the item as it was closed, unchanged)."""
    found = get(store, item, lock=True)
    if found is None:
        return None, None
    if isinstance(found, Unreadable) or found.status != "pending":
        return None, Decided(found, changed=False)
    return found, None


def _close(
    store: OrderStore,
    found: Approval,
    status: str,
    *,
    by: str,
    outcome: str,
    refund_id: int | None = None,
) -> Decided:
    """Inside the caller's transaction: the item's decision, once."""
    decided_at = now_utc().isoformat(timespec="seconds")
    store.execute(
        "UPDATE approvals SET status = ?, decided_by = ?, decided_at = ?, outcome = ?,"
        " refund_id = ? WHERE id = ? AND status = 'pending'",
        (status, by, decided_at, outcome, refund_id, found.id),
    )
    closed = dataclasses.replace(
        found,
        status=status,
        decided_by=by,
        decided_at=decided_at,
        outcome=outcome,
        refund_id=refund_id,
    )
    return Decided(closed, changed=True)
