"""A self-contained HTML report of an eval: inline CSS, SVG and one small script (the filter),
nothing fetched from elsewhere.

A team reads it to see what failed and why, so failures come first, each row is one case with
a column per model (a comparison matrix), each cell holds the answer, the reason and a link to
the trace, and the header says what ran: the case file, the models with their base URLs, the
day the cases were dated for. Below 640 px the tables become one block per row."""

from __future__ import annotations

import html
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from agent_cli.record.outcomes import CaseResult, ModelSummary

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { margin: 0 0 .3em; } h2 { margin: 1.2em 0 .4em; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; }
dl.meta dt { color: #555; } dl.meta dd { margin: 0; }
table { border-collapse: collapse; margin: .5em 0; width: 100%; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; }
td, dd { overflow-wrap: anywhere; }
.pass { color: #17803d; } .fail { color: #b42318; } .flaw { color: #a15c00; } .none { color: #888; }
.question { color: #444; } .answer { white-space: pre-wrap; margin: .2em 0; }
.why { margin: .2em 0; } .run { color: #555; font-size: 12px; }
.filter { display: flex; flex-wrap: wrap; gap: 4px 14px; align-items: center; margin: .4em 0; }
svg { max-width: 680px; width: 100%; height: auto; display: block; }
svg text { font: 12px system-ui, sans-serif; }
[hidden] { display: none !important; }
@media (max-width: 640px) {
  body { margin: .6em; }
  table, tbody, tr, td { display: block; width: auto; }
  tr.head { display: none; }
  tr { border: 1px solid #ccc; margin: 0 0 .6em; }
  td { border: 0; border-top: 1px solid #eee; }
  td.num { text-align: left; }
  td[data-label]::before { content: attr(data-label) ": "; color: #555; font-weight: 600; }
}
"""

# Shows the rows the form asks for; without scripts every row stays shown.
_FILTER_SCRIPT = """
const form = document.getElementById("filter");
form.addEventListener("change", () => {
  const show = form.elements.show.value, kind = form.elements.kind.value;
  for (const row of document.querySelectorAll("tr[data-case]")) {
    const failed = row.dataset.status === "failed";
    const kinds = row.dataset.kinds.split(" ");
    row.hidden = (show === "failed" && !failed) || (show === "passed" && failed)
      || (kind !== "" && !kinds.includes(kind));
  }
});
"""
_BAR_HEIGHT, _LABEL_WIDTH, _CHART_WIDTH = 22, 220, 360
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class ReportContext:
    """What ran, for the report's header; trace links are relative to `directory`."""

    source: str  # the case file's path, or "built-in cases"
    base_urls: dict[str, str]  # model label -> its provider's base URL ("" offline)
    ran_at: datetime
    sample_day: date  # the day a case without its own `today` is dated for
    directory: Path


@dataclass(frozen=True, slots=True)
class _CaseRow:
    case: str
    repeat: int
    question: str
    today: date | None
    by_model: dict[str, CaseResult]

    @property
    def failed(self) -> bool:
        return any(not r.passed and not r.flawed for r in self.by_model.values())

    @property
    def kinds(self) -> list[str]:
        return sorted({f.kind for r in self.by_model.values() for f in r.failures})


def page(title: str, body: str) -> str:
    """A self-contained page in the report's style (`agent logs report --html`)."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>\n"
        f"<h1>{_e(title)}</h1>\n{body}\n</body></html>\n"
    )


def render_report(
    results: Sequence[CaseResult], summaries: Sequence[ModelSummary], context: ReportContext
) -> str:
    models = [s.model for s in summaries]
    rows = case_rows(results)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>agent eval: {_e(context.source)}</title><style>{_CSS}</style></head><body>",
        "<h1>agent eval</h1>",
        _header(results, models, context),
        "<h2>Accuracy</h2>",
        bar_chart(summaries, lambda s: s.accuracy * 100, 100.0, lambda v: f"{v:.1f}%"),
        "<h2>Latency (p50)</h2>",
        bar_chart(
            summaries, lambda s: s.p50_ms, max((s.p95_ms for s in summaries), default=1.0), ms
        ),
        "<h2>Summary</h2>",
        _summary_table(summaries),
        "<h2>Cases</h2>",
        _filter_form(rows),
        _cases_table(rows, models, context.directory),
        f"<script>{_FILTER_SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def case_rows(results: Sequence[CaseResult]) -> list[_CaseRow]:
    """One row per case (and repeat) with each model's result; failed rows first, each group
    in the order the cases were given."""
    rows: dict[tuple[str, int], _CaseRow] = {}
    for r in results:
        row = rows.setdefault(
            (r.case, r.repeat), _CaseRow(r.case, r.repeat, r.question, r.today, {})
        )
        row.by_model[r.model] = r
    return sorted(rows.values(), key=lambda row: not row.failed)


def ms(value: float) -> str:
    """Milliseconds as measured: 0.42 ms, 4.2 ms and 42 ms are not all "0 ms"."""
    if value < 1:
        return f"{value:.2f} ms"
    return f"{value:.1f} ms" if value < 10 else f"{value:,.0f} ms"


def _header(results: Sequence[CaseResult], models: list[str], context: ReportContext) -> str:
    items = [
        ("cases", context.source),
        ("ran", context.ran_at.strftime("%Y-%m-%d %H:%M %Z").strip()),
        ("dated", f"{context.sample_day.isoformat()} (the sample day) unless a case sets its own"),
        ("case runs", f"{len(results)}"),
    ]
    for model in models:
        base_url = _public_url(context.base_urls.get(model, ""))
        items.append(("model", f"{model} at {base_url}" if base_url else f"{model} (offline)"))
    body = "".join(f"<dt>{_e(term)}</dt><dd>{_e(text)}</dd>" for term, text in items)
    return f'<dl class="meta">{body}</dl>'


def bar_chart(
    summaries: Sequence[ModelSummary],
    value: Callable[[ModelSummary], float],
    scale: float,
    label: Callable[[float], str],
) -> str:
    """One horizontal bar per model, as inline SVG that shrinks to the page's width."""
    height = _BAR_HEIGHT * max(len(summaries), 1) + 4
    width = _LABEL_WIDTH + _CHART_WIDTH + 90
    rows = [f'<svg viewBox="0 0 {width} {height}" role="img">']
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
    heads: tuple[str, ...] = ("model", "passed", "flawed", "accuracy", "pass^k", "p50", "p95")
    heads += ("tokens/case", "cost/case", "tokens", "cost", "time", "failures")
    rows = []
    for s in summaries:
        pass_hat = " ".join(f"pass^{k} {v:.1%}" for k, v in enumerate(s.pass_hat, start=1))
        failures = ", ".join(f"{kind} {n}" for kind, n in s.failures.items()) or "-"
        cost = f"{s.cost_per_case:.4f}" if s.cost_per_case is not None else "-"
        values = (
            s.model,
            f"{s.passed}/{s.scored}",
            str(s.flawed),
            f"{s.accuracy:.1%}",
            pass_hat if len(s.pass_hat) > 1 else "-",
            ms(s.p50_ms),
            ms(s.p95_ms),
            f"{s.tokens_per_case:,.0f}",
            cost,
            f"{s.tokens:,}",
            f"{s.cost:.4f}" if s.cost is not None else "-",
            ms(s.wall_ms),
            failures,
        )
        cells = "".join(
            _td(head, _e(value), numeric=head not in ("model", "pass^k", "failures"))
            for head, value in zip(heads, values, strict=True)
        )
        rows.append(f"<tr>{cells}</tr>")
    return f"<table>{_head_row(heads)}{''.join(rows)}</table>"


def _filter_form(rows: Sequence[_CaseRow]) -> str:
    failed = sum(1 for row in rows if row.failed)
    counts: dict[str, int] = {}
    for row in rows:
        for kind in row.kinds:
            counts[kind] = counts.get(kind, 0) + 1
    choices = (("all", len(rows)), ("failed", failed), ("passed", len(rows) - failed))
    radios = "".join(
        f'<label><input type="radio" name="show" value="{name}"'
        f"{' checked' if name == 'all' else ''}> {name} ({count})</label>"
        for name, count in choices
    )
    options = "".join(
        f'<option value="{_e(kind)}">{_e(kind)} ({n})</option>'
        for kind, n in sorted(counts.items())
    )
    select = f'<select name="kind"><option value="">any failure kind</option>{options}</select>'
    return f'<form id="filter" class="filter">show {radios}{select}</form>'


def _cases_table(rows: Sequence[_CaseRow], models: list[str], directory: Path) -> str:
    body = []
    for row in rows:
        name = row.case + (f" #{row.repeat}" if row.repeat > 1 else "")
        today = f'<div class="run">today {row.today.isoformat()}</div>' if row.today else ""
        case = f'<b>{_e(name)}</b><div class="question">{_e(row.question)}</div>{today}'
        cells = [_td("case", case)]
        cells += [_td(m, _result_cell(row.by_model.get(m), directory)) for m in models]
        status = "failed" if row.failed else "passed"
        body.append(
            f'<tr data-case="{_e(name)}" data-status="{status}" '
            f'data-kinds="{_e(" ".join(row.kinds))}">{"".join(cells)}</tr>'
        )
    return f"<table>{_head_row(('case', *models))}{''.join(body)}</table>"


def _result_cell(result: CaseResult | None, directory: Path) -> str:
    if result is None:
        return '<span class="none">not run</span>'
    record = result.record
    if result.passed:
        verdict = '<div class="pass">✓ passed</div>'
    elif result.flawed:  # the case's own flaw: neither the agent's pass nor its failure
        why = "; ".join(result.flaws)
        verdict = f'<div class="flaw">⚠ flawed case</div><p class="why">{_e(why)}</p>'
    else:
        kinds = ", ".join(dict.fromkeys(f.kind for f in result.failures))
        why = "; ".join(f.message for f in result.failures)
        verdict = f'<div class="fail">✗ {_e(kinds)}</div><p class="why">{_e(why)}</p>'
    answer = record.answer if record.answer is not None else f"(no answer: {record.status})"
    facts = [
        "1 step" if record.steps == 1 else f"{record.steps} steps",
        f"{record.usage.total:,} tokens",
        ms(record.elapsed_ms),
    ]
    if record.cost is not None:
        facts.append(f"cost {record.cost:.4f}")
    if record.runs > 1:
        facts.append(f"{record.runs} turns")
    if result.customer_usage.total:
        facts.append(f"customer {result.customer_usage.total:,} tokens")
    if record.run_id:
        facts.append(f"run {record.run_id[:8]}")
    meta = " · ".join(_e(fact) for fact in facts)
    if result.trace is not None:
        meta += f' · <a href="{_e(trace_href(result.trace, directory))}">trace</a>'
    return f'{verdict}<p class="answer">{_e(answer)}</p><div class="run">{meta}</div>'


def trace_href(trace: Path, directory: Path) -> str:
    """A link that still works when the report and the traces move together."""
    target = trace.resolve()
    try:
        relative = os.path.relpath(target, directory.resolve())
    except ValueError:  # another drive (Windows): an absolute link
        return target.as_uri()
    return quote(Path(relative).as_posix())


def _public_url(url: str) -> str:
    """A base URL without any user:password@ or query (a key passed there stays out)."""
    if not url:
        return ""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host  # an IPv6 address
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _head_row(heads: Sequence[str]) -> str:
    return '<tr class="head">' + "".join(f"<th>{_e(h)}</th>" for h in heads) + "</tr>"


def _td(label: str, content: str, *, numeric: bool = False) -> str:
    css = ' class="num"' if numeric else ""
    return f'<td data-label="{_e(label)}"{css}>{content}</td>'


def _e(text: str) -> str:
    return html.escape(_CONTROL.sub("", text), quote=True)
