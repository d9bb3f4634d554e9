"""The offline playbook routes each turn by the intent model's reading (issue 49, point 3): a
verdict only when refund eligibility was asked, never an answer to a question it did not
understand, a reply to its own question carrying on the turn before's intent."""

from __future__ import annotations

import pytest

from agent_cli.core.decisions import AskUser, CallTool, FinalAnswer
from agent_cli.core.seams import Exchange, ModelRequest
from agent_cli.domain.intents import OFFERS, UNKNOWN
from agent_cli.policy.claims import claims
from agent_cli.providers import playbook_unsure
from agent_cli.providers.playbook import PlaybookModel
from agent_cli.providers.playbook_turn import intent_of_turn
from agent_cli.store.sqlite import OrderStore

from .helpers import TODAY
from .test_playbook import answer


def request(goal: str, *earlier: tuple[str, str]) -> ModelRequest:
    conversation = tuple(Exchange(question=q, answer=a) for q, a in earlier)
    return ModelRequest(goal, TODAY, (), (), 1e9, conversation=conversation)


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


def test_an_expired_order_it_did_not_understand_is_answered_grounded() -> None:
    from typer.testing import CliRunner

    from agent_cli.cli import app

    result = CliRunner().invoke(app, ["ask", "A100?", "--dry-run", "--today", "2027-01-01"])
    assert result.exit_code == 0, result.output
    assert "Order A100 is delivered." in result.stdout
