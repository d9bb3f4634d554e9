"""What every channel shares: a message received from it (where it came from, the channel's id of
the message, the words), and what became of one row the outbox handed it to deliver."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import Response

from agent_cli.providers.outbound import Answer, Outbound
from agent_cli.store.outbox import Delivery


@dataclass(frozen=True, slots=True)
class Incoming:
    """One customer message a channel sent: the channel's id of the conversation, where to reach
    the customer (merged into the conversation's address), the channel's id of the message (a
    repeat of it is dropped) and its text."""

    external_id: str
    address: dict[str, Any] | None  # None: the replies go back in the response, not delivered
    key: str
    text: str
    # Who the channel says holds the conversation: a person (True: kept, never answered), the
    # bot (False: a person handed it back), or the channel does not say (None).
    hold: bool | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one row: sent; or not, and then whether to try again (after the wait the
    channel asked for, if it said)."""

    sent: bool
    error: str = ""
    again: bool = True
    after: float | None = None

    @classmethod
    def of(cls, answer: Answer) -> Outcome:
        """A channel's answer read the usual way: 2xx sent; 408, 409, 425, 429 and 5xx (and no
        answer at all) tried again; any other 4xx a mistake that trying again would repeat."""
        if answer.ok:
            return cls(True)
        again = answer.status is None or answer.status in (408, 409, 425, 429)
        again = again or (answer.status is not None and answer.status >= 500)
        return cls(False, answer.why(), again, answer.retry_after)


SENT = Outcome(True)


class Channel(Protocol):
    """A channel: its route's receiver, and how the outbox delivers to it."""

    name: str

    async def receive(self, request: Request) -> Response:
        """A webhook request from the channel, its signature checked before anything else."""
        ...

    def deliver(self, outbound: Outbound, rows: Sequence[Delivery]) -> list[Outcome]:
        """The rows of one conversation, in order: an outcome for each row tried (the rows after
        a failed one are not tried, so the customer reads them in order)."""
        ...


@dataclass(frozen=True, slots=True)
class Secret:
    """A secret a channel's settings name by environment variable (never in a config file)."""

    env: str
    value: str = field(repr=False, default="")
