"""`issue_refund`: the one tool that moves money, so every rule is enforced here, in code.

Before anything is asked of a person the call must pass: the order exists and its status can be
refunded, the delivery is inside the window, the amount is within the cap and within what is
still refundable, the same refund was not issued already, and the per-run and per-session caps
are not used up. In a customer conversation the customer must then say yes to this exact
refund (the first call proposes it, `policy/consent.py` reads their answer; an operator's own
call is staff and consents by running it). Only then does the tool return an `ApprovalNeeded`
naming the exact order, amount and reason; the loop asks the operator, and only an approval of
that exact call commits it. The commit runs every rule again inside the store's transaction,
on the order as it is then (refusing if it changed since the prompt), and records the refund
once (idempotency key), or, in a dry run, says what it would have done and writes nothing.
The window is always judged on the system date.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any, assert_never

from pydantic import AfterValidator, Field

from agent_cli.config.rules import RefundRule
from agent_cli.core.budget import RefundCounter
from agent_cli.core.seams import ApprovalNeeded, Observation
from agent_cli.core.tool_outcomes import Denied as NotAllowed
from agent_cli.core.tool_outcomes import Proposed, Queued, Refunded, Simulated
from agent_cli.dates import system_today
from agent_cli.domain import ledger, orders
from agent_cli.domain.consent import call_key, shown_digest
from agent_cli.domain.currencies import money, to_minor
from agent_cli.domain.orders import ORDER_CODE_PATTERN, Order, RefundRefused
from agent_cli.domain.refunds import Eligibility, eligibility
from agent_cli.policy.refund_rules import RefundFacts, mixed_word, policy_verdict, rule_for
from agent_cli.store import approval_queue, record_reads
from agent_cli.store.approval_items import Approval
from agent_cli.store.approval_queue import Recheck, judged_json
from agent_cli.store.sqlite import OrderStore
from agent_cli.text import plain_note
from agent_cli.tools import Denied, Tool, ToolArgs
from agent_cli.tools.identity import CustomerSession
from agent_cli.tools.orders import RefundPolicy

# A refund's cap, in major units: one number for every currency, or one per currency (a
# currency left out has no refunds), as `refunds.max_amount` says it.
Cap = int | Mapping[str, float]


def cap_in(cap: Cap, currency: str) -> int | None:
    """The cap in `currency`'s minor units; None when the table names no such currency."""
    major = cap if isinstance(cap, int) else cap.get(currency)
    return None if major is None else to_minor(major, currency)


@dataclass(frozen=True, slots=True)
class RefundLimits:
    max_amount: Cap  # per refund, in major units of the order's currency
    max_per_run: int  # refunds per run
    max_per_session: int  # refunds per process (`agent ask`) or chat session


def _one_script_a_word(reason: str) -> str:
    if (word := mixed_word(reason)) is not None:
        raise ValueError(f"{word!r} mixes the letters of two alphabets; write the reason plainly")
    return reason


