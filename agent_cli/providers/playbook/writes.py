"""The offline playbook's changes: cancel, a new address, another payment method, items swapped,
returned or exchanged, as a careful agent makes them (desk.md, rules 1-3): the customer
identified, the order read, the write tool called once (it proposes, changing nothing), its
exact proposal put to the customer, and only after their yes the same call again (the shop's
approval path then decides). A refusal names the rule the tool gave; nothing is guessed: an
item or an address the customer did not name is asked for, or the change is not made."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import assert_never

from agent_cli.core.decisions import ASK_USER_TOOL, AskUser, CallTool, Decision, FinalAnswer, Step
from agent_cli.core.seams import ModelRequest
from agent_cli.core.tool_outcomes import (
    Changed,
    Denied,
    Failed,
    NotFound,
    Opaque,
    Proposed,
    Queued,
    Read,
    Refunded,
    Replied,
    Simulated,
    Transferred,
)
from agent_cli.domain.write_tools import DESK_WRITES
from agent_cli.policy.consent import ambiguous, explicit_yes, refused
from agent_cli.providers.playbook import catalogue, rules_ja
from agent_cli.providers.playbook import shown as playbook_shown
from agent_cli.providers.playbook.reading import (
    OrderItemRef,
    Record,
    named_items,
    options,
    parsed_address,
    variant,
)
from agent_cli.providers.playbook.who import Who, identify

_CANCEL = re.compile(r"(?i)\bcancel\w*|キャンセル")
_USER_ADDRESS = re.compile(r"(?i)\b(?:default|account|home|registered) address\b|登録(?:の)?住所")
_ADDRESS = re.compile(r"(?i)\baddress\b|\b(?:ship|deliver) (?:\S+ ){0,3}to\b|住所|届け先|配送先")
_PAYMENT = re.compile(
    r"(?i)\bpay(?:ment)?\b.*\b(?:with|by|using|to)\b.*\b(?:gift card|paypal|card)\b|"
    r"\b(?:use|switch to) (?:my |the )?(?:gift card|paypal|credit card)\b|支払(?:い)?方法|で支払"
)
_RETURN = re.compile(
    r"(?i)\breturn (?:the|my|these|those|this|it|them|both|all|one|everything|order)\b|"
    r"\b(?:want|like|need|wish|going) to return\b|\bplease return\b|"
    r"\bsend (?:\w+ ){0,3}back\b|返品(?:したい|して|を|します|お願い)"
)
_MAY_I = re.compile(
    r"(?i)\b(?:can|could|may) I return\b|\bam I able to return\b|\bis it possible to return\b|"
    r"返品できますか|返品は可能"
)
_SWAP = re.compile(r"(?i)\b(?:exchange|swap|switch|change)\b|交換|変更|替え")
_MISTAKE = re.compile(r"(?i)\bmistake|by accident|accidentally|wrong order\b|間違")
_METHODS = (
    (re.compile(r"(?i)gift card|ギフト"), "gift_card"),
    (re.compile(r"(?i)paypal"), "paypal"),
    (re.compile(r"(?i)credit card|\bcard\b|クレジット|カード"), "credit_card"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Words:
    confirm: str  # the proposal put to the customer
    plainly: str  # asked again, after words that may mean either
    not_changed: str  # they did not say yes
    refused: str  # the tool refused: the rule it named
    changed: str
    queued: str
    dry_run: str
    denied: str
    address_please: str
    which_items: str
    which_variant: str
    your_account: str = "your account"  # what an account's change is to, said to a customer
    japanese: bool = False


ENGLISH = Words(**catalogue.WRITES_EN)
JAPANESE = Words(**catalogue.WRITES_JA)

_INTENTS = (  # the first that matches: "cancel ... and refund" is a cancel
    (_CANCEL, "cancel"),
    (_USER_ADDRESS, "user_address"),
    (_ADDRESS, "address"),
    (_PAYMENT, "payment"),
    (_RETURN, "return"),
    (_SWAP, "items"),
)


def wanted(goal: str) -> str | None:
    """The change a customer's message asks for, as an intent; None when it asks for none.
    "Can I return it?" asks whether it may be refunded: the refund flow's verdict answers."""
    intent = next((intent for pattern, intent in _INTENTS if pattern.search(goal)), None)
    return None if intent == "return" and _MAY_I.search(goal) else intent


