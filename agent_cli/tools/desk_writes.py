"""The desk's seven write tools, τ²-bench retail's names and arguments, each a change that
happens only after three things, all in code (desk.md, rules 1-3):

1. **It is allowed**: the order and the payment method are the identified customer's, and every
   precondition holds (`domain/writes/`); else `ERROR:` naming the rule, nothing changed.
2. **The customer said yes**: in a conversation the first call changes nothing; it proposes the
   exact change in words. The customer's next message is read in code (`policy/consent.py`):
   an explicit yes lets the same call, made again, go on; anything else drops the proposal.
   An operator's own call (`agent tools call`) is staff: the operator is the one consenting.
3. **The shop approved**: the one approval path every write takes (`ApprovalNeeded`): a person
   at the terminal, else nobody (denied). The commit plans again in one transaction on the
   records as they are then and writes once (`store/write_commits.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from agent_cli.config.rules import RefundRule
from agent_cli.core.seams import ApprovalNeeded, ApprovalVerdict, Observation
from agent_cli.core.tool_outcomes import Changed, Denied, Proposed, Queued, Simulated
from agent_cli.dates import system_today
from agent_cli.domain.consent import call_key, shown_digest
from agent_cli.domain.intents import IDENTIFY
from agent_cli.domain.records import CANCEL_REASONS
from agent_cli.domain.writes import WRITE_STATUSES, Plan, Refused, ReturnWindow, Unchanged
from agent_cli.policy.refund_rules import RefundFacts, policy_verdict, rule_for
from agent_cli.store import approval_queue, record_reads
from agent_cli.store.approval_queue import WriteProposal
from agent_cli.store.sqlite import OrderStore
from agent_cli.store.write_commits import Target, commit, propose
from agent_cli.text import plain_value
from agent_cli.tools import NothingToChange, Tool, ToolArgs, ToolFailure
from agent_cli.tools.identity import CustomerSession

_ID = r"^[A-Za-z0-9_.-]{1,64}$"
_ORDER_ID = r"^#?[A-Za-z0-9]{1,16}$"
ItemIds = Annotated[list[Annotated[str, Field(pattern=_ID)]], Field(min_length=1, max_length=50)]
Text = Annotated[str, Field(max_length=200), AfterValidator(plain_value)]
Line = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(plain_value)]


class CancelArgs(ToolArgs):
    order_id: str = Field(pattern=_ORDER_ID, description="e.g. #W0000000")
    reason: str = Field(description=" or ".join(repr(r) for r in CANCEL_REASONS))


class AddressArgs(ToolArgs):
    address1: Line
    address2: Text
    city: Line
    state: Line
    country: Line
    zip: str = Field(min_length=1, max_length=16, pattern=r"^[A-Za-z0-9 -]+$")


class OrderAddressArgs(AddressArgs):
    order_id: str = Field(pattern=_ORDER_ID, description="e.g. #W0000000")


class UserAddressArgs(AddressArgs):
    user_id: str = Field(pattern=_ID, description="e.g. sara_doe_496")


class PaymentArgs(ToolArgs):
    order_id: str = Field(pattern=_ORDER_ID, description="e.g. #W0000000")
    payment_method_id: str = Field(pattern=_ID, description="e.g. gift_card_0000000")


class ItemsArgs(PaymentArgs):
    item_ids: ItemIds
    new_item_ids: ItemIds


class ReturnArgs(PaymentArgs):
    item_ids: ItemIds


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteDesk:
    """The write tools' bodies, over one store opener and one conversation."""

    open_store: Callable[[], OrderStore]
    session: CustomerSession
    dry_run: bool
    by: str = ""  # who approves at this terminal (recorded with each change)
    queue_for: timedelta | None = None  # how long a write nobody here approved waits; None: never
    rules: tuple[RefundRule, ...] = ()  # the shop's rules: those naming this write decide it
    clock: Callable[[], date] = system_today  # the day a return's window is judged on
    window_days: int | None = None  # returns and exchanges: days after delivery; None: any

    def window(self) -> ReturnWindow | None:
        days = self.window_days
        return None if days is None else ReturnWindow(days, self.clock())

    def target(self, args: ToolArgs) -> Target:
        """What the call is about, once this conversation may touch it: an order that does not
        exist and another customer's are refused alike (no one learns which orders exist)."""
        if isinstance(args, UserAddressArgs):
            self.session.check(args.user_id, f"user {args.user_id}")
            return Target(args.user_id)
        order_id: str = getattr(args, "order_id")  # noqa: B009 (every other call names one)
        store = self.open_store()
        found = record_reads.order_named(store, order_id)
        owner = found.customer_id if found else None
        self.session.check(owner, f"order {order_id}")
        if found is None or owner is None:
            raise ToolFailure(f"no order {order_id} with a customer; check the order id")
        self.session.order = found.code
        return Target(owner, found.code)

    def call(self, tool: str, args: ToolArgs) -> Observation | ApprovalNeeded:
        target = self.target(args)
        values = args.model_dump()
        try:
            planned = propose(self.open_store(), tool, values, target, self.window())
        except Unchanged as exc:
            raise NothingToChange(f"{exc}; nothing was changed") from None
        except Refused as exc:
            raise ToolFailure(f"{exc}; nothing was changed") from None
        if not self.session.staff:  # staff consent by running it
            key, shown = call_key(tool, values), _digest(planned)
            if (asked := self.session.consent.settle(key, shown, planned.summary)) is not None:
                proposal, again = asked  # no yes to this change, as the store holds it
                summary, order = planned.summary, target.order_code
                return Observation.of(Proposed(tool, summary, order, proposal.id, again=again))
        queue = None
        if self.queue_for is not None and not self.dry_run:
            queue = lambda run, question: self._queue(planned, values, target, run, question)  # noqa: E731
        return ApprovalNeeded(
            _for_approver(planned, self.clock()),
            lambda: self._commit(planned, values, target),
            queue,
            self._ruled(planned, target),
        )

    def _ruled(self, planned: Plan, target: Target) -> ApprovalVerdict | None:
        """What the shop's rules decide of this write (None: a person decides)."""
        facts = RefundFacts(
            amount=planned.amount,
            currency=planned.currency,
            status=planned.status,
            customer=target.customer_id,
            delivered_at=planned.delivered_at,
            reason="",
            today=self.clock(),
        )
        return policy_verdict(rule_for(list(self.rules), facts, planned.tool))

    def _queue(
        self, planned: Plan, values: dict[str, Any], target: Target, run_id: str, question: str
    ) -> Observation:
        """Into the approval queue: a person decides later (`agent approvals`)."""
        assert self.queue_for is not None
        proposal = WriteProposal(
            plan=planned,
            args=values,
            target=target,
            run_id=run_id,
            question=question,
            proposed_by=self.by,
            expires_in=self.queue_for,
            window_days=self.window_days,
        )
        item = approval_queue.queue(self.open_store(), proposal)
        return Observation.of(
            Queued(item.id, planned.tool, planned.summary, str(item.expires_at), target.order_code)
        )

    def _commit(self, planned: Plan, values: dict[str, Any], target: Target) -> Observation:
        if self.dry_run:
            return Observation.of(Simulated(planned.tool, planned.summary))
        try:
            done = commit(
                self.open_store(),
                planned,
                values,
                target,
                by=self.session.operator or self.by,
                run_id=self.session.run_id,
                window=self.window(),
            )
        except Refused as exc:
            return Observation.of(Denied(str(exc)))
        made = done.plan
        back = sum(p.amount for p in made.added if p.kind == "refund")
        return Observation.of(
            Changed(
                change_id=done.change_id,
                tool=made.tool,
                summary=made.summary,
                order=target.order_code,
                refund=back,
                currency=made.currency,
            )
        )


