"""`agent eval --trials k` (issue 42, point 3): each case run k times, each on a fresh store,
and pass^1..pass^k as τ²-bench computes it (the mean over cases of C(c, k) / C(n, k))."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.evaluation.summary import pass_hat, pass_hat_k
from tests.contract.test_providers import KEY
from tests.fakellm import FakeLLM, openai_calls, openai_text

runner = CliRunner()

# C(c, k) / C(4, k) by hand, for c = 0..4 passes of n = 4 trials
BY_HAND = {
    1: (0, 1 / 4, 2 / 4, 3 / 4, 1),
    2: (0, 0, 1 / 6, 3 / 6, 1),
    3: (0, 0, 0, 1 / 4, 1),
    4: (0, 0, 0, 0, 1),
}


@pytest.mark.parametrize("k", [1, 2, 3, 4])
@pytest.mark.parametrize("c", [0, 1, 2, 3, 4])
def test_pass_hat_k_of_one_case_is_hand_computed(c: int, k: int) -> None:
    assert pass_hat_k(4, c, k) == pytest.approx(BY_HAND[k][c])


def test_pass_hat_is_the_mean_over_cases_up_to_the_fewest_trials() -> None:
    got = pass_hat({"a": (4, 4), "b": (3, 4), "c": (0, 4)})
    want = [(BY_HAND[k][4] + BY_HAND[k][3] + BY_HAND[k][0]) / 3 for k in (1, 2, 3, 4)]
    assert got == pytest.approx(want)
    assert pass_hat({"a": (2, 2), "b": (1, 3)}) == pytest.approx([(1 + 1 / 3) / 2, (1 + 0) / 2])
    assert pass_hat({}) == ()


CASE = """
[[cases]]
id = "a100"
question = "Is order A100 refundable?"
today = 2026-10-13
verdict = { A100 = "refundable" }
"""
RIGHT = "Order A100 is refundable: delivered 12 days ago, within the 30-day window."
WRONG = "Order A100 is not refundable."


def test_trials_give_pass_hat_k_in_the_summary_json_and_report(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    for answer in (RIGHT, WRONG, RIGHT, RIGHT):  # trial 2 fails: c = 3 of n = 4
        fake_llm.queue(openai_calls(("lookup_order", {"order_code": "A100"})), openai_text(answer))
    cases = tmp_path / "cases.toml"
    cases.write_text(CASE, encoding="utf-8")
    argv = [
        "eval",
        "run",
        str(cases),
        "--provider",
        "openai",
        "--base-url",
        fake_llm.url,
        "--no-stream",
    ]
    argv += ["--trials", "4", "--concurrency", "1", "--min-pass", "0", "--no-grounding"]
    result = runner.invoke(app, [*argv, "--json"], env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["passed"] for r in records if r["event"] == "case"] == [True, False, True, True]
    (summary,) = [r for r in records if r["event"] == "summary"]
    assert summary["pass_hat_k"] == {"1": 0.75, "2": 0.5, "3": 0.25, "4": 0.0}
    assert summary["case_passes"] == {"a100": [3, 4]}

    for answer in (RIGHT, WRONG, RIGHT, RIGHT):
        fake_llm.queue(openai_calls(("lookup_order", {"order_code": "A100"})), openai_text(answer))
    report = tmp_path / "report.html"
    shown = runner.invoke(app, [*argv, "--report", str(report)], env={"OPENAI_API_KEY": KEY})
    assert "pass^1 75.0%  pass^2 50.0%  pass^3 25.0%  pass^4 0.0%" in shown.stdout
    assert "pass^1 75.0% pass^2 50.0% pass^3 25.0% pass^4 0.0%" in report.read_text()


def test_one_trial_prints_no_pass_hat_line(tmp_path: Path) -> None:
    cases = tmp_path / "cases.toml"
    cases.write_text(CASE, encoding="utf-8")
    result = runner.invoke(app, ["eval", "run", str(cases), "--dry-run"])
    assert result.exit_code == 0 and "pass^" not in result.stdout


def test_every_trial_passes_offline_so_every_pass_hat_is_whole(tmp_path: Path) -> None:
    cases = tmp_path / "cases.toml"
    cases.write_text(CASE, encoding="utf-8")
    result = runner.invoke(app, ["eval", "run", str(cases), "--dry-run", "--trials", "3", "--json"])
    (summary,) = [json.loads(x) for x in result.stdout.splitlines() if '"summary"' in x]
    assert summary["pass_hat_k"] == {"1": 1.0, "2": 1.0, "3": 1.0}


def test_repeat_is_the_old_name_of_trials(tmp_path: Path) -> None:
    cases = tmp_path / "cases.toml"
    cases.write_text(CASE, encoding="utf-8")
    same = runner.invoke(app, ["eval", "run", str(cases), "--dry-run", "--repeat", "2", "--json"])
    assert sum('"event":"case"' in line for line in same.stdout.splitlines()) == 2
    both = runner.invoke(
        app, ["eval", "run", str(cases), "--dry-run", "--repeat", "2", "--trials", "3"]
    )
    assert both.exit_code == 2
    assert "--repeat is the old name of --trials: give one of them" in both.stderr


def test_list_prints_each_case_on_one_line_and_runs_nothing(tmp_path: Path) -> None:
    from agent_cli.evaluation.cases import builtin_cases
    from agent_cli.evaluation.heard import with_heard

    listed = runner.invoke(app, ["eval", "list", "--builtin"])
    assert listed.exit_code == 0, listed.stderr
    lines = listed.stdout.splitlines()
    every = with_heard(builtin_cases())  # the written cases, then the heard ones
    assert [line.split("\t")[0] for line in lines] == [c.id for c in every]
    assert {c.id: c.kind for c in every} == dict(line.split("\t")[:2] for line in lines)
    assert "desk-cancel-en\tquestion\tPlease cancel my order B200." in listed.stdout
    cases = tmp_path / "cases.toml"
    cases.write_text(CASE.replace("Is order A100 refundable?", "Is order\\nA100 refundable?"))
    one = runner.invoke(app, ["eval", "list", str(cases)])
    assert one.stdout == "a100\tquestion\tIs order A100 refundable?\n"
    logged = runner.invoke(app, ["logs", "list", "--kind", "eval", "--json"])
    assert logged.stdout == ""  # nothing ran
