"""The offline playbook routes each turn by the intent model's reading (issue 49, point 3): a
verdict only when refund eligibility was asked, never an answer to a question it did not
understand, a reply to its own question carrying on the turn before's intent."""

from __future__ import annotations

import pytest

from agent_cli.core.decisions import AskUser, CallTool, FinalAnswer
from agent_cli.core.seams import Exchange, ModelRequest
from agent_cli.domain.intents import OFFERS, UNKNOWN
from agent_cli.policy.claims import claims
from agent_cli.providers.playbook import PlaybookModel
from agent_cli.providers.playbook import unsure as playbook_unsure
from agent_cli.providers.playbook.turn import intent_of_turn
from agent_cli.store.sqlite import OrderStore
from tests.helpers import TODAY
from tests.unit.providers.test_playbook import answer


def request(goal: str, *earlier: tuple[str, str]) -> ModelRequest:
    conversation = tuple(Exchange(question=q, answer=a) for q, a in earlier)
    return ModelRequest(
        goal=goal, today=TODAY, tools=(), history=(), deadline=1e9, conversation=conversation
    )


@pytest.mark.parametrize(
    ("goal", "earlier", "intent"),
    [
        ("Please cancel B200", (), "cancel"),
        # a reply to the desk's own question carries on what was asked
        (
            "The mugs.",
            (("I want to return items from A100", "Which items? It has: Mug"),),
            "return",
        ),
        ("kaito.yamamoto@example.com", (("Cancel B200", "What is your email?"),), "cancel"),
        ("yes", (("Cancel B200", "Shall I cancel B200? Say yes or no."),), "cancel"),
        # ...unless the reply surely asks for something else
        ("Where is my order A101?", (("Cancel B200", "What is your email?"),), "status"),
        # an answer that asked nothing is not carried on
        ("yes", (("Cancel B200", "Order B200 is cancelled."),), "greeting"),
        # words of a language the model never learnt are not guessed at
        ("주문 A100 환불 가능한가요?", (), UNKNOWN),
        ("¿Puedo devolver el pedido A100?", (), UNKNOWN),
    ],
)
def test_a_turns_intent(goal: str, earlier: tuple[tuple[str, str], ...], intent: str) -> None:
    assert intent_of_turn(request(goal, *earlier)) in (
        {intent} if intent != "greeting" else {"greeting", UNKNOWN, "other"}
    )


def decide(goal: str) -> object:
    (decision,) = PlaybookModel().decide(request(goal)).decisions
    return decision


def test_a_request_about_an_order_names_none_so_the_code_is_asked_for() -> None:
    decision = decide("I'd like to cancel an order")
    assert isinstance(decision, AskUser) and "Which order" in decision.question


@pytest.mark.parametrize(
    ("goal", "start"),
    [
        ("Hello there!", playbook_unsure.ENGLISH.welcome.split("{")[0]),
        ("What's the weather like in Tokyo?", playbook_unsure.ENGLISH.unsure.split("{")[0]),
        ("こんにちは", playbook_unsure.JAPANESE.welcome.split("{")[0]),
    ],
)
def test_a_greeting_or_anything_else_gets_what_the_desk_can_do_and_no_tool(
    goal: str, start: str
) -> None:
    decision = decide(goal)
    assert isinstance(decision, FinalAnswer) and decision.answer.startswith(start)
    assert "refund" in decision.answer or "返金" in decision.answer


def test_a_message_about_an_order_it_did_not_understand_looks_the_order_up_first() -> None:
    decision = decide("A100?")
    assert isinstance(decision, CallTool) and decision.tool == "lookup_order"


@pytest.mark.parametrize("words", [playbook_unsure.ENGLISH, playbook_unsure.JAPANESE])
def test_what_the_desk_says_it_can_do_is_never_read_as_a_change_made(
    words: playbook_unsure.Words,
) -> None:
    every = tuple(row.name for row in OFFERS)
    for template in (words.unsure, words.welcome, words.not_in_help):
        assert claims(template.format(can=words.can(every))) == []
    said = words.state.format(code="A100", status="x", can=words.can(every))
    assert claims(said) == []


def test_where_is_my_order_is_never_answered_with_a_refund_verdict(store: OrderStore) -> None:
    """Without the tracking tool (the seed's registry), a status question gets the order's
    state and what can be done, not the refund flow's verdict."""
    text, calls = answer(store, "Where is my order A100?")
    assert "refundable:" not in text and "is delivered" in text
    assert [c.tool for c in calls] == ["lookup_order"]


