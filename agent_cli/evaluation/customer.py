"""A simulated customer (`customer = {...}` in a case, played by `--customer-model`), under
τ²-bench's user-simulator rules: one short message at a time, information given only when it
is asked for, never invented, a stop token when the goal is reached (or cannot be), a transfer
token when handed over to a person. The desk greets first, as in τ²; the customer model sees
the desk's words as the other side ("user") and its own as "assistant".

A customer whose model fails ends the conversation, and the case fails as `customer`: it is
not the agent's fault, and the agent is not judged on a conversation that never happened.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from agent_cli.core.decisions import Usage
from agent_cli.core.seams import ModelCall
from agent_cli.errors import AgentError

STOP = "###STOP###"
TRANSFER = "###TRANSFER###"
OUT_OF_SCOPE = "###OUT-OF-SCOPE###"
GREETING = "Hi! How can I help you today?"
MAX_MESSAGE_CHARS = 4000  # what a case's own message may hold

GUIDELINES = f"""You are playing a customer who contacts an online shop's support desk, so that \
the desk can be tested. Stay in character: you are the customer, never an assistant.

Rules:
- Write one short message at a time, as a customer types it: a sentence or two.
- Do not say everything at once: give a piece of information only when the desk asks for it, \
or when your message needs it.
- Use only what your instructions below say. Never make up an order number, an email address, \
a name, an address or any other detail. Asked for something you do not know, say you do not \
know it.
- Follow your instructions for what you want; do not accept another outcome unless they say you \
may.
- When your goal is reached, or the desk cannot reach it, reply with only {STOP}.
- If the desk hands you over to a person, reply with only {TRANSFER}.
- If the desk asks something your instructions do not cover and you cannot go on, reply with \
only {OUT_OF_SCOPE}."""


@dataclass(frozen=True, slots=True)
class Persona:
    """Who the simulated customer is: τ²'s user scenario (what they want and how they behave,
    what they know, what they do not)."""

    instructions: str
    known: str = ""
    unknown: str = ""

    def prompt(self) -> str:
        text = f"{GUIDELINES}\n\nYour instructions:\n{self.instructions.strip()}"
        if self.known.strip():
            text += f"\n\nWhat you know:\n{self.known.strip()}"
        if self.unknown.strip():
            text += f"\n\nWhat you do not know:\n{self.unknown.strip()}"
        return text


@runtime_checkable
class Speaker(Protocol):
    """A model that can speak as another party (providers/base.py's `HttpAdapter.speak`)."""

    def speak(
        self,
        persona: str,
        history: Sequence[tuple[str, str]],
        *,
        deadline: float,
        on_call: Callable[[ModelCall], None],
    ) -> tuple[str, Usage]: ...


@dataclass(slots=True, kw_only=True)
class SimulatedCustomer:
    """The case's persona, played by `model`, one message per call."""

    model: Speaker
    persona: Persona
    timeout_s: float
    history: list[tuple[str, str]] = field(default_factory=list)  # as the customer model sees it
    usage: Usage = field(default_factory=Usage)
    ended: str = ""  # "stop", "transfer", "out_of_scope", or why the model failed
    failed: str | None = None

    def opening(self) -> str | None:
        """The customer's first message, after the desk's greeting."""
        return self.answer(GREETING)

    def answer(self, agent_words: str) -> str | None:
        """The customer's next message after the desk said `agent_words`; None when they are
        done (a stop, transfer or out-of-scope token) or their model failed."""
        if self.ended:
            return None
        self.history.append(("user", agent_words))
        try:
            text, used = self.model.speak(
                self.persona.prompt(),
                self.history,
                deadline=time.monotonic() + self.timeout_s,
                on_call=lambda call: None,
            )
        except AgentError as exc:
            self.ended, self.failed = "error", f"the simulated customer's model failed: {exc}"
            return None
        self.usage += used
        self.history.append(("assistant", text))
        for token, why in ((STOP, "stop"), (TRANSFER, "transfer"), (OUT_OF_SCOPE, "out_of_scope")):
            if token in text:
                self.ended = why
                return None
        if not text:
            self.ended, self.failed = "error", "the simulated customer said nothing"
            return None
        return text[:MAX_MESSAGE_CHARS]