@dataclass(frozen=True, slots=True)
class _Talk:
    """What the playbook knows of the conversation: its texts, the calls made and the replies."""

    request: ModelRequest
    made: list[tuple[CallTool, Step]]
    texts: str  # the customer's words: the question, replies, earlier turns
    words: Words
    about: str  # the order (or the customer's account) the change is to

    @property
    def offered(self) -> list[str]:
        return [spec.name for spec in self.request.tools]

    def ask_once(self, question: str) -> Decision:
        """`question` to the customer; asked already, the change is not made."""
        if any(
            c.tool == ASK_USER_TOOL and c.args.get("question") == question for c, _ in self.made
        ):
            return FinalAnswer(answer=self.words.not_changed.format(what=self.about))
        return AskUser(question=question)

    def step(self, tool: str, **args: object) -> Step | None:
        return next(
            (
                s
                for c, s in self.made
                if c.tool == tool and all(c.args.get(k) == v for k, v in args.items())
            ),
            None,
        )


def change(
    request: ModelRequest,
    made: list[tuple[CallTool, Step]],
    codes: list[str],
    texts: str,
    languages: tuple[Words, Who],
    *,
    intent: str,
) -> Decision | None:
    """The next step of the change `intent` (cancel, address, user_address, payment, return,
    items: playbook/turn.py's CHANGES), or None when no order is named or the write tools are
    not offered."""
    offered = {spec.name for spec in request.tools}
    no_order = not codes and intent != "user_address"  # asked for as any question's is
    if not offered & set(DESK_WRITES) or no_order:
        return None
    words, who_words = languages
    user = identify(request, made, texts, who_words)
    if not isinstance(user, str):
        return user
    # An order by its code; an account in words, never by its id (an operator's word)
    talk = _Talk(request, made, texts, words, codes[0] if codes else words.your_account)
    if intent == "user_address":
        return _user_address(talk, user)
    details = talk.step("get_order_details", order_id=codes[0])
    if details is None:
        return CallTool(tool="get_order_details", args={"order_id": codes[0]})
    if details.is_error:
        return _outcome(details, talk)
    return _on_order(talk, intent, codes[0], details.record or {}, user)


def _on_order(talk: _Talk, intent: str, code: str, order: Record, user: str) -> Decision:
    """The change `intent` to the order read: its write call (proposed, then confirmed), or
    the question or the read it still needs."""
    if intent == "cancel":
        reason = "ordered by mistake" if _MISTAKE.search(talk.texts) else "no longer needed"
        call = CallTool(tool="cancel_pending_order", args={"order_id": code, "reason": reason})
        return _confirmed(talk, call)
    if intent == "address":
        address = _address(talk)
        if not isinstance(address, dict):
            return address
        args = {"order_id": code, **address}
        return _confirmed(talk, CallTool(tool="modify_pending_order_address", args=args))
    if intent == "payment":
        return _payment(talk, code, user)
    return _items_changed(talk, intent, code, order)


def _items_changed(talk: _Talk, intent: str, code: str, order: Record) -> Decision:
    """Items returned, or swapped for another variant: the items named, the original method."""
    paid = [p for p in order.get("payments") or () if p["kind"] == "payment"]
    original = str(paid[0]["payment_method_id"]) if paid else ""
    items = _items_named(talk, code, order)
    if not isinstance(items, list):
        return items
    if intent == "return":
        ids = [item for item, _, _ in items]
        args = {"order_id": code, "item_ids": ids, "payment_method_id": original}
        return _confirmed(talk, CallTool(tool="return_delivered_order_items", args=args))
    return _swap(talk, code, order, items, original)


