"""The refund rules hold in process: a reason rule is not fooled by spacing or look-alike
letters, amounts add up where a rule says so (the rules as `explain` and `doctor` show them are
tests/cli/test_refund_rules_explained.py)."""

from __future__ import annotations

import os
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent_cli.config.rules import RefundRule
from agent_cli.policy.refund_rules import folded, hidden_by, names_any, rule_for, unmet
from agent_cli.store.sqlite import OrderStore
from tests.helpers import delivered_recently
from tests.unit.policy.test_refund_rules import decided, facts, refund, refunds_of_a100


def rule(**fields: Any) -> RefundRule:
    return RefundRule(**{"name": "r", "decision": "deny", **fields})


@pytest.mark.parametrize(
    ("auto", "deny", "hidden"),
    [
        ({"below": {"JPY": 5000}}, {}, True),
        ({"below": {"JPY": 5000}}, {"at_least": {"JPY": 5000}}, False),  # amounts never meet
        ({"below": {"JPY": 5000}}, {"at_least": {"JPY": 4999}}, True),
        ({"below": {"JPY": 5000}}, {"at_least": {"USD": 1}}, False),  # other currency
        ({"below": {"JPY": 5000}, "statuses": ["DELIVERED"]}, {"statuses": ["SHIPPING"]}, False),
        ({"below": {"JPY": 5000}, "customers": ["A"]}, {"customers": ["A", "B"]}, True),
        (
            {"below": {"JPY": 5000}, "max_days_since_delivery": 7},
            {"min_days_since_delivery": 8},
            False,
        ),
        (
            {"below": {"JPY": 5000}, "max_days_since_delivery": 7},
            {"min_days_since_delivery": 7},
            True,
        ),
    ],
)
def test_a_hidden_deny_rule_is_one_some_refund_meets_both(
    auto: dict[str, Any], deny: dict[str, Any], hidden: bool
) -> None:
    rules = [rule(name="a", decision="auto", **auto), rule(name="d", **deny)]
    assert (hidden_by(rules) == [("a", "d")]) is hidden
    assert hidden_by(list(reversed(rules))) == []  # deny first: nothing hidden


@pytest.mark.parametrize(
    "reason",
    [
        "it arrived dam aged",
        "D A M A G E D on arrival",
        "ｄａｍａｇｅｄ",  # full-width
        "d\u200bamaged",  # a zero-width space inside
        "d\u0430m\u0430ged",  # Cyrillic a, twice
        "DAMAGED!!",
    ],
)
def test_a_reason_rule_is_not_fooled_by_spacing_or_look_alike_letters(reason: str) -> None:
    deny = rule(reasons=["damaged"])
    assert names_any(reason, ["damaged"])
    assert rule_for([deny], facts(1000, reason=reason)).decision == "deny"


def test_a_reason_that_names_nothing_is_still_no_match() -> None:
    assert not names_any("late delivery", ["damaged"])
    assert folded("Late, delivery!") == "latedelivery"


def test_issue_refund_refuses_a_reason_mixing_alphabets(tmp_path: Path) -> None:
    delivered_recently("A100", days=3)
    result = refund(tmp_path, 1000, "it was d\u0430maged")  # a Cyrillic a in a Latin word
    records = result.records
    observed = [r for r in records if r.get("tool") == "issue_refund" and "observation" in r]
    assert observed and observed[0]["observation"].startswith("ERROR:")
    assert "mixes the letters of two alphabets" in observed[0]["observation"]
    assert refunds_of_a100() == []


def test_a_refund_exactly_at_below_does_not_match_and_one_under_does() -> None:
    small = rule(decision="auto", below={"JPY": 5000})
    assert unmet(small, facts(5000)) == ["the amount is not below 5,000 JPY"]
    assert unmet(small, facts(4999)) == []


def test_an_order_without_a_delivery_date_meets_no_day_condition() -> None:
    for days in ({"max_days_since_delivery": 30}, {"min_days_since_delivery": 0}):
        assert unmet(rule(**days), facts(1000, delivered_at=None)) == [
            "the order has no delivery date"
        ]


DAILY = (
    '[[refunds.rules]]\nname = "small"\ndecision = "auto"\nbelow = { JPY = 5000 }\n'
    "max_auto_per_day = { JPY = 6000 }\n"
)


def test_small_refunds_add_up_to_the_daily_cap_then_a_person_is_asked(tmp_path: Path) -> None:
    delivered_recently("A100", days=3)
    first = refund(tmp_path, 4000, "late", rules=DAILY)
    assert decided(first)["by"] == "policy"
    second = refund(tmp_path, 3000, "late again", rules=DAILY)  # 7,000 in a day: over 6,000
    assert decided(second)["by"] == "rule" and decided(second)["queued"] is not None
    assert refunds_of_a100() == [4000]


