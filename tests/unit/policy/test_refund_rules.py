"""Refund rules as policy: the first matching rule decides auto, ask, queue or deny; none
matching is ask; auto never skips the checks in code; every decision names its rule."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.config.rules import RefundRule
from agent_cli.policy.refund_rules import RefundFacts, rule_for
from tests.helpers import consented_refund, delivered_recently

runner = CliRunner()

RULES = """
[[refunds.rules]]
name = "too large"
decision = "deny"
at_least = { JPY = 40000 }

[[refunds.rules]]
name = "small and recent"
decision = "auto"
below = { JPY = 5000, USD = 50 }
statuses = ["DELIVERED"]
max_days_since_delivery = 14

[[refunds.rules]]
name = "damaged goes to the queue"
decision = "queue"
reasons = ["damaged", "broken"]
"""


def config(tmp_path: Path, rules: str = RULES) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(f"[refunds]\nenabled = true\nmax_amount = 50000\n{rules}")
    return path


@dataclass(frozen=True)
class Ran:
    """A customer's conversation asking for a refund: its exit code and its trace."""

    exit_code: int
    stderr: str
    records: list[dict[str, Any]]


def refund(tmp_path: Path, amount: int, reason: str, *, rules: str = RULES) -> Ran:
    """The customer asks for the refund and says yes to it (a piped `agent chat`)."""
    script, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    trace.unlink(missing_ok=True)
    args = {"order_code": "A100", "amount": amount, "reason": reason}
    script.write_text(json.dumps([*consented_refund(args), {"type": "final", "answer": "ok"}]))
    argv = ["chat", "--script", str(script), "--config", str(config(tmp_path, rules))]
    result = runner.invoke(app, [*argv, "--trace", str(trace)], input="Refund A100\nyes\n")
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    return Ran(result.exit_code, result.stderr, records)


def decided(result: Ran) -> dict[str, Any]:
    return next(r for r in result.records if r["event"] == "approval_decided")


def refunds_of_a100() -> list[int]:
    shown = json.loads(runner.invoke(app, ["orders", "show", "A100", "--json"]).stdout)
    return [r["amount"] for r in shown["refunds"]]


def facts(amount: int, **changes: Any) -> RefundFacts:
    values: dict[str, Any] = {
        "amount": amount,
        "currency": "JPY",
        "status": "DELIVERED",
        "customer": "Sato",
        "delivered_at": date(2026, 10, 1),
        "reason": "late",
        "today": date(2026, 10, 5),
    }
    return RefundFacts(**{**values, **changes})


def rules() -> list[RefundRule]:
    import tomllib

    return [RefundRule(**rule) for rule in tomllib.loads(RULES)["refunds"]["rules"]]


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (facts(50_000), ("deny", "too large")),  # first rule wins over the rest
        (facts(1_000), ("auto", "small and recent")),
        (facts(1_000, delivered_at=date(2026, 9, 1)), ("ask", None)),  # 34 days: no rule
        (facts(1_000, status="SHIPPING"), ("ask", None)),
        (facts(1_000, currency="EUR"), ("ask", None)),  # a currency the rule does not name
        (facts(9_000, reason="Box arrived DAMAGED"), ("queue", "damaged goes to the queue")),
        (facts(9_000), ("ask", None)),  # none matches: ask
    ],
)
def test_the_first_matching_rule_decides_and_none_is_ask(
    case: RefundFacts, expected: tuple[str, str | None]
) -> None:
    ruling = rule_for(rules(), case)
    assert (ruling.decision, ruling.rule) == expected


def test_auto_approves_without_a_person_and_names_its_rule(tmp_path: Path) -> None:
    delivered_recently("A100", days=3)
    result = refund(tmp_path, 1000, "late delivery")
    assert result.exit_code == 0, result.stderr
    verdict = decided(result)
    assert (verdict["approved"], verdict["by"], verdict["rule"]) == (
        True,
        "policy",
        "small and recent",
    )
    assert not any(record["event"] == "approval_requested" for record in result.records)
    assert refunds_of_a100() == [1000]


