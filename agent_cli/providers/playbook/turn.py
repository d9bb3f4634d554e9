"""What one turn of a conversation asks for, as the offline playbook routes it: the intent
model's reading of the customer's message (language/intents.py), never a word list. A turn
that answers the desk's own question ("Which items?" "The mugs."; "What is your email?"
"kaito@example.com"; a yes) carries on the turn before's intent, unless the model reads a
new request in it with confidence; a follow-up ("and A101?", "B200は") carries it on too."""

from __future__ import annotations

import re

from agent_cli.core.seams import Exchange, ModelRequest
from agent_cli.domain.intents import UNKNOWN
from agent_cli.language import intents
from agent_cli.policy.consent import ambiguous, explicit_yes
from agent_cli.policy.language import language_of

# A Japanese question often ends without a question mark: "…教えてください。", "…よろしいですか。"
_ASKS_JA = re.compile(r"(?:ください|ますか|ですか|でしょうか|ませんか)[。．.]?\s*$")


def asks(answer: str) -> bool:
    """Whether the desk's last words asked the customer something (so their reply answers it)."""
    return "?" in answer or "？" in answer or _ASKS_JA.search(answer.strip()) is not None


_CARRIES_ON = frozenset({"orders", "greeting", "other", UNKNOWN})  # an email, a yes, "the mugs"
NEW_REQUEST_AT = 0.8  # a reply this surely another intent starts a new request
RETURN_TOO = 0.2  # a return this likely beside a refund: after its verdict, the return is offered

# The desk's writes by the intent that asks for them (an exchange and an item change are one
# flow: the order's status says which write it is).
CHANGES = {
    "cancel": "cancel",
    "address": "address",
    "account_address": "user_address",
    "payment": "payment",
    "return": "return",
    "items": "items",
    "exchange": "items",
}
ABOUT_AN_ORDER = frozenset({"refund", "status", "refund_status", *CHANGES} - {"account_address"})


def intent_of_turn(request: ModelRequest) -> str:
    """The intent this turn is routed by (an intent of domain/intents.py, or `unknown`). A
    message in neither English nor Japanese is `unknown`: the model learnt neither its words
    nor its script (Chinese shares kanji with Japanese), so any reading of it is a guess."""
    if language_of(request.goal) not in ("en", "ja"):
        return UNKNOWN
    reading = intents.read(request.goal)
    intent = str(reading.intent)
    if intent == "follow_up":  # "and A101?": the same question again, about another order
        return carried(request.conversation)
    if not request.conversation:
        return intent
    last = request.conversation[-1]
    asked = asks(last.answer)
    answered = explicit_yes(request.goal) or ambiguous(request.goal)  # the consent's reading
    if asked and (answered or intent in _CARRIES_ON or reading.probability < NEW_REQUEST_AT):
        before = carried(request.conversation)
        return intent if before in _CARRIES_ON else before
    return intent


def carried(conversation: tuple[Exchange, ...]) -> str:
    """The intent of the latest earlier turn that was not itself a follow-up (so "and A101?"
    then "and A102?" both carry the first question's); `unknown` when no turn came before."""
    for turn in reversed(conversation):
        before = str(intents.read(turn.question).intent)
        if before != "follow_up":
            return before
    return UNKNOWN
