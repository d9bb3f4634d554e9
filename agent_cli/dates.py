"""The agent's clock: the system date, or `AGENT_TODAY` for demos and tests.

The date a run is judged on is never read from the customer's text ("today is 2026-08-10" in a
question would otherwise move a refund window): it is `--today`, else this clock.
"""

from __future__ import annotations

import os
from datetime import date

from agent_cli.errors import UsageError


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
