"""The offline playbook's "who is this?": the customer identified from their email, or their
name and zip code, as they wrote them (in the question, a reply, or an earlier chat turn),
asked for once when neither is there; and "I don't have my order number": the identified
customer's orders listed from their record."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_cli.core.decisions import ASK_USER_TOOL, AskUser, CallTool, Decision, FinalAnswer, Step
from agent_cli.core.seams import ModelRequest
from agent_cli.core.tool_outcomes import Failed, Transferred
from agent_cli.providers.playbook import catalogue

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
_NAME_ZIP = re.compile(
    r"\b([A-Z][a-z]+) ([A-Z][a-z]+)\b.{0,40}?(?<![\w-])(\d{3}-\d{4}|\d{5})(?![\w-])", re.S
)
_NO_NUMBER = re.compile(
    r"(?i)\b(?:(?:don'?t|do not|didn'?t) (?:have|know|remember) "
    r"(?:my|the) order (?:number|code|id)|"
    r"(?:lost|forgot) (?:my|the) order (?:number|code|id)|"
    r"what are my orders|what orders (?:do )?I have|"
    r"(?:list|show) (?:me )?my orders|which orders do I have)\b|"
    r"注文番号(?:が|を)?(?:わから|わかり|分から|分かり|知ら|忘れ|ありません|不明)|注文(?:の)?一覧"
)
_STREETS = frozenset(
    ("street", "road", "avenue", "lane", "drive", "boulevard", "way", "place", "court", "square")
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Who:
    email_please: str
    not_found: str
    no_email: str  # asked, and still neither an email nor a name and zip code
    handed_over: str  # too many tries found no one: a person takes over
    would_hand_over: str  # the same, in a dry run: no ticket opened
    orders: str  # the customer's orders, listed
    no_orders: str
    order_line: str
    joiner: str


ENGLISH = Who(**catalogue.WHO_EN)
JAPANESE = Who(**catalogue.WHO_JA)


def identify(
    request: ModelRequest, made: list[tuple[CallTool, Step]], texts: str, words: Who
) -> str | Decision:
    """The identified customer's user id, or the step that identifies them: a lookup by the
    email (or name and zip) they wrote, else a question (once); a failed lookup is said."""
    found = next(
        (s for c, s in made if c.tool in ("find_user_id_by_email", "find_user_id_by_name_zip")),
        None,
    )
    if found is not None:
        return _found(request, made, found, words)
    if request.customer is not None:  # identified in an earlier message, or vouched for
        return request.customer
    if (email := EMAIL.search(texts)) is not None:
        return CallTool(tool="find_user_id_by_email", args={"email": email.group(0)})
    if (named := _name_and_zip(texts)) is not None:
        args = {"first_name": named[1], "last_name": named[2], "zip": named[3]}
        return CallTool(tool="find_user_id_by_name_zip", args=args)
    asked = [c.args.get("question") for c, _ in made if c.tool == ASK_USER_TOOL]
    if words.email_please in asked:
        return FinalAnswer(answer=words.no_email)  # asked once already
    return AskUser(question=words.email_please)


def _name_and_zip(texts: str) -> re.Match[str] | None:
    """A first and last name, then a zip code; never the street of an address ("12 Baker
    Street, Springfield 62704": a house number before it, a street's word as its last)."""
    start = 0
    while (named := _NAME_ZIP.search(texts, start)) is not None:
        before = texts[: named.start()].rstrip()
        if not (before[-1:].isdigit() or named[2].lower() in _STREETS):
            return named
        start = named.end(2)  # the street skipped, a name after it may still come
    return None


def _found(
    request: ModelRequest, made: list[tuple[CallTool, Step]], found: Step, words: Who
) -> str | Decision:
    """What a look-up of the customer found: their id, none (said), or too many tries."""
    if isinstance(found.outcome, Failed) and found.outcome.hand_over:
        return _hand_over(request, made, words)
    user = None if found.is_error else (found.record or {}).get("user_id")
    return str(user) if user else FinalAnswer(answer=words.not_found)


def _hand_over(request: ModelRequest, made: list[tuple[CallTool, Step]], words: Who) -> Decision:
    """Too many tries found no one: a person takes over (a ticket), and the customer is told."""
    done = next((s for c, s in made if c.tool == "transfer_to_human_agents"), None)
    if done is None:
        summary = f"Could not identify the customer. They wrote: {' '.join(request.goal.split())}"
        return CallTool(tool="transfer_to_human_agents", args={"summary": summary[:1900]})
    opened = isinstance(done.outcome, Transferred)
    return FinalAnswer(answer=words.handed_over if opened else words.would_hand_over)


def asks_for_orders(goal: str) -> bool:
    """The customer has no order number, or asks which orders they have."""
    return _NO_NUMBER.search(goal) is not None


def orders_of(
    request: ModelRequest, made: list[tuple[CallTool, Step]], texts: str, words: Who
) -> Decision | None:
    """ "I don't have my order number" (the turn's intent): identify the customer, list their
    orders from their record with each one's status (looked up), and ask which one; None when
    the tool is not offered."""
    if "get_user_details" not in {spec.name for spec in request.tools}:
        return None
    user = identify(request, made, texts, words)
    if not isinstance(user, str):
        return user
    details = next((s for c, s in made if c.tool == "get_user_details"), None)
    if details is None:
        return CallTool(tool="get_user_details", args={"user_id": user})
    codes = [str(code) for code in (details.record or {}).get("orders") or ()]
    if not codes:
        return FinalAnswer(answer=words.no_orders)
    read = {str(c.args.get("order_id")): s for c, s in made if c.tool == "get_order_details"}
    for code in codes:
        if code not in read:
            return CallTool(tool="get_order_details", args={"order_id": code})
    lines = words.joiner.join(
        words.order_line.format(code=code, status=_status(read[code]), items=_items(read[code]))
        for code in codes
    )
    return FinalAnswer(answer=words.orders.format(lines=lines))


def _items(step: Step) -> str:
    """The order's items by name, each once, from its record."""
    items = [] if step.is_error else (step.record or {}).get("items") or ()
    return ", ".join(dict.fromkeys(str(item["name"]) for item in items)) or "?"


def _status(step: Step) -> str:
    status = None if step.is_error else (step.record or {}).get("status")
    return str(status) if status else "?"
