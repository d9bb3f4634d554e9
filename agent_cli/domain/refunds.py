"""Whether an order may be refunded on a day, decided once: `lookup_order`'s computed fact, the
refund tool's checks and the offline playbook's verdict all read `eligibility`, each in its own
words. The rules, in the order they are checked: a status the policy refunds, something left
to refund, a delivery date, a date not after today, and a day within the window."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import date
from typing import Literal

Kind = Literal["refundable", "wrong_status", "refunded_in_full", "no_date", "future", "expired"]


@dataclass(frozen=True, slots=True)
class Eligibility:
    """What the rules say of one order: `kind`, and the days since delivery when known."""

    kind: Kind
    days: int | None = None

    @property
    def answer(self) -> Literal["yes", "no", "unknown"]:
        """yes or no, or unknown when the delivery date is after today (the facts disagree)."""
        if self.kind == "refundable":
            return "yes"
        return "unknown" if self.kind == "future" else "no"


def eligibility(
    status: str,
    delivered_at: date | None,
    today: date,
    *,
    statuses: Collection[str],
    window_days: int,
    left: int | None = None,
) -> Eligibility:
    """The order's eligibility on `today` under a policy refunding `statuses` for `window_days`
    after delivery; `left`, what is still unrefunded of its total in minor units (None: not
    known, as when only a lookup's words were read)."""
    if status not in statuses:
        return Eligibility("wrong_status")
    if left is not None and left <= 0:
        return Eligibility("refunded_in_full")
    if delivered_at is None:
        return Eligibility("no_date")
    days = (today - delivered_at).days
    if days < 0:
        return Eligibility("future", days)
    return Eligibility("expired" if days > window_days else "refundable", days)
