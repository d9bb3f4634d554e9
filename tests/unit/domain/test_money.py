"""Money in minor units: what people write (129.99 USD, 250,000 JPY) is kept exactly as cents or
yen, shown as written, and compared in one unit wherever a rule looks at it."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.config.rules import RefundRule
from agent_cli.domain.currencies import ISO_4217, exponent, major, major_number, money, to_minor
from agent_cli.policy.refund_rules import RefundFacts, rule_for
from agent_cli.store.sqlite import OrderStore
from tests.contract.test_refund_tool import YES, drive, observations
from tests.helpers import TODAY, call, final

runner = CliRunner()


@given(st.integers(min_value=0, max_value=10**15), st.sampled_from(sorted(ISO_4217)))
def test_an_amount_written_out_reads_back_exactly(minor: int, currency: str) -> None:
    assert to_minor(major(minor, currency, grouped=False), currency) == minor
    assert to_minor(major_number(minor, currency), currency) == minor
    assert to_minor(major(minor, currency).replace(",", ""), currency) == minor


@pytest.mark.parametrize(
    ("written", "currency", "minor"),
    [(47.84, "USD", 4784), ("0.1", "USD", 10), (250_000, "JPY", 250_000), ("1.234", "KWD", 1234)],
)
def test_what_people_write_is_kept_in_minor_units(
    written: float | str | int, currency: str, minor: int
) -> None:
    assert to_minor(written, currency) == minor


@pytest.mark.parametrize(
    ("written", "currency", "said"),
    [
        ("12.345", "USD", "more decimals than USD has (2)"),
        ("0.5", "JPY", "more decimals than JPY has (0)"),
        ("nan", "USD", "is not an amount"),
        ("ten", "USD", "is not an amount"),
        (float("inf"), "USD", "is not an amount"),
    ],
)
def test_an_amount_the_currency_cannot_hold_is_refused(
    written: str | float, currency: str, said: str
) -> None:
    with pytest.raises(ValueError, match=said.replace("(", r"\(").replace(")", r"\)")):
        to_minor(written, currency)


def test_amounts_are_shown_as_the_currency_is_written() -> None:
    assert money(12_999, "USD") == "129.99 USD" and money(250_000, "JPY") == "250,000 JPY"
    assert money(123_456_789, "usd") == "1,234,567.89 USD" and money(1234, "KWD") == "1.234 KWD"
    assert (exponent("JPY"), exponent("USD"), exponent("BHD")) == (0, 2, 3)


def test_a_refund_in_cents_is_recorded_in_cents(either_store: OrderStore) -> None:
    refund = call("issue_refund", order_code="C300", amount=12.5, reason="scratched lid")
    events = drive(either_store, [refund, final("done")], [YES])
    said = observations(events)[0]
    assert said.startswith("REFUNDED:") and "12.50 USD on order C300" in said
    assert either_store.refunded_total("C300") == 1_250
    lookup = call("lookup_order", order_code="C300")
    seen = observations(drive(either_store, [lookup, final("ok")], []))[0]
    assert "total=129.00 currency=USD" in seen and "refunded=12.50 left=116.50" in seen


def test_a_refund_the_currency_cannot_hold_changes_nothing(either_store: OrderStore) -> None:
    refund = call("issue_refund", order_code="C300", amount=12.505, reason="scratched lid")
    said = observations(drive(either_store, [refund, final("done")], [YES]))[0]
    assert said.startswith("DENIED:") and "12.505 has more decimals than USD has (2)" in said
    assert either_store.refunded_total("C300") == 0


def _facts(amount: int, currency: str) -> RefundFacts:
    return RefundFacts(
        amount=amount,
        currency=currency,
        status="DELIVERED",
        customer=None,
        delivered_at=TODAY,
        reason="late",
        today=TODAY,
    )


def test_a_rule_names_major_units_and_compares_minor_ones() -> None:
    rule = RefundRule.model_validate(
        {"name": "small", "decision": "auto", "below": {"USD": 50, "JPY": 5000}}
    )
    assert rule_for([rule], _facts(4_999, "USD")).decision == "auto"  # 49.99 USD
    assert rule_for([rule], _facts(5_000, "USD")).decision == "ask"  # 50.00 USD
    assert rule_for([rule], _facts(4_999, "JPY")).decision == "auto"
    assert rule_for([rule], _facts(5_000, "JPY")).decision == "ask"


def test_explain_reads_an_amount_as_the_order_s_currency_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENT_TODAY", TODAY.isoformat())
    explained = runner.invoke(app, ["approvals", "explain", "C300", "12.50", "--json"])
    assert explained.exit_code == 0, explained.output
    assert json.loads(explained.stdout)["denied_in_code"] is None
    above = runner.invoke(app, ["approvals", "explain", "C300", "129.01", "--json"])
    assert "only 129.00 USD of order C300" in json.loads(above.stdout)["denied_in_code"]
    for bad, said in [("12.505", "more decimals than USD has"), ("0", "no refund"), ("x", "not")]:
        refused = runner.invoke(app, ["approvals", "explain", "C300", bad])
        assert refused.exit_code == 2 and said in refused.stderr, (bad, refused.output)


def test_files_and_json_hold_major_units() -> None:
    shown = runner.invoke(app, ["orders", "show", "C300", "--json"])
    assert json.loads(shown.stdout)["total"] == 129.0
    assert Decimal(str(json.loads(shown.stdout)["total"])) == Decimal("129")
    listed = runner.invoke(app, ["orders", "list"])
    assert "C300\tDELIVERED\t129.00\tUSD" in listed.stdout  # piped: no separators
    assert "A100\tDELIVERED\t250000\tJPY" in listed.stdout
    assert date(2026, 9, 28).isoformat() in listed.stdout


def test_a_cap_per_currency_holds_decimals_and_leaves_no_currency_uncapped() -> None:
    from agent_cli.config import load_settings
    from agent_cli.domain.orders import Order
    from agent_cli.tools import Denied
    from agent_cli.tools.orders import RefundPolicy
    from agent_cli.tools.refunds import cap_in, check_rules

    caps = {"JPY": 50_000.0, "USD": 12.5}
    assert (cap_in(caps, "USD"), cap_in(caps, "JPY"), cap_in(caps, "EUR")) == (1_250, 50_000, None)
    assert cap_in(50_000, "USD") == 5_000_000  # one number: every currency, in its own units
    order = Order("C300", "DELIVERED", 12_900, TODAY, "USD")
    policy = RefundPolicy(window_days=10_000)

    def checked(amount: int, cap: object, currency: str = "USD") -> str:
        try:
            check_rules(
                Order(order.code, order.status, order.total, order.delivered_at, currency),
                amount,
                policy=policy,
                max_amount=cap,
                today=TODAY,
                refunded=0,  # type: ignore[arg-type]
            )
        except Denied as exc:
            return str(exc)
        return "allowed"

    assert checked(1_250, caps) == "allowed"
    assert checked(1_251, caps).startswith("12.51 USD is above the cap of 12.50 USD per refund")
    assert checked(100, caps, "EUR").startswith("refunds in EUR have no cap set")
    assert "names JPY, USD" in checked(100, caps, "EUR")
    described = RefundPolicy(max_refund=caps).describe()
    assert described.endswith("max_refund=50000 JPY,12.5 USD")
    assert load_settings(None).refunds.max_amount == 50_000  # the default: one number


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ("{ USD = 12.505 }", "USD: 12.505 has more decimals than USD has"),
        ("{}", "names no currency"),
        ("{ YEN = 5000 }", "is not an ISO 4217 currency code"),
        ("{ JPY = 0 }", "JPY: 0 is not an amount above 0"),
        ('"lots"', "a whole number, or a table by currency"),
    ],
)
def test_a_cap_table_the_currencies_cannot_hold_is_refused(
    tmp_path: Any, table: str, said: str
) -> None:
    from agent_cli.config import load_settings
    from agent_cli.errors import ConfigError

    path = tmp_path / "c.toml"
    path.write_text(f"[refunds]\nenabled = true\nmax_amount = {table}\n")
    with pytest.raises(ConfigError, match=said.replace("(", r"\(")):
        load_settings(path)
    path.write_text("[refunds]\nenabled = true\nmax_amount = { JPY = 50000, USD = 500.00 }\n")
    assert load_settings(path).refunds.max_amount == {"JPY": 50_000, "USD": 500.0}
