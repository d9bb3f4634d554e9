"""The offline playbook model: fixed code that decides like a careful support agent.

It finds the order codes in the goal (asking for one, once, when there is none), looks each one
up, reads the refund policy, then writes the answer from those observations alone (it knows no
order facts of its own), in the language of the question (English or Japanese). This is the
design's "when NOT to use an agent" flow, which is exactly why it is a faithful offline
stand-in: deterministic, free and instant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal

from agent_cli.core.decisions import ASK_USER_TOOL, AskUser, CallTool, Decision, FinalAnswer, Step
from agent_cli.core.seams import ModelReply, ModelRequest
from agent_cli.core.tool_outcomes import NotFound
from agent_cli.domain.refunds import eligibility
from agent_cli.language import intents
from agent_cli.policy.consent import explicit_yes
from agent_cli.policy.language import language_of, speaks_japanese
from agent_cli.policy.verdicts import find_order_codes
from agent_cli.providers.playbook import catalogue
from agent_cli.providers.playbook import desk as playbook_desk
from agent_cli.providers.playbook import parts as playbook_intents
from agent_cli.providers.playbook import unsure as playbook_unsure
from agent_cli.providers.playbook import who as playbook_who
from agent_cli.providers.playbook import writes as playbook_writes
from agent_cli.providers.playbook.facts import Policy, lookup_fields, policy_of
from agent_cli.providers.playbook.turn import ABOUT_AN_ORDER, CHANGES, RETURN_TOO, intent_of_turn
from agent_cli.providers.playbook.typos import Typos
from agent_cli.providers.playbook.writes import customer_words


class PlaybookModel:
    """Look up every order named, read the policy, answer; the same inputs give the same answer."""

    provider = "offline"
    model = "playbook"

    def decide(self, request: ModelRequest) -> ModelReply:
        decision = self._decide(request)
        if request.final and not isinstance(decision, FinalAnswer):  # no step left to take
            japanese, codes = speaks_japanese(request), find_order_codes(request.goal)
            decision = playbook_unsure.at_limit(request.history, japanese, codes)
        return ModelReply(_in_english(decision, request.goal))

    def _decide(self, request: ModelRequest) -> Decision:
        """Each question of the message in turn: the next step of the first not yet answered,
        else every answer, in the order asked."""
        asked = playbook_intents.parts(request.goal)
        if len(asked) == 1:
            return self._decide_one(request)
        answers = []
        for part in asked:
            decision = self._decide_one(replace(request, goal=part))
            if not isinstance(decision, FinalAnswer):
                return decision
            answers.append(decision.answer)
        return FinalAnswer(answer=("" if speaks_japanese(request) else "\n").join(answers))

    def _decide_one(self, request: ModelRequest) -> Decision:
        heard = _Heard.of(request)
        intent = intent_of_turn(request)
        desk = _desk_step(request, heard, intent)
        if desk is not None:
            return desk
        if intent not in ("refund", "refund_status"):  # a verdict only when it was asked for
            return _not_understood(request, heard, intent)
        writer = _JAPANESE if heard.japanese else _ENGLISH
        codes, typos, lookups = heard.codes, heard.typos, heard.lookups
        if not request.final:  # at a step limit, answer from what is known
            action = typos.next_action(lookups, heard.replies, writer) or _next_action(
                codes, heard.replies, lookups, heard.policy, writer
            )
            if action is not None:
                return action
        codes = [code for code in codes if code not in typos.replaced] or typos.unknown(lookups)
        facts = [_assess(code, lookups.get(code), heard.policy, request.today) for code in codes]
        words = playbook_desk.JAPANESE if heard.japanese else playbook_desk.ENGLISH
        status = intent == "refund_status"
        answer = playbook_desk.refund_status(codes, lookups, words) if status else None
        return FinalAnswer(
            answer=answer or writer.answer(facts, heard.policy) + _offer(request, facts, writer)
        )


def _offer(request: ModelRequest, facts: list[_Fact], writer: _Language) -> str:
    """After a refundable verdict, the return that sends the money back, offered when the intent
    model finds a return likely too ("Can I return it for a refund?"), not for eligibility alone."""
    returns = any(spec.name == "return_delivered_order_items" for spec in request.tools)
    refundable = returns and any(f.verdict == "refundable" for f in facts)
    sending_back = intents.read(request.goal).probabilities.get("return", 0.0) if refundable else 0
    return writer.offer_return if sending_back >= RETURN_TOO else ""


def _not_understood(request: ModelRequest, heard: _Heard, intent: str) -> Decision:
    """A message the desk did not understand, a greeting, or a request its flow could not
    take further (no order named for a request about one: asked for, once)."""
    writer = _JAPANESE if heard.japanese else _ENGLISH
    if intent in ABOUT_AN_ORDER and not heard.codes and not heard.replies and not request.final:
        return AskUser(question=writer.which_order)
    words = playbook_unsure.JAPANESE if heard.japanese else playbook_unsure.ENGLISH
    decision = playbook_unsure.unsure(intent, heard.codes, heard.lookups, words)
    if request.final and not isinstance(decision, FinalAnswer):  # no step left to look up
        return playbook_unsure.unsure(intent, [], {}, words)
    return decision


@dataclass(frozen=True, slots=True, kw_only=True)
class _Heard:
    """What the run so far holds: the calls made, the customer's replies and words, the orders
    named (or remembered from earlier chat turns), the lookups, the policy, the typos."""

    made: list[tuple[CallTool, Step]]
    replies: list[str]
    codes: list[str]
    texts: str  # every word of the customer's: earlier turns, the question, the replies
    japanese: bool
    lookups: dict[str, Step]
    policy: Step | None
    typos: Typos

    @classmethod
    def of(cls, request: ModelRequest) -> _Heard:
        made = [(step.call, step) for step in request.history if step.call is not None]
        replies = [customer_words(s) for call, s in made if call.tool == ASK_USER_TOOL]
        codes = find_order_codes(" ".join([request.goal, *replies])) or _remembered(request)
        earlier = [turn.question for turn in request.conversation]
        lookups = {
            str(call.args.get("order_code", "")).upper(): step
            for call, step in made
            if call.tool == "lookup_order"
        }
        policy = next((step for call, step in made if call.tool == "refund_policy"), None)
        typos = Typos.of(request.goal, codes, lookups)
        if typos.meant and replies and explicit_yes(replies[-1]):
            codes = [*codes, typos.meant[0]]  # "Did you mean A100?" "Yes"
        codes = [code for code in codes if code not in typos.replaced or not replies]
        texts = "\n".join([*earlier, request.goal, *replies])
        japanese = speaks_japanese(request)
        return cls(
            made=made,
            replies=replies,
            codes=codes,
            texts=texts,
            japanese=japanese,
            lookups=lookups,
            policy=policy,
            typos=typos,
        )


def _desk_step(request: ModelRequest, heard: _Heard, intent: str) -> Decision | None:
    """The next step of the turn's desk intent (a hand-over, the customer's orders, a change,
    a help question, tracking), or None when it is the refund flow's, or its flow could not
    go on (no order named, its tools not offered)."""
    words = playbook_desk.JAPANESE if heard.japanese else playbook_desk.ENGLISH
    who = playbook_who.JAPANESE if heard.japanese else playbook_who.ENGLISH
    changes = playbook_writes.JAPANESE if heard.japanese else playbook_writes.ENGLISH
    made, typos = heard.made, heard.typos
    if intent in CHANGES and not (typos.cleaned and not typos.meant):  # a typo is asked first
        languages = (changes, who)
        return playbook_writes.change(
            request, made, heard.codes, heard.texts, languages, intent=CHANGES[intent]
        )
    if intent == "help" or (intent == "refund_status" and not heard.codes):
        asked_which = heard.codes or typos.cleaned or _asked_which(made)
        helped = None if asked_which else _help(request, made)
        if isinstance(helped, FinalAnswer) and intent == "refund_status":  # and whose refund?
            return FinalAnswer(answer=f"{helped.answer} {words.which_refund}")
        return helped
    flows: dict[str, Callable[[], Decision | None]] = {
        "handover": lambda: playbook_desk.hand_over(
            request, made, words, (heard.texts, heard.codes)
        ),
        "orders": lambda: playbook_who.orders_of(request, made, heard.texts, who),
        "status": lambda: (
            None
            if typos.meant
            else playbook_desk.tracking(request, made, heard.codes, heard.texts, words)
        ),
    }
    flow = flows.get(intent)
    return flow() if flow is not None else None


def _asked_which(made: list[tuple[CallTool, Step]]) -> bool:
    """The customer was asked which order this is about (so their reply is not a help question)."""
    which: tuple[str, ...] = (_ENGLISH.which_order, _JAPANESE.which_order)
    which += tuple(w.no_such_code.split("{")[0] for w in (_ENGLISH, _JAPANESE))
    return any(
        c.tool == ASK_USER_TOOL and str(c.args.get("question")).startswith(which) for c, _ in made
    )


def _remembered(request: ModelRequest) -> list[str]:
    """In a chat, the orders of the latest earlier turn that named any, when this turn refers
    back to them ("and where is it?")."""
    if not playbook_intents.refers_back(request.goal, request.conversation):
        return []
    for turn in reversed(request.conversation):
        if codes := find_order_codes(turn.question):
            return codes
    return []


def _next_action(
    codes: list[str],
    replies: list[str],
    lookups: dict[str, Step],
    policy: Step | None,
    writer: _Language,
) -> CallTool | AskUser | None:
    """Ask for a code (once), look each order up, read the policy; None when all is known."""
    if not codes and not replies:
        return AskUser(question=writer.which_order)
    for code in codes:
        if code not in lookups:
            thought = f"I need the status and delivery date of order {code}."
            return CallTool(tool="lookup_order", args={"order_code": code}, thought=thought)
    if policy is None:
        thought = "I need the refund policy to judge whether a refund is allowed."
        return CallTool(tool="refund_policy", thought=thought)
    return None


ONLY_ENGLISH_AND_JAPANESE = "(I can answer only in English or Japanese, so this is in English.)"


def _in_english(decision: Decision, goal: str) -> Decision:
    """An answer or a question to a customer who wrote in neither English nor Japanese, opened
    with one line saying why it is in English."""
    if language_of(goal) in ("en", "ja"):
        return decision
    if isinstance(decision, FinalAnswer):
        return FinalAnswer(answer=f"{ONLY_ENGLISH_AND_JAPANESE}\n{decision.answer}")
    if isinstance(decision, AskUser):
        return AskUser(question=f"{ONLY_ENGLISH_AND_JAPANESE} {decision.question}")
    return decision


def _help(request: ModelRequest, made: list[tuple[CallTool, Step]]) -> Decision | None:
    """A question about no order, when the help centre is offered: search it once, and answer
    with the best article's passage, cited; None when it is not offered or found nothing."""
    if not any(spec.name == "search_help" for spec in request.tools):
        return None
    searched = next((step for call, step in made if call.tool == "search_help"), None)
    if searched is None:
        thought = "This is about no order: the help centre may answer it."
        return CallTool(tool="search_help", args={"query": request.goal[:300]}, thought=thought)
    hits = [] if searched.is_error else list((searched.record or {}).get("hits") or ())
    if not hits:
        return None
    best = hits[0]  # the search's best, read as data
    return FinalAnswer(answer=f"{best['passage']} [{best['id']}]")


