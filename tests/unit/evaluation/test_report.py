"""`agent eval --report`: a page a team reads. What it holds is checked in the HTML; that it
fits a phone and a desktop screen is checked in a real browser (headless Chromium)."""

from __future__ import annotations

import json
import re
import stat
import threading
from collections.abc import Iterator
from datetime import UTC, date, datetime
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from agent_cli.cli import app
from agent_cli.evaluation.report import ReportContext, ms, render_report
from agent_cli.evaluation.summary import summarize
from agent_cli.record.outcomes import CaseResult, Failure, RunRecord
from tests.helpers import CHROMIUM, chromium_dom

runner = CliRunner()

LONG_WORD = "x" * 180  # no place to break: the page must still not scroll sideways
CASES = f"""
[[cases]]
id = "a100"
question = "Is order A100 refundable?"
today = 2026-10-13
verdict = {{ A100 = "refundable" }}

[[cases]]
id = "wrong-on-purpose"
question = "Is order A101 refundable? {LONG_WORD}"
verdict = {{ A101 = "refundable" }}

[[cases]]
id = "policy"
question = "Is order A100 refundable? (What is your refund policy?)"
answer_matches = ['<script>alert(1)</script>|{LONG_WORD}']
"""


def evaluate(tmp_path: Path, *args: str) -> tuple[Result, Path]:
    cases = tmp_path / "cases.toml"
    cases.write_text(CASES, encoding="utf-8")
    report = tmp_path / "out" / "report.html"
    report.parent.mkdir(exist_ok=True)
    argv = [
        "eval",
        "run",
        str(cases),
        "--dry-run",
        "--report",
        str(report),
        "--min-pass",
        "0",
        *args,
    ]
    return runner.invoke(app, argv, env={}), report


def two_models(tmp_path: Path) -> list[str]:
    """Two offline contenders, side by side: the playbook with two instruction files."""
    args = []
    for name in ("warm.md", "brief.md"):
        (tmp_path / name).write_text(f"Be {name[:-3]}.")
        args += ["--instructions", str(tmp_path / name)]
    return args


def case_ids(page: str) -> list[str]:
    return re.findall(r'<tr data-case="([^"]+)"', page)


def test_the_report_says_what_ran_and_shows_each_question_and_answer(tmp_path: Path) -> None:
    result, report = evaluate(tmp_path)
    assert result.exit_code == 0, result.stderr
    page = report.read_text(encoding="utf-8")
    assert str(tmp_path / "cases.toml") in page  # the case file
    assert "offline/playbook (offline)" in page  # the model and where it ran
    assert "2026-10-13 (the sample day) unless a case sets its own" in page
    assert "today 2026-10-13" in page  # the case that sets its own day
    assert "Is order A100 refundable?" in page and "(What is your refund policy?)" in page
    assert "Order A100" in page  # the model's answer
    assert stat.S_IMODE(report.stat().st_mode) == 0o600


def test_failures_come_first_with_their_kind_and_reason(tmp_path: Path) -> None:
    page = evaluate(tmp_path)[1].read_text(encoding="utf-8")
    assert case_ids(page) == ["wrong-on-purpose", "policy", "a100"]
    statuses = re.findall(r'data-status="(\w+)"', page)
    assert statuses == ["failed", "failed", "passed"]
    assert 'data-kinds="verdict"' in page and "✗ verdict" in page
    assert '<option value="verdict">verdict (1)</option>' in page
    assert 'value="failed"> failed (2)' in page and 'value="passed"> passed (1)' in page


def test_the_page_is_self_contained_and_escapes_what_models_and_cases_say(
    tmp_path: Path,
) -> None:
    page = evaluate(tmp_path)[1].read_text(encoding="utf-8")
    assert page.count("<script") == 1  # the filter's own
    assert "alert(1)" in page and "<script>alert" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert " src=" not in page and "@import" not in page and "http" not in page.lower()


