"""Refund rules as policy: `[[refunds.rules]]` decide, per refund that passed every check in
code, whether a person must see it.

Each rule names a decision and the conditions it needs; the first rule whose conditions all hold
decides, and when none does the decision is `ask`:

- `auto`: approved without a person (the checks in code, the window, caps, idempotency, still
  ran first and run again at commit: a rule only narrows what a person must see);
- `ask`: a person at the terminal, or the approval queue when nobody is there;
- `queue`: the approval queue, even with a person at the terminal;
- `deny`: refused.

    [[refunds.rules]]
    name = "small and recent"
    decision = "auto"
    below = { JPY = 5000, USD = 50 }   # the amount, per currency (others: no match)
    statuses = ["DELIVERED"]
    max_days_since_delivery = 14

    [[refunds.rules]]
    name = "too large"
    decision = "deny"
    at_least = { JPY = 500000 }
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date

from agent_cli.config.rules import RefundRule, RuleDecision
from agent_cli.core.seams import ApprovalVerdict
from agent_cli.domain.currencies import money, to_minor


@dataclass(frozen=True, slots=True, kw_only=True)
class RefundFacts:
    """What a rule may look at: one proposed refund and the order, judged on `today`."""

    amount: int  # in minor units (rules name major ones: `below = { USD = 50 }` is 5000)
    currency: str
    status: str
    customer: str | None
    delivered_at: date | None
    reason: str
    today: date
    customer_refunds: dict[int, int] = field(default_factory=dict)  # period days -> count
    refunded_last_day: int = 0  # the customer's refunds of the last 24 hours, in `currency`


@dataclass(frozen=True, slots=True)
class Ruling:
    decision: RuleDecision
    rule: str | None  # None: no rule matched (then: ask)
    why: str


def rule_for(rules: list[RefundRule], facts: RefundFacts, tool: str = "issue_refund") -> Ruling:
    """The first rule deciding `tool` whose conditions all hold; `ask` when none does."""
    for rule in rules:
        if tool in rule.decides and not unmet(rule, facts):
            return Ruling(rule.decision, rule.name, f"rule {rule.name!r}: {rule.decision}")
    return Ruling("ask", None, "no rule matched: a person decides")


def unmet(rule: RefundRule, facts: RefundFacts) -> list[str]:
    """Each condition of `rule` that `facts` do not meet, in words (empty: the rule applies)."""
    missed: list[str] = []
    amount, currency = facts.amount, facts.currency
    # A rule naming amounts meets only the currencies it names.
    if rule.below is not None and (
        currency not in rule.below or amount >= to_minor(rule.below[currency], currency)
    ):
        missed.append(f"the amount is not below {_limit(rule.below, currency)}")
    if rule.at_least is not None and (
        currency not in rule.at_least or amount < to_minor(rule.at_least[currency], currency)
    ):
        missed.append(f"the amount is not at least {_limit(rule.at_least, currency)}")
    if rule.statuses is not None and facts.status not in rule.statuses:
        missed.append(f"status {facts.status} is not {' or '.join(rule.statuses)}")
    if rule.customers is not None and facts.customer not in rule.customers:
        missed.append(f"customer {facts.customer or '(none)'} is not listed")
    missed += _days(rule, facts)
    if rule.reasons is not None and not names_any(facts.reason, rule.reasons):
        missed.append(f"the reason names none of {', '.join(rule.reasons)}")
    if rule.max_refunds_before is not None:
        count = facts.customer_refunds[rule.period_days]  # counted for every period named
        if count > rule.max_refunds_before:
            missed.append(
                f"the customer had {count} refund(s) in {rule.period_days} days, more than "
                f"{rule.max_refunds_before}"
            )
    missed += _daily_sum(rule, facts)
    return missed


def _daily_sum(rule: RefundRule, facts: RefundFacts) -> list[str]:
    if rule.max_auto_per_day is None:
        return []
    limit = rule.max_auto_per_day.get(facts.currency)
    total = facts.refunded_last_day + facts.amount
    if limit is None:
        return [f"max_auto_per_day sets no {facts.currency} amount"]
    if total > to_minor(limit, facts.currency):
        return [
            f"the customer's refunds of the last 24 hours would come to "
            f"{money(total, facts.currency)}, above {limit:,}"
        ]
    return []


def _days(rule: RefundRule, facts: RefundFacts) -> list[str]:
    if rule.max_days_since_delivery is None and rule.min_days_since_delivery is None:
        return []
    if facts.delivered_at is None:
        return ["the order has no delivery date"]
    days = (facts.today - facts.delivered_at).days
    if rule.max_days_since_delivery is not None and days > rule.max_days_since_delivery:
        return [f"delivered {days} days ago, more than {rule.max_days_since_delivery}"]
    if rule.min_days_since_delivery is not None and days < rule.min_days_since_delivery:
        return [f"delivered {days} days ago, fewer than {rule.min_days_since_delivery}"]
    return []


def _limit(amounts: dict[str, int], currency: str) -> str:
    if currency not in amounts:
        return f"a {currency} amount (the rule sets none)"
    return f"{amounts[currency]:,} {currency}"


# Letters that look like Latin ones: a reason written with them must still name what it names.
_LOOK_ALIKES = str.maketrans(
    "аеорсухіјѕԁһӏԛԝαβεικνορτυχЅАВЕКМНОРСТХІЈ",
    "aeopcyxijsdhlqwabeikvoptuxsabekmhopctxij",
)


def folded(text: str) -> str:
    """`text` as a reason rule reads it: NFKC (full-width letters), case folded, look-alike
    Cyrillic and Greek letters mapped to Latin, and only letters and digits kept, so spacing,
    punctuation and invisible characters cannot split a word ("dam aged", "d.a.m.a.g.e.d")."""
    normal = unicodedata.normalize("NFKC", text).casefold().translate(_LOOK_ALIKES)
    return "".join(char for char in normal if char.isalnum())


def mixed_word(text: str) -> str | None:
    """The first word of `text` that mixes Latin, Cyrillic and Greek letters ("damaged" with a
    Cyrillic "a" in it), which no honest reason holds; None when there is none."""
    word: str
    for word in re.findall(r"\w+", text):
        scripts = {unicodedata.name(char).split()[0] for char in word if char.isalpha()}
        if len(scripts & {"LATIN", "CYRILLIC", "GREEK"}) > 1:
            return word
    return None


def names_any(reason: str, words: list[str]) -> bool:
    """Whether the reason names one of `words`, as read through `folded`."""
    folded_reason = folded(reason)
    return any(folded(word) in folded_reason for word in words)


def hidden_by(rules: list[RefundRule]) -> list[tuple[str, str]]:
    """(auto rule, deny rule) pairs where the auto rule comes first and some refund may meet
    both: the deny rule never decides it."""
    pairs = []
    for place, first in enumerate(rules):
        if first.decision != "auto":
            continue
        for later in rules[place + 1 :]:
            if later.decision == "deny" and _may_overlap(first, later):
                pairs.append((first.name, later.name))
    return pairs


def _may_overlap(auto: RefundRule, deny: RefundRule) -> bool:
    """False only when no action can meet both: no action both decide, no currency both allow
    an amount of, statuses or customers that share none, or delivery-day ranges that do not
    meet."""
    if not set(auto.decides) & set(deny.decides) or not _amounts_meet(auto, deny):
        return False
    for mine, theirs in ((auto.statuses, deny.statuses), (auto.customers, deny.customers)):
        if mine is not None and theirs is not None and not set(mine) & set(theirs):
            return False
    both = (auto, deny)
    lows = [r.min_days_since_delivery for r in both if r.min_days_since_delivery is not None]
    highs = [r.max_days_since_delivery for r in both if r.max_days_since_delivery is not None]
    return not lows or not highs or max(lows) <= min(highs)


def _amounts_meet(auto: RefundRule, deny: RefundRule) -> bool:
    """Some amount, in some currency, that both rules' amount conditions allow."""
    for currency, below in (auto.below or {}).items():
        if any(
            limits is not None and currency not in limits for limits in (deny.at_least, deny.below)
        ):
            continue  # the deny rule names amounts in other currencies only
        floor = max((limits or {}).get(currency, 1) for limits in (auto.at_least, deny.at_least))
        if floor < min(below, (deny.below or {}).get(currency, below)):
            return True
    return False


def policy_verdict(ruling: Ruling) -> ApprovalVerdict | None:
    """The verdict a rule gives (None: ask a person)."""
    if ruling.decision == "ask":
        return None
    approved = ruling.decision == "auto"
    queue = ruling.decision == "queue"
    return ApprovalVerdict(approved, "policy", ruling.why, queue=queue, rule=ruling.rule)