@dataclass(frozen=True, slots=True)
class _Fact:
    """What the observations say about one order, before it is put into words."""

    code: str
    verdict: str  # refundable | wrong_status | expired | no_date | future | not_found | failed
    fields: dict[str, str]
    days: int = 0
    policy: Policy | None = None


def _assess(code: str, lookup: Step | None, policy_step: Step | None, today: date) -> _Fact:
    if lookup is None:
        return _Fact(code, "failed", {"error": "it was not looked up before the step limit"})
    if lookup.is_error:
        return _Fact(code, "failed", {"error": lookup.observation})
    if isinstance(lookup.outcome, NotFound):
        return _Fact(code, "not_found", {})
    fields = lookup_fields(lookup)
    policy = policy_of(policy_step)
    if policy is None:
        return _Fact(code, "failed", {"error": "the refund policy could not be read"})
    return _judge(code, fields, policy, today)


def _judge(code: str, fields: dict[str, str], policy: Policy, today: date) -> _Fact:
    """The verdict on the facts the lookup gave (domain/refunds.py's rules, as the tools'):
    what was refunded is not among them, so a partial refund does not change it."""
    try:
        delivered: date | None = date.fromisoformat(fields.get("delivered_at", ""))
    except ValueError:
        delivered = None
    rule = eligibility(
        fields.get("status", ""),
        delivered,
        today,
        statuses=policy.statuses,
        window_days=policy.window_days,
    )
    return _Fact(code, rule.kind, fields, days=rule.days or 0, policy=policy)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Language:
    """The sentences of one language, keyed by verdict; filled from the facts alone."""

    sentences: dict[str, str]
    no_code: str
    rule: str
    either: str  # joins several refundable statuses
    currency_names: dict[str, str]
    which_order: str  # the clarifying question when no order code is given
    did_you_mean: str  # the question when a code looks mistyped
    no_such_code: str  # the question when a code written has no order, and none is suggested

    or_: str
    capped: str  # after a refundable verdict, when one refund may be less than what is left
    offer_return: str  # after a refundable verdict, when the desk can start the return

    def answer(self, facts: list[_Fact], policy_step: Step | None) -> str:
        if facts:
            return "\n".join(self.sentence(fact) for fact in facts)
        policy = policy_of(policy_step)
        rule = self.rule.format(**_policy_values(policy, self.either)) if policy else ""
        return self.no_code.format(rule=rule)

    def sentence(self, fact: _Fact) -> str:
        sentence = self.sentences[fact.verdict].format(**self._values(fact))
        return sentence + self._cap(fact) if fact.verdict == "refundable" else sentence

    def _cap(self, fact: _Fact) -> str:
        """What this shop allows, when one refund may be less than what is left to refund."""
        currency = fact.fields.get("currency", "")
        cap = fact.policy.cap_in(currency) if fact.policy else None
        if cap is None or cap >= _left(fact.fields):
            return ""
        shown = self.currency_names.get(currency, "{total} " + currency).format(total=f"{cap:,}")
        return self.capped.format(cap=shown)

    def _values(self, fact: _Fact) -> dict[str, object]:
        return {
            "code": fact.code,
            "status": fact.fields.get("status", "?"),
            "delivered_at": fact.fields.get("delivered_at", "?"),
            "days": fact.days,
            "day_word": "day" if fact.days == 1 else "days",
            "amount": self.amount(fact.fields),
            "error": fact.fields.get("error", "?"),
            **_policy_values(fact.policy, self.either),
        }

    def amount(self, fields: dict[str, str]) -> str:
        """What is left to refund (the total, unless refunds were made), in words."""
        currency = fields.get("currency", "")
        left = _left(fields)
        total = f"{left:,}" if left >= 0 else fields.get("total", "?")
        return self.currency_names.get(currency, "{total} " + currency).format(total=total)


def _left(fields: dict[str, str]) -> Decimal:
    """What a lookup says is left to refund, in major units (`left`, else the total; -1: not a
    number)."""
    try:
        left = Decimal(fields.get("left", fields.get("total", "")))
    except ArithmeticError:
        return Decimal(-1)
    return left if left.is_finite() else Decimal(-1)


def _policy_values(policy: Policy | None, either: str) -> dict[str, object]:
    if policy is None:
        return {"window": "?", "statuses": "?"}
    return {"window": policy.window_days, "statuses": either.join(policy.statuses)}


_ENGLISH = _Language(**catalogue.REFUND_EN)

_JAPANESE = _Language(**catalogue.REFUND_JA)
