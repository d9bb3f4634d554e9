"""What a desk run worked on, read from the tools it called (any model's run, live or from a
trace; the table of intents is record/desk_facts.py's, shared with the run log): a case's
`intent` is judged against it, and its `writes`, `handover` and `orders_after` against what the
run left behind (evaluation/judge.py)."""

from __future__ import annotations

from collections.abc import Iterable

from agent_cli.core.tool_outcomes import Changed, Transferred
from agent_cli.domain.orders import Order
from agent_cli.record.desk_facts import ACTING, INTENT_TOOLS, Intent, intents_of
from agent_cli.record.outcomes import ToolRun
from agent_cli.store import record_reads
from agent_cli.store.sqlite import OrderStore

__all__ = [  # the intent table is record/desk_facts.py's, re-exported for the judge and cases
    "ACTING",
    "INTENT_TOOLS",
    "Intent",
    "committed",
    "intent_problem",
    "intents_of",
    "order_state",
    "ticket_opened",
]


def intent_problem(expected: Intent, tools: Iterable[ToolRun]) -> str | None:
    """Why the run did not work on `expected` alone; None when it did."""
    shown = intents_of(tools)
    if expected not in shown:
        names = ", ".join(sorted(INTENT_TOOLS[expected]))
        return f"the run never worked on {expected} (it called none of {names})"
    others = sorted((shown & ACTING) - {expected})
    if others:
        return f"the run worked on {expected} but also on {', '.join(others)}"
    return None


def committed(tools: Iterable[ToolRun]) -> list[str]:
    """The writes the run made, in order: each call whose outcome is a committed change."""
    return [t.tool for t in tools if isinstance(t.outcome, Changed)]


def ticket_opened(tools: Iterable[ToolRun]) -> bool:
    """Whether the run handed over with a ticket (a dry run's hand-over opens none)."""
    return any(isinstance(t.outcome, Transferred) for t in tools)


def order_state(store: OrderStore, codes: Iterable[str]) -> dict[str, dict[str, object] | None]:
    """What each order holds after a run, as a case's `orders_after` names it (None: no such
    order in the store)."""
    return {code: _state(record_reads.desk_order(store, code)) for code in codes}


def _state(order: Order | None) -> dict[str, object] | None:
    if order is None:
        return None
    return {
        "status": order.status,
        "items": [item.item_id for item in order.items],
        "zip": order.address.zip if order.address else None,
        "cancel_reason": order.cancel_reason,
        "returned": list(order.returned.items) if order.returned else None,
        "exchanged": list(order.exchange.items) if order.exchange else None,
    }
