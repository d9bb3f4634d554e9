"""Cost and time in an eval (issue 42, point 6): tokens, cost and wall time per model and per
case in `--json` and the report, and `--max-cost`, one budget for the whole eval that stops it
before a model request that would pass it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from tests.contract.test_providers import KEY
from tests.fakellm import FakeLLM, openai_calls, openai_text

runner = CliRunner()

CASE = (
    '[[cases]]\nid = "c{n}"\nquestion = "Is A100 refundable?"\nverdict = {{ A100 = "refundable" }}'
)
CASES = "\n\n".join(CASE.format(n=n) for n in (1, 2, 3))
RIGHT = "Order A100 is refundable: delivered 12 days ago, within the 30-day window."
# One token costs 1.0: each request of (100, 20) tokens costs 120.
PRICES = '[prices."m1"]\ninput = 1000000\noutput = 1000000\n'


def evaluate(fake: FakeLLM, tmp_path: Path, *extra: str, config: str = PRICES) -> Any:
    cases = tmp_path / "cases.toml"
    cases.write_text(CASES, encoding="utf-8")
    settings = tmp_path / "config.toml"
    settings.write_text(config, encoding="utf-8")
    argv = [
        "eval",
        "run",
        str(cases),
        "--provider",
        "openai",
        "--base-url",
        fake.url,
        "--model",
        "m1",
    ]
    argv += ["--no-stream", "--no-grounding", "--concurrency", "1", "--json"]
    argv += ["--config", str(settings), *extra]
    return runner.invoke(app, argv, env={"OPENAI_API_KEY": KEY})


def lines(result: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def queue_cases(fake: FakeLLM, count: int) -> None:
    for _ in range(count):
        fake.queue(openai_calls(("lookup_order", {"order_code": "A100"})), openai_text(RIGHT))


def test_tokens_cost_and_time_per_model_and_case(fake_llm: FakeLLM, tmp_path: Path) -> None:
    queue_cases(fake_llm, 3)
    result = evaluate(fake_llm, tmp_path, "--report", str(tmp_path / "r.html"))
    assert result.exit_code == 0, result.stdout + result.stderr
    records = lines(result)
    cases = [r for r in records if r["event"] == "case"]
    assert [c["usage"] for c in cases] == [{"input_tokens": 200, "output_tokens": 40}] * 3
    assert [c["cost"] for c in cases] == [240.0] * 3
    (summary,) = [r for r in records if r["event"] == "summary"]
    assert summary["tokens"] == 720 and summary["cost"] == 720.0
    # the cases' own times added up (each rounded to 0.1 ms in its line)
    assert summary["wall_ms"] == pytest.approx(sum(c["latency_ms"] for c in cases), abs=0.2)
    report = (tmp_path / "r.html").read_text("utf-8")
    assert ">720</td>" in report and ">720.0000</td>" in report  # the model's tokens and cost
    assert "240 tokens" in report and "cost 240.0000" in report  # each case's


def test_max_cost_stops_before_a_request_that_would_pass_it(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    queue_cases(fake_llm, 3)
    result = evaluate(fake_llm, tmp_path, "--max-cost", "400")
    assert result.exit_code == 3, result.stdout + result.stderr
    cases = [r for r in lines(result) if r["event"] == "case"]
    # c1: 120 + 120 = 240. c2's first request would cost as c1's did: 360, then its second
    # 480 > 400: not sent, the run ends cost_budget. c3 never starts.
    assert [(c["case"], c["status"]) for c in cases] == [("c1", "answered"), ("c2", "cost_budget")]
    assert len(fake_llm.bodies()) == 3
    assert "the eval's cost budget (400.0000) would be exceeded: 360.0000 spent" in result.stderr
    (summary,) = [r for r in lines(result) if r["event"] == "summary"]
    assert summary["partial"] is True and summary["cost"] is not None


def test_max_cost_stops_before_a_cases_first_request_too(fake_llm: FakeLLM, tmp_path: Path) -> None:
    queue_cases(fake_llm, 3)
    result = evaluate(fake_llm, tmp_path, "--max-cost", "300")
    assert result.exit_code == 3
    cases = [r for r in lines(result) if r["event"] == "case"]
    assert [c["status"] for c in cases] == ["answered", "cost_budget"]
    assert len(fake_llm.bodies()) == 2  # c2's first request (about 120 more) was not sent


def test_max_cost_needs_a_price_and_a_positive_budget(fake_llm: FakeLLM, tmp_path: Path) -> None:
    unpriced = evaluate(fake_llm, tmp_path, "--max-cost", "1", config="")
    assert unpriced.exit_code == 2
    assert "--max-cost needs a price for model 'm1'" in unpriced.stderr
    assert fake_llm.bodies() == []
    zero = evaluate(fake_llm, tmp_path, "--max-cost", "0")
    assert zero.exit_code == 2 and "--max-cost must be above 0" in zero.stderr


def test_max_cost_offline_costs_nothing(tmp_path: Path) -> None:
    cases = tmp_path / "cases.toml"
    cases.write_text(CASES, encoding="utf-8")
    result = runner.invoke(app, ["eval", "run", str(cases), "--dry-run", "--max-cost", "0.01"])
    assert result.exit_code == 0, result.stderr


def test_a_budget_met_exactly_is_not_passed(fake_llm: FakeLLM, tmp_path: Path) -> None:
    queue_cases(fake_llm, 3)
    result = evaluate(fake_llm, tmp_path, "--max-cost", "240")
    assert result.exit_code == 3
    cases = [r for r in lines(result) if r["event"] == "case"]
    # c1's second request brings it to 240 of 240: sent; c2's first would pass it: not sent
    assert [c["status"] for c in cases] == ["answered", "cost_budget"]
    assert len(fake_llm.bodies()) == 2


def test_a_runs_next_request_is_estimated_by_its_own_last(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """Three requests: 120, then 600; the third would cost at least 600 again (not the 120 a
    first request cost): 720 + 600 passes 1,000, so it is not sent."""
    fake_llm.queue(
        openai_calls(("lookup_order", {"order_code": "A100"})),
        openai_calls(("refund_policy", {}), usage=(500, 100)),
        openai_text(RIGHT),
    )
    result = evaluate(fake_llm, tmp_path, "--max-cost", "1000")
    assert result.exit_code == 3
    (first, *_) = [r for r in lines(result) if r["event"] == "case"]
    assert first["status"] == "cost_budget"
    assert len(fake_llm.bodies()) == 2


def test_a_cases_first_request_is_estimated_by_the_latest_first_request(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """c1's requests cost 120, then 600 (720 spent); c2's first is estimated as c1's first
    (120), not c1's last (600): 840 stays within 1,000, so it is sent."""
    fake_llm.queue(
        openai_calls(("lookup_order", {"order_code": "A100"})),
        openai_text(RIGHT, usage=(500, 100)),
        openai_calls(("lookup_order", {"order_code": "A100"})),
        openai_text(RIGHT),
    )
    result = evaluate(fake_llm, tmp_path, "--max-cost", "1000")
    assert result.exit_code == 3
    # c2 runs whole (840, then 960); c3's first (960 + 120) would pass the budget
    assert len(fake_llm.bodies()) == 4


def test_replies_that_cannot_be_read_are_paid_for_and_count_against_max_cost(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """A reply the agent cannot parse still cost its tokens: the budget counts it, and the
    request that would pass the budget is not sent, however the replies went wrong."""
    for _ in range(6):
        fake_llm.queue(openai_text("this is not the JSON decision asked for"))
    result = evaluate(fake_llm, tmp_path, "--max-cost", "300", "--mode", "json")
    assert result.exit_code == 3, result.stdout + result.stderr
    cases = [r for r in lines(result) if r["event"] == "case"]
    assert [c["status"] for c in cases] == ["cost_budget"]  # 120 + 120 spent; 360 > 300
    assert len(fake_llm.bodies()) == 2
    assert "would be exceeded: 240.0000 spent" in result.stderr
