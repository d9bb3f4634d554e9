"""The grounding check: an answer naming an order this run did not look up is repaired, then
ends the run as ungrounded (exit 3); the playbook always passes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from agent_cli.cli import app
from agent_cli.core.budget import Limits
from agent_cli.core.decisions import CallTool, Step
from agent_cli.core.events import RepairRequested, RunFinished, RunStarted
from agent_cli.core.loop import run
from agent_cli.core.tool_outcomes import (
    Changed,
    NotFound,
    Outcome,
    Proposed,
    Queued,
    Read,
    Refunded,
    Transferred,
    render,
)
from agent_cli.policy.grounding import find_order_codes, ground_answer
from agent_cli.policy.verdicts import RefundVerdict, opening, read_amount, stated_verdicts
from agent_cli.providers.playbook import PlaybookModel
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools import Tool, ToolFailure, ToolRegistry
from agent_cli.tools.orders import LookupOrderArgs, format_order
from tests.contract.test_providers import ask, final, records
from tests.fakellm import FakeLLM, anthropic_calls, anthropic_text, openai_calls, openai_text
from tests.helpers import TODAY, converse, registry, write_script

runner = CliRunner()
UNGROUNDED = "Yes, order A100 is refundable."


def lookup(code: str, observation: str = "order=... status=DELIVERED", error: bool = False) -> Step:
    call = CallTool(tool="lookup_order", args={"order_code": code})
    if observation.startswith("NOT_FOUND"):
        return Step(1, call, observation, error, outcome=NotFound(code))
    return Step(1, call, observation, error)


# -- the rule ------------------------------------------------------------------------------


def test_an_answer_about_an_order_never_looked_up_is_ungrounded() -> None:
    problem = ground_answer("Yes, order A100 is not refundable.", ())
    assert problem is not None
    assert "A100" in problem and "call lookup_order for A100 first" in problem


def test_a_looked_up_order_is_grounded_whatever_the_case_or_width() -> None:
    history = (lookup("a100"),)
    assert ground_answer("Order A100 is refundable.", history) is None
    assert ground_answer("注文Ａ１００は返金できます。", history) is None


def test_not_found_is_a_lookup_too() -> None:
    history = (lookup("Z999", "NOT_FOUND: no order with code Z999"),)
    assert ground_answer("There is no order Z999.", history) is None


def test_every_code_named_needs_its_own_lookup() -> None:
    problem = ground_answer("A100 is refundable, and so is A101.", (lookup("A100"),))
    assert problem is not None and "A101" in problem and "A100" not in problem


def test_no_verdict_is_accepted_for_a_failed_lookup() -> None:
    failed = (lookup("A100", "ERROR: database is busy", error=True),)
    assert ground_answer("Order A100 is refundable.", failed) is not None
    # ...but saying it could not be checked is the honest answer, in either language.
    assert ground_answer("I could not check order A100: the database is busy.", failed) is None
    assert (
        ground_answer("注文A100を確認できませんでした：データベースが使用中です。", failed) is None
    )
    # Every sentence naming it must say so: a verdict after the excuse is still a verdict.
    mixed = "I could not check order A100. Order A100 is refundable."
    assert ground_answer(mixed, failed) is not None


def test_an_answer_naming_no_order_is_grounded() -> None:
    assert ground_answer("Refunds are possible within 30 days of delivery.", ()) is None
    assert ground_answer("Which order do you mean? Please give its code.", ()) is None


def test_codes_are_letters_then_digits_not_any_word() -> None:
    assert find_order_codes("A100, b12 and ＡＢ１２３; not 2026-10-13, GPT4o or 100A") == [
        "A100",
        "B12",
        "AB123",
    ]


# -- the loop ------------------------------------------------------------------------------


def agent(*args: str) -> Result:
    return runner.invoke(app, list(args))


FINAL = {"type": "final", "answer": UNGROUNDED}
LOOKUP = {"type": "tool", "tool": "lookup_order", "args": {"order_code": "A100"}}


def test_an_ungrounded_answer_is_repaired_then_accepted(tmp_path: Path) -> None:
    script = write_script(tmp_path, [FINAL, LOOKUP, FINAL])
    argv = ["ask", "Is A100 refundable?", "--script", script, "--json", "--today", "2026-10-13"]
    result = agent(*argv)
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["event"] == "run_started" and lines[0]["grounding"] is True
    repairs = [line for line in lines if line["event"] == "repair"]
    assert [(r["cause"], r["step"]) for r in repairs] == [("answer", 1)]
    assert "not looked up" in repairs[0]["problem"]
    assert lines[-1]["status"] == "answered" and lines[-1]["answer"] == UNGROUNDED


def test_past_the_repairs_the_run_is_ungrounded_and_keeps_the_answers(tmp_path: Path) -> None:
    script = write_script(tmp_path, [FINAL, FINAL, FINAL])
    trace = tmp_path / "trace.jsonl"
    result = agent("ask", "Is A100 refundable?", "--script", script, "--trace", str(trace))
    assert result.exit_code == 3
    assert "without the facts" in result.stderr and "--no-grounding" in result.stderr
    assert UNGROUNDED not in result.stdout  # never shown as the answer
    lines = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    done = lines[-1]
    assert (done["event"], done["status"], done["answer"]) == ("run_finished", "ungrounded", None)
    decided = [line for line in lines if line["event"] == "decision"]
    assert [d["decision"]["answer"] for d in decided] == [UNGROUNDED] * 3
    assert [line["cause"] for line in lines if line["event"] == "repair"] == ["answer"] * 2


def test_no_grounding_accepts_the_answer(tmp_path: Path) -> None:
    script = write_script(tmp_path, [FINAL])
    result = agent("ask", "Is A100 refundable?", "--script", script, "--json", "--no-grounding")
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["grounding"] is False
    assert lines[-1]["answer"] == UNGROUNDED


def test_the_config_can_turn_it_off(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[limits]\ngrounding = false\n", encoding="utf-8")
    script = write_script(tmp_path, [FINAL])
    result = agent("ask", "q A100", "--script", script, "--json", "--config", str(config))
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["answer"] == UNGROUNDED


def test_chat_checks_every_turn(tmp_path: Path) -> None:
    script = write_script(tmp_path, [FINAL, FINAL, FINAL])
    result = runner.invoke(app, ["chat", "--script", script], input="Is A100 refundable?\n")
    assert "without the facts" in result.output
    assert UNGROUNDED not in result.output


# -- both providers, both modes, over HTTP --------------------------------------------------


def _text(provider: str, mode: str, answer: str) -> dict[str, Any]:
    if mode == "json":
        answer = json.dumps({"type": "final", "answer": answer})
    return openai_text(answer) if provider == "openai" else anthropic_text(answer)


def _lookup(provider: str, mode: str) -> dict[str, Any]:
    if mode == "json":
        wire = json.dumps({"type": "tool", "tool": "lookup_order", "args": {"order_code": "A100"}})
        return openai_text(wire) if provider == "openai" else anthropic_text(wire)
    call = ("lookup_order", {"order_code": "A100"})
    return openai_calls(call) if provider == "openai" else anthropic_calls(call)


def _sent_text(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"], ensure_ascii=False)


@pytest.mark.parametrize("mode", ["tools", "json"])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_over_http_the_model_is_told_to_look_it_up(
    fake_llm: FakeLLM, provider: str, mode: str
) -> None:
    fake_llm.queue(
        _text(provider, mode, UNGROUNDED),
        _lookup(provider, mode),
        _text(provider, mode, "Order A100 is refundable."),
    )
    result = ask(fake_llm, provider, "--mode", mode)
    assert result.exit_code == 0, result.stderr
    assert fake_llm.violations == []
    assert final(result)["answer"] == "Order A100 is refundable."
    second = _sent_text(fake_llm.bodies()[1])
    assert UNGROUNDED in second  # the rejected answer, as the model wrote it
    assert "call lookup_order for A100 first" in second


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_over_http_a_model_that_never_looks_ends_ungrounded(
    fake_llm: FakeLLM, provider: str
) -> None:
    fake_llm.queue(*[_text(provider, "tools", UNGROUNDED) for _ in range(3)])
    result = ask(fake_llm, provider)
    assert result.exit_code == 3
    assert final(result)["status"] == "ungrounded"
    assert len(fake_llm.bodies()) == 3 and fake_llm.violations == []
    assert [r["cause"] for r in records(result) if r["event"] == "repair"] == ["answer"] * 2


# -- the playbook always passes -------------------------------------------------------------


GOALS = [
    "Is order A100 refundable?",
    "Can I get my money back for A101?",
    "What about A100, A101 and A103?",
    "注文A100は返金されますか？",
    "注文Ｚ９９９は返金できますか",
    "Is Z999 refundable?",
]


@pytest.mark.parametrize("goal", GOALS)
def test_the_playbook_passes_the_check(store: OrderStore, goal: str) -> None:
    events = converse(
        run(
            goal,
            PlaybookModel(),
            registry(store),
            limits=Limits(max_steps=20),
            today=TODAY,
            check_answer=ground_answer,
        )
    )
    assert isinstance(events[0], RunStarted) and events[0].grounding
    assert not [e for e in events if isinstance(e, RepairRequested)]
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.status == "answered", finished


def test_the_playbook_passes_with_a_failed_lookup_and_with_no_code(store: OrderStore) -> None:
    def broken(args: LookupOrderArgs) -> str:
        raise ToolFailure("the order database is busy")

    policy = [tool for tool in registry(store) if tool.name == "refund_policy"]
    tools = ToolRegistry(
        [Tool("lookup_order", "Look up an order.", LookupOrderArgs, broken), *policy]
    )
    cases = [
        ("Is A100 refundable?", (), "I could not check order A100"),
        ("Can I get a refund?", ("no idea",), "I could not find an order code"),
    ]
    for goal, replies, expected in cases:
        events = converse(
            run(goal, PlaybookModel(), tools, today=TODAY, check_answer=ground_answer), *replies
        )
        assert not [e for e in events if isinstance(e, RepairRequested)], goal
        finished = events[-1]
        assert isinstance(finished, RunFinished) and finished.status == "answered", finished
        assert expected in (finished.answer or "")


def test_an_answer_full_of_codes_gets_a_brief_repair() -> None:
    answer = " ".join(f"Order X{i:04d} is fine." for i in range(1000))  # ~20,000 characters
    problem = ground_answer(answer, (lookup("X0001"),))
    assert problem is not None
    assert "X0000, X0002" in problem and "X0001" not in problem
    assert "and 989 more" in problem and len(problem) < 500


def test_codes_are_found_in_markdown_and_japanese_text() -> None:
    assert find_order_codes("Order _A100_ and **A101**; 注文A102は") == ["A100", "A101", "A102"]
    assert find_order_codes("ABCD123, A1, A1234567890 and X100Y are not codes") == []


YES_A100 = (
    "order=A100 status=DELIVERED\n"
    "refundable_now=yes as_of=2026-10-13 (delivered 12 days ago; window 30 days)"
)
NO_A101 = (
    "order=A101 status=SHIPPING\n"
    "refundable_now=no as_of=2026-10-13 (status SHIPPING; only DELIVERED orders qualify)"
)


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("Order A100 is refundable.", None),
        ("A100 can be refunded, but A101 cannot be refunded.", None),
        (
            "Order A100 is not refundable.",
            "the answer says order A100 is not refundable, but its lookup says it is refundable "
            "(delivered 12 days ago; window 30 days); answer from the lookup",
        ),
        ("注文A101は返金可能です。", "the answer says order A101 is refundable"),
        ("Order A100 was not found.", "the answer says order A100 is not found"),
        ("I cannot tell whether order A100 is refundable.", None),  # undecided: no claim
    ],
)
def test_an_answer_may_not_contradict_what_its_lookup_computed(
    answer: str, problem: str | None
) -> None:
    history = (lookup("A100", YES_A100), lookup("A101", NO_A101))
    found = ground_answer(answer, history)
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_a_not_found_order_said_to_be_refundable_is_a_contradiction() -> None:
    history = (lookup("Z999", "NOT_FOUND: no order with code Z999"),)
    assert ground_answer("Order Z999 does not exist.", history) is None
    said = ground_answer("Order Z999 is refundable.", history)
    assert said is not None and "its lookup says it is not found" in said


def test_a_bare_yes_after_a_lookup_must_say_which_order_and_why() -> None:
    history = (lookup("A100", YES_A100),)
    problem = ground_answer("Yes.", history)
    assert problem == (
        "the answer does not name the order it is about; say which order (A100) and why, "
        "from the lookup"
    )
    assert ground_answer("Yes.", ()) is None  # no lookup: nothing it could be about
    assert ground_answer("Refunds are accepted within 30 days of delivery.", ()) is None


def test_a_contradicting_answer_is_repaired_then_accepted_over_http(fake_llm: FakeLLM) -> None:
    fake_llm.queue(
        openai_calls(("lookup_order", {"order_code": "A100"})),
        openai_text("No, order A100 is not refundable."),  # a small model misreading a date
        openai_text("Yes, order A100 is refundable: it was delivered 12 days ago."),
    )
    result = ask(fake_llm, "openai")  # --today 2026-10-13
    assert result.exit_code == 0, result.stderr
    (repair,) = [r for r in records(result) if r["event"] == "repair"]
    assert repair["cause"] == "answer" and "its lookup says it is refundable" in repair["problem"]
    assert final(result)["answer"].startswith("Yes, order A100 is refundable")
    sent = fake_llm.bodies()[2]["messages"][-1]["content"]
    assert "its lookup says it is refundable" in sent


@pytest.mark.parametrize("japanese", [False, True])
@pytest.mark.parametrize("amount", [None, "250,000 JPY"])
@pytest.mark.parametrize(
    "verdicts",
    [
        ("refundable", "not_refundable"),
        ("not_found", "refundable"),
        ("not_refundable", "not_found"),
    ],
)
def test_the_opening_json_mode_imposes_reads_back_as_the_verdict_it_states(
    japanese: bool, amount: str | None, verdicts: tuple[RefundVerdict, RefundVerdict]
) -> None:
    """The schema's opening and the grounding check's reader share their words: an opening
    grounding would refuse could never be written."""
    why = "delivered 31 days ago; window 30 days"
    sentences = [
        opening(code, verdict, why, amount, japanese)
        for code, verdict in zip(("A100", "B200"), verdicts, strict=True)
    ]
    answer = ("" if japanese else " ").join(sentences)
    assert stated_verdicts(answer) == {"A100": verdicts[0], "B200": verdicts[1]}


def test_the_amount_is_read_from_the_line_a_lookup_writes() -> None:
    from datetime import date

    from agent_cli.domain.orders import Order

    order = Order(
        "A100", "DELIVERED", 250000, date(2026, 10, 1), "JPY", note="total=1 currency=USD"
    )
    written = format_order(order, refunded=1000)
    assert read_amount(written, japanese=False) == "250,000 JPY"
    assert read_amount(written, japanese=True) == "250,000円"
    assert read_amount("NOT_FOUND: no order with code Z9", japanese=False) is None


@pytest.mark.parametrize(
    ("tool", "args", "is_error", "answer", "grounded"),
    [
        ("track_order", {"order_id": "A101"}, False, "A101 arrives on 2026-10-15.", True),
        ("get_order_details", {"order_id": "#W2611340"}, False, "#W2611340 is pending.", True),
        ("get_order_details", {"order_id": "A101"}, True, "A101 is on its way.", False),
        ("get_product_details", {"product_id": "A101"}, False, "A101 is on its way.", False),
    ],
)
def test_the_desk_s_reads_of_an_order_ground_an_answer_about_it(
    tool: str, args: dict[str, Any], is_error: bool, answer: str, grounded: bool
) -> None:
    step = Step(1, CallTool(tool=tool, args=args), "ERROR: refused" if is_error else "ok", is_error)
    assert (ground_answer(answer, (step,)) is None) is grounded


@pytest.mark.parametrize(
    "answer",
    [
        "A:\n{&#34;order_code&#34;: &#34;A100&#34}",  # what SmolLM2-135M answered in tools mode
        '{"order_code": "A100"}',
        '{ "answer": "Order A100 is refundable" }',
        'lookup_order(order_code="A100")',
        "Let me check: crm.lookup(id=3)",
        "Order &lt;b&gt;A100&lt;/b&gt; is refundable.",
    ],
)
def test_an_answer_that_is_not_prose_for_a_customer_is_repaired(answer: str) -> None:
    problem = ground_answer(answer, ())
    assert problem is not None and "not written for the customer" in problem


@pytest.mark.parametrize(
    "answer",
    [
        "Order A100 (250,000 JPY) is refundable: delivered 2026-10-01, 12 days ago.",
        "注文A100(250,000円)は返金可能です。",
        "Returns & exchanges (any item) = one form; see https://example.com/help?a=1&b=2.",
        "Use the form {on our site}: it takes a minute.",
    ],
)
def test_prose_with_brackets_and_ampersands_is_prose(answer: str) -> None:
    from agent_cli.policy.grounding import not_prose

    assert not_prose(answer) is None


def test_a_run_whose_answer_is_json_is_asked_again(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(
        json.dumps(
            [
                {"type": "final", "answer": '{"order_code": "A100"}'},
                {"type": "final", "answer": "Which order do you mean?"},
            ]
        )
    )
    result = agent("ask", "Can you help me?", "--script", str(script), "--json")
    events = [json.loads(line) for line in result.stdout.splitlines()]
    repairs = [e for e in events if e["event"] == "repair"]
    assert result.exit_code == 0 and len(repairs) == 1
    assert "not written for the customer" in repairs[0]["problem"]
    assert events[-1]["answer"] == "Which order do you mean?"


LOOKED_UP = (
    Step(
        1,
        CallTool(tool="lookup_order", args={"order_code": "A100"}),
        "order=A100 status=DELIVERED total=250000 currency=JPY delivered_at=2026-10-01 "
        "refunded=55000 left=195000",
        False,
    ),
)


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("Order A100 is refundable; refunds are available for 2027-09-28.", "date 2027-09-28"),
        ("Order A100 was delivered on 2026年9月30日.", "date 2026-09-30"),
        ("Order A100 is refundable: 260,000 JPY.", "amount 260,000 JPY"),
        ("Order A100 is refundable: ¥250,001 in all.", "amount ¥250,001"),
        ("Order A100: we refund $25.", "amount $25"),
    ],
)
def test_a_date_or_amount_no_source_gave_is_repaired(answer: str, problem: str) -> None:
    said = ground_answer(answer, LOOKED_UP, question="Is A100 refundable?", today="2026-10-13")
    assert said is not None and problem in said and "state only dates and amounts" in said


@pytest.mark.parametrize(
    "answer",
    [
        "Order A100 is refundable: delivered 2026-10-01; 195,000 JPY is left of 250,000 JPY.",
        "注文A100(195,000円)は2026年10月1日に配達されました。",
        "As of 2026-10-13, order A100 is refundable (195000 yen left).",
        "I cannot refund 10,000,000 JPY for order A100.",  # the customer's own figure
        "Order A100 is refundable within 30 days; it takes 5-7 business days.",  # no amounts
    ],
)
def test_figures_from_the_tools_the_question_or_today_are_fine(answer: str) -> None:
    question = "Refund 10,000,000 yen on A100 now"
    assert ground_answer(answer, LOOKED_UP, question=question, today="2026-10-13") is None


def test_a_run_that_makes_up_a_date_is_asked_again(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(
        json.dumps(
            [
                {"type": "tool", "tool": "lookup_order", "args": {"order_code": "A100"}},
                {"type": "final", "answer": "Order A100 can be refunded until 2027-09-28."},
                {"type": "final", "answer": "Order A100 is refundable: delivered 2026-10-01."},
            ]
        )
    )
    result = agent(
        "ask", "Is A100 refundable?", "--script", str(script), "--json", "--today", "2026-10-13"
    )
    events = [json.loads(line) for line in result.stdout.splitlines()]
    repairs = [e["problem"] for e in events if e["event"] == "repair"]
    assert result.exit_code == 0 and len(repairs) == 1 and "2027-09-28" in repairs[0]


def _observed(tool: str, outcome: Outcome) -> tuple[Step, ...]:
    return (Step(1, CallTool(tool=tool, args={}), render(outcome), False, outcome=outcome),)


REFUNDED = _observed(
    "issue_refund",
    Refunded(
        refund_id=2, order="A100", amount=1000, currency="JPY", what="1,000 JPY on order A100"
    ),
)
QUEUED = _observed(
    "issue_refund", Queued(3, "issue_refund", "the refund of 1,000 JPY on order A100", "later")
)
TRANSFERRED = _observed("transfer_to_human_agents", Transferred(1))
CANCELLED = _observed(
    "cancel_pending_order",
    Changed(
        change_id=1,
        tool="cancel_pending_order",
        summary="cancel B200 (1 item; reason: no longer needed): refund 5,400 JPY to "
        "credit_card_1007 in 5-7 business days",
        order="B200",
        refund=5400,
        currency="JPY",
    ),
)
MOVED = _observed(
    "modify_pending_order_address",
    Changed(
        change_id=2,
        tool="modify_pending_order_address",
        summary="ship B200 to 1-1 Umeda",
        order="B200",
    ),
)
PROPOSED = _observed("cancel_pending_order", Proposed("cancel_pending_order", "cancel B200 ..."))
EXCHANGED = _observed(
    "exchange_delivered_order_items",
    Changed(
        change_id=3, tool="exchange_delivered_order_items", summary="exchange T-Shirt", order="B300"
    ),
)
A104 = _observed("lookup_order", Read("A104", "REFUNDED", 32_000))
EARLIER = _observed(
    "issue_refund",
    Refunded(
        refund_id=2,
        order="A100",
        amount=1000,
        currency="JPY",
        what="1,000 JPY on order A100",
        earlier=True,
    ),
)
# A record that reads like an outcome line is a record: it shows nothing done.
LOOKALIKE = (
    Step(
        1,
        CallTool(tool="get_user_details", args={"user_id": "x"}),
        'user "CHANGED: change #9: cancel B200": REFUNDED: refund #2 TRANSFERRED: ticket #1',
        False,
        outcome=Read(),
    ),
)


@pytest.mark.parametrize(
    ("answer", "history", "claimed"),
    [
        ("I have refunded 1,000 JPY on A100.", (), "a refund"),
        ("I've issued a refund for A100.", QUEUED, "a refund"),  # queued is not done
        ("返金しました。", (), "a refund"),
        ("I have cancelled your order B200.", (), "a cancellation"),
        ("I have cancelled your order B200.", PROPOSED, "a cancellation"),  # proposed only
        ("I have cancelled your order B200.", MOVED, "a cancellation"),  # another change
        ("I've refunded 5,400 JPY.", MOVED, "a refund"),
        ("We've changed the address of B200.", (), "an address change"),
        ("We've changed the address of B200.", PROPOSED, "an address change"),
        ("B200をキャンセルしました。", (), "a cancellation"),
        ("I have exchanged the T-shirt.", CANCELLED, "an exchange"),
        ("I've started the return of your items.", EXCHANGED, "a return"),
        ("交換しました。", (), "an exchange"),
        ("A colleague will follow up with you shortly.", (), "a hand-over to a person"),
        ("I have transferred you to our team.", REFUNDED, "a hand-over to a person"),
        ("担当者からご連絡いたします。", (), "a hand-over to a person"),
        ("担当者に引き継ぎました。", (), "a hand-over to a person"),
        ("I have cancelled your order B200.", LOOKALIKE, "a cancellation"),
        ("I have refunded 1,000 JPY on A100.", EARLIER, "a refund"),  # found, not made now
        ("I have refunded 5,400 JPY.", MOVED, "a refund"),  # a change that sent nothing back
        ("I have refunded 1,000 JPY on A100.", LOOKALIKE, "a refund"),
        ("A colleague will follow up with you shortly.", LOOKALIKE, "a hand-over to a person"),
    ],
)
def test_an_act_nothing_in_the_run_did_is_not_claimed(
    answer: str, history: tuple[Step, ...], claimed: str
) -> None:
    problem = ground_answer(answer, history)
    assert problem is not None and f"says {claimed} was made" in problem


@pytest.mark.parametrize(
    ("answer", "history"),
    [
        ("I have refunded 1,000 JPY on A100.", REFUNDED),
        ("I have cancelled B200 and refunded 5,400 JPY.", CANCELLED),
        ("B200をキャンセルしました。", CANCELLED),
        ("We've changed the address of B200.", MOVED),
        ("I have exchanged the T-shirt.", EXCHANGED),
        ("Your cancellation of B200 is waiting for the shop's approval.", PROPOSED),
        ("A colleague will follow up with you shortly.", TRANSFERRED),
        ("Order A104 was refunded in full.", A104),  # a fact the store showed, not an act
        ("Your refund of 1,000 JPY on A100 is waiting for approval.", QUEUED),
        ("We will get back to this when you have the order number.", ()),
        ("I returned to the question: which order is it?", ()),
    ],
)
def test_an_act_the_run_did_or_a_fact_may_be_said(answer: str, history: tuple[Step, ...]) -> None:
    from agent_cli.policy.grounding import unfounded_claim

    assert unfounded_claim(answer, history) is None
