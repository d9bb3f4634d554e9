"""The offline playbook model: looks up what the goal names, reads the policy, answers from
the observations, in the language of the question."""

from __future__ import annotations

from datetime import date

import pytest

from agent_cli.core.budget import Limits
from agent_cli.core.decisions import CallTool, FinalAnswer
from agent_cli.core.events import ModelDecided, QuestionAsked, RunFinished, ToolObserved
from agent_cli.core.loop import run
from agent_cli.domain.orders import Order
from agent_cli.errors import NeedsInput
from agent_cli.policy.verdicts import is_japanese
from agent_cli.providers.playbook import unsure as playbook_unsure
from agent_cli.providers.playbook.model import PlaybookModel, find_order_codes
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools.orders import RefundPolicy
from tests.helpers import TODAY, collect, converse, registry


def answer(
    store: OrderStore, goal: str, *, today: date = TODAY, policy: RefundPolicy | None = None
) -> tuple[str, list[CallTool]]:
    events = collect(
        run(
            goal, PlaybookModel(), registry(store, policy), limits=Limits(max_steps=20), today=today
        )
    )
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.status == "answered", events[-1]
    calls = [
        e.decision
        for e in events
        if isinstance(e, ModelDecided) and isinstance(e.decision, CallTool)
    ]
    assert finished.answer is not None
    return finished.answer, calls


def test_refundable_order(store: OrderStore) -> None:
    text, calls = answer(store, "Is order A100 refundable?")
    assert text == (
        "Order A100 is refundable: delivered 2026-10-01, 12 days ago, within the 30-day window; "
        "refund amount 250,000 JPY."
    )
    assert [(c.tool, c.args) for c in calls] == [
        ("lookup_order", {"order_code": "A100"}),
        ("refund_policy", {}),
    ]
    assert all(c.thought for c in calls)


def test_wrong_status(store: OrderStore) -> None:
    text, _ = answer(store, "Can I get my money back for A101?")
    assert text == (
        "Order A101 is not refundable: its status is SHIPPING; "
        "only DELIVERED orders can be refunded."
    )


def test_outside_the_window(store: OrderStore) -> None:
    text, _ = answer(store, "refund for a103 please")
    assert text == (
        "Order A103 is not refundable: delivered 2026-06-15, 120 days ago, "
        "outside the 30-day window."
    )


def test_not_found(store: OrderStore) -> None:
    text, _ = answer(store, "Is order Z999 refundable?")
    assert text == "Order Z999 was not found; please check the order code."


def test_a_follow_up_with_nothing_before_it_gets_the_orders_state_not_a_verdict(
    store: OrderStore,
) -> None:
    """ "What about order A103?" asks the turn before's question again; with no turn before,
    the desk did not understand: the order's state and what it can do, never a refund verdict."""
    text, _ = answer(store, "What about order A103?")
    assert "A103" in text and "refundable" not in text
    text, _ = answer(store, "What about order Z999?")
    assert "Z999" in text and "refundable" not in text


def test_several_orders_in_one_question_in_order(store: OrderStore) -> None:
    text, calls = answer(store, "Are A100, A101 and A104 refundable? Also A100 again.")
    lines = text.splitlines()
    assert [line.split()[1] for line in lines] == ["A100", "A101", "A104"]
    assert "REFUNDED" in lines[2]
    assert [c.args.get("order_code") for c in calls] == ["A100", "A101", "A104", None]


def test_answers_come_from_the_observations_not_from_fixed_facts(store: OrderStore) -> None:
    store.import_orders([Order("A100", "DELIVERED", 77_701, date(2026, 10, 12), "USD")])
    text, _ = answer(store, "Is order A100 refundable?")
    assert "delivered 2026-10-12, 1 day ago" in text and "777.01 USD" in text  # cents kept


def test_policy_comes_from_the_policy_tool(store: OrderStore) -> None:
    text, _ = answer(store, "Is order A100 refundable?", policy=RefundPolicy(7, ("DELIVERED",)))
    assert "outside the 7-day window" in text


def test_window_boundary_is_inclusive(store: OrderStore) -> None:
    assert (
        "is refundable"
        in answer(store, "Can I get a refund for A100?", today=date(2026, 10, 31))[0]
    )
    assert (
        "not refundable"
        in answer(store, "Can I get a refund for A100?", today=date(2026, 11, 1))[0]
    )


def test_delivery_after_today_is_not_judged(store: OrderStore) -> None:
    text, _ = answer(store, "Is A100 refundable?", today=date(2026, 9, 1))
    assert "is after today" in text


@pytest.mark.parametrize(
    ("goal", "said"),
    [
        ("A100?", "Order A100 is delivered. With it I can check whether a refund is possible"),
        ("Z999?", "I could not find an order with the code Z999."),
        ("A100は？", "注文A100の状態は「お届け済み」です。この注文では、返金できるかどうかの確認"),
    ],
)
def test_a_message_it_did_not_understand_gets_the_orders_state_never_a_verdict(
    store: OrderStore, goal: str, said: str
) -> None:
    text, _ = answer(store, goal)
    assert text.startswith(said)
    assert "refundable:" not in text and "返金可能です" not in text