def _confirmed(talk: _Talk, planned: CallTool) -> Decision:
    """Propose, put the proposal to the customer, and after their yes make the same call again."""
    tries = [
        (i, s)
        for i, (c, s) in enumerate(talk.made)
        if (c.tool, c.args) == (planned.tool, planned.args)
    ]
    if not tries:
        return planned
    first_index, first = tries[0]
    if len(tries) > 1 or not isinstance(first.outcome, Proposed):
        return _outcome(tries[-1][1], talk)
    answers = [s for c, s in talk.made[first_index:] if c.tool == ASK_USER_TOOL]
    proposal, shown = first.outcome.proposal, _shown(talk, planned)
    if not answers:
        return _put_unless_refused(talk, shown, first.outcome)
    reply = customer_words(answers[-1])
    if ambiguous(reply) and len(answers) == 1:  # "大丈夫です": asked once more, in plain words
        summary = shown or first.outcome.summary
        return AskUser(question=talk.words.plainly.format(id=proposal, summary=summary))
    if not explicit_yes(reply):
        return FinalAnswer(answer=talk.words.not_changed.format(what=talk.about))
    return CallTool(tool=planned.tool, args=dict(planned.args), thought="The customer said yes.")


def _put_unless_refused(talk: _Talk, shown: str | None, proposed: Proposed) -> Decision:
    """The proposal put to the customer; not when it was put before and this message is their
    plain no to it (a conversation whose no came in a message of its own)."""
    if proposed.again and refused(talk.request.goal):
        return FinalAnswer(answer=talk.words.not_changed.format(what=talk.about))
    return AskUser(question=_put(talk, shown, proposed.proposal, proposed.summary))


def _put(talk: _Talk, shown: str | None, proposal: str, summary: str) -> str:
    """The question that puts the proposal to the customer: in their words when the playbook
    can say it (naming the proposal's id, which their yes answers), else the tool's line."""
    if shown is None:
        return talk.words.confirm.format(summary=summary)
    return _words(talk).ask.format(shown=shown, id=proposal)


def _words(talk: _Talk) -> playbook_shown.Shown:
    return playbook_shown.JAPANESE if talk.words.japanese else playbook_shown.ENGLISH


def _shown(talk: _Talk, planned: CallTool) -> str | None:
    """The change as the customer reads it (playbook/shown.py), from what the run read."""
    order = talk.step("get_order_details", order_id=planned.args.get("order_id"))
    products = [s for c, s in talk.made if c.tool == "get_product_details" and not s.is_error]
    record = (order.record or {}) if order is not None and not order.is_error else {}
    product = (products[-1].record or {}) if products else {}
    return playbook_shown.shown(planned, record, product, _words(talk))


def customer_words(reply: Step) -> str:
    """What the customer wrote in answer to a question, without any note of the desk."""
    return reply.outcome.words if isinstance(reply.outcome, Replied) else reply.observation


def _outcome(step: Step, talk: _Talk) -> FinalAnswer:
    """What became of a write (or of the read before it), in the customer's words: a refusal
    names the rule the tool gave."""
    words = talk.words
    # A Japanese customer reads the change in Japanese (shown.py), not the tool's English line.
    shown = _shown(talk, step.call) if words.japanese and step.call is not None else None
    match step.outcome:
        case Failed(message=message):
            rule = _rule(message, talk.offered)
            rule = rules_ja.in_japanese(rule) if words.japanese else rule
            return FinalAnswer(answer=words.refused.format(what=talk.about, rule=rule))
        case Changed(change_id=number, summary=summary):
            return FinalAnswer(answer=words.changed.format(number=number, summary=shown or summary))
        case Queued(item=number, summary=summary):
            return FinalAnswer(answer=words.queued.format(number=number, summary=shown or summary))
        case Simulated(summary=summary):
            return FinalAnswer(answer=words.dry_run.format(summary=shown or summary))
        case Denied(reason=reason):
            reason = NOT_APPROVED if words.japanese else reason.split("\n")[0].rstrip(".")
            return FinalAnswer(answer=words.denied.format(what=talk.about, reason=reason))
        case Read() | NotFound() | Proposed() | Refunded() | Transferred() | Replied() | Opaque():
            reason = step.observation.split("\n")[0].rstrip(".")
            return FinalAnswer(answer=words.denied.format(what=talk.about, reason=reason))
        case _:
            assert_never(step.outcome)


