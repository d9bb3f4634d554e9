"""What a desk run did, in a few figures, for the run log and `agent logs report`: the intent it
worked on (read from the tools it called, as the eval judges it), the writes it proposed and
what became of them at the approval (approved, denied, queued), and the writes the tools
refused by rule. Counted from the run's events as they pass."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from agent_cli.core.events import ApprovalDecided, Event, ToolObserved
from agent_cli.core.tool_outcomes import Failed, Proposed
from agent_cli.record.outcomes import ToolRun
from agent_cli.store.desk_changes import WRITE_TOOLS

Intent = Literal[
    "refund",  # is it refundable? (and a refund made)
    "refund_status",  # where is my refund, how much is left
    "status",  # where is my order
    "orders",  # which orders do I have
    "cancel",
    "address",
    "payment",
    "items",  # items of a pending order swapped
    "return",
    "exchange",
    "help",  # a help-centre question
    "handover",
]

INTENT_TOOLS: Mapping[Intent, frozenset[str]] = {
    "refund": frozenset({"lookup_order", "refund_policy", "issue_refund"}),
    "refund_status": frozenset({"lookup_order", "get_order_details"}),
    "status": frozenset({"track_order"}),
    "orders": frozenset({"get_user_details"}),
    "cancel": frozenset({"cancel_pending_order"}),
    "address": frozenset({"modify_pending_order_address", "modify_user_address"}),
    "payment": frozenset({"modify_pending_order_payment"}),
    "items": frozenset({"modify_pending_order_items"}),
    "return": frozenset({"return_delivered_order_items"}),
    "exchange": frozenset({"exchange_delivered_order_items"}),
    "help": frozenset({"search_help", "get_article"}),
    "handover": frozenset({"transfer_to_human_agents"}),
}
# The intents that act: a run may look things up on its way, but acts on one intent only.
ACTING: frozenset[Intent] = frozenset(
    {"cancel", "address", "payment", "items", "return", "exchange", "handover"}
)


def intents_of(tools: Iterable[ToolRun]) -> set[Intent]:
    """Every intent whose tools the run called (a proposal or a refusal counts: it tried)."""
    called = {tool.tool for tool in tools}
    return {intent for intent, names in INTENT_TOOLS.items() if called & names}


WRITES = frozenset((*WRITE_TOOLS, "issue_refund"))  # the desk's writes and the seed's refund


def main_intent(called: Iterable[str]) -> str:
    """The one intent a run is counted under: the first acting one (a change, a hand-over),
    else the first it looked into, else "other"."""
    names = set(called)
    shown: list[str] = [intent for intent, tools in INTENT_TOOLS.items() if names & tools]
    acting = [intent for intent in shown if intent in ACTING]
    return (acting or shown or ["other"])[0]


@dataclass(slots=True)
class RunFacts:
    """One run's desk figures."""

    called: set[str] = field(default_factory=set)
    proposed: int = 0  # a write's first call: proposed, put to the customer
    approved: int = 0
    denied: int = 0
    queued: int = 0  # waiting in the approval queue (approved, denied or expired later)
    refused: int = 0  # a write the tools refused by rule (Failed), nothing changed

    def add(self, event: Event) -> None:
        if isinstance(event, ToolObserved):
            self.called.add(event.tool)
            if event.tool in WRITES and isinstance(event.outcome, Proposed):
                self.proposed += 1
            elif event.tool in WRITES and isinstance(event.outcome, Failed):
                self.refused += 1
        elif isinstance(event, ApprovalDecided):
            if event.queued is not None:
                self.queued += 1
            elif event.approved:
                self.approved += 1
            else:
                self.denied += 1

    @property
    def intent(self) -> str:
        return main_intent(self.called)

    def row(self) -> tuple[str, int, int, int, int, int]:
        return (self.intent, self.proposed, self.approved, self.denied, self.queued, self.refused)
