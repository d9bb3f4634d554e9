"""The offline playbook's desk intents: "where is my order?" answered from `track_order`, once
the customer is identified (their email, from the question or asked for), in English or
Japanese, every fact from the tool's record."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_cli.core.decisions import CallTool, Decision, FinalAnswer, Step
from agent_cli.core.seams import ModelRequest
from agent_cli.core.tool_outcomes import NotFound, Transferred
from agent_cli.domain.intents import IDENTIFY
from agent_cli.providers.playbook import catalogue
from agent_cli.providers.playbook import who as playbook_who
from agent_cli.providers.playbook.facts import lookup_fields
from agent_cli.providers.playbook.who import identify

_TRACKING = re.compile(
    r"(?i)\b(?:where(?:'s| is)|track\w*|when will .* (?:arrive|come|get here)|"
    r"delivery date|shipped yet)\b|どこ|いつ届|届きますか|追跡|配送状況"
)
_REFUND = re.compile(r"(?i)\b(?:refund\w*|return\w*)\b|返金|返品")  # the refund flow's, not this


_REFUND_STATUS = re.compile(
    r"(?i)\b(?:where(?:'s| is) (?:my|the) refund|(?:has|did) (?:my|the) refund|"
    r"how much (?:is|was|has been|have you) (?:left|refunded)|refund status|"
    r"how much .* (?:left|refunded))\b|返金(?:は|の)?(?:いつ|状況|どうなって)|返金された|いくら返金"
)
_HAND_OVER = re.compile(
    r"(?i)\b(?:charged twice|double[- ]charged?|charged two times|complain\w*|"
    r"(?:talk|speak) (?:to|with) (?:a |an )?(?:person|human|agent|someone)|real person)\b|"
    r"二重(?:請求|に請求)|苦情|担当者と話|人と話"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Words:
    moving: str
    moving_unnamed: str  # a shipment with no carrier on record (τ²'s orders)
    last_event: str
    eta: str
    not_shipped: str
    delivered: str  # with no shipment on record: the delivery date only
    cancelled: str
    not_yours: str
    handed_over: str  # after a ticket opened, when nothing says how to reach the customer
    handed_over_here: str  # ... in a kept conversation: a person answers in it
    handed_over_email: str  # ... with an email on their record or in their words
    would_hand_over: str  # the same under --dry-run: no ticket
    refunded: str  # what was refunded of an order, and what is left
    not_refunded: str
    about: str  # before a hand-over's words, when the order it is about was read
    which_refund: str  # after the help centre's word on refunds, when no order was named
    japanese: bool = False


ENGLISH = _Words(**catalogue.DESK_EN)
JAPANESE = _Words(**catalogue.DESK_JA)


def tracking(
    request: ModelRequest,
    made: list[tuple[CallTool, Step]],
    codes: list[str],
    texts: str,
    words: _Words,
) -> Decision | None:
    """The next step of "where is my order?" (the turn's intent, playbook/turn.py), or None
    when no order is named or the tool is not offered: find the customer, track each order,
    answer from the records."""
    if not codes or "track_order" not in {spec.name for spec in request.tools}:
        return None
    user = identify(
        request, made, texts, playbook_who.JAPANESE if words.japanese else playbook_who.ENGLISH
    )
    if not isinstance(user, str):
        return user
    tracked = {
        str(c.args.get("order_id", "")).upper(): s for c, s in made if c.tool == "track_order"
    }
    for code in codes:
        if code not in tracked:
            return CallTool(tool="track_order", args={"order_id": code})
    joiner = "" if words is JAPANESE else "\n"
    return FinalAnswer(answer=joiner.join(_where(code, tracked[code], words) for code in codes))


def asks_where(text: str) -> bool:
    """Where is my order? (Not a question of refunding or returning it.)"""
    return _TRACKING.search(text) is not None and _REFUND.search(text) is None


def asks_refund_status(text: str) -> bool:
    """Where is my refund? How much is left?"""
    return _REFUND_STATUS.search(text) is not None


def hands_over(text: str) -> bool:
    """What the desk cannot do (a double charge, a complaint), or a person asked for."""
    return _HAND_OVER.search(text) is not None


def _where(code: str, step: Step, words: _Words) -> str:
    """Where the order is, from the tracking record as data (tools/records.py), never its text:
    the first shipment's carrier and number, the latest event of all, the estimate."""
    if step.is_error:
        return words.not_yours.format(code=code)
    record = step.record or {}
    status, shipments = str(record.get("status") or "?"), list(record.get("shipments") or ())
    if not shipments:
        if status == "CANCELLED":
            return words.cancelled.format(code=code)
        if delivered := record.get("delivered_at"):
            return words.delivered.format(code=code, date=delivered, status=status)
        return words.not_shipped.format(code=code, status=status)
    first = shipments[0]
    number = ",".join(first["tracking_ids"])
    if first["carrier"] is None:  # τ²'s orders name no carrier: never "on its way with unknown"
        sentence = words.moving_unnamed.format(code=code, tracking=number)
    else:
        sentence = words.moving.format(code=code, carrier=first["carrier"], tracking=number)
    if events := [event for shipment in shipments for event in shipment["events"]]:
        last = events[-1]
        sentence += words.last_event.format(
            at=last["happened_at"][:10], place=last["place"], description=last["description"]
        )
    if first["estimated_delivery"] is not None:
        sentence += words.eta.format(eta=first["estimated_delivery"])
    return sentence


def refund_status(codes: list[str], lookups: dict[str, Step], words: _Words) -> str | None:
    """ "Where is my refund?" (the turn's intent): what each order's lookup says was refunded
    and is left, or None when no order was named or one was not read."""
    if not codes:
        return None
    sentences = []
    for code in codes:
        step = lookups.get(code)
        if step is None or step.is_error or isinstance(step.outcome, NotFound):
            return None  # the refund flow says what could not be checked
        fields = lookup_fields(step)
        money = {k: _money(fields.get(k, "0"), fields.get("currency", ""), words) for k in
                 ("total", "refunded", "left")}  # fmt: skip
        template = words.refunded if "refunded" in fields else words.not_refunded
        sentences.append(template.format(code=code, **money))
    return ("" if words.japanese else "\n").join(sentences)


def _ticket_facts(
    request: ModelRequest, made: list[tuple[CallTool, Step]], texts: str, codes: list[str]
) -> CallTool | None:
    """The look-up that puts on a hand-over's ticket what the customer gave: who they are
    (their email), the order they named; never a question (a person will ask)."""
    offered = {spec.name for spec in request.tools}
    called = {c.tool for c, _ in made}
    email = playbook_who.EMAIL.search(texts)
    if email and "find_user_id_by_email" in offered and not called & {*IDENTIFY}:
        return CallTool(tool="find_user_id_by_email", args={"email": email.group(0)})
    found = any(c.tool in IDENTIFY and not s.is_error for c, s in made)
    if codes and found and "get_order_details" not in called:  # theirs: the ticket names it
        return CallTool(tool="get_order_details", args={"order_id": codes[0]})
    return None


def _money(value: str, currency: str, words: _Words) -> str:
    """An amount from a lookup (major units, no separators) as people write it."""
    whole, _, cents = value.partition(".")
    grouped = f"{int(whole):,}" + (f".{cents}" if cents else "") if whole.isdigit() else value
    if words.japanese and currency == "JPY":
        return f"{grouped}円"
    return f"{grouped} {currency}"


def hand_over(
    request: ModelRequest,
    made: list[tuple[CallTool, Step]],
    words: _Words,
    known: tuple[str, list[str]] = ("", []),
) -> Decision | None:
    """What the desk cannot do (a double charge, a complaint) or a person asked for (the turn's
    intent): the customer and the order found first when the customer gave them (`known`:
    their words and the codes named), so the ticket names them; then a ticket opened with
    `transfer_to_human_agents`, and the customer told; None when the tool is not offered."""
    if "transfer_to_human_agents" not in {spec.name for spec in request.tools}:
        return None
    before = _ticket_facts(request, made, *known)
    if before is not None:
        return before
    done = next((s for c, s in made if c.tool == "transfer_to_human_agents"), None)
    if done is None:
        summary = f"The customer wrote: {' '.join(request.goal.split())[:280]}"
        return CallTool(tool="transfer_to_human_agents", args={"summary": summary})
    if done.is_error:
        return None
    handed = _handed_over(done.outcome, words)
    read = [
        str(c.args.get("order_id"))
        for c, s in made
        if c.tool == "get_order_details" and not s.is_error
    ]
    return FinalAnswer(answer=words.about.format(code=read[0]) + handed if read else handed)


def _handed_over(outcome: object, words: _Words) -> str:
    """The customer told what happens next, promising only the way a person can reach them."""
    if not isinstance(outcome, Transferred):  # a dry run opens no ticket
        return words.would_hand_over
    return {
        "here": words.handed_over_here,
        "email": words.handed_over_email,
        "unknown": words.handed_over,
    }[outcome.reach]