@pytest.mark.parametrize(
    ("goal", "expected"),
    [
        (
            "注文A100は返金できますか？",
            "注文A100は返金可能です：2026-10-01に配達済み（12日前）で、30日間の返金期間内です。返金額は250,000円です。",
        ),
        (
            "A101の返金をお願いします",
            "注文A101は返金できません：ステータスがSHIPPINGです。返金できるのはDELIVEREDの注文のみです。",
        ),
        (
            "注文番号Ａ１０３は返金できますか",
            "注文A103は返金できません：2026-06-15に配達済み（120日前）で、30日間の返金期間を過ぎています。",
        ),
        ("Z999は返金できますか？", "注文Z999は見つかりませんでした。注文番号をご確認ください。"),
    ],
)
def test_japanese_questions_get_japanese_answers(
    store: OrderStore, goal: str, expected: str
) -> None:
    assert answer(store, goal)[0] == expected


def test_no_order_code_asks_which_order_once(store: OrderStore) -> None:
    events = converse(run("Is my order refundable?", PlaybookModel(), registry(store), today=TODAY))
    asked = [e for e in events if isinstance(e, QuestionAsked)]
    assert [e.question for e in asked] == [
        "Which order is this about? Please give the order code (for example A100)."
    ]
    assert isinstance(events[-1], NeedsInput)
    finished = events[-2]
    assert isinstance(finished, RunFinished) and finished.status == "needs_input"


def test_the_reply_to_the_question_supplies_the_code(store: OrderStore) -> None:
    events = converse(
        run("Is my order refundable?", PlaybookModel(), registry(store), today=TODAY), "It's a100"
    )
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.status == "answered"
    assert finished.answer is not None and finished.answer.startswith("Order A100 is refundable")
    replies = [e for e in events if isinstance(e, ToolObserved) and e.tool == "ask_user"]
    assert [e.observation for e in replies] == ["It's a100"]


def test_a_reply_without_a_code_gets_the_policy(store: OrderStore) -> None:
    events = converse(
        run("Is my order refundable?", PlaybookModel(), registry(store), today=TODAY), "no idea"
    )
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.answer is not None
    assert finished.answer.startswith("I could not find an order code in your question.")
    assert "within 30 days of delivery, for DELIVERED orders only" in finished.answer
    assert sum(isinstance(e, QuestionAsked) for e in events) == 1


def test_no_order_code_in_japanese(store: OrderStore) -> None:
    events = converse(
        run("返金できますか？", PlaybookModel(), registry(store), today=TODAY), "わかりません"
    )
    asked = next(e for e in events if isinstance(e, QuestionAsked))
    assert (
        asked.question == "どの注文についてのご質問ですか？注文番号（例：A100）を教えてください。"
    )
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.answer is not None
    assert finished.answer.startswith("ご質問に注文番号が見つかりませんでした。")
    assert "30日以内" in finished.answer


@pytest.mark.parametrize(
    ("goal", "codes"),
    [
        ("Is order A100 refundable?", ["A100"]),
        ("a100 and B200, then a100", ["A100", "B200"]),
        ("注文A100とA101", ["A100", "A101"]),
        ("ｃ３００", ["C300"]),
        ("order #A100.", ["A100"]),
        ("Is my order refundable? Today is 2026-10-13.", []),
        ("paper size A4 and ISO9001x", []),
    ],
)
def test_find_order_codes(goal: str, codes: list[str]) -> None:
    assert find_order_codes(goal) == codes


def test_language_detection() -> None:
    assert is_japanese("返金できますか")
    assert not is_japanese("Is A100 refundable?")


def test_a_failed_lookup_is_reported_not_invented(store: OrderStore) -> None:
    from agent_cli.core.decisions import Step
    from agent_cli.core.seams import ModelRequest

    failed = Step(
        1, CallTool(tool="lookup_order", args={"order_code": "A100"}), "ERROR: db down", True
    )
    policy = Step(2, CallTool(tool="refund_policy"), RefundPolicy().describe(), False)
    goal = "Is A100 refundable?"
    reply = PlaybookModel().decide(
        ModelRequest(goal=goal, today=TODAY, tools=(), history=(failed, policy), deadline=1e9)
    )
    (decision,) = reply.decisions
    assert isinstance(decision, FinalAnswer)
    assert decision.answer == "I could not check order A100: ERROR: db down"
    unsure = PlaybookModel().decide(
        ModelRequest(goal="A100?", today=TODAY, tools=(), history=(failed,), deadline=1e9)
    )
    assert unsure.decisions == (
        FinalAnswer(answer=playbook_unsure.ENGLISH.could_not_read.format(code="A100")),
    )
