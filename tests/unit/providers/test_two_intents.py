"""Two questions in one message (issue 41, point 1): each part answered in turn, with its own
tools, the answers in the order asked; a sentence of no intent (an email) goes with each part
that needs it; one question stays one part."""

from __future__ import annotations

import pytest

from agent_cli.providers.playbook.parts import intent_of, parts
from tests.unit.providers.test_playbook_writes import Desk


@pytest.mark.parametrize(
    ("goal", "expected"),
    [
        ("Is order A100 refundable?", ["Is order A100 refundable?"]),
        (
            "Where is my order A101? My email is aoi.suzuki@example.com",
            ["Where is my order A101? My email is aoi.suzuki@example.com"],
        ),
        (
            "Where is my order A101, and how long does shipping take to Osaka? a@example.com",
            ["Where is my order A101 a@example.com", "how long does shipping take to Osaka?"],
        ),
        (
            "Is order A106 refundable? And where is my refund for it?",
            ["Is order A106 refundable?", "And where is my refund for it? A106"],
        ),
        ("Is A100 refundable, and is A101?", ["Is A100 refundable, and is A101?"]),  # one intent
        (
            "A101はいつ届きますか？それと、保証について教えてください。a@example.com",
            ["A101はいつ届きますか？ a@example.com", "保証について教えてください。"],
        ),
    ],
)
def test_a_message_is_split_into_one_question_per_intent(goal: str, expected: list[str]) -> None:
    assert parts(goal) == expected


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("I was charged twice", "handover"),
        ("I forgot my order number", "orders"),
        ("Please cancel B200", "cancel"),
        ("Where is my refund for A106?", "refund_status"),
        ("Where is my order A101?", "status"),
        ("How long does shipping take?", "help"),
        ("Is A100 refundable?", "refund"),
        ("About A100, please", "refund"),  # an order named: the seed's question
        ("I love refunds", "refund"),
        ("My email is a@example.com", None),
    ],
)
def test_each_part_has_its_intent(text: str, intent: str | None) -> None:
    assert intent_of(text) == intent


def test_tracking_and_a_help_question_both_answered_in_order() -> None:
    desk = Desk()
    answer = desk.say(
        "Where is my order A101, and how long does shipping take to Osaka? aoi.suzuki@example.com"
    )
    first, second = answer.split("\n")
    assert first.startswith("Order A101 is on its way") and second.endswith("[shipping-times]")
    assert desk.tools() == ["find_user_id_by_email", "track_order", "search_help"]


def test_a_verdict_and_where_the_refund_is() -> None:
    desk = Desk()
    answer = desk.say("Is order A106 refundable? And where is my refund for it?")
    verdict, status = answer.split("\n")
    assert verdict.startswith("Order A106 is refundable") and "40,000 JPY" in verdict
    assert status.startswith("Order A106: 20,000 JPY has been refunded so far")


def test_a_change_and_a_question_the_change_is_made_once() -> None:
    desk = Desk()
    answer = desk.say(
        "Please cancel B200 and tell me how long refunds take to arrive. "
        "kaito.yamamoto@example.com",
        "yes",
    )
    done, refunds = answer.split("\n")
    assert done.startswith("Done (change #1): cancel B200") and refunds.endswith("[refund-methods]")
    assert desk.tools().count("cancel_pending_order") == 2  # proposed, then made
    assert desk.order("B200").status == "CANCELLED"


def test_two_intents_in_japanese_one_answer() -> None:
    desk = Desk()
    answer = desk.say(
        "A101はいつ届きますか？それと、保証について教えてください。aoi.suzuki@example.com"
    )
    assert answer.startswith("注文A101はYamato Transportで配送中です") and answer.endswith(
        "[warranty]"
    )
    assert "\n" not in answer


@pytest.mark.parametrize(
    ("goal", "expected"),
    [
        (
            "My parcel A101 hasn't turned up yet. Also, what's your warranty on kettles?",
            ["My parcel A101 hasn't turned up yet.", "Also, what's your warranty on kettles?"],
        ),
        (
            "Please call off B200. And how long do refunds take to show up?",
            ["Please call off B200.", "And how long do refunds take to show up?"],
        ),
        # a date said before the question is context, not a request of its own (the intent
        # model reads 「本日は2026-10-13です。」 as an address at 0.99: it does not split here)
        (
            "本日は2026-10-13です。注文A101は返金できますか？",
            ["本日は2026-10-13です。注文A101は返金できますか？"],
        ),
        ("Today is 2026-10-13. Is A101 refundable?", ["Today is 2026-10-13. Is A101 refundable?"]),
    ],
)
def test_requests_in_other_words_are_split_and_a_date_is_context(
    goal: str, expected: list[str]
) -> None:
    assert parts(goal) == expected