@pytest.mark.parametrize("words", [playbook_unsure.ENGLISH, playbook_unsure.JAPANESE])
@pytest.mark.parametrize("status", ["PENDING", "SHIPPING", "DELIVERED", "CANCELLED", "REFUNDED"])
def test_an_orders_state_and_what_can_be_done_state_no_verdict(
    words: playbook_unsure.Words, status: str
) -> None:
    """Grounding refuses an answer whose verdict the lookup does not back: what the desk can
    do with an order ("check whether a refund is possible") must not read as one."""
    from agent_cli.core.decisions import Step
    from agent_cli.core.tool_outcomes import Read
    from agent_cli.policy.verdicts import stated_verdicts

    step = Step(1, CallTool(tool="lookup_order"), "x", False, outcome=Read("A100", status))
    decision = playbook_unsure.unsure("other", ["A100"], {"A100": step}, words)
    assert isinstance(decision, FinalAnswer)
    assert stated_verdicts(decision.answer).get("A100") is None


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("My email is sofia.li9874@example.com", []),  # τ²-bench's customers' emails
        ("Order #W2378156, email mei.ab12@example.com", ["W2378156"]),
        ("yusuf_li12@example.com and A100", ["A100"]),
        ("ＡＢ１２＠example.com A101", ["A101"]),  # a full-width @ is an @
        ("B200の件、メールはaoi.li12@example.co.jpです", ["B200"]),
    ],
)
def test_an_emails_local_part_is_never_an_order_code(text: str, codes: list[str]) -> None:
    from agent_cli.policy.verdicts import find_order_codes

    assert find_order_codes(text) == codes


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("I'm Kaito Yamamoto, zip 220-0012", ("Kaito", "Yamamoto", "220-0012")),
        ("Haruki Sato, 150-0001", ("Haruki", "Sato", "150-0001")),
        ("Please ship B200 to 12 Baker Street, Springfield 62704", None),
        ("Deliver to Harbour Road, Springfield 62704", None),  # a street's word, no number
        ("Ship to 3 Queen Anne, Springfield 62704", None),  # a house number before it
        ("Ship to 3  Queen Anne, Springfield 62704", None),  # spaces before it too
        (
            "Ship to 12 Baker Street. I'm Kaito Yamamoto, 220-0012",
            ("Kaito", "Yamamoto", "220-0012"),
        ),
    ],
)
def test_a_street_is_never_read_as_a_customers_name(
    text: str, found: tuple[str, str, str] | None
) -> None:
    from agent_cli.providers.playbook.who import _name_and_zip

    named = _name_and_zip(text)
    assert (named.groups() if named else None) == found


@pytest.mark.parametrize(
    ("text", "street", "country"),
    [
        (
            "登録住所を1-1 Marunouchi, Chiyoda-ku, Tokyo 100-0005, Japanに変更してください。",
            "1-1 Marunouchi",
            "Japan",
        ),
        ("住所：4-5-6 Umeda, Kita-ku, Osaka 530-0001, Japan", "4-5-6 Umeda", "Japan"),
        ("梅田4-5-6, 北区, 大阪府 530-0001, 日本", "梅田4-5-6", "日本"),  # all Japanese: kept
        ("4-5-6 Umeda, Kita-ku, Osaka 530-0001, Japan", "4-5-6 Umeda", "Japan"),
    ],
)
def test_an_address_in_a_japanese_sentence_is_the_address_alone(
    text: str, street: str, country: str
) -> None:
    from agent_cli.providers.playbook.reading import parsed_address

    parsed = parsed_address(text)
    assert parsed is not None
    assert (parsed["address1"], parsed["country"]) == (street, country)


def test_at_the_step_limit_after_a_change_the_change_is_said() -> None:
    from agent_cli.core.decisions import Step
    from agent_cli.core.tool_outcomes import Changed

    made = Changed(change_id=7, tool="cancel_pending_order", summary="cancel B200", order="B200")
    history = (Step(1, CallTool(tool="cancel_pending_order"), "x", False, outcome=made),)
    answer = playbook_unsure.at_limit(history, False, ["B200"]).answer
    assert answer.startswith("Done: cancel B200.") and "nothing was changed" not in answer
    assert playbook_unsure.at_limit((), True, []).answer.startswith("ここでは手続きを完了")


# Pins from mutation testing (tests/mutate.sh on the playbook's turn and its unsure answers).


def test_a_plain_yes_that_names_another_change_still_answers_the_question() -> None:
    """ "yes please cancel it" after a return was put to the customer is their yes to it, read
    by the consent's words; not a new request to cancel."""
    earlier = ("I want to return the mug from A100", "Shall I go ahead? Please answer yes or no.")
    assert intent_of_turn(request("yes please cancel it", earlier)) == "return"


def test_a_japanese_question_mark_is_a_question_too() -> None:
    earlier = ("B200をキャンセルしたいです", "メールアドレスを教えていただけますか？")
    assert intent_of_turn(request("kaito.yamamoto@example.com", earlier)) == "cancel"


