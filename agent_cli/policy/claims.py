"""What an answer claims was done, read in any wording (desk.md, rule 5), and checked against
what this run did (its outcomes) and what the store showed (its reads).

A claim is a clause that says an act was done or is now so: first person or passive, a
resulting state ("is cancelled now", "will now ship to ..."), a completion word ("done",
"完了しました"), "we" and "our team", either apostrophe, adverbs between. An act no kind's words
name, said in the first person's past, in the passive or as a new state ("has now been closed",
"is now marked", an act noun with いたしました), is a claim of some change ("done"), unless it
is a reading or what an order undergoes (delivered, shipped, charged). Offers, conditions,
questions, negations and what still waits (for the customer's yes, for a person's approval)
are not claims. Each claim has a kind and the orders its clause names (none: whichever); it is
grounded when this run committed that kind of act on those orders, or when a read of this run
showed the order already so (a fact: an order refunded last week).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from agent_cli.core.decisions import StatedClaim, Step
from agent_cli.core.tool_outcomes import Changed, Proposed, Queued, Read, Refunded, Transferred
from agent_cli.policy import claim_words as words
from agent_cli.policy.verdicts import find_order_codes

# The kinds, as the model is told them.
KINDS = {
    "cancel": "a cancellation",
    "refund": "a refund",
    "address": "an address change",
    "account_address": "a change of the account's address",
    "payment": "a payment change",
    "items": "a change of items",
    "return": "a return",
    "exchange": "an exchange",
    "handover": "a hand-over to a person",
    "done": "a change",
}
WRITE_KINDS = {
    "cancel_pending_order": "cancel",
    "modify_pending_order_address": "address",
    "modify_user_address": "account_address",
    "modify_pending_order_payment": "payment",
    "modify_pending_order_items": "items",
    "return_delivered_order_items": "return",
    "exchange_delivered_order_items": "exchange",
}
_WHOLE_CONVERSATION = ("handover", "account_address")  # acts on no order
_STATE_FACTS = {  # an order's status a read showed, and the claim it grounds as a fact
    "CANCELLED": "cancel",
    "REFUNDED": "refund",
    "RETURN_REQUESTED": "return",
    "EXCHANGE_REQUESTED": "exchange",
    "PENDING_ITEM_MODIFIED": "items",
}

# A clause: up to a stop, a comma or a line's end (not the point or comma of a number), then
# split again at "and", "but", "so" and a dash between words.
# Possessive (`++`): a clause's words are read in runs, never given back.
_CLAUSE = re.compile(r"(?:[^.!?;:。！？；、,\n]++|[.,:](?=\d))++(?:[.!?;:。！？；、,]+|\n|$)")
_JOIN = re.compile(r"\s+(?:and|but|so|-)\s+")
_ENDS = (".", "!", "?", "。", "！", "？")
_DIGIT = re.compile(r"\d")
_KANA_KANJI = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
_BOTH = re.compile(
    r"\b(?:both|all (?:of )?(?:your|the|these|those)|each of|every)\b|両方|すべて|全て|全部"
)


@dataclass(frozen=True, slots=True)
class Claim:
    """A clause that says an act was done: its kind, the orders it names, how many."""

    kind: str
    orders: tuple[str, ...]
    plural: bool
    clause: str
    bare: bool = False  # "Done:", "I returned": what follows in the sentence may say it was a read


def clauses(answer: str) -> list[tuple[str, bool]]:
    """The answer in clauses, each read on its own (a question after a statement is a
    question; the statement stays a claim), each with whether it ends its sentence."""
    text = unicodedata.normalize("NFKC", answer).replace("\u2019", "'").replace("\u2018", "'")
    found: list[tuple[str, bool]] = []
    for match in _CLAUSE.finditer(text):
        piece = match.group()
        ends = piece.rstrip().endswith(_ENDS) or piece.endswith("\n")
        parts = [part.strip() for part in _JOIN.split(piece) if part.strip()]
        found += [(part, ends and n == len(parts) - 1) for n, part in enumerate(parts)]
    if found:
        found[-1] = (found[-1][0], True)
    return found


def claims(answer: str) -> list[Claim]:
    """Every claim of an act done that the answer makes, in order."""
    found: list[Claim] = []
    sentence: list[Claim] = []  # this sentence's claims, kept until it ends
    condition = other_words = False  # a condition opened (the rest is its outcome); other words
    named: tuple[str, ...] = ()  # the orders named last: what "it" is about
    for clause, ends in clauses(answer):
        if _DIGIT.search(clause):  # every order code has a digit
            named = tuple(find_order_codes(clause)) or named
        lower = clause.lower()
        japanese = not clause.isascii() and _KANA_KANJI.search(clause) is not None
        clause_words = None if japanese else words.WORDS.findall(lower)
        condition = condition or _opens_condition(lower, clause_words)
        claimed = [] if condition else _claimed(lower, clause_words, named, clause)
        other_words = other_words or (not claimed and bool(sentence))  # words after a claim
        sentence += claimed
        if ends:  # "Done: I looked up A100", "Done: nothing was refunded": no change claimed
            found += [claim for claim in sentence if not (other_words and claim.bare)]
            sentence, condition, other_words = [], False, False
    return found


def _opens_condition(lower: str, clause_words: list[str] | None) -> bool:
    """Whether the clause opens a condition (English when the clause's words are given)."""
    if clause_words is None:
        return words.IF_JA.search(lower) is not None
    opens = clause_words[:1] and clause_words[0] in words.IF_FIRST
    return bool(opens) and words.IF_EN.search(lower) is not None


def _not_a_claim(lower: str, clause_words: list[str] | None) -> bool:
    """A question, a condition, an offer, a negation, what waits, policy (English when the
    clause's words are given)."""
    if clause_words is None:
        return words.NOT_JA.search(lower) is not None
    if not words.NOT_WORDS.isdisjoint(clause_words):
        return True
    if "?" in lower or (clause_words[:1] and clause_words[0] in words.NOT_FIRST):
        return words.NOT_EN.search(lower) is not None
    return not words.NOT_GATE.isdisjoint(clause_words) and words.NOT_EN.search(lower) is not None


def _done_otherwise(lower: str, clause_words: list[str] | None, cued: frozenset[str]) -> str:
    """An act said in words no kind names: "said" for a first person's past (what follows in
    the sentence may say it was a reading: "I returned to your question: ..."), "passive" for
    a passive or a new state (English) and an act noun done (Japanese); "" for none (a reading
    or what an order undergoes)."""
    if clause_words is None:
        did = "did" in cued and words.JA_DID.search(lower) is not None
        return "passive" if did and words.JA_READS.search(lower) is None else ""
    first = "i" in clause_words or "we" in clause_words  # the only words FIRST_PERSON finds
    if first and words.FIRST_PERSON.search(lower) and words.DID.search(lower):
        return "said"
    passive = "passive" in cued and words.PASSIVE_DONE.search(lower) is not None
    return "passive" if passive else ""


def _claimed(
    lower: str, clause_words: list[str] | None, named: tuple[str, ...], clause: str
) -> list[Claim]:
    """The claims of one clause (English when its words are given): the kinds whose words it
    says an act in (only those whose cue words it holds are read), unless it is no claim."""
    cued = words.cued_en(clause_words) if clause_words is not None else words.cued_ja(lower)
    patterns = words.JA if clause_words is None else words.EN
    kinds = [
        kind
        for kind, pattern in patterns
        if kind in cued
        and not (kind in words.UNLESS and words.UNLESS[kind].search(lower))
        and pattern.search(lower)
    ]
    bare = kinds == ["done"]  # a completion word alone, unless an act is said as well
    if (bare or not kinds) and (how := _done_otherwise(lower, clause_words, cued)):
        kinds, bare = ["done"], how == "said"
    if not kinds or _not_a_claim(lower, clause_words):
        return []
    if len(kinds) > 1 and "done" in kinds:
        kinds.remove("done")  # "done" stands for a kind only when the clause names none
    plural = kinds != ["done"] and bool(_BOTH.search(lower))  # "all done": no count of orders
    return [Claim(kind, named, plural, clause, bare) for kind in kinds]


@dataclass(frozen=True, slots=True)
class Acts:
    """What this run did (kind -> orders, "" for none named) and what its reads showed."""

    made: dict[str, set[str]]
    facts: dict[str, set[str]]
    waiting: list[str]  # proposals and queued changes, in words

    def grounds(self, claim: Claim) -> bool:
        kinds = _kinds_grounding(claim.kind)
        done = set().union(*(self.made.get(k, set()) | self.facts.get(k, set()) for k in kinds))
        if not done:
            return False
        if claim.plural and len(done) < 2 and not claim.orders:
            return False
        if claim.kind in _WHOLE_CONVERSATION:  # a hand-over or the account: no order's
            return True
        return all(_fold(order) in done for order in claim.orders)

    def described(self) -> str:
        """What the run did, in words, for a refusal to repeat."""
        made = [
            f"{KINDS[k]} of {', '.join(sorted(o - {''})) or 'the account'}"
            for k, o in self.made.items()
            if k != "done"
        ]
        parts = [f"committed {'; '.join(made)}" if made else "committed nothing"]
        if self.waiting:
            parts.append(f"waiting: {'; '.join(self.waiting)}")
        return ", ".join(parts)


def _kinds_grounding(kind: str) -> tuple[str, ...]:
    """The acts that ground a claim of `kind` ("done" is grounded by any act done)."""
    if kind == "done":
        return (*WRITE_KINDS.values(), "refund", "handover")
    if kind == "address":
        return ("address", "account_address")
    if kind in ("items", "exchange"):  # "I exchanged the size" of a pending order, and back
        return ("items", "exchange")
    return (kind,)


def _fold(code: str) -> str:
    return code.upper().lstrip("#")


def acts_of(history: Iterable[Step]) -> Acts:
    """What the run's outcomes show done, and the facts its reads showed."""
    made: dict[str, set[str]] = {}
    facts: dict[str, set[str]] = {}
    waiting: list[str] = []
    for step in history:
        outcome = step.outcome
        if isinstance(outcome, Changed):
            order = _fold(outcome.order or "")
            made.setdefault(WRITE_KINDS.get(outcome.tool, "done"), set()).add(order)
            if outcome.refund > 0:
                made.setdefault("refund", set()).add(order)
        elif isinstance(outcome, Refunded) and not outcome.earlier:
            made.setdefault("refund", set()).add(_fold(outcome.order))
        elif isinstance(outcome, Transferred):
            made.setdefault("handover", set()).add("")
        elif isinstance(outcome, Proposed | Queued):
            waiting.append(outcome.summary)
        elif isinstance(outcome, Read) and outcome.order:
            _facts(outcome, facts)
    return Acts(made, facts, waiting)


def _facts(read: Read, facts: dict[str, set[str]]) -> None:
    order = _fold(read.order or "")
    if (kind := _STATE_FACTS.get(read.status or "")) is not None:
        facts.setdefault(kind, set()).add(order)
    if read.refunded > 0 or read.status == "REFUNDED":
        facts.setdefault("refund", set()).add(order)


def unfounded(answer: str, history: tuple[Step, ...]) -> str | None:
    """The first claim of the answer that neither this run's acts nor the store's facts bear
    out, worded for the model to repair (what was actually done included); None if none."""
    return _first_unfounded(claims(answer), history)


def unfounded_stated(stated: tuple[StatedClaim, ...], history: tuple[Step, ...]) -> str | None:
    """The first act the final answer states as data (JSON mode's `claims`: kind and order)
    that this run did not do and the store did not show, checked as a claim read from its
    text is; None if none."""
    read: list[Claim] = []
    for claim in stated:
        orders = (claim.order,) if claim.order else ()
        read.append(Claim(claim.kind, orders, False, " ".join(("claims:", claim.kind, *orders))))
    return _first_unfounded(read, history) if read else None


def _first_unfounded(found: list[Claim], history: tuple[Step, ...]) -> str | None:
    acts = acts_of(history)
    for claim in found:
        if not acts.grounds(claim):
            where = f"{', '.join(claim.orders)}: " if claim.orders else ""
            return (
                f"the answer says {KINDS[claim.kind]} was made ({where}{claim.clause!r}), and "
                f"this run did not make it ({acts.described()}); say only what was done (a change "
                "waiting for the customer's yes or a person's approval is waiting), or what the "
                "customer can do"
            )
    return None
