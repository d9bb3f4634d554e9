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

from dataclasses import dataclass, field
from datetime import date

from agent_cli.config import RefundRule, RuleDecision


@dataclass(frozen=True, slots=True)
class RefundFacts:
    """What a rule may look at: one proposed refund and the order, judged on `today`."""

    amount: int
    currency: str
    status: str
    customer: str | None
    delivered_at: date | None
    reason: str
    today: date
    customer_refunds: dict[int, int] = field(default_factory=dict)  # period days -> count


@dataclass(frozen=True, slots=True)
class Ruling:
    decision: RuleDecision
    rule: str | None  # None: no rule matched (then: ask)
    why: str


def rule_for(rules: list[RefundRule], facts: RefundFacts) -> Ruling:
    """The first rule whose conditions all hold; `ask` when none does."""
    for rule in rules:
        if not unmet(rule, facts):
            return Ruling(rule.decision, rule.name, f"rule {rule.name!r}: {rule.decision}")
    return Ruling("ask", None, "no rule matched: a person decides")


def unmet(rule: RefundRule, facts: RefundFacts) -> list[str]:
    """Each condition of `rule` that `facts` do not meet, in words (empty: the rule applies)."""
    missed: list[str] = []
    amount, currency = facts.amount, facts.currency
    if rule.below is not None and not amount < rule.below.get(currency, -1):
        missed.append(f"the amount is not below {_limit(rule.below, currency)}")
    if rule.at_least is not None and not amount >= rule.at_least.get(currency, 2**63):
        missed.append(f"the amount is not at least {_limit(rule.at_least, currency)}")
    if rule.statuses is not None and facts.status not in rule.statuses:
        missed.append(f"status {facts.status} is not {' or '.join(rule.statuses)}")
    if rule.customers is not None and facts.customer not in rule.customers:
        missed.append(f"customer {facts.customer or '(none)'} is not listed")
    missed += _days(rule, facts)
    if rule.reasons is not None and not any(
        r.lower() in facts.reason.lower() for r in rule.reasons
    ):
        missed.append(f"the reason names none of {', '.join(rule.reasons)}")
    if rule.max_refunds_before is not None:
        count = facts.customer_refunds.get(rule.period_days, 0)
        if count > rule.max_refunds_before:
            missed.append(
                f"the customer had {count} refund(s) in {rule.period_days} days, more than "
                f"{rule.max_refunds_before}"
            )
    return missed


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
