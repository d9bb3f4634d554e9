"""Servers that refuse parts of a request: JSON mode falls back to plainer forms and remembers
the one that works; a server without tool calling gets a message that says what to do."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from tests.cli.test_refunds import refunds_config
from tests.contract.test_providers import KEY, ask, final, records
from tests.contract.test_streaming import calls_reply, text_reply
from tests.fakellm import FakeLLM, Reply, error, openai_calls, openai_text

runner = CliRunner()
LOOKUP = json.dumps({"type": "tool", "tool": "lookup_order", "args": {"order_code": "A100"}})
ANSWER = json.dumps({"type": "final", "answer": "Order A100 is refundable."})


def formats(fake: FakeLLM) -> list[str | None]:
    return [(b.get("response_format") or {}).get("type") for b in fake.bodies()]


def test_a_refused_json_schema_falls_back_to_json_object_and_stays(fake_llm: FakeLLM) -> None:
    fake_llm.refuse_formats = {"json_schema"}
    fake_llm.queue(openai_text(LOOKUP), openai_text(ANSWER))
    result = ask(fake_llm, "openai", "--mode", "json")
    assert result.exit_code == 0, result.stderr
    assert final(result)["answer"] == "Order A100 is refundable."
    # Refused once, not retried as an overload; the working form kept for step 2.
    assert formats(fake_llm) == ["json_schema", "json_object", "json_object"]
    downgrade = [r for r in records(result) if r["event"] == "model_call" and r["fallback"]]
    assert len(downgrade) == 1
    assert downgrade[0]["status"] == 500
    assert downgrade[0]["fallback"] == "response_format json_object with a schema"
    # The schema goes as llama-cpp-python takes it, never in the prompt while a server has it.
    first, second = fake_llm.bodies()[:2]
    assert second["response_format"]["schema"] == first["response_format"]["json_schema"]["schema"]
    assert "must match this JSON schema" not in second["messages"][0]["content"]


def test_plain_prompting_when_every_form_is_refused(fake_llm: FakeLLM) -> None:
    fake_llm.refuse_formats = {"json_schema", "json_object_schema", "json_object"}
    fake_llm.queue(openai_text(ANSWER))
    result = ask(fake_llm, "openai", "--mode", "json", "--no-grounding")
    assert result.exit_code == 0, result.stderr
    assert formats(fake_llm) == ["json_schema", "json_object", "json_object", None]
    assert "schema" not in fake_llm.bodies()[2]["response_format"]
    fallbacks = [r["fallback"] for r in records(result) if r["event"] == "model_call"]
    assert fallbacks == [
        "response_format json_object with a schema",
        "response_format json_object",
        "response_format none",
        None,
    ]
    # With no form left that carries it, the schema travels in the prompt instead.
    assert "must match this JSON schema" in fake_llm.bodies()[3]["messages"][0]["content"]


def test_the_fallback_is_shown_on_screen(fake_llm: FakeLLM) -> None:
    fake_llm.refuse_formats = {"json_schema"}
    fake_llm.queue(openai_text(ANSWER))
    argv = ["ask", "Is A100 refundable?", "--provider", "openai", "--base-url"]
    argv += [fake_llm.url, "--mode", "json", "--no-grounding"]
    result = runner.invoke(app, argv, env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 0, result.stderr
    shown = " ".join(result.stdout.split())  # the console wraps at 80 columns
    assert (
        "response_format json_schema refused; asking with response_format json_object with a "
        "schema" in shown
    )


def test_a_chat_session_remembers_the_working_form(fake_llm: FakeLLM) -> None:
    fake_llm.refuse_formats = {"json_schema"}
    fake_llm.queue(openai_text(ANSWER), openai_text(ANSWER))
    argv = ["chat", "--provider", "openai", "--base-url", fake_llm.url, "--mode", "json"]
    result = runner.invoke(
        app,
        [*argv, "--no-grounding"],
        input="Is A100 refundable?\nAnd now?\n",
        env={"OPENAI_API_KEY": KEY},
    )
    assert result.exit_code == 0, result.stderr
    assert formats(fake_llm) == ["json_schema", "json_object", "json_object"]


def test_an_ordinary_500_is_still_retried_in_json_mode(fake_llm: FakeLLM) -> None:
    fake_llm.queue(error(500, "upstream failure"), openai_text(ANSWER))
    result = ask(fake_llm, "openai", "--mode", "json", "--no-grounding")
    assert result.exit_code == 0, result.stderr
    assert formats(fake_llm) == ["json_schema", "json_schema"]


REFUSALS: list[Any] = [
    error(400, "registry.ollama.ai/library/gemma:2b does not support tools"),
    error(400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser'),
    error(500, "tools param requires --jinja flag"),
]


@pytest.mark.parametrize("refusal", REFUSALS)
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_server_without_tool_calling_suggests_json_mode(
    fake_llm: FakeLLM, provider: str, refusal: Reply
) -> None:
    fake_llm.refuse_tools = refusal
    result = ask(fake_llm, provider)
    assert result.exit_code == 1
    assert "refused tools" in result.stderr
    assert "use --mode json" in result.stderr
    assert len(fake_llm.requests) == 1  # not retried, even for a 500
    assert final(result)["status"] == "error"


# -- the decision schema a server constrains its output to -------------------------------------


def schemas(fake: FakeLLM) -> list[dict[str, Any]]:
    return [b["response_format"]["json_schema"]["schema"] for b in fake.bodies()]


# The tools offered from a conversation's start whatever it asks (tools/offered.py's phase):
# these tests are about the seed's narrowing, so `offered` and `tool_names` leave them out, and
# test_the_phase_tools_are_offered_beside_the_seeds_from_the_start pins them.
PHASE_ONE = ("find_user_id_by_email", "find_user_id_by_name_zip", "transfer_to_human_agents")
PHASE_ONE += ("search_help",)


def offered(schema: dict[str, Any]) -> list[str]:
    """The decisions a schema allows: tool names, then ask_user and final (the phase's first
    tools left out)."""
    return [name for name in every_offered(schema) if name not in PHASE_ONE]


def every_offered(schema: dict[str, Any]) -> list[str]:
    branches = schema.get("anyOf", [schema])
    names = []
    for branch in branches:
        kind = branch["properties"]["type"]["enum"][0]
        names.append(branch["properties"]["tool"]["enum"][0] if kind == "tool" else kind)
    return names


def test_the_schema_names_each_tool_and_ties_its_arguments_to_it(fake_llm: FakeLLM) -> None:
    import jsonschema

    fake_llm.queue(openai_text(LOOKUP), openai_text(ANSWER))
    argv = ["ask", "Is order A100 refundable?", "--provider", "openai", "--base-url"]
    argv += [fake_llm.url, "--mode", "json", "--no-grounding"]
    assert runner.invoke(app, argv, env={"OPENAI_API_KEY": KEY}).exit_code == 0
    first = schemas(fake_llm)[0]
    # A100 is named and not looked up yet: look it up first (as tools mode forces it), and the
    # prompt lists that tool alone
    assert offered(first) == ["lookup_order"]
    assert "- refund_policy:" not in fake_llm.bodies()[0]["messages"][0]["content"]
    assert "- refund_policy:" in fake_llm.bodies()[1]["messages"][0]["content"]
    valid = jsonschema.Draft202012Validator(first)
    assert valid.is_valid(json.loads(LOOKUP))
    for wrong in (
        {"type": "tool", "tool": "refund_policy", "args": {}},  # after the lookup
        {"type": "tool", "tool": "lookup_orders", "args": {"order_code": "A100"}},  # no such tool
        {"type": "tool", "tool": "refund_policy", "args": {"order_code": "A100"}},  # not its args
        {"type": "tool", "tool": "lookup_order", "args": {}},  # its argument missing
        {"type": "tool", "tool": "lookup_order", "args": {"order_code": "A1000"}},  # not named
        {"type": "ask_user", "question": "Which order?"},
        {"type": "final", "answer": "Yes."},
        {"type": "final"},  # no answer
        {"type": "answer", "answer": "Yes."},
    ):
        assert not valid.is_valid(wrong), wrong


def test_with_no_order_named_the_model_may_ask_or_read_the_policy_not_guess_a_code(
    fake_llm: FakeLLM,
) -> None:
    import jsonschema

    policy = json.dumps({"type": "tool", "tool": "refund_policy", "args": {}})
    fake_llm.queue(openai_text(policy), openai_text(ANSWER))
    argv = ["ask", "Is my order refundable?", "--provider", "openai", "--base-url", fake_llm.url]
    argv += ["--mode", "json", "--no-grounding"]
    assert runner.invoke(app, argv, env={"OPENAI_API_KEY": KEY}).exit_code == 0
    first, second = schemas(fake_llm)
    # nothing observed yet: no answer; no order named: a lookup would guess the code
    assert offered(first) == ["refund_policy", "ask_user"]
    assert offered(second) == ["ask_user", "final"]
    assert jsonschema.Draft202012Validator(first).is_valid(
        {"type": "ask_user", "question": "Which order?"}
    )
    assert not jsonschema.Draft202012Validator(first).is_valid(json.loads(ANSWER))
    assert jsonschema.Draft202012Validator(second).is_valid(json.loads(ANSWER))


def test_with_no_order_named_an_unusable_first_reply_does_not_open_the_answer(
    fake_llm: FakeLLM,
) -> None:
    question = json.dumps({"type": "ask_user", "question": "Which order?"})
    fake_llm.queue(openai_text("Sure! Refunds are easy."), openai_text(question))
    argv = ["ask", "Is my order refundable?", "--provider", "openai", "--base-url", fake_llm.url]
    argv += ["--mode", "json", "--no-grounding"]
    result = runner.invoke(app, argv, env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 4, result.stderr  # the question, with nobody to answer it
    assert [offered(s) for s in schemas(fake_llm)] == [["refund_policy", "ask_user"]] * 2


def test_a_tool_that_takes_nothing_is_not_offered_again_once_it_answered(
    fake_llm: FakeLLM,
) -> None:
    policy = json.dumps({"type": "tool", "tool": "refund_policy", "args": {}})
    fake_llm.queue(openai_text(policy), openai_text(LOOKUP), openai_text(ANSWER))
    assert ask(fake_llm, "openai", "--mode", "json").exit_code == 0
    assert [offered(s) for s in schemas(fake_llm)] == [
        ["lookup_order"],  # A100 is named: look it up; no question can help, nor an answer
        ["lookup_order"],  # a server that ignored it read the policy: asking again cannot help
        ["final"],  # and so is A100, the one order the question names
    ]


def test_a_repeated_call_leaves_only_a_question_or_the_answer(fake_llm: FakeLLM) -> None:
    fake_llm.queue(openai_text(LOOKUP), openai_text(LOOKUP), openai_text(ANSWER))
    argv = ["ask", "Is my order refundable?", "--provider", "openai", "--base-url", fake_llm.url]
    argv += ["--mode", "json", "--today", "2026-10-13"]  # a server that ignores the schema
    result = runner.invoke(app, argv, env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 0, result.stderr
    assert [offered(s) for s in schemas(fake_llm)][1:] == [
        ["refund_policy", "ask_user", "final"],
        ["ask_user", "final"],  # the model went round in a circle: now it can only answer
    ]


def test_at_the_step_limit_the_schema_allows_only_the_answer(fake_llm: FakeLLM) -> None:
    fake_llm.queue(openai_text(LOOKUP), openai_text(ANSWER))
    result = ask(fake_llm, "openai", "--mode", "json", "--max-steps", "1")
    assert result.exit_code in (0, 3), result.stderr
    assert [offered(s) for s in schemas(fake_llm)] == [
        ["lookup_order"],
        ["final"],
    ]


def test_lookups_are_narrowed_to_the_orders_the_customer_named_and_not_yet_looked_up(
    fake_llm: FakeLLM,
) -> None:
    import jsonschema

    both = json.dumps({"type": "final", "answer": "A100 is refundable; A101 is not refundable."})
    fake_llm.queue(openai_text(LOOKUP), openai_text(LOOKUP.replace("A100", "A101")))
    fake_llm.queue(openai_text(both))
    argv = ["ask", "Are orders A100 and a101 refundable?", "--provider", "openai"]
    argv += ["--base-url", fake_llm.url, "--mode", "json", "--today", "2026-10-13"]
    result = runner.invoke(app, argv, env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 0, result.stderr
    first, second, third = schemas(fake_llm)
    lookup = first["anyOf"][0]
    assert lookup["properties"]["args"]["properties"]["order_code"] == {"enum": ["A100", "A101"]}
    assert not jsonschema.Draft202012Validator(first).is_valid(
        {"type": "tool", "tool": "lookup_order", "args": {"order_code": "A10023456789"}}
    )  # an invented code cannot be written
    narrowed = second["anyOf"][0]["properties"]["args"]["properties"]["order_code"]
    assert narrowed == {"enum": ["A101"]}
    assert offered(third) == ["refund_policy", "final"]


# -- after lookups, the answer opens with what they computed -----------------------------------


def answer_pattern(schema: dict[str, Any]) -> str | None:
    (final_branch,) = [
        b for b in schema.get("anyOf", [schema]) if offered({"anyOf": [b]}) == ["final"]
    ]
    pattern = final_branch["properties"]["answer"].get("pattern")
    return None if pattern is None else str(pattern)


def lookup_text(result: Any) -> str:
    (observed,) = [r["observation"] for r in records(result) if r.get("event") == "observation"]
    return str(observed)


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("Is order A100 refundable?", "Order A100 (250,000 JPY) is refundable: delivered "),
        ("注文A100は返金されますか?", "注文A100(250,000円)は返金可能です。"),
    ],
)
def test_after_a_lookup_the_answer_must_open_with_its_computed_verdict(
    fake_llm: FakeLLM, question: str, words: str
) -> None:
    from agent_cli.policy.verdicts import stated_verdicts

    fake_llm.queue(openai_text(LOOKUP), openai_text(ANSWER))
    argv = ["ask", question, "--provider", "openai", "--base-url", fake_llm.url + "/v1"]
    argv += ["--mode", "json", "--today", "2026-10-13", "--json", "--no-grounding"]
    result = runner.invoke(app, argv, env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 0, result.stderr
    second = schemas(fake_llm)[1]
    assert "final" in offered(second)
    pattern = re.compile(str(answer_pattern(second)))
    assert "refundable_now=yes" in lookup_text(result)
    opening = re.sub(r"\[\.\]|\\", lambda m: "." if m.group() == "[.]" else "", pattern.pattern)
    opening = opening.removeprefix("^").split('[^"')[0]
    assert opening.startswith(words)
    assert stated_verdicts(opening) == {"A100": "refundable"}
    assert pattern.fullmatch(opening + " Anything else I can do?")
    for wrong in ("Order A100 is not refundable.", "Yes.", "A100", opening + "\nmore", ""):
        assert not pattern.fullmatch(wrong), wrong


def test_no_opening_is_imposed_once_the_run_did_more_than_read(fake_llm: FakeLLM) -> None:
    refund = {"order_code": "A100", "amount": 1000, "reason": "damaged"}
    call = json.dumps({"type": "tool", "tool": "issue_refund", "args": refund})
    fake_llm.queue(openai_text(LOOKUP), openai_text(call), openai_text(ANSWER))
    result = ask(fake_llm, "openai", "--mode", "json", "--no-grounding")
    assert result.exit_code == 0, result.stderr
    second, third = schemas(fake_llm)[1:]
    assert answer_pattern(second) is not None  # only read so far
    assert answer_pattern(third) is None  # a refund was tried: the lookup is no longer the news


def test_the_opening_pattern_keeps_to_what_every_grammar_converter_reads() -> None:
    """llama.cpp's converter reads `\\(` but not `\\.`; quotes and backslashes would end the
    JSON string the grammar writes."""
    from agent_cli.providers.decision_schema import _literal

    odd = 'Order A1 (2.5 JPY) [x] {y} a|b *+? "q" back\\slash ^$ tab\tend.'
    escaped = _literal(odd)
    assert re.fullmatch(
        escaped,
        odd.replace('"', "").replace("\\", "").replace("^", "").replace("$", "").replace("\t", ""),
    )
    assert "\\." not in escaped and '"' not in escaped and "\t" not in escaped
    assert all(escaped[i + 1] in "()[]{}|*+?" for i, c in enumerate(escaped) if c == "\\")


@pytest.mark.parametrize(
    ("form", "field"),
    [("vllm_structured_outputs", "structured_outputs"), ("llama_cpp_json_schema", "json_schema")],
)
def test_a_servers_own_schema_field_when_configured_and_json_object_if_refused(
    fake_llm: FakeLLM, tmp_path: Any, form: str, field: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[provider]\nresponse_format = "{form}"\n')
    fake_llm.queue(openai_text(LOOKUP), openai_text(ANSWER))
    result = ask(fake_llm, "openai", "--mode", "json", "--config", str(config), "--no-grounding")
    assert result.exit_code == 0, result.stderr
    first, second = fake_llm.bodies()
    schema = first[field]["json"] if field == "structured_outputs" else first[field]
    assert offered(schema) == ["lookup_order"]
    assert "response_format" not in first
    assert "must match this JSON schema" not in first["messages"][0]["content"]
    assert offered(second[field]["json"] if field == "structured_outputs" else second[field])


@pytest.mark.parametrize("form", ["vllm_structured_outputs", "llama_cpp_json_schema"])
def test_a_refused_schema_field_falls_back_to_json_object(
    fake_llm: FakeLLM, tmp_path: Any, form: str
) -> None:
    field = "structured_outputs" if form.startswith("vllm") else "json_schema"
    config = tmp_path / "config.toml"
    config.write_text(f'[provider]\nresponse_format = "{form}"\n')
    fake_llm.refuse_formats = {field}
    fake_llm.queue(openai_text(LOOKUP), openai_text(ANSWER))
    result = ask(fake_llm, "openai", "--mode", "json", "--config", str(config))
    assert result.exit_code == 0, result.stderr
    downgrade = [r for r in records(result) if r["event"] == "model_call" and r["fallback"]]
    assert [d["fallback"] for d in downgrade] == ["response_format json_object"]
    bodies = fake_llm.bodies()
    assert field in bodies[0] and field not in bodies[1]
    assert bodies[1]["response_format"] == {"type": "json_object"}
    assert "must match this JSON schema" in bodies[1]["messages"][0]["content"]


# -- tools mode: the lookup of a named order is the call the server must make ----------------


def choices(fake: FakeLLM) -> list[Any]:
    return [body.get("tool_choice") for body in fake.bodies()]


def tool_names(body: dict[str, Any]) -> list[str]:
    """The tools a request offers, the phase's first tools left out (see PHASE_ONE)."""
    names = [tool.get("function", tool)["name"] for tool in body["tools"]]
    return [name for name in names if name not in PHASE_ONE]


