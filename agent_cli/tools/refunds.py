"""`issue_refund`: the one tool that moves money, so every rule is enforced here, in code.

Before anything is asked of a person the call must pass: the order exists and its status can be
refunded, the delivery is inside the window, the amount is within the cap and within what is
still refundable, the same refund was not issued already, and the per-run and per-session caps
are not used up. Only then does the tool return an `ApprovalNeeded` naming the exact order,
amount and reason; the loop asks the operator, and only an approval of that exact call commits
it. The commit checks again inside the store's transaction and records the refund once
(idempotency key), or, in a dry run, says what it would have done and writes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from agent_cli.budget import RefundCounter
from agent_cli.seams import ApprovalNeeded, Observation
from agent_cli.store import ORDER_CODE_PATTERN, Order, OrderStore, RefundRefused
from agent_cli.tools import Denied, Tool, ToolArgs
from agent_cli.tools.orders import RefundPolicy


@dataclass(frozen=True, slots=True)
class RefundLimits:
    max_amount: int  # per refund, in the order's currency
    max_per_run: int  # refunds per run
    max_per_session: int  # refunds per process (`agent ask`) or chat session


class IssueRefundArgs(ToolArgs):
    order_code: Annotated[
        str,
        Field(pattern=ORDER_CODE_PATTERN, description="The order code, e.g. A100"),
        AfterValidator(str.upper),
    ]
    amount: int = Field(gt=0, le=10**12, description="Whole units of the order's currency")
    reason: str = Field(min_length=3, max_length=300, description="Why, in a short sentence")


@dataclass(frozen=True, slots=True)
class RefundDesk:
    """Everything issue_refund needs, fixed for a runtime."""

    open_store: Callable[[], OrderStore]
    policy: RefundPolicy
    limits: RefundLimits
    counter: RefundCounter
    today: date
    dry_run: bool

    def propose(self, args: IssueRefundArgs) -> ApprovalNeeded:
        store = self.open_store()
        order = store.get(args.order_code)
        if order is None:
            raise Denied(f"no order with code {args.order_code}")
        self._check(order, args, store)
        summary = (
            f"refund {args.amount:,} {order.currency} on order {order.code} "
            f"(reason: {args.reason.strip()!r})"
        )
        return ApprovalNeeded(summary, lambda: self._commit(order, args))

    def _check(self, order: Order, args: IssueRefundArgs, store: OrderStore) -> None:
        """Raise Denied naming the first rule the call breaks."""
        limits, currency = self.limits, order.currency
        if self.counter.run >= limits.max_per_run:
            raise Denied(f"the limit of {limits.max_per_run} refund(s) per run is reached")
        if self.counter.session >= limits.max_per_session:
            raise Denied(f"the limit of {limits.max_per_session} refund(s) per session is reached")
        if args.amount > limits.max_amount:
            raise Denied(
                f"{args.amount:,} {currency} is above the cap of {limits.max_amount:,} per "
                "refund; a larger refund needs a supervisor, outside this tool"
            )
        if order.status not in self.policy.refundable_statuses:
            allowed = " or ".join(self.policy.refundable_statuses)
            raise Denied(f"order {order.code} is {order.status}; only {allowed} orders qualify")
        self._check_window(order)
        remaining = order.total - store.refunded_total(order.code)
        if remaining <= 0:
            raise Denied(f"order {order.code} is already refunded in full")
        if args.amount > remaining:
            raise Denied(f"only {remaining:,} {currency} of order {order.code} is still refundable")
        if (done := store.find_refund(refund_key(args))) is not None:
            raise Denied(f"this exact refund was already issued (refund #{done.id})")

    def _check_window(self, order: Order) -> None:
        if order.delivered_at is None:
            raise Denied(f"order {order.code} has no delivery date")
        days = (self.today - order.delivered_at).days
        window = self.policy.window_days
        if not 0 <= days <= window:
            raise Denied(
                f"order {order.code} was delivered {order.delivered_at.isoformat()}, "
                f"{days} days ago, outside the {window}-day window"
            )

    def _commit(self, order: Order, args: IssueRefundArgs) -> Observation:
        what = f"{args.amount:,} {order.currency} on order {order.code}"
        if self.dry_run:
            return Observation(f"DRY RUN: would refund {what}; nothing was written")
        try:
            recorded = self.open_store().record_refund(
                order.code, args.amount, args.reason.strip(), key=refund_key(args)
            )
        except RefundRefused as exc:
            return Observation(f"DENIED: {exc}", is_error=True)
        if not recorded.created:
            return Observation(f"ALREADY DONE: refund #{recorded.refund.id} of {what} exists")
        self.counter.add()
        return Observation(f"REFUNDED: refund #{recorded.refund.id} of {what} recorded")


def refund_key(args: IssueRefundArgs) -> str:
    """The same order, amount and reason make the same refund: it is recorded once."""
    reason = " ".join(args.reason.lower().split())
    digest = hashlib.sha256(reason.encode()).hexdigest()[:16]
    return f"{args.order_code}:{args.amount}:{digest}"


def refund_tool(desk: RefundDesk) -> Tool[Any]:
    return Tool(
        "issue_refund",
        "Refund part or all of one order. Needs a human operator's approval of the exact order, "
        "amount and reason. Refused in code when the order's status or delivery date is outside "
        "the refund policy, the amount is above the cap or above what is still refundable, or "
        "the same refund was issued already. amount is in whole units of the order's currency.",
        IssueRefundArgs,
        desk.propose,
    )
