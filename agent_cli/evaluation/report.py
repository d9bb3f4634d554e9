"""A self-contained HTML report of an eval: inline CSS and SVG, no scripts, no network."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from agent_cli.outcomes import CaseResult, ModelSummary

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
td.num { text-align: right; }
.pass { color: #17803d; } .fail { color: #b42318; }
svg text { font: 12px system-ui, sans-serif; }
"""
_BAR_HEIGHT, _LABEL_WIDTH, _CHART_WIDTH = 22, 220, 360


def render_report(
    results: Sequence[CaseResult], summaries: Sequence[ModelSummary], *, title: str
) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1><p>{len(results)} case runs, {when}</p>",
        "<h2>Accuracy</h2>",
        bar_chart(summaries, lambda s: s.accuracy * 100, 100.0, lambda v: f"{v:.1f}%"),
        "<h2>Latency (p50)</h2>",
        bar_chart(
            summaries,
            lambda s: s.p50_ms,
            max((s.p95_ms for s in summaries), default=1.0),
            lambda v: f"{v:,.0f} ms",
        ),
        "<h2>Summary</h2>",
        _summary_table(summaries),
        "<h2>Cases</h2>",
        _cases_table(results),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def bar_chart(
    summaries: Sequence[ModelSummary],
    value: Callable[[ModelSummary], float],
    scale: float,
    label: Callable[[float], str],
) -> str:
    """One horizontal bar per model, as inline SVG."""
    height = _BAR_HEIGHT * max(len(summaries), 1) + 4
    width = _LABEL_WIDTH + _CHART_WIDTH + 90
    rows = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">']
    for index, summary in enumerate(summaries):
        y = index * _BAR_HEIGHT + 2
        amount = value(summary)
        bar = 0.0 if scale <= 0 else min(amount / scale, 1.0) * _CHART_WIDTH
        rows += [
            f'<text x="0" y="{y + 15}">{_e(summary.model)}</text>',
            f'<rect x="{_LABEL_WIDTH}" y="{y}" width="{bar:.1f}" height="{_BAR_HEIGHT - 6}"'
            ' fill="#4c78a8"/>',
            f'<text x="{_LABEL_WIDTH + bar + 6:.1f}" y="{y + 13}">{_e(label(amount))}</text>',
        ]
    rows.append("</svg>")
    return "".join(rows)


def _summary_table(summaries: Sequence[ModelSummary]) -> str:
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "model",
            "passed",
            "accuracy",
            "p50",
            "p95",
            "tokens/case",
            "cost/case",
            "failures",
        )
    )
    rows = []
    for s in summaries:
        failures = ", ".join(f"{kind} {n}" for kind, n in s.failures.items()) or "-"
        cost = f"{s.cost_per_case:.4f}" if s.cost_per_case is not None else "-"
        cells = [
            _e(s.model),
            f'<td class="num">{s.passed}/{s.cases}',
            f'<td class="num">{s.accuracy:.1%}',
            f'<td class="num">{s.p50_ms:,.0f} ms',
            f'<td class="num">{s.p95_ms:,.0f} ms',
            f'<td class="num">{s.tokens_per_case:,.0f}',
            f'<td class="num">{cost}',
            _e(failures),
        ]
        rows.append("<tr>" + "".join(_cell(c) for c in cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _cases_table(results: Sequence[CaseResult]) -> str:
    head = "".join(
        f"<th>{h}</th>"
        for h in ("case", "model", "result", "why", "steps", "tokens", "latency", "cost", "trace")
    )
    rows = []
    for r in results:
        record = r.record
        why = "; ".join(f.message for f in r.failures) or "passed"
        verdict = '<td class="pass">pass' if r.passed else '<td class="fail">fail'
        cells = [
            _e(r.case + (f" #{r.repeat}" if r.repeat > 1 else "")),
            _e(r.model),
            verdict,
            _e(why),
            f'<td class="num">{record.steps}',
            f'<td class="num">{record.usage.total:,}',
            f'<td class="num">{record.elapsed_ms:,.0f} ms',
            f'<td class="num">{record.cost:.4f}' if record.cost is not None else "-",
            _e(str(r.trace)) if r.trace else "-",
        ]
        rows.append("<tr>" + "".join(_cell(c) for c in cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _cell(content: str) -> str:
    return (content if content.startswith("<td") else f"<td>{content}") + "</td>"


def _e(text: str) -> str:
    return html.escape(text, quote=True)
