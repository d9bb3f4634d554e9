"""`agent logs report`: the desk's own numbers from the run log, as teams running Intercom Fin or
Zendesk track them: conversations, resolved without a person, handed over, refused, stopped at a
limit, writes proposed / approved / denied / queued (and, from the approval queue, approved,
denied or expired later), the median and p95 time to answer, tokens and cost; in all, or by day,
model or intent. A terminal gets a table, `--json` one object per group, `--html FILE` a page.

A conversation is an `agent ask` run, or an `agent chat` session (its runs share a session id):
resolved without a person when its last run answered and none handed over. The figures are
read from the run log's columns (record/desk_facts.py fills them as each run ends), never from
the traces, so 100,000 runs take a moment (benchmarks/logs.py).
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from agent_cli.commands.logs import has_log, opened_log
from agent_cli.config import Settings, load_settings
from agent_cli.errors import AgentError
from agent_cli.evaluation.report import ms, page
from agent_cli.store.configured import configured_path, open_configured
from agent_cli.store.sqlite import OrderStore
from agent_cli.ui import make_console
from agent_cli.ui.tables import show_desk_report

By = Literal["day", "model", "intent"]
BY: tuple[By, ...] = ("day", "model", "intent")
KINDS = (
    "ask",
    "chat",
    "conversation",
)  # a customer's conversations; eval cases and tools by hand are not
ANSWERED = ("answered", "pending_approval", "handed_over")
LIMITS = ("max_steps", "timeout", "token_budget", "cost_budget", "no_progress", "ungrounded")


@dataclass(kw_only=True)
class Figures:
    """One group's numbers (the whole log's when not grouped)."""

    group: str
    conversations: int = 0
    resolved: int = 0  # without a person: the last run answered, none handed over
    handed_over: int = 0
    refused: int = 0  # conversations with a write the rules refused
    at_limit: int = 0  # runs stopped by a limit (steps, time, tokens, cost, no progress)
    runs: int = 0
    proposed: int = 0
    approved: int = 0
    denied: int = 0
    queued: int = 0
    later: dict[str, int] = field(default_factory=dict)  # queued writes' outcomes since
    p50_ms: float | None = None
    p95_ms: float | None = None
    tokens: int = 0
    cost: float | None = 0.0  # None once a run's cost is unknown

    def as_json(self) -> dict[str, Any]:
        return {"event": "report", **asdict(self)}


@dataclass
class _Conversation:
    last: str = ""
    handed: bool = False
    refused: bool = False


def desk_report(
    *,
    since: datetime | None,
    by: By | None,
    json_output: bool,
    html: Path | None,
    config: Path | None,
) -> None:
    settings = load_settings(config)
    rows: list[tuple[Any, ...]] = []
    if has_log(settings):  # none yet: said in a dim line, and every figure is 0
        with opened_log(settings) as log:
            rows = log.report_rows(since, KINDS)
    groups = figures(rows, by)
    if by is None:  # the queue knows the run, not the group: said of the whole report
        groups[0].later = _queue_outcomes(settings, rows)
    if html is not None:
        from agent_cli.commands.evaluate import write_page

        write_page(html, page("agent logs report", _html(groups, since, by)), "--html")
    if json_output:
        print("\n".join(json.dumps(group.as_json(), ensure_ascii=False) for group in groups))
    elif html is None:
        show_desk_report(make_console(), [_cells(group) for group in groups], by or "all")


def figures(rows: Iterable[tuple[Any, ...]], by: By | None) -> list[Figures]:
    """The figures of `rows` (RunLog.report_rows), one group per day, model or intent."""
    groups: dict[str, tuple[Figures, dict[str, _Conversation], list[float]]] = {}
    for row in rows:
        started, conversation, provider, model, status, elapsed, tokens, cost = row[:8]
        intent, proposed, approved, denied, queued, refused = row[8:14]
        key = {"day": started[:10], "model": f"{provider}/{model}", "intent": intent or "unknown"}
        name = key[by] if by is not None else "all"
        figures_, talks, times = groups.setdefault(name, (Figures(group=name), {}, []))
        talk = talks.setdefault(conversation, _Conversation())
        talk.last, talk.handed = status, talk.handed or status == "handed_over"
        talk.refused = talk.refused or bool(refused)
        figures_.runs += 1
        figures_.at_limit += status in LIMITS
        figures_.proposed += proposed
        figures_.approved += approved
        figures_.denied += denied
        figures_.queued += queued
        figures_.tokens += tokens
        figures_.cost = None if figures_.cost is None or cost is None else figures_.cost + cost
        if status in ANSWERED and elapsed is not None:
            times.append(elapsed)
    return [_closed(f, talks, times) for f, talks, times in groups.values()] or [
        Figures(group="all")
    ]


def _closed(figures_: Figures, talks: dict[str, _Conversation], times: list[float]) -> Figures:
    figures_.conversations = len(talks)
    figures_.handed_over = sum(talk.handed for talk in talks.values())
    figures_.resolved = sum(talk.last in ANSWERED and not talk.handed for talk in talks.values())
    figures_.refused = sum(talk.refused for talk in talks.values())
    times.sort()
    figures_.p50_ms, figures_.p95_ms = _rank(times, 50), _rank(times, 95)
    return figures_


def _rank(ordered: list[float], pct: int) -> float | None:
    """The nearest-rank percentile; None of nothing."""
    if not ordered:
        return None
    return ordered[max(1, math.ceil(pct / 100 * len(ordered))) - 1]


def _queue_outcomes(settings: Settings, rows: list[tuple[Any, ...]]) -> dict[str, int]:
    """What became of the writes these runs queued, from the approval queue (the store), by
    status; the store unreachable (or none made yet), nothing is said of them."""
    queued = {row[14] for row in rows if row[12]}
    if not queued:
        return {}
    try:
        store = _store(settings)
        if store is None:
            return {}
        try:
            found = store.query("SELECT run_id, status FROM approvals")
        finally:
            store.close()
    except (AgentError, sqlite3.Error, OSError):
        return {}
    counts: dict[str, int] = {}
    for run_id, status in found:
        if run_id in queued:
            counts[str(status)] = counts.get(str(status), 0) + 1
    return counts


def _store(settings: Settings) -> OrderStore | None:
    """The configured store, never made here: a report reads, it does not create."""
    if settings.store.url is not None:
        return open_configured(settings.store.path, settings.store.url)
    path = configured_path(settings.store.path)
    return OrderStore.open(path, create=False) if path.exists() else None


def _seconds(value: float | None) -> str:
    return "-" if value is None else ms(value)


def _cells(group: Figures) -> list[str]:
    later = ", ".join(f"{n} {status}" for status, n in sorted(group.later.items()))
    return [
        group.group,
        str(group.conversations),
        f"{group.resolved} ({group.resolved / group.conversations:.0%})"
        if group.conversations
        else "0",
        str(group.handed_over),
        str(group.refused),
        str(group.at_limit),
        f"{group.proposed}/{group.approved}/{group.denied}/{group.queued}"
        + (f" ({later})" if later else ""),
        f"{_seconds(group.p50_ms)}/{_seconds(group.p95_ms)}",
        f"{group.tokens:,}",
        "-" if group.cost is None else f"{group.cost:.4f}",
    ]


HEADERS = (
    "conversations",
    "resolved",
    "handed over",
    "refused",
    "at a limit",
    "writes",
    "p50/p95",
    "tokens",
    "cost",
)


def _html(groups: list[Figures], since: datetime | None, by: By | None) -> str:
    from html import escape

    when = f"since {since.isoformat(timespec='minutes')}" if since else "every run logged"
    head = "".join(f"<th>{escape(h)}</th>" for h in (by or "all", *HEADERS))
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in _cells(group)) + "</tr>"
        for group in groups
    )
    return (
        f'<p class="run">{escape(when)}; writes: proposed / approved / denied / queued</p>'
        f"<table><tr>{head}</tr>{body}</table>"
    )