def test_a_question_after_a_greeting_does_not_carry_the_greeting_on() -> None:
    earlier = ("Hello", "Hello, and thank you for writing. How can I help?")
    assert intent_of_turn(request("A100", earlier)) == UNKNOWN


def _lookup(outcome: object, *, error: bool = False) -> dict[str, object]:
    from agent_cli.core.decisions import Step

    step = Step(1, CallTool(tool="lookup_order"), "x", error, outcome=outcome)  # type: ignore[arg-type]
    return {"A100": step}


@pytest.mark.parametrize(
    ("outcome", "error", "words", "said"),
    [
        (
            "not_found",
            False,
            playbook_unsure.ENGLISH,
            "I could not find an order with the code A100.",
        ),
        ("read", True, playbook_unsure.ENGLISH, "I could not read order A100 just now."),
        ("no_status", False, playbook_unsure.ENGLISH, "I could not read order A100 just now."),
        (
            "LOST",
            False,
            playbook_unsure.ENGLISH,
            "Order A100 is lost. With it I can tell you where",
        ),
        ("PENDING_ITEM_MODIFIED", False, playbook_unsure.ENGLISH, "is pending item modified."),
        (
            "PENDING_ITEM_MODIFIED",
            False,
            playbook_unsure.JAPANESE,
            "「発送準備中（商品変更済み）」",
        ),
        ("LOST", False, playbook_unsure.JAPANESE, "注文A100の状態は「LOST」です。"),
    ],
)
def test_an_orders_state_in_one_sentence(
    outcome: str, error: bool, words: playbook_unsure.Words, said: str
) -> None:
    from agent_cli.core.tool_outcomes import NotFound, Read

    made = {
        "not_found": NotFound("A100"),
        "read": Read("A100", "DELIVERED"),
        "no_status": Read("A100", None),
    }.get(outcome, Read("A100", outcome))
    decision = playbook_unsure.unsure("other", ["A100"], _lookup(made, error=error), words)
    assert isinstance(decision, FinalAnswer) and said in decision.answer


def test_several_orders_get_a_sentence_each() -> None:
    from agent_cli.core.decisions import Step
    from agent_cli.core.tool_outcomes import Read

    steps = {
        code: Step(1, CallTool(tool="lookup_order"), "x", False, outcome=Read(code, "PENDING"))
        for code in ("A100", "B200")
    }
    english = playbook_unsure.unsure("other", ["A100", "B200"], steps, playbook_unsure.ENGLISH)
    japanese = playbook_unsure.unsure("other", ["A100", "B200"], steps, playbook_unsure.JAPANESE)
    assert isinstance(english, FinalAnswer) and english.answer.count("\n") == 1
    assert isinstance(japanese, FinalAnswer) and "\n" not in japanese.answer
    assert japanese.answer.count("注文") >= 2


def test_what_the_desk_can_do_is_said_in_the_customers_language() -> None:
    japanese = playbook_unsure.unsure("greeting", [], {}, playbook_unsure.JAPANESE)
    assert isinstance(japanese, FinalAnswer)
    assert "返金できるかどうかの確認" in japanese.answer and "refund" not in japanese.answer
    helped = playbook_unsure.unsure("help", [], {}, playbook_unsure.ENGLISH)
    assert isinstance(helped, FinalAnswer) and helped.answer.startswith("I could not find")


@pytest.mark.parametrize(
    ("goal", "earlier", "intent"),
    [
        # a follow-up asks the turn before's question again, about another order
        ("and A101?", (("Is A100 refundable?", "Order A100 is refundable."),), "refund"),
        ("What about B200?", (("Please cancel B201", "Done: cancelled B201."),), "cancel"),
        ("A101は？", (("A100はいつ届きますか？", "注文A100は配送中です。"),), "status"),
        # elliptical: the verb kept, the order swapped
        ("is A101?", (("Is A100 refundable?", "Order A100 is refundable."),), "refund"),
        ("A101もですか？", (("A100は返金できますか？", "注文A100は返金できます。"),), "refund"),
        # a follow-up of a follow-up carries the first question's
        (
            "And A102?",
            (("Is A100 refundable?", "Order A100 is refundable."), ("and A101?", "No.")),
            "refund",
        ),
        # with no turn before, a follow-up asks nothing the desk understood
        ("and A101?", (), UNKNOWN),
        # a new request in other words is no follow-up
        ("Where is A101?", (("Is A100 refundable?", "Order A100 is refundable."),), "status"),
    ],
)
def test_a_follow_up_carries_on_the_question_before(
    goal: str, earlier: tuple[tuple[str, str], ...], intent: str
) -> None:
    assert intent_of_turn(request(goal, *earlier)) == intent
