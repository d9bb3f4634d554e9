"""What the offline playbook says when it did not understand, or was only greeted: never a
guess (issue 49, point 3). A message about a named order gets the order's state in one
sentence and what the desk can do with it; with nothing named, a question listing what the desk
can help with; a greeting or thanks, the same list after a word of welcome. The list is the
intent table's (domain/intents.py), in the customer's language; the state is the lookup's
typed outcome, never its text."""

from __future__ import annotations

from dataclasses import dataclass

from agent_cli.core.decisions import CallTool, Decision, FinalAnswer, Step
from agent_cli.core.tool_outcomes import Changed, NotFound, Read
from agent_cli.domain.intents import BY_NAME, OFFERS, Intent
from agent_cli.providers.playbook import catalogue

# What the desk can do with an order in each status (the table's rows, in its order).
_WITH_ORDER: dict[str, tuple[Intent, ...]] = {
    "PENDING": ("status", "cancel", "address", "items", "payment"),
    "PENDING_ITEM_MODIFIED": ("status", "cancel", "address", "payment"),
    "SHIPPING": ("status",),
    "DELIVERED": ("refund", "return", "exchange", "status"),
    "CANCELLED": ("refund_status",),
    "REFUNDED": ("refund_status",),
    "RETURN_REQUESTED": ("refund_status", "status"),
    "EXCHANGE_REQUESTED": ("status",),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Words:
    unsure: str
    not_in_help: str  # a help question the help centre has no article for
    welcome: str
    state: str
    no_such_order: str
    could_not_read: str
    joiner: str
    japanese: bool

    def can(self, intents: tuple[Intent, ...]) -> str:
        rows = [BY_NAME[i] for i in intents]
        return self.joiner.join(row.ja if self.japanese else row.en for row in rows)


ENGLISH = Words(**catalogue.UNSURE_EN)
JAPANESE = Words(**catalogue.UNSURE_JA)
_STATUS_JA = {
    "PENDING": "発送準備中",
    "PENDING_ITEM_MODIFIED": "発送準備中（商品変更済み）",
    "SHIPPING": "配送中",
    "DELIVERED": "お届け済み",
    "CANCELLED": "キャンセル済み",
    "REFUNDED": "返金済み",
    "RETURN_REQUESTED": "返品手続き中",
    "EXCHANGE_REQUESTED": "交換手続き中",
}
_EVERYTHING: tuple[Intent, ...] = tuple(row.name for row in OFFERS)
# At the run's step limit, in the middle of a flow: what was done, and that nothing else was.
_AT_LIMIT = {
    False: (
        "I could not finish this here{about}, so nothing was changed. Please write again and I "
        "will pick it up.",
        "Done: {summary}. I could not finish the rest here; please write again for it.",
    ),
    True: (
        "{about}ここでは手続きを完了できなかったため、何も変更していません。もう一度ご連絡ください。",
        "次の変更を行いました：{summary}。残りのご依頼はここでは完了できませんでした。"
        "もう一度ご連絡ください。",
    ),
}


def at_limit(history: tuple[Step, ...], japanese: bool, codes: list[str]) -> FinalAnswer:
    """The answer at the step limit when the flow was not done: the changes made, else that
    nothing was changed (never silence), naming the orders the customer named."""
    nothing, done = _AT_LIMIT[japanese]
    made = [s.outcome.summary for s in history if isinstance(s.outcome, Changed)]
    if made:
        return FinalAnswer(answer=done.format(summary=("、" if japanese else "; ").join(made)))
    named = ("・" if japanese else ", ").join(codes)
    about = (f"注文{named}について、" if japanese else f" (order {named})") if codes else ""
    return FinalAnswer(answer=nothing.format(about=about))


def unsure(intent: str, codes: list[str], lookups: dict[str, Step], words: Words) -> Decision:
    """The next step for a message the desk did not understand (or a greeting): each named
    order looked up, then its state and what can be done; else the list of what it can do."""
    if not codes:
        template = {"greeting": words.welcome, "help": words.not_in_help}.get(intent, words.unsure)
        return FinalAnswer(answer=template.format(can=words.can(_EVERYTHING)))
    for code in codes:
        if code not in lookups:
            thought = f"I did not understand the request; order {code}'s state says what can help."
            return CallTool(tool="lookup_order", args={"order_code": code}, thought=thought)
    states = [_state(code, lookups[code], words) for code in codes]
    return FinalAnswer(answer=("" if words.japanese else "\n").join(states))


def _state(code: str, lookup: Step, words: Words) -> str:
    outcome = lookup.outcome
    if isinstance(outcome, NotFound):
        return words.no_such_order.format(code=code)
    if lookup.is_error or not isinstance(outcome, Read) or outcome.status is None:
        return words.could_not_read.format(code=code)
    status = outcome.status.upper()
    can = _WITH_ORDER.get(status, ("status",))
    shown = _STATUS_JA.get(status, status) if words.japanese else status.lower().replace("_", " ")
    return words.state.format(code=code, status=shown, can=words.can(can))
