"""A date the question states as today's ("本日は2026-10-13です", "as of 2026-10-13").

Only the offline playbook reads it: it has no clock of its own to trust, and an example question
that says what day it is should be answered as of that day. A real model is told the system date
and reads the question as written; `--today` wins over both.
"""

from __future__ import annotations

import os
import re
from datetime import date

from agent_cli.errors import UsageError

_DATE = r"(\d{4})\s*(?:-|/|年)\s*(\d{1,2})\s*(?:-|/|月)\s*(\d{1,2})\s*日?"
# A bare date is not today's ("delivered 2026-10-01"): it must follow a phrase that says so.
_STATED_TODAY = re.compile(
    r"(?:本日は|今日は|本日|今日|現在|today(?:'s date)? is|the date is|as of|as at)"
    r"\s*[:：,、]?\s*" + _DATE,
    re.IGNORECASE,
)


def stated_today(question: str) -> date | None:
    """The first valid date the question states as today's, else None (an impossible date such
    as 2026-02-30 is not a statement of today)."""
    for match in _STATED_TODAY.finditer(question):
        year, month, day = (int(part) for part in match.groups())
        try:
            return date(year, month, day)
        except ValueError:
            continue
    return None


def system_today() -> date:
    """The system date, or `AGENT_TODAY` (YYYY-MM-DD) when set: the agent's clock for demos and
    tests, read wherever "today" is meant (a new database's sample dates, a run's today)."""
    value = os.environ.get("AGENT_TODAY", "").strip()
    if not value:
        return date.today()
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise UsageError(
            f"AGENT_TODAY={value!r} is not a date; use YYYY-MM-DD or unset it"
        ) from None
