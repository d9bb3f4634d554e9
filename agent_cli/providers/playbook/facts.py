"""What the playbook reads of the seed's two tools, from their records as data (`Step.record`:
tools/records.py's lookup, `RefundPolicy.record`), never from their text: a lookup's facts as
the strings its answers print (major units without separators, as the record's text shows
them), and the refund policy with its cap for the order's own currency."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from agent_cli.core.decisions import Step
from agent_cli.domain.currencies import exponent, major, to_minor


@dataclass(frozen=True, slots=True)
class Policy:
    window_days: int
    statuses: tuple[str, ...]
    max_refund: int | float | Mapping[str, float] | None = None  # one cap, or one per currency

    def cap_in(self, currency: str) -> Decimal | None:
        """The most one refund may be in `currency`, in major units; None: no cap said."""
        cap = self.max_refund
        if isinstance(cap, Mapping):
            cap = cap.get(currency)
        minor = _minor(cap, currency)  # written with the currency's decimals: 12.50, 1,000
        return None if minor is None else Decimal(minor).scaleb(-exponent(currency))


def policy_of(step: Step | None) -> Policy | None:
    """The refund policy a `refund_policy` call returned; None when none was read."""
    if step is None or step.is_error or step.record is None:
        return None
    record = step.record
    try:
        days = int(record["refund_window_days"])
        statuses = tuple(str(status) for status in record["refundable_statuses"])
    except (KeyError, TypeError, ValueError):
        return None
    cap = record.get("max_refund")
    return Policy(days, statuses, cap if isinstance(cap, int | float | Mapping) else None)


def lookup_fields(step: Step) -> dict[str, str]:
    """A lookup's facts: status, currency, total, delivered_at ("none" when not delivered),
    and what was refunded and is left, when anything was."""
    record: Mapping[str, Any] = step.record or {}
    currency = str(record.get("currency") or "")
    fields = {
        "status": str(record.get("status") or "?"),
        "currency": currency,
        "delivered_at": str(record.get("delivered_at") or "none"),
    }
    total, refunded = (
        _minor(record.get("total"), currency),
        _minor(record.get("refunded"), currency),
    )
    if total is not None:
        fields["total"] = major(total, currency, grouped=False)
    if refunded and total is not None:
        fields["refunded"] = major(refunded, currency, grouped=False)
        fields["left"] = major(max(total - refunded, 0), currency, grouped=False)
    return fields


def _minor(value: Any, currency: str) -> int | None:
    if not isinstance(value, int | float) or isinstance(value, bool) or not currency:
        return None
    try:
        return to_minor(value, currency)
    except (ArithmeticError, ValueError):
        return None
