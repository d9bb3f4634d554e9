"""A conversation's memory: the earlier turns a model is shown, bounded (`agent chat`, and an
eval conversation's turns after the first)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agent_cli.core.seams import Exchange


@dataclass
class Memory:
    """The conversation the model is shown, bounded: the oldest turns go first."""

    max_turns: int
    max_chars: int
    turns: list[Exchange] = field(default_factory=list)

    def add(self, question: str, answer: str, replies: Sequence[str] = ()) -> None:
        """A turn; `replies`: what the customer answered the agent's questions during it,
        remembered with their question (an email given in a reply is theirs in later turns)."""
        self.turns.append(Exchange("\n".join((question, *replies)), answer))

    def recent(self) -> tuple[Exchange, ...]:
        kept: list[Exchange] = []
        size = 0
        for turn in reversed(self.turns[-self.max_turns :] if self.max_turns else []):
            size += len(turn.question) + len(turn.answer)
            if size > self.max_chars:
                break
            kept.append(turn)
        return tuple(reversed(kept))