def test_several_models_make_one_row_per_case_with_a_column_each(tmp_path: Path) -> None:
    result, report = evaluate(tmp_path, *two_models(tmp_path))
    assert result.exit_code == 0, result.stderr
    page = report.read_text(encoding="utf-8")
    assert sorted(case_ids(page)) == ["a100", "policy", "wrong-on-purpose"]
    head = re.search(r'<tr class="head">(.*?)</tr>', page[page.index("<h2>Cases") :])
    assert head is not None
    assert re.findall(r"<th>(.*?)</th>", head.group(1)) == [
        "case",
        "offline/playbook + warm.md",
        "offline/playbook + brief.md",
    ]


def test_traces_are_linked_relative_to_the_report(tmp_path: Path) -> None:
    result, report = evaluate(tmp_path, "--record", str(tmp_path / "runs"))
    assert result.exit_code == 0, result.stderr
    links = re.findall(r'href="([^"]+)"', report.read_text(encoding="utf-8"))
    assert len(links) == 3
    for link in links:
        assert link.startswith("../runs/offline-playbook/")
        assert (report.parent / link).resolve().is_file()


def test_a_replaced_report_is_0600_too(tmp_path: Path) -> None:
    report = tmp_path / "out" / "report.html"
    report.parent.mkdir()
    report.write_text("an old report")
    report.chmod(0o644)
    assert evaluate(tmp_path)[0].exit_code == 0
    assert stat.S_IMODE(report.stat().st_mode) == 0o600
    assert report.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("value", "shown"),
    [(0.42, "0.42 ms"), (1.0, "1.0 ms"), (4.25, "4.2 ms"), (12.6, "13 ms"), (29.4, "29 ms")],
)
def test_short_latencies_are_shown_as_measured(value: float, shown: str) -> None:
    assert ms(value) == shown
    assert ms(1234.0) == "1,234 ms"


def result(model: str, case: str, *, passed: bool, elapsed: float = 3.0) -> CaseResult:
    record = RunRecord(model=model, status="answered", answer="Yes.", elapsed_ms=elapsed, steps=2)
    failures = () if passed else (Failure("verdict", "said not_refundable"),)
    return CaseResult(
        case=case,
        model=model,
        repeat=1,
        failures=failures,
        record=record,
        question=f"About {case}?",
    )


def context(tmp_path: Path, base_urls: dict[str, str]) -> ReportContext:
    ran = datetime(2026, 12, 5, 9, 30, tzinfo=UTC)
    return ReportContext("cases.toml", base_urls, ran, date(2026, 10, 13), tmp_path)


def test_a_base_url_is_shown_without_credentials(tmp_path: Path) -> None:
    results = [result("openai/m", "a", passed=True)]
    url = "http://user:s3cret@10.0.0.5:8080/v1?api_key=k3y"
    page = render_report(
        results, summarize(results, ["openai/m"]), context(tmp_path, {"openai/m": url})
    )
    assert "openai/m at http://10.0.0.5:8080/v1" in page
    assert "s3cret" not in page and "k3y" not in page and "user" not in page


def test_a_model_that_did_not_run_a_case_says_so(tmp_path: Path) -> None:
    results = [result("m1", "a", passed=True), result("m1", "b", passed=True)]
    results.append(result("m2", "a", passed=False))
    page = render_report(results, summarize(results, ["m1", "m2"]), context(tmp_path, {}))
    assert case_ids(page) == ["a", "b"]  # a failed on m2: first
    row_b = page[page.index('<tr data-case="b"') :]
    assert "not run" in row_b[: row_b.index("</tr>")]


# -- in a real browser ---------------------------------------------------------------------


