"""The schema of one `[[refunds.rules]]` entry, checked so that a rule that cannot fire is a
configuration error, at start-up and in `agent doctor`: a typo must never switch a deny rule
off. An automatic approval always states the amount below which it pays.

`policy/refund_rules.py` decides with the rules; this module only says what a rule may be.
"""

from __future__ import annotations

import difflib
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from agent_cli.domain.currencies import ISO_4217
from agent_cli.domain.orders import RuleStatus
from agent_cli.domain.write_tools import MOVES_NO_MONEY, RuleTool

RuleDecision = Literal["auto", "ask", "queue", "deny"]
REFUND_ONLY = ("reasons", "max_refunds_before", "max_auto_per_day")  # what a write has none of
MAX_AMOUNT = 2**63 - 1  # what the store holds (BIGINT)


def currency_code(code: str) -> str:
    if code not in ISO_4217:
        raise ValueError(f"{code!r} is not an ISO 4217 currency code{_near_currency(code)}")
    return code


def _near_currency(code: str) -> str:
    """` (did you mean 'JPY'?)` for `jpy` or `JPN` (a country's code, whose first two letters
    its currency's usually shares); or ''."""
    upper = code.upper()
    same_start = sorted(c for c in ISO_4217 if c[:2] == upper[:2])
    near = same_start or difflib.get_close_matches(upper, sorted(ISO_4217), n=1)
    return f" (did you mean {near[0]!r}?)" if near and len(same_start) <= 2 else ""


def _listed(values: list[str]) -> list[str]:
    if not values:
        raise ValueError("an empty list never matches: leave the key out, or name something")
    if any(not value.strip() for value in values):
        raise ValueError("an empty entry: remove it (every entry names something)")
    return values


def _named(amounts: dict[str, int]) -> dict[str, int]:
    if not amounts:
        raise ValueError(
            "names no currency, so no amount can match it: name one ({ JPY = 5000 }), or leave "
            "the key out"
        )
    return amounts


Currency = Annotated[str, AfterValidator(currency_code)]
Amount = Annotated[int, Field(ge=1, le=MAX_AMOUNT)]
Amounts = Annotated[dict[Currency, Amount], AfterValidator(_named)]
Texts = Annotated[list[str], AfterValidator(_listed)]


class RefundRule(BaseModel):
    """One `[[refunds.rules]]` entry: a decision and the conditions it needs, all of which must
    hold for it to decide."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    name: str = Field(min_length=1, max_length=80)
    decision: RuleDecision
    # the actions it decides (none named: issue_refund, as before the desk's writes)
    tools: Annotated[list[RuleTool], Field(min_length=1)] | None = None
    below: Amounts | None = None  # amount < below[currency]
    at_least: Amounts | None = None  # amount >= at_least[currency]
    statuses: Annotated[list[RuleStatus], Field(min_length=1)] | None = None
    customers: Texts | None = None  # the order's customer is one of these
    max_days_since_delivery: int | None = Field(default=None, ge=0, le=36_600)
    min_days_since_delivery: int | None = Field(default=None, ge=0, le=36_600)
    reasons: Texts | None = None  # the reason names one of these (see policy/refund_rules.py)
    max_refunds_before: int | None = Field(default=None, ge=0)  # the customer's, in the period
    period_days: int = Field(default=30, ge=1, le=3660)
    # auto only: the customer's refunds of the last 24 hours, this one included, stay within it
    max_auto_per_day: Amounts | None = None

    @model_validator(mode="after")
    def _can_fire(self) -> RefundRule:
        low, high = self.min_days_since_delivery, self.max_days_since_delivery
        if low is not None and high is not None and low > high:
            raise ValueError(
                f"min_days_since_delivery ({low}) is above max_days_since_delivery ({high}): "
                "no refund can meet both"
            )
        for currency, limit in (self.below or {}).items():
            floor = (self.at_least or {}).get(currency)
            if floor is not None and limit <= floor:
                raise ValueError(
                    f"below.{currency} ({limit:,}) is not above at_least.{currency} "
                    f"({floor:,}): no amount can meet both"
                )
        return self._auto_states_a_cap()

    @property
    def decides(self) -> tuple[str, ...]:
        return tuple(self.tools or ("issue_refund",))

    def _auto_states_a_cap(self) -> RefundRule:
        writes = [tool for tool in self.decides if tool != "issue_refund"]
        if writes and (refund_only := [f for f in REFUND_ONLY if getattr(self, f) is not None]):
            raise ValueError(
                f"{refund_only[0]} is for refunds, and this rule decides {writes[0]}: make a "
                "rule of its own for issue_refund"
            )
        if all(tool in MOVES_NO_MONEY for tool in self.decides):
            return self  # an address moves no money: an auto rule needs no amount
        if self.decision == "auto" and not self.below:
            raise ValueError(
                "an auto rule pays with nobody asked: state the amount it stays below "
                "(below = { JPY = 5000 }); only the currencies it names are approved"
            )
        if self.max_auto_per_day is not None and self.decision != "auto":
            raise ValueError("max_auto_per_day is for auto rules")
        return self
