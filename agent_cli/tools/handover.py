"""`transfer_to_human_agents(summary)`, τ²-bench's hand-over, made state (desk.md, rule 4): it
opens a ticket a person lists, claims and closes (`agent tickets`), with the customer and the
order when this conversation knew them, the summary, the run it came from and the customer's
question; the customer is told a person will follow up, and the run ends `handed_over`. τ²'s
tool changes nothing, so a missed hand-over scores as a pass there; here it is a row."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from agent_cli.core.seams import Observation
from agent_cli.core.tool_outcomes import Simulated, Transferred
from agent_cli.domain.tickets import NewTicket
from agent_cli.language.intent_model import EMAIL
from agent_cli.store import tickets
from agent_cli.store.sqlite import OrderStore
from agent_cli.text import clean_text
from agent_cli.tools import Tool, ToolArgs
from agent_cli.tools.identity import CustomerSession


class TransferArgs(ToolArgs):
    summary: str = Field(
        min_length=3, max_length=2_000, description="The customer's issue, for the person"
    )


def handover_tool(
    open_store: Callable[[], OrderStore], session: CustomerSession, *, dry_run: bool
) -> Tool[Any]:
    def transfer(args: TransferArgs) -> Observation:
        if dry_run:
            return Observation.of(
                Simulated("transfer_to_human_agents", "open a ticket for a person to follow up")
            )
        new = NewTicket(
            " ".join(clean_text(args.summary).split()),  # a model's words: no control is kept
            clean_text(session.question),
            session.run_id,
            session.customer_id,
            session.order,
        )
        ticket = tickets.open_ticket(open_store(), new)
        return Observation.of(Transferred(ticket.id, _reach(session)))

    return Tool(
        "transfer_to_human_agents",
        "Hand the customer over to a person, with a summary of the issue: when they ask for "
        "a person, or the policy and the tools cannot solve it. Opens a ticket.",
        TransferArgs,
        transfer,
    )


def _reach(session: CustomerSession) -> Literal["here", "email", "unknown"]:
    """How the person can reach the customer: in the kept conversation, by the email of their
    record (every customer has one) or in their words, or no way known (then the desk asks)."""
    if session.channel is not None:
        return "here"
    if session.customer_id is not None or EMAIL.search(session.question):
        return "email"
    return "unknown"
