"""What an answer claims was done, read in any wording (desk.md, rule 5), and checked against
what this run did (its outcomes) and what the store showed (its reads).

A claim is a clause that says an act was done or is now so: first person or passive, a
resulting state ("is cancelled now", "will now ship to ..."), a completion word ("done",
"完了しました"), "we" and "our team", either apostrophe, adverbs between. Offers, conditions,
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

from agent_cli.core.decisions import Step
from agent_cli.core.tool_outcomes import Changed, Proposed, Queued, Read, Refunded, Transferred
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

_DONE_EN = (
    r"(?:updated|changed|modified|corrected|switched|swapped|replaced|set|moved|amended|"
    r"processed|completed?|done|confirmed|finali[sz]ed|submitted|registered|initiated|started|"
    r"accepted|arranged|created|opened|raised|logged|filed|issued|sent|made|approved|placed|"
    r"requested|scheduled|taken care of|sorted|through|on (?:its|the) way)"
)
_EN: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("cancel", r"\bcancel+(?:ed|ation)\b"),
        (
            "refund",
            rf"\brefunded\b|\brefund\b.*\b{_DONE_EN}\b|\b{_DONE_EN}\b.*\brefund\b|"
            r"\bmoney\b.*\b(?:back|returned|on its way)\b|\b(?:credited|reimbursed)\b",
        ),
        (
            "account_address",
            rf"\b(?:default|account|profile|saved|home) address\b.*\b(?:{_DONE_EN}|is now)\b|"
            rf"\b{_DONE_EN}\b.*\b(?:default|account|profile|saved|home) address\b|"
            r"\baddress (?:saved )?on your (?:account|profile)\b.*\b(?:is now|updated|changed)\b",
        ),
        (
            "address",
            rf"\baddress\b.*\b{_DONE_EN}\b|\b{_DONE_EN}\b.*\baddress\b|\baddress is now\b|"
            r"\b(?:will )?(?:now )?(?:ship|be shipped|be delivered)s? (?:now )?to\b|"
            r"\bnow ships? to\b|\bships? to .* (?:now|instead)\b|\bredirected\b|"
            r"\b(?:changed|updated)\b.*\bwhere\b.*\b(?:ships?|goes|is delivered)\b",
        ),
        (
            "payment",
            rf"^(?!.*\brefund)(?:.*\bpayment\b.*\b{_DONE_EN}\b|.*\b{_DONE_EN}\b.*\bpayment\b)|"
            r"\bpayment(?: method)? is now\b|"
            r"\b(?:now )?(?:charged|billed) to\b|\bnow paid\b|"
            r"\bpaid (?:for )?with\b.*\b(?:now|instead)\b",
        ),
        (
            "items",
            r"^(?!.*\b(?:payment|address|card|method)\b).*\b(?:swapped|switched|replaced)\b|"
            r"\b(?:item|items|size|colou?r|variant)s?\b.*"
            r"\b(?:updated|changed|modified|swapped|switched|replaced)\b|"
            r"\b(?:updated|changed|modified)\b.*\b(?:item|items|size|colou?r|variant)s?\b",
        ),
        (
            "return",
            rf"\breturn\b.*\b{_DONE_EN}\b|\b{_DONE_EN}\b.*\breturn\b|\breturned\b.*\b(?:item|"
            r"order|product|it|them|goods)s?\b|\bprepaid (?:return )?label\b.*\b(?:sent|emailed)\b",
        ),
        (
            "exchange",
            rf"\bexchange\b.*\b{_DONE_EN}\b|\b{_DONE_EN}\b.*\bexchange\b|\bexchanged\b",
        ),
        (
            "handover",
            r"\b(?:transferred|handed|escalated|forwarded|passed|referred)\b.*\b(?:you|this|it|"
            r"case|request|issue|matter|team|colleague|person|specialist|agent|human|supervisor|"
            r"manager)\b|\bticket\b.*\b(?:opened|created|raised|filed|logged|submitted)\b|"
            r"\b(?:opened|created|raised|filed|logged|submitted)\b.*\bticket\b|"
            r"\b(?:someone|somebody|a person|a colleague|a human|an agent|our team|the team|a "
            r"specialist|a team member|one of our|a member of|a supervisor|a manager|our "
            r"support|support team|a real person)\b.*\bwill\b.*\b(?:contact|call|reach|follow|"
            r"get back|be in touch|email|write|look into|help|assist)\b|\bwill be in touch\b|"
            r"\bhas been (?:assigned|escalated)\b",
        ),
        (
            "done",
            r"^(?:done|all set|all done|complete|completed|finished)\b|\b(?:it's|it is|that's|"
            r"that is|all|everything is|everything's|it has been|that has been) (?:now )?(?:done|"
            r"complete|completed|taken care of|sorted|finished|set)\b|\bwent ahead\b|"
            r"\bsuccessfully\b|\bis complete\b|\bhas been completed\b",
        ),
    )
)
_JA_FORMS: dict[str, tuple[str, ...]] = {
    "cancel": (
        r"キャンセル(?:を)?(?:いた)?しました",
        r"キャンセル(?:されました|済|が完了|を完了|と(?:なり|させていただき))",
        r"キャンセル(?:を)?させていただ",
        r"キャンセルの手続き(?:を|が)完了",
    ),
    "refund": (
        r"(?:ご)?返金(?:を)?(?:いた)?しました",
        r"返金(?:されました|済|が完了|を完了|手続き(?:を|が)完了)",
        r"返金(?:を)?させていただ",
        r"返金を(?:行|実行|処理)い?(?:ま)?し",
    ),
    "account_address": (r"(?:登録|アカウント|ご自宅)(?:の)?(?:ご)?住所.*(?:変更|更新|修正)",),
    "address": (
        r"(?:住所|お届け先|配送先|送り先).*(?:変更|更新|修正)(?:を)?(?:いた)?しました",
        r"(?:住所|お届け先|配送先).*(?:変更|更新)(?:されました|済|が完了|(?:を)?させていただ)",
        r"へお届けします",
    ),
    "payment": (
        r"(?:支払|お支払い)(?:い)?(?:方法)?.*(?:変更|更新)(?:を)?(?:いた)?しました",
        r"(?:支払|お支払い).*(?:切り替え|切替え?)(?:いた)?(?:し)?ました",
        r"(?:支払|お支払い).*(?:変更|更新)(?:されました|済|が完了)",
    ),
    "items": (
        r"(?:商品|サイズ|色|カラー|アイテム).*(?:変更|交換|差し替え)(?:を)?(?:いた)?しました",
    ),
    "return": (
        r"返品(?:を|の)?(?:受け付け|受付|手配|承り|手続き|処理)",
        r"返品(?:いた)?しました",
        r"返品(?:されました|済|が完了|(?:を)?させていただ)",
    ),
    "exchange": (
        r"交換(?:を)?(?:いた)?しました",
        r"交換(?:を|の)?(?:受け付け|受付|手配|承り|手続き)",
        r"交換(?:されました|済|が完了|(?:を)?させていただ)",
    ),
    "handover": (
        r"担当者?(?:に|へ)(?:お)?引き継",
        r"担当(?:者|部署|チーム)?(?:から|より)(?:改めて)?(?:ご)?連絡",
        r"担当者が(?:ご)?連絡",
        r"チケットを(?:作成|発行|登録)",
        r"エスカレーション(?:いた)?しました",
        r"引き継ぎました",
    ),
    "done": (
        r"完了(?:いた)?しました",
        r"完了です",
        r"完了となります",
        r"手続き(?:が|を)完了",
        r"対応(?:いた)?しました",
        r"処理(?:いた)?しました",
    ),
}
_JA = tuple((kind, re.compile("|".join(forms))) for kind, forms in _JA_FORMS.items())

# What is not a claim: a question, a condition, an offer, a negation, what still waits.
_NOT_EN = re.compile(
    r"\?\s*$|^(?:if|once|when|as soon as|after|before|unless|should|would|could|can|shall|do|"
    r"does|did|is|are|may|might|let me|let us|let's)\b|\b(?:if|unless|once you|once the|once it|"
    r"as soon as|when you|when the|after you|after the|i can|i could|i would|i'd|we can|we could|"
    r"we would|i will|i'll|i am going to|i'm going to|i need|we need|i'm able|i am "
    r"able|happy to|would you|do you want|would like|shall i|should i|want me to|like me to|"
    r"no|not|never|no longer|cannot|unable|nothing|none|yet to|pending|awaiting|await|awaits|"
    r"waiting|wait|queued|approval|proposed|propose|requires|require|needs to|need to|must|"
    r"try|trying|attempt|hope|expect|eligible|possible|can be|could be|may be|might be|would "
    r"be|to confirm|confirm with|please confirm|planned|plan to|about to|going to be|usually|"
    r"typically|normally|generally|our policy|policy|within \d+ (?:business )?days|"
    r"(?:refunds|returns|exchanges|cancellations|orders|changes) (?:are|can|may|must|will|take))\b"
    r"|n't\b"
)
_NOT_JA = re.compile(
    r"[?？]\s*$|か[。.]?\s*$|でしょうか|ますか|もし|たら|れば|場合|次第|後(?:に|で)|できます|可能|"
    r"しましょうか|いたしましょうか|ご希望|ません|ていない|できない|ないです|なかった|承認待ち|"
    r"お待ち|保留|予定|確認させ|ご確認|よろしいですか|通常|一般的|ポリシー|規定|ると|されます"
)
# A clause that opens a condition: the clause after it is its consequence, no claim either.
_IF_EN = re.compile(r"^(?:if|once|when|as soon as|after|unless|should you|provided)\b")
_IF_JA = re.compile(r"^もし|(?:たら|れば|場合は?|次第|後)[、,]?$")
_SPLIT = re.compile(
    r"(?<=[.!?;:。！？；、])(?!\d)\s*|(?<=,)(?!\d)\s*|\n+|\s+-\s+|"
    r"\s+(?:and|but|so)\s+"
)
_DIGIT = re.compile(r"\d")
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


def clauses(answer: str) -> list[tuple[str, bool]]:
    """The answer in clauses, each read on its own (a question after a statement is a
    question; the statement stays a claim), each with whether it ends its sentence."""
    text = unicodedata.normalize("NFKC", answer).replace("\u2019", "'").replace("\u2018", "'")
    parts = [part.strip() for part in _SPLIT.split(text) if part and part.strip()]
    return [(part, part[-1] in ".!?。！？\n" or part == parts[-1]) for part in parts]


def claims(answer: str) -> list[Claim]:
    """Every claim of an act done that the answer makes, in order."""
    found: list[Claim] = []
    sentence: list[Claim] = []  # this sentence's claims, kept until it ends
    condition = said_else = False  # a condition opened (the rest is its outcome); other words
    named: tuple[str, ...] = ()  # the orders named last: what "it" is about
    for clause, ends in clauses(answer):
        if _DIGIT.search(clause):  # every order code has a digit
            named = tuple(find_order_codes(clause)) or named
        japanese = re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", clause) is not None
        lower = clause.lower()
        condition = condition or bool((_IF_JA if japanese else _IF_EN).search(lower))
        claimed = []
        if not condition and not (_NOT_JA if japanese else _NOT_EN).search(lower):
            claimed = _claimed(lower, named, clause, japanese)
        said_else = said_else or not claimed
        sentence += claimed
        if ends:  # "Done: I looked up A100", "Done: nothing was refunded": no change claimed
            found += [claim for claim in sentence if not (said_else and claim.kind == "done")]
            sentence, condition, said_else = [], False, False
    return found


# Words each English kind's pattern needs one of: most clauses are tested for none of them.
_CUES = {
    "cancel": ("cancel",),
    "refund": ("refund", "money", "credited", "reimbursed"),
    "account_address": ("address",),
    "address": ("address", "ship", "deliver", "redirect", "where"),
    "payment": ("payment", "charged", "billed", "paid"),
    "items": ("swap", "switch", "replac", "item", "size", "colo", "variant"),
    "return": ("return", "label"),
    "exchange": ("exchang",),
    "handover": (
        "transfer",
        "hand",
        "escalat",
        "forward",
        "pass",
        "refer",
        "ticket",
        "will",
        "assign",
    ),
    "done": ("done", "set", "complete", "finish", "taken care", "sorted", "went ahead", "success"),
}


_JA_CUES = {
    "cancel": ("キャンセル",),
    "refund": ("返金",),
    "account_address": ("住所",),
    "address": ("住所", "届け", "配送", "送り先"),
    "payment": ("支払",),
    "items": ("商品", "サイズ", "色", "カラー", "アイテム"),
    "return": ("返品",),
    "exchange": ("交換",),
    "handover": ("担当", "チケット", "エスカレ", "引き継"),
    "done": ("完了", "対応", "処理"),
}


_EN_CUED = {kind: re.compile("|".join(map(re.escape, cues))) for kind, cues in _CUES.items()}
_JA_CUED = {kind: re.compile("|".join(map(re.escape, cues))) for kind, cues in _JA_CUES.items()}


def _claimed(lower: str, named: tuple[str, ...], clause: str, japanese: bool) -> list[Claim]:
    patterns, cues = (_JA, _JA_CUED) if japanese else (_EN, _EN_CUED)
    kinds = [
        kind for kind, pattern in patterns if cues[kind].search(lower) and pattern.search(lower)
    ]
    if len(kinds) > 1 and "done" in kinds:
        kinds.remove("done")  # "done" stands for a kind only when the clause names none
    plural = bool(_BOTH.search(lower))
    return [Claim(kind, named, plural, clause) for kind in kinds]


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

    def said(self) -> str:
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
    acts = acts_of(history)
    for claim in claims(answer):
        if not acts.grounds(claim):
            where = f"{', '.join(claim.orders)}: " if claim.orders else ""
            return (
                f"the answer says {KINDS[claim.kind]} was made ({where}{claim.clause!r}), and "
                f"this run did not make it ({acts.said()}); say only what was done (a change "
                "waiting for the customer's yes or a person's approval is waiting), or what the "
                "customer can do"
            )
    return None
