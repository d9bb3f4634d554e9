"""An eval case as a conversation kept in the case's own store, as every channel's is: the
customer's messages, one at a time, each answering the agent's question (inside a run) or
opening the next turn (a run of its own, with the earlier turns as memory, as `agent chat` runs
them), until the customer has nothing more to say, the agent hands over, a run ends otherwise,
or the turn limit.

A one-question case is the same with no second turn: its `replies` answer the agent's
questions, and the run's end is the case's end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from agent_cli.core.events import ApprovalRequested, Event
from agent_cli.core.seams import ApprovalVerdict
from agent_cli.runtime.assemble import Runtime
from agent_cli.runtime.conversation import Hooks, take_turn
from agent_cli.store import conversations as stored
from agent_cli.store.sqlite import OrderStore


class Customer(Protocol):
    """Who the agent is talking to in a case."""

    def opening(self) -> str | None:
        """The first message; None: the customer says nothing (their model failed)."""
        ...

    def answer(self, agent_words: str) -> str | None:
        """The customer's next message after the agent said `agent_words`; None: nothing more
        (they are done, or have no answer)."""
        ...


@dataclass(slots=True)
class ScriptedCustomer:
    """A case's own messages, in order, whatever the agent says."""

    first: str
    rest: Iterator[str]

    @classmethod
    def of(cls, first: str, rest: tuple[str, ...]) -> ScriptedCustomer:
        return cls(first, iter(rest))

    def opening(self) -> str:
        return self.first

    def answer(self, agent_words: str) -> str | None:
        return next(self.rest, None)


@dataclass(slots=True)
class _Limit:
    """The turn limit: every message of the customer counts, the opening included."""

    customer: Customer
    left: int
    over: bool = False

    def answer(self, agent_words: str) -> str | None:
        reply = self.customer.answer(agent_words)
        if reply is not None and self.left <= 0:
            self.over = True  # they would go on: the limit stops them
            return None
        if reply is not None:
            self.left -= 1
        return reply


def converse(
    runtime: Runtime,
    store: OrderStore,
    customer: Customer,
    sinks: list[Callable[[Event], None]],
    *,
    approve: Callable[[ApprovalRequested], ApprovalVerdict],
    max_turns: int,
    turns: bool,
) -> bool:
    """Drive the conversation, kept in the case's own `store` as any channel's is (each turn
    taken as runtime/conversation.py takes one); `turns`: an answered run is followed by the
    customer's next message as a new turn (else the first run is all). True when it stopped at
    the turn limit with the customer still talking."""
    limit = _Limit(customer, max_turns - 1)
    question = customer.opening()
    if question is None:
        return False
    conversation = stored.create(store, channel="eval").id
    hooks = Hooks(sinks=tuple(sinks), respond=limit.answer, approve=approve, heartbeat=False)
    while True:
        turn = take_turn(runtime, store, conversation, question, hooks=hooks)
        if not turns or turn.run_status != "answered":
            return limit.over
        following = limit.answer(turn.replies[0].text)
        if following is None:
            return limit.over
        question = following