def test_the_phase_tools_are_offered_beside_the_seeds_from_the_start(fake_llm: FakeLLM) -> None:
    """Identification, the help centre and a hand-over are offered from a run's first free
    step, whatever the question's words (issue 49, point 4): a customer who asks in words no
    list foresaw can still be served."""
    fake_llm.queue(openai_calls(("lookup_order", {"order_code": "A100"})), openai_text("Done."))
    result = ask(fake_llm, "openai", "--no-stream", "--no-grounding")
    assert result.exit_code == 0, result.output
    second = [tool["function"]["name"] for tool in fake_llm.bodies()[1]["tools"]]
    assert set(PHASE_ONE) <= set(second)
    assert "get_order_details" not in second  # the customer's records wait for identification


def lookup_params(body: dict[str, Any]) -> dict[str, Any]:
    for tool in body["tools"]:
        spec = tool.get("function", tool)
        if spec["name"] == "lookup_order":
            return dict(spec.get("parameters") or spec["input_schema"])
    raise AssertionError("no lookup_order offered")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_tools_mode_names_the_lookup_of_a_named_order_then_leaves_the_model_its_choice(
    fake_llm: FakeLLM, provider: str
) -> None:
    lookup = calls_reply(provider, ("lookup_order", {"order_code": "A100"}))
    fake_llm.queue(lookup, calls_reply(provider, ("refund_policy", {})))
    fake_llm.queue(text_reply(provider, "Order A100 is refundable: delivered 12 days ago."))
    result = ask(fake_llm, provider)
    assert result.exit_code == 0, result.stderr
    named = (
        {"type": "function", "function": {"name": "lookup_order"}}
        if provider == "openai"
        else {"type": "tool", "name": "lookup_order"}
    )
    assert choices(fake_llm) == [named, None, None]
    first, second, third = fake_llm.bodies()
    # the one tool the server must call is sent alone, its code narrowed to the one named
    assert tool_names(first) == ["lookup_order"]
    assert lookup_params(first)["properties"]["order_code"] == {"enum": ["A100"]}
    # A100 is looked up: no lookup is left to make, nor a question to ask; Anthropic keeps every
    # tool its history's calls named (a request naming an undefined one may be refused)
    later = ["refund_policy"] if provider == "openai" else ["refund_policy", "lookup_order"]
    assert tool_names(second) == tool_names(third) == later
    assert fake_llm.violations == []


