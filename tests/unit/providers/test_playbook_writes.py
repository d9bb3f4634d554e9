"""The offline playbook's changes (issue 41, point 1): cancel, a new address, another payment
method, items swapped, returned or exchanged, each as a careful agent makes them: the customer
identified, the exact change proposed, their yes, then the shop's approval; a refusal names the
rule. Also "I don't have my order number" and a chat that remembers the order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agent_cli.config import Settings
from agent_cli.core.budget import RefundCounter
from agent_cli.core.decisions import ASK_USER_TOOL, CallTool, Step
from agent_cli.core.events import Event, QuestionAsked, RunFinished, ToolObserved
from agent_cli.core.seams import QUEUE, ApprovalVerdict, Exchange
from agent_cli.core.tool_outcomes import Replied
from agent_cli.errors import NeedsInput
from agent_cli.providers.playbook import PlaybookModel
from agent_cli.providers.playbook.writes import customer_words
from agent_cli.runtime.answerers import refuse
from agent_cli.runtime.assemble import Runtime, build_tools, limits_for
from agent_cli.runtime.drive import drive
from agent_cli.store import record_reads
from agent_cli.store.samples import SAMPLE_DAY
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools.identity import CustomerSession
from agent_cli.tools.orders import AsOf

KAITO = "kaito.yamamoto@example.com"  # B200, pending: a ceramic mug, blue, by credit card
HARUKI = "haruki.sato@example.com"  # A100 (espresso machine, two mugs) and A106, delivered
MEI = "mei.watanabe@example.com"  # A105, delivered: a T-shirt (M, navy) and a hoodie


class Desk:
    """One customer conversation over a fresh sample store, the way `agent chat` runs it."""

    def __init__(self, *, approve: bool = True, dry_run: bool = False) -> None:
        self.store = OrderStore.in_memory()
        settings = Settings()
        session = CustomerSession()
        tools = build_tools(
            settings,
            lambda: self.store,
            RefundCounter(),
            dry_run=dry_run,
            as_of=AsOf(),
            identity=session,
            desk_clock=lambda: SAMPLE_DAY,  # the in-memory samples are dated for it
        )
        model = PlaybookModel()
        self.runtime = Runtime(
            settings=settings,
            model=model,
            tools=tools,
            limits=limits_for(settings, model.model),
            today=SAMPLE_DAY,
            refunds=RefundCounter(),
            mcp=None,
            as_of=AsOf(),
            instructions="",
            identity=session,
        )
        self.approve: Any = (lambda _: ApprovalVerdict(True, "operator")) if approve else refuse
        self.turns: tuple[Exchange, ...] = ()
        self.events: list[Event] = []

    def say(self, question: str, *replies: str, status: str = "answered") -> str:
        answers: Iterator[str] = iter(replies)
        events: list[Event] = []
        self.events = events  # kept when the run ends raising (a question nobody answers)
        drive(
            self.runtime.events(question, self.turns),
            [events.append],
            respond=lambda _: next(answers, None),
            approve=self.approve,
        )
        (finished,) = [e for e in events if isinstance(e, RunFinished)]
        assert finished.status == status, finished.error
        assert finished.answer is not None
        self.turns = (*self.turns, Exchange(question, finished.answer))
        return finished.answer

    def tools(self) -> list[str]:
        return [e.tool for e in self.events if isinstance(e, ToolObserved)]

    def asked(self) -> list[str]:
        return [
            str(e.args["question"])
            for e in self.events
            if isinstance(e, ToolObserved) and e.tool == "ask_user"
        ]

    def order(self, code: str) -> Any:
        found = record_reads.desk_order(self.store, code)
        assert found is not None
        return found


def test_a_cancel_is_proposed_confirmed_approved_and_made() -> None:
    desk = Desk()
    answer = desk.say(f"Please cancel my order B200. {KAITO}", "yes")
    assert desk.tools() == [
        "find_user_id_by_email",
        "get_order_details",
        "cancel_pending_order",
        "ask_user",
        "cancel_pending_order",
    ]
    (asked,) = desk.asked()
    # the change in the customer's words, its id (what their yes answers) and the amount
    assert asked == (
        "Here is the change (P1): cancel order B200; 5,400 JPY goes back the way it was paid. "
        "Shall I go ahead? Please answer yes or no."
    )
    assert answer.startswith("Done (change #1): cancel B200")
    order = desk.order("B200")
    assert order.status == "CANCELLED" and order.cancel_reason == "no longer needed"


def test_a_cancel_in_japanese_by_mistake() -> None:
    desk = Desk()
    answer = desk.say(f"B200を間違えて注文したのでキャンセルしてください。{KAITO}", "はい")
    assert desk.asked()[0].startswith("次の変更（P1）を行います：注文B200をキャンセルし、5,400円を")
    assert "cancel" not in desk.asked()[0]  # the customer reads their own language
    assert answer.startswith("変更しました（変更番号1）")
    assert desk.order("B200").cancel_reason == "ordered by mistake"


@pytest.mark.parametrize("reply", ["no", "yes, but ship it to my office", "いいえ", "not now"])
def test_no_yes_changes_nothing(reply: str) -> None:
    desk = Desk()
    answer = desk.say(f"Please cancel B200, {KAITO}", reply)
    assert desk.tools().count("cancel_pending_order") == 1  # proposed only
    assert "B200" in answer and (
        "not changed anything" in answer or "何も変更していません" in answer
    )
    assert desk.order("B200").status == "PENDING"


@pytest.mark.parametrize(
    ("unclear", "then", "made"), [("maybe", "no", False), ("大丈夫です", "はい", True)]
)
def test_words_that_may_decline_are_asked_again_in_plain_words(
    unclear: str, then: str, made: bool
) -> None:
    desk = Desk()
    desk.say(f"Please cancel B200, {KAITO}", unclear, then)
    again = desk.asked()[1]
    assert "P1" in again and ("To be sure" in again or "念のため" in again)
    assert (desk.order("B200").status == "CANCELLED") is made


def test_no_approval_no_change_and_the_answer_says_so() -> None:
    desk = Desk(approve=False)
    answer = desk.say(f"Please cancel B200, {KAITO}", "yes")
    assert answer.startswith("The change to B200 was not made:") and "not approved" in answer
    assert desk.order("B200").status == "PENDING"


def test_a_dry_run_says_what_would_change_and_changes_nothing() -> None:
    desk = Desk(dry_run=True)
    answer = desk.say(f"Please cancel B200, {KAITO}", "yes")
    assert answer.startswith("This is a dry run, so nothing was changed; the change would be:")
    assert desk.order("B200").status == "PENDING"


def test_without_an_email_it_asks_who_first_and_proposes_nothing() -> None:
    desk = Desk()
    answer = desk.say("Please cancel B200", "I'd rather not say")
    assert desk.tools() == ["ask_user"]
    assert "email address on your account" in answer
    assert desk.order("B200").status == "PENDING"


def test_another_customers_order_is_refused_as_missing() -> None:
    desk = Desk()
    answer = desk.say(f"Please cancel A100, {KAITO}")
    assert answer.startswith("I can't make that change to A100: order A100 is not the identified")
    assert "cancel_pending_order" not in desk.tools()


def test_a_new_shipping_address_written_in_the_question() -> None:
    desk = Desk()
    address = "4-5-6 Umeda, Kita-ku, Osaka 530-0001, Japan"
    answer = desk.say(f"Please ship B200 to {address}. {KAITO}", "yes")
    assert f"ship B200 to {address} instead of 6-1 Minatomirai" in answer
    shipped = desk.order("B200").address
    assert (shipped.address1, shipped.city, shipped.state, shipped.zip) == (
        "4-5-6 Umeda",
        "Kita-ku",
        "Osaka",
        "530-0001",
    )


def test_the_new_address_is_asked_for_in_japanese() -> None:
    desk = Desk()
    answer = desk.say(
        f"B200の住所を変更したいです。{KAITO}", "7-8 Sakae, Naka-ku, Aichi 460-0008, Japan", "はい"
    )
    assert desk.asked()[0].startswith("新しい住所を")
    assert answer.startswith("変更しました") and desk.order("B200").address.city == "Naka-ku"


def test_the_default_address_of_the_account() -> None:
    desk = Desk()
    new = "1-1 Marunouchi, Chiyoda-ku, Tokyo 100-0005, Japan"
    answer = desk.say(f"Please change my default address to {new}. alex.morgan@example.com", "y")
    assert "modify_user_address" in desk.tools() and answer.startswith("Done (change #1)")
    customer = record_reads.customer(desk.store, "alex_morgan_2001")
    assert customer is not None and customer.address.zip == "100-0005"


def test_a_payment_method_the_customer_does_not_have_is_refused_by_rule() -> None:
    desk = Desk()
    answer = desk.say(f"Can I pay for B200 with my gift card instead? {KAITO}")
    assert answer == (
        "I can't make that change to B200: you have no gift card on your account. "
        "Nothing was changed."
    )


def test_items_swapped_before_delivery_for_the_variant_named() -> None:
    desk = Desk()
    answer = desk.say(f"Please change the mug in B200 to white. {KAITO}", "yes")
    assert "change Ceramic Mug 1002002 (5,400 JPY) -> 1002001 (5,000 JPY) on B200" in answer
    assert "refund 400 JPY" in answer
    assert [item.item_id for item in desk.order("B200").items] == ["1002001"]


def test_an_unavailable_variant_is_refused_naming_the_rule() -> None:
    desk = Desk()
    answer = desk.say(f"Please change the mug in B200 to green. {KAITO}")
    assert answer.startswith("I can't make that change to B200: item 1002003 is not an available")
    assert [item.item_id for item in desk.order("B200").items] == ["1002002"]


def test_an_exchange_after_delivery_of_the_item_named() -> None:
    desk = Desk()
    answer = desk.say(f"I'd like to exchange the T-shirt in A105 for size L. {MEI}", "yes")
    assert "exchange_delivered_order_items" in desk.tools()
    assert "exchange T-Shirt 1008001 (4,900 JPY) -> 1008002 (4,900 JPY) on A105" in answer
    order = desk.order("A105")
    assert order.status == "EXCHANGE_REQUESTED" and order.exchange is not None


def test_a_return_of_the_items_named_only() -> None:
    desk = Desk()
    answer = desk.say(f"I want to return the mugs from A100. {HARUKI}", "yes")
    assert (
        "return 2 items of A100 (1002001, 1002001): 10,000 JPY back to credit_card_1001" in answer
    )
    returned = desk.order("A100").returned
    assert returned is not None and list(returned.items) == ["1002001", "1002001"]


def test_a_return_in_japanese_of_one_item() -> None:
    desk = Desk()
    answer = desk.say(f"A100のマグを1つ返品したいです。{HARUKI}", "はい")
    # one mug of two, its price back, in the customer's language (never the tool's line)
    said = "変更しました（変更番号1）：注文A100のCeramic Mugを返品し、5,000円を"
    assert answer == said + "元のお支払い方法に返金。"


def test_which_items_is_asked_when_none_is_named() -> None:
    desk = Desk()
    answer = desk.say(
        f"I want to return something from A100. {HARUKI}", "the espresso machine", "yes"
    )
    assert desk.asked()[0] == (
        "Which items of order A100 do you mean? It has: Espresso Machine, Ceramic Mug."
    )
    assert "return 1 item of A100 (1001001): 240,000 JPY" in answer


def test_can_i_return_it_leads_to_the_return_not_to_a_verdict_alone() -> None:
    """A refund asked for leads to what the shop allows (issue 49, point 3): whichever way the
    model reads "Can I return it for a refund?" (a refund, a return, or unsure between them),
    the return is on the table; a question of eligibility alone is answered as it always was."""
    from agent_cli.errors import NeedsInput

    with pytest.raises(NeedsInput, match=r"return the Hoodie from order A105; .* Shall I go ahead"):
        Desk().say("My order A105 arrived last week. Can I return it for a refund?", MEI, "Hoodie")
    assert "start the return" not in Desk().say("Is order A105 refundable?")


@pytest.mark.parametrize(("sending_back", "offered"), [(0.3, True), (0.2, True), (0.1, False)])
def test_a_refundable_verdict_offers_the_return_when_a_return_is_likely_too(
    monkeypatch: pytest.MonkeyPatch, sending_back: float, offered: bool
) -> None:
    from agent_cli.domain.intents import NAMES
    from agent_cli.language.intent_model import Reading
    from agent_cli.providers.playbook import model

    chances = dict.fromkeys(NAMES, 0.0) | {"refund": 1 - sending_back, "return": sending_back}
    reading = Reading("refund", 1 - sending_back, chances)
    monkeypatch.setattr(model.intents, "read", lambda text: reading)
    answer = Desk().say("Is order A105 refundable?")
    assert answer.startswith("Order A105 is refundable")
    assert ("I can start the return that sends the money back" in answer) is offered


@pytest.mark.parametrize(
    ("question", "listed"),
    [
        (f"I don't have my order number. My email is {HARUKI}", "- A100: DELIVERED (Espresso"),
        ("I forgot my order number. I'm Kaito Yamamoto, zip 220-0012", "- B200: PENDING (Ceramic"),
        (f"注文番号がわかりません。{MEI}", "A105（DELIVERED、T-Shirt, Hoodie）"),
    ],
)
def test_no_order_number_lists_the_customers_orders(question: str, listed: str) -> None:
    desk = Desk()
    answer = desk.say(question)
    assert listed in answer
    assert "get_user_details" in desk.tools()


def test_no_order_number_asks_for_the_email_or_name_and_zip() -> None:
    desk = Desk()
    answer = desk.say("I don't know my order number", "sorry, no idea")
    assert "(Or your first and last name and zip code.)" in desk.asked()[0]
    assert answer.startswith("I need the email address on your account")


def test_a_chat_remembers_the_order_and_the_customer() -> None:
    desk = Desk()
    first = desk.say(f"Where is my order A101? {'aoi.suzuki@example.com'}")
    assert desk.tools() == ["find_user_id_by_email", "track_order"]
    again = desk.say("and when will it arrive?")
    assert first.startswith("Order A101 is on its way") and again == first
    assert desk.tools() == ["track_order"]  # the customer is known: not identified again


def test_a_chat_carries_a_change_across_the_question_it_asked() -> None:
    desk = Desk()
    desk.say(f"I forgot my order number. {HARUKI}")
    answer = desk.say("Please return the rice cooker from A106", "yes")
    assert answer.startswith("Done (change #1): return 1 item of A106")


def test_a_payment_method_of_the_customers_own_is_proposed_and_made() -> None:
    desk = Desk()
    desk.store._db.execute(  # Kaito gets a gift card (the sample shop gives him one card)
        "INSERT INTO payment_methods VALUES ('kaito_yamamoto_1007', 'gift_card_1007', 1, "
        "'gift_card', NULL, NULL, 10000, 'JPY')"
    )
    desk.store._db.commit()
    answer = desk.say(f"Can I pay for B200 with my gift card instead? {KAITO}", "yes")
    calls = [e.args for e in desk.events if isinstance(e, ToolObserved) and e.tool.endswith("t")]
    assert {"order_id": "B200", "payment_method_id": "gift_card_1007"} in calls
    assert answer.startswith("Done (change #1)") and "gift_card_1007" in answer
    paid = [(p.kind, p.payment_method_id) for p in desk.order("B200").payments]
    assert ("payment", "gift_card_1007") in paid


def test_a_change_waiting_in_the_queue_says_so_and_changes_nothing() -> None:
    desk = Desk()
    desk.approve = lambda _: QUEUE
    answer = desk.say(f"Please cancel B200, {KAITO}", "yes", status="pending_approval")
    assert answer.startswith("Your change is waiting for a person's approval (#1); nothing is")
    assert answer.endswith(
        "cancel B200 (1 item; reason: no longer needed): refund 5,400 JPY to "
        "credit_card_1007 in 5-7 business days."
    )
    assert desk.order("B200").status == "PENDING"


def test_a_refusal_keeps_the_customers_advice_and_drops_the_agents() -> None:
    desk = Desk()
    answer = desk.say(f"Please change the mug in B200 to green. {KAITO}")
    assert "get_product_details" not in answer and "nothing was changed;" not in answer


def test_which_variant_is_asked_once_then_nothing_changes() -> None:
    desk = Desk()
    answer = desk.say(f"I'd like to exchange the mugs from A100. {HARUKI}", "hmm, not sure")
    (asked,) = desk.asked()
    assert asked == "Which Ceramic Mug would you like instead? Available: color white; color blue."
    assert answer == "All right: I have not changed anything on A100."
    assert desk.order("A100").exchange is None


def test_which_items_is_asked_once_then_nothing_changes() -> None:
    desk = Desk()
    answer = desk.say(f"I want to return something from A100. {HARUKI}", "whatever")
    assert len(desk.asked()) == 1 and answer == "All right: I have not changed anything on A100."


def test_a_change_without_an_order_asks_which_order_first() -> None:
    desk = Desk()
    with pytest.raises(NeedsInput):
        desk.say("Please cancel my order")
    (asked,) = [e.question for e in desk.events if isinstance(e, QuestionAsked)]
    assert desk.tools() == [] and asked.startswith("Which order is this about?")


def test_a_chat_turn_answering_the_desks_question_carries_on_its_change() -> None:
    desk = Desk()
    desk.turns = (
        Exchange(
            f"I want to return something from A100. {HARUKI}",
            "Which items of order A100 do you mean? It has: Espresso Machine, Ceramic Mug.",
        ),
    )
    answer = desk.say("the espresso machine", "yes")
    assert answer.startswith("Done (change #1): return 1 item of A100 (1001001)")
    desk.turns = (Exchange(f"I want to return something from A100. {HARUKI}", "Done."),)
    assert not desk.say("the espresso machine").startswith("Done")  # no question was open


def test_the_customers_words_of_a_reply_leave_the_desks_note_out() -> None:
    call = CallTool(tool=ASK_USER_TOOL, args={"question": "Shall I?"})
    noted = "yes\nplease\n(desk: the customer confirmed: x)"
    assert (
        customer_words(Step(1, call, noted, False, outcome=Replied("yes\nplease"))) == "yes\nplease"
    )
    typed = "(desk: typed by the customer)"
    assert customer_words(Step(1, call, typed, False, outcome=Replied(typed))) == typed
