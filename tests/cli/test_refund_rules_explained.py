"""The refund rules as `agent approvals explain` and `agent doctor` show them: what would really
happen to a refund, a person deciding when no rule applies, a rule that cannot fire refused as a
configuration error, an automatic rule that must state its cap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from tests.helpers import delivered_recently
from tests.unit.policy.test_refund_rules import config

runner = CliRunner()


NEVER_FIRES = [
    (
        "at_least = { jpy = 100 }",
        "at_least.jpy",
        "'jpy' is not an ISO 4217 currency code (did you mean 'JPY'?)",
    ),
    (
        "at_least = { JPN = 100 }",
        "at_least.JPN",
        "'JPN' is not an ISO 4217 currency code (did you mean 'JPY'?)",
    ),
    ("at_least = { XXX = 100 }", "at_least.XXX", "'XXX' is not an ISO 4217 currency code\n"),
    ("at_least = { USX = 1 }", "at_least.USX", "(did you mean 'USD'?)\n"),
    ("at_least = { CHX = 1 }", "at_least.CHX", "'CHX' is not an ISO 4217 currency code\n"),
    ('statuses = ["delivered"]', "statuses.0", "Input should be 'PENDING'"),
    ('statuses = ["DELIVERD"]', "statuses.0", "'DELIVERED'"),
    ("reasons = []", "reasons", "an empty list never matches"),
    ("statuses = []", "statuses", "at least 1 item"),
    ('customers = [""]', "customers", "an empty entry"),
    ('reasons = ["  "]', "reasons", "an empty entry"),
    (
        "min_days_since_delivery = 10\nmax_days_since_delivery = 5",
        "",
        "min_days_since_delivery (10) is above max_days_since_delivery (5)",
    ),
    ("below = { JPY = 100 }\nat_least = { JPY = 100 }", "", "below.JPY (100) is not above"),
    ("below = { JPY = 100 }\nat_least = { JPY = 500 }", "", "no amount can meet both"),
    ("at_least = { JPY = 9223372036854775808 }", "at_least.JPY", "must be at most"),
    ("below = { JPY = 0 }", "below.JPY", "must be at least 1"),
    ("max_auto_per_day = { JPY = 100 }", "", "max_auto_per_day is for auto rules"),
]


@pytest.mark.parametrize(("line", "field", "problem"), NEVER_FIRES)
def test_a_rule_that_cannot_fire_is_a_configuration_error(
    tmp_path: Path, line: str, field: str, problem: str
) -> None:
    rules = f'[[refunds.rules]]\nname = "too large"\ndecision = "deny"\n{line}\n'
    path = config(tmp_path, rules)
    where = f"refunds.rules.0 ('too large'){'.' + field if field else ''} (file {path})"
    for argv in (["ask", "Is A100 refundable?", "--dry-run"], ["config", "show"]):
        result = runner.invoke(app, [*argv, "--config", str(path)])
        assert result.exit_code == 2, result.stdout
        assert result.stderr.count("\n") == 1 and where in result.stderr, result.stderr
        assert problem in result.stderr
    doctor = runner.invoke(app, ["doctor", "--config", str(path)])
    assert doctor.exit_code == 1 and where in doctor.stdout and problem in doctor.stdout


def test_an_auto_rule_must_state_its_cap(tmp_path: Path) -> None:
    rules = '[[refunds.rules]]\nname = "anything"\ndecision = "auto"\nstatuses = ["DELIVERED"]\n'
    result = runner.invoke(app, ["config", "show", "--config", str(config(tmp_path, rules))])
    assert result.exit_code == 2
    assert "an auto rule pays with nobody asked: state the amount it stays below" in result.stderr


def test_doctor_names_the_rules_that_approve_automatically(tmp_path: Path) -> None:
    doctor = runner.invoke(app, ["doctor", "--config", str(config(tmp_path))])
    assert (
        "refund rules: 3 rule(s); approve automatically: 'small and recent' "
        "(below 5,000 JPY, 50 USD)" in doctor.stdout
    )
    assert doctor.exit_code == 0, doctor.stdout


def test_doctor_flags_a_deny_rule_an_earlier_auto_rule_hides(tmp_path: Path) -> None:
    rules = (
        '[[refunds.rules]]\nname = "small"\ndecision = "auto"\nbelow = { JPY = 5000 }\n'
        '[[refunds.rules]]\nname = "fraud"\ndecision = "deny"\nreasons = ["chargeback"]\n'
    )
    doctor = runner.invoke(app, ["doctor", "--config", str(config(tmp_path, rules))])
    assert doctor.exit_code == 1
    assert "auto rule 'small' comes before deny rule 'fraud'" in doctor.stdout


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["A102", "1000"], "decision: denied in code: order A102 is CANCELLED; only DELIVERED"),
        (["A100", "45000", "--reason", "x"], "decision: deny (rule 'too large': deny)"),
        (["A100", "60000"], "decision: denied in code: 60,000 JPY is above the cap of 50,000"),
        (["a100", "9000", "--reason", "broken"], "decision: queue"),  # any case, as elsewhere
    ],
)
def test_explain_says_what_would_really_happen(tmp_path: Path, argv: list[str], line: str) -> None:
    delivered_recently("A100", days=3)
    result = runner.invoke(app, ["approvals", "explain", *argv, "--config", str(config(tmp_path))])
    assert result.exit_code == 0, result.stderr
    assert line in result.stdout


def test_explain_refuses_an_amount_of_zero_and_says_so_in_json(tmp_path: Path) -> None:
    zero = runner.invoke(app, ["approvals", "explain", "A100", "0"])
    assert zero.exit_code == 2 and "AMOUNT 0 is no refund" in zero.stderr
    argv = ["approvals", "explain", "A102", "1000", "--json", "--config", str(config(tmp_path))]
    shown = json.loads(runner.invoke(app, argv).stdout)
    assert shown["decision"] == "deny" and shown["rule"] is None
    assert shown["denied_in_code"].startswith("order A102 is CANCELLED")


def test_explain_says_a_person_decides_when_no_rule_applies(tmp_path: Path) -> None:
    delivered_recently("A100", days=3)
    argv = ["approvals", "explain", "A100", "9000", "--reason", "late"]
    result = runner.invoke(app, [*argv, "--config", str(config(tmp_path))])
    assert "decision: ask (no rule matched: a person decides)" in result.stdout