def test_the_daily_sum_counts_the_customers_other_orders_in_that_currency() -> None:
    auto = rule(decision="auto", below={"JPY": 5000}, max_auto_per_day={"JPY": 6000})
    assert unmet(auto, facts(1000, refunded_last_day=5000)) == []
    assert unmet(auto, facts(1001, refunded_last_day=5000)) == [
        "the customer's refunds of the last 24 hours would come to 6,001 JPY, above 6,000"
    ]
    assert unmet(auto, facts(10, currency="USD")) != []


def test_earlier_refunds_count_by_order_when_the_order_has_no_customer(tmp_path: Path) -> None:
    store = OrderStore.open(Path(os.environ["AGENT_DB"]))
    try:
        store.execute("UPDATE orders SET customer = NULL WHERE code = 'A100'")
        order = store.get("A100")
        assert order is not None
        store.record_refund("A100", 1000, "first", key="k1")
        since = datetime.now(UTC) - timedelta(days=1)
        assert store.refunds_since(order, since) == (1, 1000)
        other = store.get("A105")
        assert other is not None and store.refunds_since(other, since) == (0, 0)
    finally:
        store.close()


def test_each_unmet_condition_is_said_in_words() -> None:
    strict = rule(
        at_least={"JPY": 1000},
        statuses=["SHIPPING", "PENDING"],
        customers=["Aoi"],
        reasons=["damaged", "broken"],
        max_refunds_before=1,
        period_days=30,
    )
    case = facts(999, customer="Sato", customer_refunds={30: 2})
    assert unmet(strict, case) == [
        "the amount is not at least 1,000 JPY",
        "status DELIVERED is not SHIPPING or PENDING",
        "customer Sato is not listed",
        "the reason names none of damaged, broken",
        "the customer had 2 refund(s) in 30 days, more than 1",
    ]
    assert unmet(rule(customers=["Aoi"]), facts(1, customer=None)) == [
        "customer (none) is not listed"
    ]
    assert unmet(rule(customers=["Sato"]), facts(1, customer="Sato")) == []
    assert unmet(rule(at_least={"USD": 5}), facts(10)) == [
        "the amount is not at least a JPY amount (the rule sets none)"
    ]


def test_the_bounds_of_a_rule_are_inclusive_where_they_say_so() -> None:
    assert unmet(rule(at_least={"JPY": 1000}), facts(1000)) == []  # at least: equal is in
    days = facts(1, delivered_at=date(2026, 9, 21), today=date(2026, 10, 5))  # 14 days
    assert unmet(rule(max_days_since_delivery=14), days) == []
    assert unmet(rule(min_days_since_delivery=14), days) == []
    assert unmet(rule(max_days_since_delivery=13), days) == ["delivered 14 days ago, more than 13"]
    assert unmet(rule(min_days_since_delivery=15), days) == ["delivered 14 days ago, fewer than 15"]


@pytest.mark.parametrize(
    ("auto", "deny", "hidden"),
    [
        ({"below": {"JPY": 5000}, "at_least": {"JPY": 3000}}, {"below": {"JPY": 3000}}, False),
        ({"below": {"JPY": 5000}}, {"below": {"JPY": 2}}, True),  # 1 JPY meets both
        ({"below": {"JPY": 5000}}, {"below": {"USD": 50}}, False),
        ({"below": {"JPY": 5000, "USD": 50}}, {"at_least": {"USD": 10}}, True),  # the 2nd
        ({"below": {"JPY": 5000}, "max_days_since_delivery": 7}, {}, True),
        (
            {"below": {"JPY": 5000}, "min_days_since_delivery": 3},
            {"max_days_since_delivery": 2},
            False,
        ),
        (
            {"below": {"JPY": 5000}},
            {"min_days_since_delivery": 3, "max_days_since_delivery": 3},
            True,
        ),
        (
            {"below": {"JPY": 5000}, "max_days_since_delivery": 0},
            {"min_days_since_delivery": 1},
            False,
        ),
    ],
)
def test_overlap_is_judged_on_amounts_and_days(
    auto: dict[str, Any], deny: dict[str, Any], hidden: bool
) -> None:
    assert (
        bool(hidden_by([rule(name="a", decision="auto", **auto), rule(name="d", **deny)])) is hidden
    )


def test_every_auto_rule_is_checked_against_every_later_deny_rule() -> None:
    rules = [
        rule(name="q", decision="queue"),
        rule(name="a", decision="auto", below={"JPY": 5000}),
        rule(name="d", decision="deny"),
        rule(name="b", decision="auto", below={"USD": 50}),
        rule(name="e", decision="deny", at_least={"USD": 10}),
    ]
    assert hidden_by(rules) == [("a", "d"), ("b", "e")]
