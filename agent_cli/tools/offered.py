"""Which tools a real model is offered, by the conversation's phase, not by its words.

`phase` (the default): every tool of the run, each opened as the conversation reaches it
(`ToolSpec.after`, read at every step by providers/decision_schema.py): the seed's tools, the
customer's identification, the help centre and the hand-over from the start; the customer's
records, the catalogue and every write once the customer is identified (and a write once the
order it changes was read); an article once the help centre was searched. Nothing a customer
may ask for is out of reach because of how they worded it, and their reply widens the offer.

`narrow` (opt-in, `agent.tool_offer = "narrow"`, for small local models whose attention and
context each schema costs): the same phases, within the tools of the intents the customer's
words may mean (domain/intents.py's `uses`), read by the intent model with recall first: every
intent at least `RECALL_AT` likely in any of their messages, the question, earlier turns and
their replies in this run, asked again at every step; when the model is unsure of every
message, every tool."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from agent_cli.domain.intents import BY_NAME, CATALOG, HAND_OVER, HELP_TOOLS, IDENTIFY
from agent_cli.domain.write_tools import DESK_WRITES
from agent_cli.language import intents

Profile = Literal["phase", "narrow"]
PROFILES: tuple[Profile, ...] = ("phase", "narrow")
RECALL_AT = 0.05  # an intent this likely in any message keeps its tools offered

SEED = ("lookup_order", "refund_policy", "issue_refund")
CUSTOMER = (*IDENTIFY, "get_user_details", "get_order_details", "track_order", HAND_OVER)
DESK = (*CUSTOMER, *CATALOG, *DESK_WRITES, *HELP_TOOLS)
ALWAYS = (*SEED, *IDENTIFY, HAND_OVER)  # the narrow profile's floor


def offer(
    names: Sequence[str], profile: Profile, messages: Sequence[str]
) -> Callable[[], tuple[str, ...]]:
    """The offer of a run whose tools are `names`: asked at every step, it reads `messages` (the
    customer's messages so far, which the runtime extends as they reply) each time."""
    if profile == "phase":
        everything = tuple(names)
        return lambda: everything
    return lambda: narrowed(names, messages)


def narrowed(names: Sequence[str], messages: Sequence[str]) -> tuple[str, ...]:
    """`names` within what the customer's messages may ask for (see the module's docstring)."""
    readings = [intents.read(text) for text in messages if text.strip()]
    if not any(reading.sure for reading in readings):
        return tuple(names)
    wanted = {name for name in names if name not in DESK} | set(ALWAYS)
    for reading in readings:
        for intent in reading.likely(RECALL_AT):
            wanted.update(BY_NAME[intent].uses)
    return tuple(name for name in names if name in wanted)
