"""Two questions in one message ("Where is A101, and how long does shipping take to Osaka?"):
the offline playbook splits the message into its sentences and clauses, reads each one's
intent, and when there are two or more, answers each part in turn (its own lookups, its own
answer), the parts' answers joined in the order they were asked. A sentence of no intent of
its own ("My email is ...") is context: it goes with every part that may need it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent_cli.core.seams import Exchange
from agent_cli.policy.verdicts import find_order_codes
from agent_cli.providers.playbook import desk as playbook_desk
from agent_cli.providers.playbook import who as playbook_who
from agent_cli.providers.playbook import writes as playbook_writes
from agent_cli.providers.playbook.turn import asks

_SPLIT = re.compile(
    r"(?<=[.?!])\s+|(?<=[。？！])\s*(?:(?:それと|あと|また)、?)?|"  # a full stop ends at a space
    r"\s*(?:,\s*|\s)(?:and|also|plus)\s+(?:also\s+)?"
    r"(?=(?:how|what|when|where|why|is|are|can|could|please|i|i'd|i'm|tell|do|does|has|have)\b)|"
    r"、(?:それと|あと|また)、?",
    re.IGNORECASE,
)
_HELP = re.compile(
    r"(?i)\b(?:how long|how many days|warranty|guarantee|payment methods|opened|contact|"
    r"do you (?:accept|ship|deliver))\b|送料|何日|保証|開封|支払い方法"
)
_REFUND = re.compile(r"(?i)\brefund\w*|返金")


def intent_of(text: str) -> str | None:
    """What one sentence or clause asks for; None when it asks for nothing (context)."""
    named = bool(find_order_codes(text))
    change = playbook_writes.wanted(text)  # cancel, address, ...: the change's own name
    checks = (
        ("handover", playbook_desk.hands_over(text)),
        ("orders", playbook_who.asks_for_orders(text)),
        (change, change is not None),
        ("refund_status", playbook_desk.asks_refund_status(text)),
        ("status", playbook_desk.asks_where(text)),
        ("help", _HELP.search(text) is not None and not named),
        ("refund", _REFUND.search(text) is not None or named),
    )
    return next((intent for intent, holds in checks if holds), None)


def parts(goal: str) -> list[str]:
    """The message as one question per intent, in the order asked; one part (the message
    whole) when it asks one thing. A part naming no order gets the orders named elsewhere,
    and every part but a help question the sentences of no intent (an email, a name)."""
    pieces = [p.strip() for p in _SPLIT.split(goal) if p and p.strip()]
    grouped: dict[str, list[str]] = {}
    context: list[str] = []
    for piece in pieces:
        intent = intent_of(piece)
        if intent is None:
            context.append(piece)
        else:
            grouped.setdefault(intent, []).append(piece)
    if len(grouped) < 2:
        return [goal]
    codes = find_order_codes(goal)
    parts = []
    for intent, asked in grouped.items():
        text = " ".join(asked)
        if intent != "help":
            named = "" if find_order_codes(text) else " ".join(codes)
            text = " ".join(piece for piece in (text, named, *context) if piece)
        parts.append(text)
    return parts


_BACK = re.compile(
    r"(?i)\b(?:it|its|it's|that|this|them|they|one|order|same|refund\w*|return\w*)\b|"
    r"それ|その|この|あの|注文|返金|返品"
)


def refers_back(goal: str, earlier: Sequence[Exchange]) -> bool:
    """A turn about an order named before: it says so ("it", "that order", a refund), or asks
    for something only an order has (where it is, a change); "How long does shipping take?"
    is about no order, unless it answers the desk's question of the turn before ("Which
    items?" "The espresso machine.")."""
    asked = bool(earlier) and asks(earlier[-1].answer)
    return bool(
        asked
        or _BACK.search(goal)
        or playbook_writes.wanted(goal)
        or playbook_desk.asks_where(goal)
        or playbook_desk.asks_refund_status(goal)
    )
