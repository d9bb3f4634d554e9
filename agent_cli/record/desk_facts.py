"""What a desk run did, in a few figures, for the run log and `agent logs report`: the intent of
its question (the intent model's reading, `unknown` when it was unsure), the writes it proposed and
what became of them at the approval (approved, denied, queued), and the writes the tools
refused by rule. Counted from the run's events as they pass."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agent_cli.core.events import ApprovalDecided, Event, RunStarted, ToolObserved
from agent_cli.core.tool_outcomes import Failed, Proposed
from agent_cli.domain.intents import ACTING, INTENT_TOOLS, UNKNOWN, Intent, intents_shown
from agent_cli.domain.write_tools import WRITES
from agent_cli.language import intents
from agent_cli.record.outcomes import ToolRun

__all__ = ["ACTING", "INTENT_TOOLS", "Intent", "RunFacts", "intents_of"]


def intents_of(tools: Iterable[ToolRun]) -> set[Intent]:
    """Every intent whose tools the run called (a proposal or a refusal counts: it tried)."""
    return intents_shown(tool.tool for tool in tools)


@dataclass(slots=True)
class RunFacts:
    """One run's desk figures."""

    intent: str = UNKNOWN  # the intent model's reading of the question
    proposed: int = 0  # a write's first call: proposed, put to the customer
    approved: int = 0
    denied: int = 0
    queued: int = 0  # waiting in the approval queue (approved, denied or expired later)
    refused: int = 0  # a write the tools refused by rule (Failed), nothing changed

    def add(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.intent = str(intents.read(event.goal).intent)
        elif isinstance(event, ToolObserved):
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

    def row(self) -> tuple[str, int, int, int, int, int]:
        return (self.intent, self.proposed, self.approved, self.denied, self.queued, self.refused)
