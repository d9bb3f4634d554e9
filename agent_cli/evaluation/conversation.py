"""An eval case as a conversation: the customer's messages, one at a time, each answering the
agent's question (inside a run) or opening the next turn (a run of its own, with the earlier
turns as memory, as `agent chat` runs them), until the customer has nothing more to say, the
agent hands over, a run ends otherwise, or the turn limit.

A one-question case is the same with no second turn: its `replies` answer the agent's
questions, and the run's end is the case's end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from agent_cli.core.events import ApprovalRequested, Event, RunFinished
from agent_cli.core.seams import ApprovalVerdict, Exchange
from agent_cli.errors import AgentError, Interrupted
from agent_cli.runtime.assemble import Runtime
from agent_cli.runtime.drive import drive
from agent_cli.runtime.memory import Memory


class Customer(Protocol):
    """Who the agent is talking to in a case."""

    def opening(self) -> str | None:
        """The first message; None: the customer says nothing (their model failed)."""
        ...

    def answer(self, agent_said: str) -> str | None:
        """The customer's next message after the agent said `agent_said`; None: nothing more
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

    def answer(self, agent_said: str) -> str | None:
        return next(self.rest, None)


@dataclass(slots=True)
class _Limit:
    """The turn limit: every message of the customer counts, the opening included."""

    customer: Customer
    left: int
    over: bool = False

    replies: list[str] = field(default_factory=list)  # this turn's answers to questions

    def answer(self, agent_said: str) -> str | None:
        said = self.customer.answer(agent_said)
        if said is not None and self.left <= 0:
            self.over = True  # they would go on: the limit stops them
            return None
        if said is not None:
            self.left -= 1
        return said

    def reply(self, question: str) -> str | None:
        """An answer to the agent's question inside a run: remembered with the turn."""
        said = self.answer(question)
        if said is not None:
            self.replies.append(said)
        return said


@dataclass(slots=True)
class _LastRun:
    status: str = ""
    answer: str | None = None

    def see(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            self.status, self.answer = event.status, event.answer


def converse(
    runtime: Runtime,
    customer: Customer,
    sinks: list[Callable[[Event], None]],
    *,
    approve: Callable[[ApprovalRequested], ApprovalVerdict],
    max_turns: int,
    turns: bool,
) -> bool:
    """Drive the conversation; `turns`: an answered run is followed by the customer's next
    message as a new turn (else the first run is all). True when it stopped at the turn
    limit with the customer still talking."""
    limit = _Limit(customer, max_turns - 1)
    settings = runtime.settings.chat
    memory = Memory(settings.memory_turns, settings.memory_chars)
    question = customer.opening()
    if question is None:
        return False
    while True:
        last = _LastRun()
        limit.replies = []
        _run(runtime, question, memory.recent(), [*sinks, last.see], (limit.reply, approve))
        if not turns or last.status != "answered" or last.answer is None:
            return limit.over
        following = limit.answer(last.answer)
        if following is None:
            return limit.over
        memory.add(question, last.answer, limit.replies)
        question = following


def _run(
    runtime: Runtime,
    question: str,
    memory: tuple[Exchange, ...],
    sinks: list[Callable[[Event], None]],
    answerers: tuple[Callable[[str], str | None], Callable[[ApprovalRequested], ApprovalVerdict]],
) -> None:
    respond, approve = answerers
    try:
        drive(runtime.events(question, memory), sinks, respond=respond, approve=approve)
    except Interrupted:
        raise
    except AgentError:
        pass  # the run's end (a limit, a question, a provider error) is in its record
