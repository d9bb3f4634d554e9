"""`agent eval`: case files, the judge, the runner, and what a user sees."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from agent_cli.cli import app
from agent_cli.core.tool_outcomes import NotFound
from agent_cli.errors import CaseFileError, Interrupted
from agent_cli.evaluation.cases import builtin_cases, load_cases, parse_cases
from agent_cli.evaluation.heard import is_heard, with_heard
from agent_cli.evaluation.judge import judge, stated_verdicts
from agent_cli.evaluation.runner import Contender, Recording, plan_jobs, run_jobs
from agent_cli.providers.playbook import PlaybookModel
from agent_cli.record.outcomes import CaseResult, RunRecord, ToolRun
from agent_cli.runtime.options import RunOptions
from tests.fakellm import FakeLLM, openai_text

runner = CliRunner()

ONE_CASE = """
[[cases]]
id = "a100"
question = "Is order A100 refundable?"
today = 2026-10-13
verdict = { A100 = "refundable" }
"""


def write(tmp_path: Path, text: str, name: str = "cases.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def evaluate(*args: str, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(app, ["eval", "run", *args], env=env or {})


def lines(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def script(tmp_path: Path, *decisions: dict[str, Any]) -> Path:
    return write(tmp_path, json.dumps(list(decisions)), "script.json")


def playbook_failing_on(code: str, error: BaseException, monkeypatch: pytest.MonkeyPatch) -> None:
    """The playbook, raising `error` on any question naming `code`."""
    real = PlaybookModel.decide

    def decide(self: PlaybookModel, request: Any) -> Any:
        if code in request.goal:
            raise error
        return real(self, request)

    monkeypatch.setattr(PlaybookModel, "decide", decide)


LOOKUP_A100 = {"type": "tool", "tool": "lookup_order", "args": {"order_code": "A100"}}


# -- the built-in case set -----------------------------------------------------------------


def test_the_builtin_set_is_broad() -> None:
    cases = builtin_cases()
    assert len(cases) >= 30
    japanese = [c for c in cases if any("\u3040" <= ch <= "\u30ff" for ch in c.question)]
    assert len(japanese) >= 10
    assert any(len(c.verdicts) >= 3 for c in cases)  # several orders in one question
    assert any(c.needs_input for c in cases)
    assert any(c.orders and c.orders[0].note for c in cases)  # an injection through a note
    verdicts = {v for c in cases for _, v in c.verdicts}
    assert verdicts == {"refundable", "not_refundable", "not_found"}


def test_the_playbook_passes_every_builtin_case() -> None:
    result = evaluate("--builtin", "--dry-run", "--json")
    assert result.exit_code == 0, result.stderr
    records = lines(result)
    cases = [r for r in records if r["event"] == "case" and not is_heard(r["case"])]
    assert len(cases) == len(builtin_cases())
    assert [c["case"] for c in cases if not c["passed"]] == []
    summary, heard = [r for r in records if r["event"] == "summary"]
    assert summary["model"] == "offline/playbook" and summary["accuracy"] == 1.0
    assert heard["model"] == "offline/playbook · heard"  # tests/unit/evaluation/test_eval_heard.py


def test_the_table_streams_a_line_per_case_then_the_summary() -> None:
    result = evaluate("--builtin", "--dry-run")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "\x1b[" not in out  # piped: plain text
    rows = [line for line in out.splitlines() if line.startswith(("✓ ", "✗ "))]
    written = [row for row in rows if not row[2:].startswith("heard-")]
    assert len(written) == len(builtin_cases()) and len(rows) == len(with_heard(builtin_cases()))
    assert "summary" in out and f"{len(written)}/{len(written)} 100.0%" in out


# -- the judge -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Order A100 is refundable: delivered 12 days ago.", {"A100": "refundable"}),
        ("Yes, A100 can be refunded.", {"A100": "refundable"}),
        ("Order A101 is not refundable: it is still shipping.", {"A101": "not_refundable"}),
        ("A102 cannot be refunded because it was cancelled.", {"A102": "not_refundable"}),
        ("Sorry, order Z999 was not found.", {"Z999": "not_found"}),
        ("There is no order with code Z999.", {"Z999": "not_found"}),
        ("I cannot tell whether order A105 is refundable yet.", {"A105": None}),
        ("Order A100 was delivered 12 days ago. It is refundable.", {"A100": "refundable"}),
        (
            "A100 is refundable, but A101 is not eligible for a refund.",
            {"A100": "refundable", "A101": "not_refundable"},
        ),
        ("A100 is refundable; Z999 does not exist.", {"A100": "refundable", "Z999": "not_found"}),
        ("Order A100 and order A101: I looked them up.", {"A100": None, "A101": None}),
        ("注文A100は返金可能です。", {"A100": "refundable"}),
        ("注文A101は返金できません：ステータスがSHIPPINGです。", {"A101": "not_refundable"}),
        ("注文Z999は見つかりませんでした。", {"Z999": "not_found"}),
        (
            "注文Ａ１００は返金できます。一方、A102は返金対象外です。",
            {"A100": "refundable", "A102": "not_refundable"},
        ),
    ],
)
def test_verdicts_read_from_answers(answer: str, expected: dict[str, str | None]) -> None:
    assert stated_verdicts(answer) == expected


def run_record(answer: str, *tools: ToolRun, status: str = "answered", steps: int = 3) -> RunRecord:
    return RunRecord(status=status, answer=answer, steps=steps, tools=list(tools))


A100_FOUND = ToolRun("lookup_order", {"order_code": "A100"}, "order=A100 status=DELIVERED", False)


def case(text: str) -> Any:
    return parse_cases("[[cases]]\n" + text, "test", json_file=False)[0]


def test_a_correct_verdict_backed_by_a_lookup_passes() -> None:
    assert (
        judge(
            case('question = "q"\nverdict = { A100 = "refundable" }'),
            run_record("Order A100 is refundable.", A100_FOUND),
        )
        == ()
    )


def test_a_verdict_with_no_lookup_behind_it_fails_as_unsupported() -> None:
    failures = judge(
        case('question = "q"\nverdict = { A100 = "refundable" }'),
        run_record("Order A100 is refundable."),
    )
    assert [f.kind for f in failures] == ["unsupported"]


def test_not_found_needs_a_not_found_lookup() -> None:
    the_case = case('question = "q"\nverdict = { Z999 = "not_found" }')
    said = "NOT_FOUND: no order Z999"
    missing = ToolRun("lookup_order", {"order_code": "z999"}, said, False, NotFound("z999"))
    assert judge(the_case, run_record("Order Z999 was not found.", missing)) == ()
    failed = ToolRun("lookup_order", {"order_code": "Z999"}, "ERROR: database locked", True)
    kinds = [f.kind for f in judge(the_case, run_record("Order Z999 was not found.", failed))]
    assert kinds == ["unsupported"]


def test_every_expectation_is_checked() -> None:
    the_case = case(
        'question = "q"\nverdict = { A100 = "refundable" }\nanswer_matches = ["250,000"]\n'
        'must_call = ["refund_policy"]\nmust_not_call = ["lookup_order"]\nmax_steps = 2'
    )
    failures = judge(the_case, run_record("Order A100 is not refundable.", A100_FOUND))
    assert sorted(f.kind for f in failures) == [
        "answer",
        "must_call",
        "must_not_call",
        "steps",
        "verdict",
    ]


def test_a_run_that_did_not_answer_fails_on_its_status() -> None:
    timed_out = case('question = "q"\nanswer_matches = ["."]')
    failures = judge(timed_out, run_record("", status="timeout"))
    assert [f.kind for f in failures] == ["status"]
    needs = case('question = "q"\nverdict = "needs_input"')
    assert judge(needs, run_record("", status="needs_input")) == ()
    assert [f.kind for f in judge(needs, run_record("A100?", A100_FOUND))] == ["status"]


# -- case files ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[cases]]\nid = "x"\nquestion = "q"\nverdict = { A100 = "yes" }',
            "case 1 ('x'): verdict: A100: 'yes' is not a verdict",
        ),
        (
            '[[cases]]\nquestion = "q"\nverdct = "needs_input"',
            "case 1: verdct: unknown key (did you mean 'verdict'?)",
        ),
        (
            '[[cases]]\nid = "r"\nquestion = "q"\nanswer_matches = ["("]',
            "case 1 ('r'): answer_matches: item 0: not a valid regular expression",
        ),
        (
            '[[cases]]\nid = "d"\nquestion = "q"\nverdict = "needs_input"\n'
            '[[cases]]\nid = "d"\nquestion = "q"\nverdict = "needs_input"',
            "case 2: id 'd' is already used by case 1",
        ),
        (
            '[[cases]]\nid = "e"\nquestion = "q"\nmax_steps = 3',
            "case 1 ('e'): no criteria, so any answer would pass; say what a correct run does: "
            "verdict, answer_matches, must_call",
        ),
        ('[[cases]]\nid = "m"', "case 1 ('m'): no question; give question"),
        ('[[cases]]\nquestion = "q"\ntoday = "soon"', "case 1: today:"),
        (
            '[[cases]]\nquestion = "q"\n'
            'orders = [{ code = "D1", status = "DELIVERED", total = 1 }]',
            "case 1: orders: delivered_at: required",
        ),
        (
            '[[cases]]\nquestion = "q"\nverdict = { "A-1" = "refundable" }',
            "'A-1' is not an order code",
        ),
        (
            '[[cases]]\nquestion = "q"\n'
            '[[cases.orders]]\ncode = "D1"\nstatus = "PENDING"\ntotal = 1\ncustomr = "x"',
            "case 1: orders.0.customr: unknown key (did you mean 'customer'?)",
        ),
        ("[[cases]\n", "not valid TOML"),
        ('title = "x"', "unknown top-level key 'title'"),
        ("", "no cases"),
    ],
)
def test_malformed_case_files_name_the_case_and_field(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(CaseFileError) as caught:
        load_cases(path)
    assert message in str(caught.value)
    result = evaluate(str(path), "--dry-run")
    assert result.exit_code == 2
    assert result.stderr.startswith("agent: error: ") and message in result.stderr
    assert "Traceback" not in result.stderr


def test_json_case_files(tmp_path: Path) -> None:
    cases = [
        {
            "id": "j",
            "question": "Is A100 refundable?",
            "today": "2026-10-13",
            "verdict": {"a100": "refundable"},
        }
    ]
    for text in (json.dumps(cases), json.dumps({"cases": cases})):
        (loaded,) = load_cases(write(tmp_path, text, "cases.json"))
        assert loaded.verdicts == (("A100", "refundable"),)
    assert evaluate(str(tmp_path / "cases.json"), "--dry-run").exit_code == 0


def test_bad_paths_and_options_are_usage_errors(tmp_path: Path) -> None:
    good = write(tmp_path, ONE_CASE)
    for args, message in [
        ([str(tmp_path / "missing.toml"), "--dry-run"], "cannot read"),
        ([str(write(tmp_path, ONE_CASE, "cases.yaml")), "--dry-run"], "use a .toml or .json"),
        (["--dry-run"], "Give one of: a case file or --builtin"),
        ([str(good), "--builtin", "--dry-run"], "Give one of: a case file or --builtin"),
        ([str(good), "--dry-run", "--model", "m"], "--model picks provider models"),
        ([str(good), "--dry-run", "--concurrency", "0"], "--concurrency must be 1-64"),
        ([str(good), "--dry-run", "--repeat", "0"], "--trials must be 1-100"),
        ([str(good), "--dry-run", "--min-pass", "1.5"], "--min-pass is a fraction"),
        (
            [str(good), "--dry-run", "--report", str(tmp_path / "no" / "r.html")],
            "no such directory",
        ),
    ]:
        result = evaluate(*args)
        assert result.exit_code == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)


def test_a_case_naming_an_unknown_tool_is_refused_before_anything_runs(tmp_path: Path) -> None:
    path = write(tmp_path, ONE_CASE + 'must_call = ["lookup_orders"]\n')
    result = evaluate(str(path), "--dry-run")
    assert result.exit_code == 2
    assert "case 'a100': no tool named 'lookup_orders'" in result.stderr
    assert result.stdout == ""


# -- running -------------------------------------------------------------------------------


def test_a_wrong_answer_fails_and_min_pass_sets_the_exit_code(tmp_path: Path) -> None:
    cases = write(tmp_path, ONE_CASE + ONE_CASE.replace('"a100"', '"again"'))
    wrong = script(
        tmp_path, LOOKUP_A100, {"type": "final", "answer": "Order A100 is not refundable."}
    )
    # Without the grounding check: with it, an answer contradicting its lookup is repaired.
    result = evaluate(str(cases), "--script", str(wrong), "--json", "--no-grounding")
    assert result.exit_code == 3
    assert "passed 0 of 2 cases (0.0%), below --min-pass 100%" in result.stderr
    failures = [r["failures"] for r in lines(result) if r["event"] == "case"]
    assert failures[0] == [
        {"kind": "verdict", "message": "A100: said not_refundable, expected refundable"}
    ]
    right = script(tmp_path, LOOKUP_A100, {"type": "final", "answer": "Order A100 is refundable."})
    assert evaluate(str(cases), "--script", str(right), "--json").exit_code == 0


def test_a_pattern_that_backtracks_for_ever_fails_its_case_and_eval_goes_on(
    tmp_path: Path,
) -> None:
    """`(a+)+$` against 40 a's and a `!` would take longer than anyone waits: the search runs
    in a child process with a time limit, and the case fails saying why."""
    evil = ONE_CASE + "answer_matches = ['(a+)+$']\n"
    cases = write(tmp_path, evil + ONE_CASE.replace('"a100"', '"plain"'))
    answer = "Order A100 is refundable. " + "a" * 40 + "!"
    scripted = script(tmp_path, LOOKUP_A100, {"type": "final", "answer": answer})
    result = evaluate(str(cases), "--script", str(scripted), "--json", "--min-pass", "0")
    assert result.exit_code == 0, result.stderr
    evil_case, plain_case = (r for r in lines(result) if r["event"] == "case")
    assert evil_case["failures"] == [
        {
            "kind": "answer",
            "message": "matching /(a+)+$/ took over 5 s (catastrophic backtracking); "
            "simplify the pattern",
        }
    ]
    assert plain_case["passed"] is True


def test_patterns_are_still_searched_after_one_timed_out() -> None:
    from agent_cli.evaluation import matching

    assert matching.search("^(a+)+$", "a" * 40 + "!", timeout_s=0.5) is None
    assert matching.search(r"250,000", "refund 250,000 JPY") is True
    assert matching.search(r"^\d+$", "12 apples") is False


def test_min_pass_accepts_a_fraction(tmp_path: Path) -> None:
    text = (
        ONE_CASE + '\n[[cases]]\nid = "z"\nquestion = "Is Z999 refundable?"\n'
        'today = 2026-10-13\nverdict = { Z999 = "refundable" }\n'
    )
    cases = write(tmp_path, text)
    assert evaluate(str(cases), "--dry-run", "--min-pass", "0.5").exit_code == 0
    assert evaluate(str(cases), "--dry-run", "--min-pass", "0.6").exit_code == 3


def test_fixtures_run_in_a_throwaway_store_and_the_users_database_is_untouched(
    tmp_path: Path,
) -> None:
    db = tmp_path / "orders.db"  # AGENT_DB, set by conftest
    assert runner.invoke(app, ["orders", "list"], env={"AGENT_DB": str(db)}).exit_code == 0
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    text = """
[[cases]]
id = "fixture"
question = "Is order A100 refundable?"
today = 2026-10-13
orders = [{ code = "A100", status = "CANCELLED", total = 5 }]
verdict = { A100 = "not_refundable" }
"""
    result = evaluate(str(write(tmp_path, text)), "--dry-run", "--json", env={"AGENT_DB": str(db)})
    assert result.exit_code == 0, result.stdout
    assert "CANCELLED" in lines(result)[0]["answer"]  # the fixture replaced the sample A100
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    fresh = tmp_path / "never.db"
    evaluate("--builtin", "--dry-run", "--json", env={"AGENT_DB": str(fresh)})
    assert not fresh.exists()


def test_a_case_that_crashes_fails_with_its_error_and_the_others_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    playbook_failing_on("A101", RuntimeError("the model broke"), monkeypatch)
    text = (
        ONE_CASE
        + ONE_CASE.replace('"a100"', '"b"').replace("A100", "A101")
        + ONE_CASE.replace('"a100"', '"c"')
    )
    result = evaluate(str(write(tmp_path, text)), "--dry-run", "--json", "--min-pass", "0")
    assert result.exit_code == 0, result.stderr
    cases = {r["case"]: r for r in lines(result) if r["event"] == "case"}
    assert cases["a100"]["passed"] and cases["c"]["passed"]
    assert cases["b"]["failures"][0]["kind"] == "error"
    assert "the model broke" in cases["b"]["failures"][0]["message"]


def test_record_keeps_each_cases_trace_and_failures_point_at_it(tmp_path: Path) -> None:
    cases = write(
        tmp_path,
        ONE_CASE
        + ONE_CASE.replace('"a100"', '"other"').replace(
            'A100 = "refundable"', 'A100 = "not_found"'
        ),
    )
    record = tmp_path / "runs"
    result = evaluate(str(cases), "--dry-run", "--record", str(record), "--min-pass", "0")
    assert result.exit_code == 0, result.stderr
    traces = sorted(p.relative_to(record).as_posix() for p in record.rglob("*.jsonl"))
    assert traces == ["offline-playbook/a100.jsonl", "offline-playbook/other.jsonl"]
    failing = next(line for line in result.stdout.splitlines() if line.startswith("✗"))
    assert f"(trace: {record / 'offline-playbook' / 'other.jsonl'})" in failing
    replayed = runner.invoke(app, ["replay", str(record / "offline-playbook" / "a100.jsonl")])
    assert replayed.exit_code == 0 and "refundable" in replayed.stdout


def test_repeat_runs_each_case_k_times(tmp_path: Path) -> None:
    result = evaluate(str(write(tmp_path, ONE_CASE)), "--dry-run", "--repeat", "3", "--json")
    assert result.exit_code == 0
    cases = [r for r in lines(result) if r["event"] == "case"]
    assert sorted(r["repeat"] for r in cases) == [1, 2, 3]
    assert lines(result)[-1]["cases"] == 3


def test_workers_in_parallel_give_the_same_results() -> None:
    serial = lines(evaluate("--builtin", "--dry-run", "--json"))
    parallel = lines(evaluate("--builtin", "--dry-run", "--json", "--concurrency", "8"))

    def passed(records: list[dict[str, Any]]) -> dict[str, bool]:
        return {r["case"]: r["passed"] for r in records if r["event"] == "case"}

    assert passed(parallel) == passed(serial)
    assert all(ok for case, ok in passed(parallel).items() if not is_heard(case))


GENERAL = """
[[cases]]
id = "{id}"
question = "What is your refund policy?"
answer_matches = ["30 days"]
"""


LONG_PATTERN = "Refunds within 30 days of delivery|refunds are granted within thirty days"


def test_models_side_by_side_over_http(fake_llm: FakeLLM) -> None:
    path = Path(os.environ["HOME"]) / "cases.toml"
    case = GENERAL.replace('"30 days"', f'"{LONG_PATTERN}"')
    path.write_text(case.format(id="p1") + case.format(id="p2"), encoding="utf-8")
    fake_llm.queue(
        openai_text("Refunds within 30 days of delivery."),
        openai_text("Refunds within 30 days of delivery."),
        openai_text("We do not do refunds."),
        openai_text("Refunds within 30 days of delivery.", usage=(1000, 50)),
    )
    args = [
        str(path),
        "--provider",
        "openai",
        "--base-url",
        fake_llm.url + "/v1",
        "--model",
        "small",
        "--model",
        "large",
        "--concurrency",
        "1",
    ]
    result = evaluate(*args, "--min-pass", "0.5", env={"OPENAI_API_KEY": "test-key"})
    assert result.exit_code == 0, result.stderr
    assert [body["model"] for body in fake_llm.bodies()] == ["small", "small", "large", "large"]
    out = result.stdout
    lines = out.splitlines()
    # Piped, the side-by-side table is tab-separated lines with every reason whole.
    assert "case\topenai/small\topenai/large" in lines
    matrix = dict(line.split("\t", 1) for line in lines if line.startswith(("p1\t", "p2\t")))
    assert matrix["p1"] == f"✓\t✗ the answer does not match /{LONG_PATTERN}/"
    assert "…" not in matrix["p1"] and matrix["p2"] == "✓\t✓"
    assert "2/2 100.0%" in out and "1/2 50.0%" in out
    assert fake_llm.violations == []


def test_one_http_client_per_worker(fake_llm: FakeLLM) -> None:
    path = Path(os.environ["HOME"]) / "cases.toml"
    path.write_text("".join(GENERAL.format(id=f"p{n}") for n in range(8)), encoding="utf-8")
    fake_llm.queue(*[openai_text("Refunds within 30 days of delivery.") for _ in range(8)])
    args = [
        str(path),
        "--provider",
        "openai",
        "--base-url",
        fake_llm.url + "/v1",
        "--concurrency",
        "2",
        "--json",
    ]
    result = evaluate(*args, env={"OPENAI_API_KEY": "test-key"})
    assert result.exit_code == 0, result.stderr
    assert len(fake_llm.requests) == 8
    assert 1 <= fake_llm.connections <= 2  # each worker's client keeps its connection


def test_ctrl_c_prints_the_partial_summary_and_exits_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    playbook_failing_on("A102", KeyboardInterrupt(), monkeypatch)
    text = (
        ONE_CASE
        + ONE_CASE.replace('"a100"', '"b"').replace("A100", "A102")
        + ONE_CASE.replace('"a100"', '"c"')
    )
    result = evaluate(str(write(tmp_path, text)), "--dry-run", "--json")
    assert result.exit_code == 130
    records = lines(result)
    assert [r["case"] for r in records if r["event"] == "case"] == ["a100"]
    assert records[-1]["event"] == "summary" and records[-1]["partial"] is True
    assert records[-1]["cases"] == 1
    assert result.stderr.startswith("agent: error: Interrupted")


def test_ctrl_c_stops_parallel_workers() -> None:
    cases = builtin_cases()
    contender = Contender(
        label="offline/playbook", options=RunOptions(dry_run=True), settings=RunOptions().settings()
    )
    jobs = plan_jobs(cases, (contender,), repeat=3)
    seen: list[CaseResult] = []
    cancel = threading.Event()

    def on_result(result: CaseResult) -> None:
        seen.append(result)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted):
        run_jobs(jobs, concurrency=4, on_result=on_result, recording=Recording(cancel=cancel))
    assert cancel.is_set()
    assert 2 <= len(seen) < len(jobs)  # the cases that finished, not the rest
    assert len({(r.case, r.repeat) for r in seen}) == len(seen)  # none handed over twice


def test_help_paragraphs_are_reflowed_not_broken_at_source_lines() -> None:
    result = runner.invoke(app, ["eval", "run", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "plus the case's own orders; your order database is never touched." in result.stdout


def test_an_eval_never_approves_a_money_write(tmp_path: Path) -> None:
    """Its approver refuses: a cancel the customer said yes to is denied, not made (the sample
    shop's refunds are outside their window on any day but the README's: a cancel of a pending
    order moves money on every day)."""
    cases = write(
        tmp_path,
        '[[cases]]\nid = "cancel"\nquestion = "Cancel B200, kaito.yamamoto@example.com"\n'
        'replies = ["yes"]\nmust_call = ["cancel_pending_order"]\n',
    )
    cancel = {
        "type": "tool",
        "tool": "cancel_pending_order",
        "args": {"order_id": "B200", "reason": "no longer needed"},
    }
    wants_money = script(
        tmp_path,
        {
            "type": "tool",
            "tool": "find_user_id_by_email",
            "args": {"email": "kaito.yamamoto@example.com"},
        },
        cancel,
        {"type": "ask_user", "question": "Change P1: cancel B200?"},
        cancel,
        {"type": "final", "answer": "Done."},
    )
    runs = tmp_path / "runs"
    result = evaluate(
        str(cases), "--script", str(wants_money), "--record", str(runs), "--min-pass", "0"
    )
    assert result.exit_code == 0, result.stderr
    (trace,) = runs.rglob("cancel.jsonl")
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    (decided,) = [r for r in records if r["event"] == "approval_decided"]
    assert decided["approved"] is False
    last = [r for r in records if r.get("tool") == "cancel_pending_order" and "observation" in r]
    assert last[-1]["observation"].startswith("DENIED:"), last


def test_a_clause_naming_no_order_is_credited_only_when_the_answer_names_one() -> None:
    assert stated_verdicts("I looked up A100. It is refundable.") == {"A100": "refundable"}
    several = stated_verdicts("I looked up A100 and A101. It is refundable.")
    assert several == {"A100": None, "A101": None}  # "it" could be either: no verdict for both
    mixed = stated_verdicts("A100 is not refundable. I checked A101 too. It is refundable.")
    assert mixed == {"A100": "not_refundable", "A101": None}


def test_p95_is_the_nearest_rank_percentile() -> None:
    from agent_cli.evaluation.summary import percentile

    assert percentile([float(n) for n in range(1, 21)], 95) == 19.0  # rank ceil(19.0) = 19
    assert percentile([10.0, 20.0, 30.0, 40.0, 50.0], 95) == 50.0  # rank ceil(4.75) = 5
    assert percentile([10.0, 20.0, 30.0, 40.0], 50) == 20.0  # not 25: no interpolation
    assert percentile([float(n) for n in range(1, 31)], 95) == 29.0  # rank ceil(28.5) = 29
    assert percentile([7.0], 95) == 7.0 and percentile([], 95) == 0.0


def test_cost_per_case_only_when_every_case_has_a_cost() -> None:
    from agent_cli.evaluation.summary import summarize

    def result(case: str, cost: float | None) -> CaseResult:
        return CaseResult(
            case=case,
            model="m",
            repeat=1,
            failures=(),
            record=RunRecord(status="answered", cost=cost),
            trace=None,
        )

    (all_priced,) = summarize([result("a", 0.002), result("b", 0.004)], ["m"])
    assert all_priced.cost_per_case == pytest.approx(0.003)
    (one_unpriced,) = summarize([result("a", 0.002), result("b", None)], ["m"])
    assert one_unpriced.cost_per_case is None


def test_a_cases_max_steps_limits_its_run(tmp_path: Path) -> None:
    cases = write(tmp_path, ONE_CASE + "max_steps = 1\n")
    slow = script(
        tmp_path,
        LOOKUP_A100,
        {"type": "tool", "tool": "refund_policy", "args": {}},
        {"type": "final", "answer": "Order A100 is refundable."},
    )
    result = evaluate(str(cases), "--script", str(slow), "--json", "--min-pass", "0")
    (case_line,) = [r for r in lines(result) if r["event"] == "case"]
    assert case_line["status"] == "max_steps" and case_line["steps"] == 1
    assert "Max steps (1) exceeded" in case_line["failures"][0]["message"]


def test_http_evals_default_to_four_workers(fake_llm: FakeLLM) -> None:
    from tests.fakellm import Reply

    path = Path(os.environ["HOME"]) / "cases.toml"
    path.write_text("".join(GENERAL.format(id=f"p{n}") for n in range(12)), encoding="utf-8")
    slow = openai_text("Refunds within 30 days of delivery.")
    fake_llm.queue(*[Reply(body=slow, delay=0.5) for _ in range(12)])
    args = [str(path), "--provider", "openai", "--base-url", fake_llm.url + "/v1", "--json"]
    result = evaluate(*args, env={"OPENAI_API_KEY": "test-key"})
    assert result.exit_code == 0, result.stderr
    assert len(fake_llm.requests) == 12
    assert fake_llm.connections == 4  # one client per worker, each busy while others wait


def test_min_pass_is_met_at_the_fraction_and_missed_just_below(tmp_path: Path) -> None:
    text = "".join(
        ONE_CASE.replace('"a100"', f'"{name}"').replace("A100", code)
        for name, code in (("a", "A100"), ("b", "A100"), ("z", "Z999"))
    )  # the playbook passes two of three: Z999 is not refundable, it is not found
    cases = write(tmp_path, text)
    assert evaluate(str(cases), "--dry-run", "--min-pass", "0.66").exit_code == 0
    assert evaluate(str(cases), "--dry-run", "--min-pass", "0.67").exit_code == 3


def test_eval_lookups_compute_their_facts_as_of_the_cases_date(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    result = evaluate(str(write(tmp_path, ONE_CASE)), "--dry-run", "--record", str(runs))
    assert result.exit_code == 0, result.stderr
    (trace,) = runs.rglob("a100.jsonl")
    assert "refundable_now=yes as_of=2026-10-13 (delivered 12 days ago" in trace.read_text()


def test_a_report_never_replaces_a_link_a_fifo_the_orders_or_the_log(tmp_path: Path) -> None:
    db = tmp_path / "orders.db"  # AGENT_DB, set by conftest
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    cases = write(tmp_path, ONE_CASE)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    link = tmp_path / "link.html"
    link.symlink_to(victim)
    fifo = tmp_path / "fifo.html"
    os.mkfifo(fifo)
    for target, says in (
        (link, "a symbolic link"),
        (fifo, "not a regular file"),
        (db, "that is the order database"),
    ):
        result = evaluate(str(cases), "--dry-run", "--report", str(target))
        assert result.exit_code == 2, result.stderr
        assert says in result.stderr and result.stdout == ""  # refused before any case ran
    assert victim.read_text() == "keep me"
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    from agent_cli.record.runlog import RunLog

    log = tmp_path / "runs.db"
    RunLog.open(log).close()
    refused = evaluate(str(cases), "--dry-run", "--report", str(log), env={"AGENT_LOG": str(log)})
    assert refused.exit_code == 2 and "that is the run log" in refused.stderr


def test_a_report_is_written_whole_and_replaces_an_old_one(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    report.write_text("an old report")
    assert (
        evaluate(str(write(tmp_path, ONE_CASE)), "--dry-run", "--report", str(report)).exit_code
        == 0
    )
    assert report.read_text().startswith("<!DOCTYPE html") or "<html" in report.read_text()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report")] == []