def _for_approver(planned: Plan, today: date) -> str:
    """The change as the approver reads it: with the order's age, once delivered."""
    if planned.delivered_at is None:
        return planned.summary
    age = (today - planned.delivered_at).days
    return f"{planned.summary} [order delivered {planned.delivered_at.isoformat()}, {age} days ago]"


def _digest(planned: Plan) -> str:
    """What the customer is shown, as the store held it: the change in words (the order, the
    items, the amounts, the payment method, the address) and the version of the records it
    was planned on. A yes is to this; a store that moved meanwhile needs a new one."""
    return shown_digest(planned.tool, planned.summary, planned.version)


_WHEN = (
    " Changes nothing on the first call: it returns the exact change to confirm with the "
    "customer; after their explicit yes, call it again with the same arguments."
)


def write_tools(desk: WriteDesk) -> list[Tool[Any]]:
    def tool(name: str, args: type[ToolArgs], what: str) -> Tool[Any]:
        after = IDENTIFY if args is UserAddressArgs else ("get_order_details",)  # its ids
        statuses = WRITE_STATUSES.get(name, ())
        call = lambda a: desk.call(name, a)  # noqa: E731
        return Tool(name, what + _WHEN, args, call, after, statuses, kind="write")

    return [
        tool(
            "cancel_pending_order",
            CancelArgs,
            "Cancel a whole pending order the customer no longer wants; what was paid is "
            "refunded (a gift card at once, other methods in 5-7 business days).",
        ),
        tool(
            "modify_pending_order_address",
            OrderAddressArgs,
            "Change where a pending order ships (not yet shipped).",
        ),
        tool(
            "modify_pending_order_payment",
            PaymentArgs,
            "Pay a pending order with another of the customer's payment methods.",
        ),
        tool(
            "modify_pending_order_items",
            ItemsArgs,
            "Before it ships, swap items of a pending order for other available variants of the "
            "same products (another size or colour), once per order; the difference is paid or "
            "refunded with payment_method_id.",
        ),
        tool(
            "modify_user_address",
            UserAddressArgs,
            "Change the customer's default address on their account (orders placed keep theirs).",
        ),
        tool(
            "return_delivered_order_items",
            ReturnArgs,
            "Request a return of items of a delivered order, refunded to the original payment "
            "method or a gift card once they arrive.",
        ),
        tool(
            "exchange_delivered_order_items",
            ItemsArgs,
            "Request an exchange of items of a delivered order for other available variants of "
            "the same products (another size or colour); the difference is paid or refunded "
            "with payment_method_id.",
        ),
    ]