# Loads the report at each width in an iframe (Chromium's own window is at least 500 px wide)
# and measures it: the page's scroll width, any element past the right edge, each case row's
# box, and which rows the filter leaves shown.
HARNESS = """<!DOCTYPE html><html><body style="margin:0">
<iframe id="narrow" src="report.html" style="width:480px;height:900px;border:0"></iframe>
<iframe id="wide" src="report.html" style="width:1280px;height:900px;border:0"></iframe>
<script>
function shown(doc) {
  return [...doc.querySelectorAll("tr[data-case]")]
    .filter(r => r.getBoundingClientRect().height > 0).map(r => r.dataset.case);
}
function pick(doc, name, value) {
  const field = doc.getElementById("filter").elements[name];
  if (field instanceof RadioNodeList) {
    [...field].find(input => input.value === value).checked = true;
  } else { field.value = value; }
  doc.getElementById("filter").dispatchEvent(new Event("change"));
  return shown(doc);
}
function measure(frame) {
  const doc = frame.contentDocument, width = doc.documentElement.clientWidth;
  const viewport = frame.contentWindow.innerWidth;  // less a scroll bar: width
  const rows = [...doc.querySelectorAll("tr[data-case]")].map(row => {
    const box = row.getBoundingClientRect();
    return {case: row.dataset.case, left: box.left, right: box.right, height: box.height};
  });
  const past = [...doc.body.querySelectorAll("*")]
    .filter(e => e.getBoundingClientRect().right > width + 0.5)
    .map(e => e.tagName + "." + e.className);
  const failed = pick(doc, "show", "failed"), passed = pick(doc, "show", "passed");
  pick(doc, "show", "all");
  const kind = pick(doc, "kind", "verdict");
  pick(doc, "kind", "");
  return {viewport, width, scrollWidth: doc.documentElement.scrollWidth, rows, past, failed, passed,
          kind, all: shown(doc)};
}
window.addEventListener("load", () => {
  const out = {narrow: measure(document.getElementById("narrow")),
               wide: measure(document.getElementById("wide"))};
  document.body.insertAdjacentHTML("beforeend",
    "<pre id='layout'>" + JSON.stringify(out).replace(/</g, "\\\\u003c") + "</pre>");
});
</script></body></html>
"""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A loopback HTTP server for the report's directory, so the harness may read its frames."""
    handler = partial(QuietHandler, directory=str(tmp_path / "out"))
    (tmp_path / "out").mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", tmp_path / "out"
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def layout(url: str, profile: Path) -> dict[str, Any]:
    dom = chromium_dom(url, profile, budget_ms=5000, window="1400,1000")
    found = re.search(r"<pre id=\"layout\">(.*?)</pre>", dom, re.S)
    assert found is not None, f"the harness did not report; Chromium printed: {dom[:500]}"
    return json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<"))


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (.ci/run installs it)")
def test_the_report_fits_a_phone_and_a_desktop_in_chromium(
    served: tuple[str, Path], tmp_path: Path
) -> None:
    url, directory = served
    cases = tmp_path / "cases.toml"
    cases.write_text(CASES, encoding="utf-8")
    argv = ["eval", "run", str(cases), "--dry-run", "--min-pass", "0", *two_models(tmp_path)]
    argv += ["--report", str(directory / "report.html"), "--record", str(directory / "runs")]
    assert runner.invoke(app, argv, env={}).exit_code == 0
    (directory / "harness.html").write_text(HARNESS, encoding="utf-8")
    measured = layout(f"{url}/harness.html", tmp_path / "chromium-profile")
    for width, view in (("480", measured["narrow"]), ("1280", measured["wide"])):
        assert view["viewport"] == int(width)
        assert view["scrollWidth"] <= view["width"], f"{width} px: scrolls sideways"
        assert view["past"] == [], f"{width} px: past the right edge: {view['past']}"
        assert [row["case"] for row in view["rows"]] == ["wrong-on-purpose", "policy", "a100"]
        for row in view["rows"]:
            assert row["height"] > 0 and row["left"] >= 0 and row["right"] <= view["width"]
        assert view["failed"] == ["wrong-on-purpose", "policy"] and view["passed"] == ["a100"]
        assert view["kind"] == ["wrong-on-purpose"]
        assert view["all"] == ["wrong-on-purpose", "policy", "a100"]
