"""Who a conversation is with (desk.md, rule 1): found once, kept for the conversation, and
forgotten whole when a new customer starts (`/reset`, a new session).

A failed identification reads the same whether or not the email (or the name and zip) belongs
to somebody, also when it belongs to another customer than the one already identified: a
refusal must not tell a guesser which emails exist. And guessing is bounded: after
`MAX_FAILED_IDENTIFICATIONS` failures in one conversation the tools stop trying and say to hand
the customer over to a person.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_cli.domain.consent import Consent
from agent_cli.tools import NeedsPerson, ToolFailure

ASK_WHO = (
    "ask for the customer's email (or first name, last name and zip code) and call "
    "find_user_id_by_email or find_user_id_by_name_zip first"
)
MAX_FAILED_IDENTIFICATIONS = 5  # per conversation; then a person takes over (docs/desk-writes.md)
TOO_MANY = (
    f"{MAX_FAILED_IDENTIFICATIONS} attempts to identify the customer found no one in this "
    "conversation, and no more are made; hand the customer over to a person "
    "(transfer_to_human_agents)"
)


@dataclass(slots=True, kw_only=True)
class CustomerSession:
    """Who this conversation is with: a run (`ask`), a chat session or an eval case has one;
    found once, kept for the session. `staff`: an operator, bound by none of this."""

    customer_id: str | None = None
    staff: bool = False
    order: str | None = None  # the last order it read (a hand-over ticket names it)
    run_id: str = ""  # the run now going on, and its question (set by the runtime)
    question: str = ""
    operator: str = ""  # staff: who runs the tool by hand (`agent tools call --as`)
    consent: Consent = field(default_factory=Consent)  # the desk's writes proposed, and answered
    failed: int = 0  # identifications that found no one (or not this conversation's customer)
    channel: str | None = None  # the stored conversation this run answers in (set by its turn)

    def forget(self) -> None:
        """A new customer: nobody identified, no order read, nothing proposed or consented."""
        self.customer_id = None
        self.order = None
        self.failed = 0
        self.consent = Consent()

    def state(self) -> dict[str, Any]:
        """What a conversation kept in the store remembers of it between messages."""
        return {
            "customer_id": self.customer_id,
            "order": self.order,
            "failed": self.failed,
            "consent": self.consent.state(),
        }

    def restore(self, state: dict[str, Any], customer_id: str | None) -> None:
        """Take up a stored conversation: its customer (the column the store keeps), its last
        order read, its failed identifications and its consent. Mutated in place: the tools
        hold this very session."""
        failed = state.get("failed")
        order = state.get("order")
        self.customer_id = customer_id
        self.order = order if isinstance(order, str) else None
        self.failed = failed if isinstance(failed, int) and failed >= 0 else 0
        self.consent = Consent.from_state(state.get("consent"))

    def may_identify(self) -> None:
        """Refuse another attempt once too many found no one."""
        if not self.staff and self.failed >= MAX_FAILED_IDENTIFICATIONS:
            raise NeedsPerson(TOO_MANY)

    def identified(self, found: str | None, missing: str) -> str:
        """The customer a look-up found, now this conversation's; `missing` is said (the same
        words whether or not anyone matched) when it found no one, or another customer than
        the one this conversation is with."""
        if found is not None and (self.staff or self.customer_id in (None, found)):
            self.customer_id = found
            return found
        self.failed += 1
        if self.customer_id is not None:
            missing += (
                " (this conversation's customer is identified already; a desk serves one "
                "customer per conversation)"
            )
        raise ToolFailure(missing)

    def check(self, customer_id: str | None, what: str) -> None:
        """Refuse `what` unless it is the identified customer's (or staff asks)."""
        if self.staff:
            return
        if self.customer_id is None:
            raise ToolFailure(f"the customer is not identified yet: {ASK_WHO}")
        if customer_id != self.customer_id:
            raise ToolFailure(
                f"{what} is not the identified customer's; a desk serves one customer per "
                "conversation, and shows nobody another customer's records"
            )