def test_auto_never_skips_the_checks_in_code(tmp_path: Path) -> None:
    delivered_recently("A100", days=40)  # outside the 30-day window
    loose = '[[refunds.rules]]\nname = "everything"\ndecision = "auto"\nbelow = { JPY = 100000 }\n'
    result = refund(tmp_path, 1000, "late", rules=loose)
    assert result.exit_code == 0, result.stderr
    records = result.records
    observed = next(r for r in records if r.get("tool") == "issue_refund" and "observation" in r)
    assert observed["observation"].startswith("DENIED: order A100 was delivered")
    assert refunds_of_a100() == []


def test_deny_refuses_and_queue_queues_even_with_a_person_here(tmp_path: Path) -> None:
    delivered_recently("A100", days=3)
    denied = refund(tmp_path, 45_000, "late")
    assert (decided(denied)["approved"], decided(denied)["rule"]) == (False, "too large")
    assert refunds_of_a100() == []
    queued = refund(tmp_path, 9_000, "it arrived broken")
    assert queued.exit_code == 0, queued.stderr
    assert (decided(queued)["queued"], decided(queued)["rule"]) == (1, "damaged goes to the queue")


def test_a_customer_with_earlier_refunds_is_not_auto_approved(tmp_path: Path) -> None:
    delivered_recently("A100", days=3)
    once = (
        '[[refunds.rules]]\nname = "first refund"\ndecision = "auto"\nmax_refunds_before = 0\n'
        "below = { JPY = 10000 }\n"
    )
    assert decided(refund(tmp_path, 1000, "late", rules=once))["by"] == "policy"
    second = refund(tmp_path, 2000, "late again", rules=once)
    assert decided(second)["by"] == "rule" and decided(second)["queued"] == 1  # asked: queued


@pytest.mark.parametrize(
    ("rules_text", "message"),
    [
        ('[[refunds.rules]]\nname = "x"\ndecision = "maybe"\n', "refunds.rules.0 ('x').decision"),
        (
            '[[refunds.rules]]\nname = "x"\ndecision = "auto"\nbelow = { YEN1 = 5 }\n',
            "refunds.rules.0",
        ),
        (
            '[[refunds.rules]]\nname = "x"\ndecision = "queue"\n'
            '[[refunds.rules]]\nname = "x"\ndecision = "deny"\n',
            "'x' is used twice",
        ),
        ('[[refunds.rules]]\nname = "x"\ndecision = "auto"\nbelow_amount = 5\n', "below_amount"),
        ('[[refunds.rules]]\nname = "x"\ndecision = "deny"\nbelow = {}\n', "names no currency"),
        ('[[refunds.rules]]\nname = "x"\ndecision = "ask"\nat_least = {}\n', "at_least"),
    ],
)
def test_bad_rules_are_configuration_errors_naming_the_rule(
    tmp_path: Path, rules_text: str, message: str
) -> None:
    result = runner.invoke(app, ["config", "show", "--config", str(config(tmp_path, rules_text))])
    assert result.exit_code == 2
    assert message in result.stderr


def test_explain_says_which_rule_applies_and_why_the_others_do_not(tmp_path: Path) -> None:
    delivered_recently("A100", days=3)
    argv = ["approvals", "explain", "A100", "9000", "--reason", "broken", "--config"]
    result = runner.invoke(app, [*argv, str(config(tmp_path))])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[:4] == [
        "too large: does not apply (the amount is not at least 40,000 JPY)",
        "small and recent: does not apply (the amount is not below 5,000 JPY)",
        "damaged goes to the queue: applies -> queue",
        "decision: queue (rule 'damaged goes to the queue': queue)",
    ]
    assert refunds_of_a100() == []  # nothing was run