class IssueRefundArgs(ToolArgs):
    order_code: Annotated[
        str,
        Field(pattern=ORDER_CODE_PATTERN, description="The order code, e.g. A100"),
        AfterValidator(str.upper),
    ]
    amount: float = Field(
        gt=0,
        le=10**12,
        allow_inf_nan=False,
        description="In the order's currency as written: 5000 (JPY), 12.50 (USD)",
    )
    reason: Annotated[
        str,
        Field(min_length=3, max_length=300, description="Why, in a short sentence"),
        AfterValidator(plain_note),  # tabs and line breaks are spacing (refund_key folds them)
        AfterValidator(_one_script_a_word),
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class RefundDesk:
    """Everything issue_refund needs, fixed for a runtime. The window is judged on `clock()`,
    the system date: `--today` and a date in the question shape what the model is told, never
    whether money moves."""

    open_store: Callable[[], OrderStore]
    policy: RefundPolicy
    limits: RefundLimits
    counter: RefundCounter
    dry_run: bool
    clock: Callable[[], date] = system_today
    queue_for: timedelta | None = None  # how long a queued refund waits; None: never queued
    proposer: str = ""  # who proposes (recorded on a queued refund)
    rules: tuple[RefundRule, ...] = ()  # refund rules as policy ([[refunds.rules]])
    session: CustomerSession | None = None  # a conversation's customer; None or staff: anyone's

    def propose(self, args: IssueRefundArgs) -> ApprovalNeeded | Observation:
        store = self.open_store()
        order = store.get(args.order_code)
        self._theirs(store, order, args.order_code)
        if order is None:
            raise Denied(f"no order with code {args.order_code}")
        today = self.clock()
        amount = minor_amount(args, order)
        spent = ledger.spent(store, order.code)
        self._check(order, amount, today, spent)
        if (done := store.find_refund(refund_key(args, amount))) is not None:
            raise Denied(f"this exact refund was already issued (refund #{done.id})")
        if (asked := self._consented(args, order, amount, spent)) is not None:
            return asked
        delivered = order.delivered_at.isoformat() if order.delivered_at else "?"
        summary = (
            f"refund {money(amount, order.currency)} on order {order.code} "
            f"(reason: {args.reason.strip()!r}; delivered {delivered}, judged on {today})"
        )
        can_wait = self.queue_for is not None and not self.dry_run
        queue = (
            (lambda run, question: self._queue(order, amount, args, run, question))
            if can_wait
            else None
        )
        facts = refund_facts(
            store, order, amount=amount, reason=args.reason, today=today, rules=self.rules
        )
        decided = policy_verdict(rule_for(list(self.rules), facts))
        return ApprovalNeeded(summary, lambda: self._commit(order, amount, args), queue, decided)

    def _consented(
        self, args: IssueRefundArgs, order: Order, amount: int, spent: int
    ) -> Observation | None:
        """In a customer conversation, the customer's yes to exactly this refund, as the store
        holds the order now (None: it may go on to the shop's approval); else the refund is
        proposed to them and nothing moves (desk.md, rules 3 and 6)."""
        session = self.session
        if session is None or session.staff:
            return None
        what = f"refund {money(amount, order.currency)} on order {order.code}"
        if spent:
            what += f" ({money(spent, order.currency)} went back already)"
        key = call_key("issue_refund", args.model_dump())
        shown = shown_digest(*_shown(order), amount, spent)
        if (asked := session.consent.settle(key, shown, what)) is None:
            return None  # their yes, to exactly this refund as it stands
        proposal, again = asked
        return Observation.of(Proposed("issue_refund", what, order.code, proposal.id, again))

    def _theirs(self, store: OrderStore, order: Order | None, code: str) -> None:
        """In a customer conversation, money goes back only on the identified customer's own
        order (one that does not exist, or another's, is refused alike)."""
        session = self.session
        if session is None or session.staff:
            return
        customer = session.customer_id
        mine = (
            customer is not None
            and order is not None
            and order.code in record_reads.customer_orders(store, customer)
        )
        session.check(customer if mine else None, f"order {code}")

    def _queue(
        self, order: Order, amount: int, args: IssueRefundArgs, run_id: str, question: str
    ) -> Observation:
        """Into the approval queue: a person decides later (`agent approvals`)."""
        assert self.queue_for is not None
        proposal = approval_queue.RefundProposal(
            order=order,
            amount=amount,
            reason=args.reason.strip(),
            run_id=run_id,
            question=question,
            proposed_by=self.proposer,
            expires_in=self.queue_for,
        )
        item = approval_queue.queue(self.open_store(), proposal)
        what = f"{money(amount, order.currency)} on order {order.code}"
        return Observation.of(
            Queued(
                item.id, "issue_refund", f"the refund of {what}", str(item.expires_at), order.code
            )
        )

    def _check(self, order: Order, amount: int, today: date, refunded: int) -> None:
        """Raise Denied naming the first rule the call breaks."""
        limits = self.limits
        if self.counter.run >= limits.max_per_run:
            raise Denied(f"the limit of {limits.max_per_run} refund(s) per run is reached")
        if self.counter.session >= limits.max_per_session:
            raise Denied(f"the limit of {limits.max_per_session} refund(s) per session is reached")
        check_rules(
            order,
            amount,
            policy=self.policy,
            max_amount=limits.max_amount,
            today=today,
            refunded=refunded,
        )

    def _commit(self, proposed: Order, amount: int, args: IssueRefundArgs) -> Observation:
        what = f"{money(amount, proposed.currency)} on order {proposed.code}"
        if self.dry_run:
            return Observation.of(Simulated("issue_refund", f"refund {what}"))

        def still_allowed(order: Order, refunded: int) -> None:
            """Inside the store's transaction: the order as it is now, every rule again."""
            if changed := changes(proposed, order):
                raise RefundRefused(
                    f"order {order.code} changed since the approval prompt ({changed}); "
                    "nothing was refunded; ask again"
                )
            try:
                self._check(order, amount, self.clock(), refunded)
            except Denied as exc:
                raise RefundRefused(f"{exc}; nothing was refunded") from None

        try:
            recorded = self.open_store().record_refund(
                proposed.code,
                amount,
                args.reason.strip(),
                key=refund_key(args, amount),
                check=still_allowed,
            )
        except RefundRefused as exc:
            return Observation.of(NotAllowed(str(exc)))
        refunded = Refunded(
            refund_id=recorded.refund.id,
            order=proposed.code,
            amount=amount,
            currency=proposed.currency,
            what=what,
            earlier=not recorded.created,
        )
        if recorded.created:
            self.counter.add()
        return Observation.of(refunded)


def refund_facts(
    store: OrderStore,
    order: Order,
    *,
    amount: int,
    reason: str,
    today: date,
    rules: tuple[RefundRule, ...],
) -> RefundFacts:
    """What the refund rules look at: the customer's earlier refunds (or, for an order with no
    customer, the order's) counted for the periods the rules name, and summed over the last
    24 hours when a rule caps that sum."""
    counts: dict[int, int] = {}
    now = datetime.now(UTC)
    for days in {r.period_days for r in rules if r.max_refunds_before is not None}:
        counts[days] = store.refunds_since(order, now - timedelta(days=days))[0]
    capped = any(rule.max_auto_per_day is not None for rule in rules)
    last_day = store.refunds_since(order, now - timedelta(days=1))[1] if capped else 0
    return RefundFacts(
        amount=amount,
        currency=order.currency,
        status=order.status,
        customer=order.customer,
        delivered_at=order.delivered_at,
        reason=reason.strip(),
        today=today,
        customer_refunds=counts,
        refunded_last_day=last_day,
    )


def recheck_queued(policy: RefundPolicy, max_amount: Cap, clock: Callable[[], date]) -> Recheck:
    """The rules a queued refund must still pass when a person approves it, on the order as it
    is then: unchanged since it was judged, and every rule of a refund on the system date."""

    def recheck(item: Approval, order: Order, refunded: int) -> None:
        if judged_json(order) != item.judged:
            judged = Order(order.code, **_judged_fields(item.judged))
            raise RefundRefused(
                f"order {order.code} changed since it was queued ({changes(judged, order)})"
            )
        try:
            check_rules(
                order,
                item.amount,
                policy=policy,
                max_amount=max_amount,
                today=clock(),
                refunded=refunded,
            )
        except Denied as exc:
            raise RefundRefused(str(exc)) from None

    return recheck


def _judged_fields(judged: str) -> dict[str, Any]:
    fields: dict[str, Any] = json.loads(judged)
    delivered = fields.pop("delivered_at")
    fields["delivered_at"] = date.fromisoformat(delivered) if delivered else None
    return fields


def check_rules(
    order: Order,
    amount: int,
    *,
    policy: RefundPolicy,
    max_amount: Cap,
    today: date,
    refunded: int,
) -> None:
    """The rules of every refund, wherever it is decided (here, or from the approval queue):
    raise Denied naming the first one it breaks."""
    currency = order.currency
    if (cap := cap_in(max_amount, currency)) is None:
        named = ", ".join(sorted(max_amount)) if not isinstance(max_amount, int) else ""
        raise Denied(
            f"refunds in {currency} have no cap set (refunds.max_amount names {named}), so "
            "none is made here; a person can refund it"
        )
    if amount > cap:
        raise Denied(
            f"{money(amount, currency)} is above the cap of {money(cap, currency)} per "
            "refund; a larger refund needs a supervisor, outside this tool"
        )
    rule = eligibility(
        order.status,
        order.delivered_at,
        today,
        statuses=policy.refundable_statuses,
        window_days=policy.window_days,
        left=order.total - refunded,
    )
    if rule.kind != "refundable":
        raise Denied(_refused(order, rule, policy, today))
    remaining = order.total - refunded
    if amount > remaining:
        raise Denied(f"only {money(remaining, currency)} of order {order.code} is still refundable")


def _refused(order: Order, rule: Eligibility, policy: RefundPolicy, today: date) -> str:
    """Why the order may not be refunded, as the refused call says it."""
    match rule.kind:
        case "wrong_status":
            allowed = " or ".join(policy.refundable_statuses)
            return f"order {order.code} is {order.status}; only {allowed} orders qualify"
        case "refunded_in_full":
            return f"order {order.code} is already refunded in full"
        case "no_date":
            return f"order {order.code} has no delivery date"
        case "future" | "expired":
            delivered = order.delivered_at.isoformat() if order.delivered_at else "?"
            return (
                f"order {order.code} was delivered {delivered}, {rule.days} days before "
                f"{today}, outside the {policy.window_days}-day window"
            )
        case "refundable":
            raise ValueError(f"order {order.code} is refundable: nothing refused it")
        case _ as unreachable:
            assert_never(unreachable)


def _shown(order: Order) -> tuple[object, ...]:
    """What the customer is shown of a refund's order, as the store held it (with the amount
    and what went back): an order that moved meanwhile needs a new yes."""
    return (order.code, order.status, order.total, order.currency, str(order.delivered_at))


def changes(before: Order, now: Order) -> str:
    """What about an order matters to a refund and differs between two reads of it."""
    fields = ("status", "total", "currency", "delivered_at")
    return ", ".join(
        f"{name} {getattr(before, name)} -> {getattr(now, name)}"
        for name in fields
        if getattr(before, name) != getattr(now, name)
    )


def refund_key(args: IssueRefundArgs, amount: int) -> str:
    """The same order, amount (in minor units) and reason make the same refund: it is
    recorded once."""
    return orders.refund_key(args.order_code, amount, args.reason)


def minor_amount(args: IssueRefundArgs, order: Order) -> int:
    """The call's amount in the order's minor units; Denied when the currency has no such
    amount (12.345 USD)."""
    try:
        return to_minor(args.amount, order.currency)
    except ValueError as exc:
        raise Denied(f"{exc}; give the amount as {order.currency} is written") from None


def refund_tool(desk: RefundDesk) -> Tool[Any]:
    return Tool(
        "issue_refund",
        "Refund part or all of one order of the identified customer. Needs a human operator's "
        "approval of the exact order, "
        "amount and reason. Refused in code when the order's status or delivery date is outside "
        "the refund policy, the amount is above the cap or above what is still refundable, or "
        "the same refund was issued already. amount is in the order's currency: 5000, 12.50. "
        "In a conversation the first call changes nothing: it returns the refund to confirm "
        "with the customer; after their explicit yes, call it again with the same arguments.",
        IssueRefundArgs,
        desk.propose,
    )