def test_with_no_order_named_tools_mode_leaves_the_choice_to_the_model(fake_llm: FakeLLM) -> None:
    fake_llm.queue(openai_text("Which order do you mean?"))
    argv = ["ask", "Can I get a refund?", "--provider", "openai", "--base-url", fake_llm.url]
    argv += ["--today", "2026-10-13", "--json"]
    result = runner.invoke(app, argv, env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 0, result.stderr
    assert choices(fake_llm) == [None]


def ask_unnamed(fake: FakeLLM, provider: str) -> Any:
    """`agent ask` with a question that names no order, headless (nobody to answer)."""
    variable = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
    base = fake.url if provider == "anthropic" else fake.url + "/v1"
    argv = ["ask", "返金できますか？", "--provider", provider, "--base-url", base]
    argv += ["--today", "2026-10-13", "--json"]
    return runner.invoke(app, argv, env={variable: KEY})


def named_choice(provider: str, tool: str) -> dict[str, Any]:
    if provider == "openai":
        return {"type": "function", "function": {"name": tool}}
    return {"type": "tool", "name": tool}


RAMBLE = "The shop's customer support is not available. " * 40
CUT_OFF = {"openai": {"finish": "length"}, "anthropic": {"stop": "max_tokens"}}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_with_no_order_named_a_reply_cut_off_before_any_tool_is_followed_by_a_question(
    fake_llm: FakeLLM, provider: str
) -> None:
    fake_llm.queue(text_reply(provider, RAMBLE, **CUT_OFF[provider]))
    fake_llm.queue(calls_reply(provider, ("ask_user", {"question": "注文番号は？"})))
    result = ask_unnamed(fake_llm, provider)
    assert choices(fake_llm) == [None, named_choice(provider, "ask_user")]
    first, second = fake_llm.bodies()
    assert tool_names(first) == ["lookup_order", "refund_policy", "ask_user"]
    assert tool_names(second) == tool_names(first)  # sent alone, SmolLM2 rambled in it
    assert result.exit_code == 4, result.stderr
    assert "注文番号は？" in result.stderr


def test_a_server_that_refuses_the_named_question_is_asked_again_without_it(
    fake_llm: FakeLLM,
) -> None:
    fake_llm.refuse_choice = error(400, "tool_choice: only 'auto' and 'none' are supported")
    fake_llm.queue(openai_text(RAMBLE, finish="length"))
    fake_llm.queue(openai_calls(("ask_user", {"question": "注文番号は？"})))
    result = ask_unnamed(fake_llm, "openai")
    assert choices(fake_llm) == [None, named_choice("openai", "ask_user"), None]
    assert result.exit_code == 4, result.stderr


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_once_a_tool_has_run_a_cut_off_reply_leaves_the_choice_to_the_model(
    fake_llm: FakeLLM, provider: str
) -> None:
    fake_llm.queue(calls_reply(provider, ("refund_policy", {})))
    fake_llm.queue(text_reply(provider, RAMBLE, **CUT_OFF[provider]))
    fake_llm.queue(text_reply(provider, "返金は配達後30日以内、DELIVEREDの注文のみです。"))
    result = ask_unnamed(fake_llm, provider)
    assert result.exit_code == 0, result.stderr
    assert choices(fake_llm) == [None, None, None]


def test_a_refused_named_tool_choice_is_dropped_for_the_rest_of_the_run(fake_llm: FakeLLM) -> None:
    message = "tool_choice: only 'auto' and 'none' are supported"
    fake_llm.refuse_choice = error(400, message)
    fake_llm.queue(openai_calls(("lookup_order", {"order_code": "A100"})))
    fake_llm.queue(openai_text("Order A100 is refundable: delivered 12 days ago."))
    result = ask(fake_llm, "openai")
    assert result.exit_code == 0, result.stderr
    named = {"type": "function", "function": {"name": "lookup_order"}}
    assert choices(fake_llm) == [named, None, None]
    refused, again, _ = fake_llm.bodies()
    assert tool_names(refused) == ["lookup_order"]
    assert tool_names(again) == ["lookup_order", "refund_policy"]  # the model's own choice
    downgrade = [r for r in records(result) if r["event"] == "model_call" and r["fallback"]]
    assert [r["error"] for r in downgrade] == ["HTTP 400: a named tool_choice refused"]


# -- a refund comes after the lookup: it stays on offer, narrowed to the orders named ----------


def test_json_mode_offers_the_refund_after_the_lookup_for_the_orders_named(
    fake_llm: FakeLLM, tmp_path: Any
) -> None:
    import jsonschema

    fake_llm.queue(openai_text(LOOKUP), openai_text(ANSWER))
    result = ask(fake_llm, "openai", "--mode", "json", "--config", str(refunds_config(tmp_path)))
    assert result.exit_code == 0, result.stderr
    first, second = schemas(fake_llm)
    assert offered(first) == ["lookup_order"]  # as tools mode forces it
    assert offered(second) == ["refund_policy", "issue_refund", "final"]
    valid = jsonschema.Draft202012Validator(second)
    refund = {"order_code": "A100", "amount": 1000, "reason": "damaged"}
    assert valid.is_valid({"type": "tool", "tool": "issue_refund", "args": refund})
    elsewhere = {**refund, "order_code": "A101"}  # an order the customer never named
    assert not valid.is_valid({"type": "tool", "tool": "issue_refund", "args": elsewhere})


def test_tools_mode_narrows_the_refund_to_the_orders_named(
    fake_llm: FakeLLM, tmp_path: Any
) -> None:
    fake_llm.queue(openai_calls(("lookup_order", {"order_code": "A100"})))
    fake_llm.queue(openai_text("Order A100 is refundable: delivered 12 days ago."))
    result = ask(fake_llm, "openai", "--config", str(refunds_config(tmp_path)))
    assert result.exit_code == 0, result.stderr
    first, second = fake_llm.bodies()
    assert tool_names(first) == ["lookup_order"]
    assert tool_names(second) == ["refund_policy", "issue_refund"]
    (refund,) = [t["function"] for t in second["tools"] if t["function"]["name"] == "issue_refund"]
    assert refund["parameters"]["properties"]["order_code"] == {"enum": ["A100"]}


def test_tools_mode_never_narrows_the_offer_to_nothing() -> None:
    """A run whose only tool is the lookup, done: Anthropic refuses a history of tool calls
    sent without tools, so the offer stays as it was."""
    from datetime import date

    from agent_cli.core.decisions import CallTool, Step
    from agent_cli.core.seams import ModelRequest, ToolSpec
    from agent_cli.providers.decision_schema import tools_offered

    lookup = ToolSpec("lookup_order", "Look up an order.", {"properties": {"order_code": {}}})
    done = Step(1, CallTool(tool="lookup_order", args={"order_code": "A100"}), "order=A100", False)
    request = ModelRequest(
        goal="Is A100 refundable?",
        today=date(2026, 10, 13),
        tools=(lookup,),
        history=(done,),
        deadline=0.0,
    )
    specs, forced = tools_offered(request, force=True)
    assert [spec.name for spec in specs] == ["lookup_order", "ask_user"] and forced is None