NOT_APPROVED = "担当者の承認が得られませんでした"  # a Japanese customer's word for a denial


def _rule(error: str, tools: Iterable[str]) -> str:
    """The rule a refusal names, and what the customer can do instead: the clauses of
    `<rule>; <advice>; nothing was changed` meant for them (not those naming a tool)."""
    clauses = [c.strip() for c in error.split(";")]
    kept = [
        clause.rstrip(".")
        for clause in clauses
        if clause and clause != "nothing was changed" and not any(t in clause for t in tools)
    ]
    return "; ".join(kept or clauses[:1])


def _user_address(talk: _Talk, user: str) -> Decision:
    address = _address(talk)
    if not isinstance(address, dict):
        return address
    return _confirmed(talk, CallTool(tool="modify_user_address", args={"user_id": user, **address}))


def _address(talk: _Talk) -> dict[str, str] | Decision:
    """The new address the customer wrote ("... to 4-5-6 Umeda, Kita-ku, Osaka 530-0001,
    Japan"), asked for once when there is none."""
    for text in reversed(talk.texts.split("\n")):
        after = re.search(r"(?i)(?:\bto\b|:|：)\s*(.+)$", text)  # not the "To" of "Tokyo"
        parsed = parsed_address(after.group(1)) if after else None
        parsed = parsed or parsed_address(text)
        if parsed is not None:
            return parsed
    return talk.ask_once(talk.words.address_please)


def _payment(talk: _Talk, code: str, user: str) -> Decision:
    """The customer's own method of the kind they named (gift card, PayPal, card)."""
    details = talk.step("get_user_details", user_id=user)
    if details is None:
        return CallTool(tool="get_user_details", args={"user_id": user})
    owned = [str(m["id"]) for m in (details.record or {}).get("payment_methods") or ()]
    kind = next((k for pattern, k in _METHODS if pattern.search(talk.request.goal)), "")
    chosen = next((m for m in owned if m.startswith(kind)), None) if kind else None
    if chosen is None:
        named = {"gift_card": "gift card", "paypal": "PayPal", "credit_card": "credit card"}
        rule = f"you have no {named.get(kind, 'such payment method')} on your account"
        return FinalAnswer(answer=talk.words.refused.format(what=talk.about, rule=rule))
    call = CallTool(
        tool="modify_pending_order_payment", args={"order_id": code, "payment_method_id": chosen}
    )
    return _confirmed(talk, call)


def _items_named(talk: _Talk, code: str, order: Record) -> list[OrderItemRef] | Decision:
    """The order's items the customer named; asked once when it cannot tell."""
    named, items = named_items(talk.texts, order)
    if named:
        return named
    listed = ", ".join(dict.fromkeys(name for _, _, name in items))
    return talk.ask_once(talk.words.which_items.format(code=code, items=listed))


def _swap(
    talk: _Talk, code: str, order: Record, items: list[OrderItemRef], original: str
) -> Decision:
    """Items swapped for the variant of the same product whose options the customer named:
    before delivery a change of the order, after it an exchange."""
    product = items[0][1]
    details = talk.step("get_product_details", product_id=product)
    if details is None:
        return CallTool(tool="get_product_details", args={"product_id": product})
    product_record = details.record or {}
    chosen = variant(talk.texts, product_record, {i for i, _, _ in items})
    if chosen is None:
        choices = [
            options(v["options"]) for v in product_record.get("variants") or () if v["available"]
        ]
        return talk.ask_once(
            talk.words.which_variant.format(name=items[0][2], variants="; ".join(choices))
        )
    same = [i for i, p, _ in items if p == product]
    pending = order.get("status") == "PENDING"
    tool = "modify_pending_order_items" if pending else "exchange_delivered_order_items"
    args = {
        "order_id": code,
        "item_ids": same,
        "new_item_ids": [chosen] * len(same),
        "payment_method_id": original,
    }
    return _confirmed(talk, CallTool(tool=tool, args=args))
