"""Unusable model output is never executed nor coerced: the model is told why, within a budget."""

from __future__ import annotations

import json

from tests.contract.test_providers import ask, final, records
from tests.fakellm import FakeLLM, anthropic_calls, anthropic_text, openai_calls, openai_text


def repairs(result: object) -> list[dict[str, object]]:
    return [r for r in records(result) if r["event"] == "repair"]  # type: ignore[arg-type]


def test_invalid_json_is_fed_back_and_the_model_recovers(fake_llm: FakeLLM) -> None:
    fake_llm.queue(
        openai_text("Sure! The order is fine."),
        openai_text('{"type": "final", "answer": "Thanks for waiting."}'),
    )
    result = ask(fake_llm, "openai", "--mode", "json")
    assert result.exit_code == 0, result.stderr
    assert final(result)["answer"] == "Thanks for waiting."
    (repair,) = repairs(result)
    assert repair["cause"] == "reply" and "not valid JSON" in str(repair["problem"])
    second = fake_llm.bodies()[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "Sure! The order is fine."}
    assert second[-1]["role"] == "user" and "could not be used" in second[-1]["content"]
    assert "expected one JSON object" in second[-1]["content"]


def test_a_decision_with_a_missing_field_is_not_coerced(fake_llm: FakeLLM) -> None:
    fake_llm.queue(
        openai_text(json.dumps({"type": "tool", "args": {"order_code": "A100"}})),
        openai_text(json.dumps({"type": "final", "answer": "ok"})),
    )
    result = ask(fake_llm, "openai", "--mode", "json")
    assert result.exit_code == 0
    assert "tool: Field required" in str(repairs(result)[0]["problem"])
    assert not any(r["event"] == "observation" for r in records(result))


def test_past_the_repair_budget_the_run_fails_clearly(fake_llm: FakeLLM) -> None:
    fake_llm.queue(*(openai_text("not json") for _ in range(3)))
    result = ask(fake_llm, "openai", "--mode", "json")
    assert result.exit_code == 1
    assert "The model's output was unusable 3 times (repair budget 2)" in result.stderr
    assert len(fake_llm.requests) == 3
    assert final(result)["status"] == "error"


def test_the_repair_budget_is_configurable(fake_llm: FakeLLM, tmp_path: object) -> None:
    from pathlib import Path

    config = Path(str(tmp_path)) / "c.toml"
    config.write_text("[limits]\nmax_repairs = 0\n")
    fake_llm.queue(openai_text("not json"))
    result = ask(fake_llm, "openai", "--mode", "json", "--config", str(config))
    assert result.exit_code == 1 and "unusable 1 times (repair budget 0)" in result.stderr


def test_a_tool_call_cut_off_by_the_token_limit_never_runs(fake_llm: FakeLLM) -> None:
    cut = openai_calls(("lookup_order", '{"order_code": "A1'))
    cut["choices"][0]["finish_reason"] = "length"
    fake_llm.queue(cut, openai_text("Sorry."))
    result = ask(fake_llm, "openai")
    assert result.exit_code == 0
    assert not any(r["event"] == "observation" for r in records(result))
    assert "in the middle of a tool call, which was not run" in str(repairs(result)[0]["problem"])
    assert fake_llm.violations == []


def test_a_refusal_is_not_an_answer(fake_llm: FakeLLM) -> None:
    refusal = openai_text("")
    refusal["choices"][0]["message"] = {"role": "assistant", "content": None, "refusal": "I can't."}
    fake_llm.queue(refusal, openai_text("Answer."))
    result = ask(fake_llm, "openai")
    assert final(result)["answer"] == "Answer."
    assert "the model refused: I can't." in str(repairs(result)[0]["problem"])


def test_an_empty_reply_is_not_an_answer(fake_llm: FakeLLM) -> None:
    fake_llm.queue(anthropic_text(""), anthropic_text("Real answer."))
    result = ask(fake_llm, "anthropic")
    assert final(result)["answer"] == "Real answer."
    assert "neither an answer nor a tool call" in str(repairs(result)[0]["problem"])
    assert fake_llm.violations == []  # the empty reply was echoed back as non-empty text


def test_anthropic_max_tokens_cut_during_a_tool_use(fake_llm: FakeLLM) -> None:
    cut = anthropic_calls(("lookup_order", {"order_code": "A100"}))
    cut["stop_reason"] = "max_tokens"
    fake_llm.queue(cut, anthropic_text("ok"))
    result = ask(fake_llm, "anthropic")
    assert result.exit_code == 0
    assert not any(r["event"] == "observation" for r in records(result))
    assert fake_llm.violations == []


def test_unknown_tool_names_count_against_the_budget(fake_llm: FakeLLM) -> None:
    fake_llm.queue(*(openai_calls((f"lookup_order_v{i}", {})) for i in range(3)))
    result = ask(fake_llm, "openai")
    assert result.exit_code == 1
    assert "Unknown tool" in result.stderr and "repair budget 2" in result.stderr
    assert [r["cause"] for r in repairs(result)] == ["call", "call"]


def test_token_budget_stops_before_a_request_that_would_exceed_it(fake_llm: FakeLLM) -> None:
    fake_llm.queue(openai_calls(("refund_policy", {}), usage=(500, 100)), openai_text("never sent"))
    result = ask(fake_llm, "openai", "--max-tokens", "1000")
    assert result.exit_code == 3
    assert "Token budget (1,000) would be exceeded: 600 used so far" in result.stderr
    assert final(result)["status"] == "token_budget"
    assert len(fake_llm.requests) == 1


def test_arguments_that_are_json_but_not_an_object_never_run(fake_llm: FakeLLM) -> None:
    fake_llm.queue(openai_calls(("lookup_order", '["A100"]')), openai_text("ok"))
    result = ask(fake_llm, "openai")
    assert result.exit_code == 0
    (observation,) = [r for r in records(result) if r["event"] == "observation"]
    assert observation["observation"].startswith(
        "ERROR: the arguments for lookup_order must be a JSON object; expected {"
    )
    assert '"order_code"' in observation["observation"]


def test_invalid_arguments_count_against_the_budget(fake_llm: FakeLLM) -> None:
    fake_llm.queue(*(openai_calls(("lookup_order", {"order_code": n})) for n in range(3)))
    result = ask(fake_llm, "openai")
    assert result.exit_code == 1
    assert "invalid arguments for lookup_order" in result.stderr
    assert "repair budget 2" in result.stderr
    assert [r["cause"] for r in repairs(result)] == ["call", "call"]
    assert len(fake_llm.requests) == 3
