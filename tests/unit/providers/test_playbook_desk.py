"""The offline playbook's "where is my order?": the customer identified by their email (from
the question, or asked for), each order tracked, the answer from the tool's record, in English
or Japanese; never another customer's order."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

import agent_cli
from agent_cli.cli import app
from agent_cli.core.budget import Limits
from agent_cli.core.events import RunFinished
from agent_cli.core.loop import run
from agent_cli.providers.playbook import PlaybookModel
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools import ToolRegistry
from agent_cli.tools.desk import desk_tools
from agent_cli.tools.identity import CustomerSession
from tests.helpers import TODAY, converse

runner = CliRunner()


def ask(question: str) -> tuple[int, list[dict[str, Any]], str]:
    result = runner.invoke(app, ["ask", question, "--dry-run", "--json", "--today", "2026-10-13"])
    events = [json.loads(line) for line in result.stdout.splitlines()]
    return result.exit_code, events, result.stderr


@pytest.mark.parametrize(
    ("question", "said"),
    [
        (
            "Where is my order A101? My email is aoi.suzuki@example.com",
            "Order A101 is on its way with Yamato Transport (tracking number 4912-3456-7890).",
        ),
        (
            "A101はいつ届きますか？メールはaoi.suzuki@example.comです",
            "注文A101はYamato Transportで配送中です（追跡番号4912-3456-7890）。",
        ),
        (
            "Where is my order B200? kaito.yamamoto@example.com",
            "Order B200 has not shipped yet (status PENDING); it has no tracking number.",
        ),
        (
            "Where is my order A100? haruki.sato@example.com",  # no shipment on record
            "Order A100 was delivered on 2026-10-01 (status DELIVERED).",
        ),
        (
            "A100はどこですか？haruki.sato@example.com",
            "注文A100は2026-10-01にお届け済みです（ステータスDELIVERED）。",
        ),
        (
            "Where is my order A102? ren.takahashi@example.com",
            "Order A102 was cancelled, so it will not ship.",
        ),
        (
            "Where is my order A100? kaito.yamamoto@example.com",  # Haruki Sato's order
            "I could not find order A100 on your account; please check the order code.",
        ),
        (
            "Where is my order A101? nobody@example.com",
            "I could not find an account with that email address; please check it.",
        ),
    ],
)
def test_where_is_my_order_offline(question: str, said: str) -> None:
    code, events, stderr = ask(question)
    assert code == 0, stderr
    answer = events[-1]["answer"]
    assert answer.startswith(said), answer
    assert "refundable" not in answer and "返金" not in answer


def test_the_answer_gives_the_last_event_and_the_estimated_delivery() -> None:
    code, events, _ = ask("Where is my order A101? aoi.suzuki@example.com")
    assert code == 0
    tracked = next(e["observation"] for e in events if e.get("tool") == "track_order")
    answer = events[-1]["answer"]
    eta = tracked.split("estimated_delivery=")[1].split()[0]
    assert f"Estimated delivery: {eta}." in answer and "Latest update, " in answer


def test_without_an_email_it_asks_for_one_and_looks_nothing_up() -> None:
    code, events, stderr = ask("Where is my order A101?")
    assert code == 4 and "what is the email address on your account?" in stderr
    assert not [e for e in events if e["event"] == "observation"]


def test_the_email_given_in_reply_identifies_the_customer(tmp_path: Any) -> None:
    store = OrderStore.open(tmp_path / "orders.db")
    session = CustomerSession()
    tools = ToolRegistry(desk_tools(lambda: store, session))
    events = converse(
        run(
            "Where is my order A101?",
            PlaybookModel(),
            tools,
            limits=Limits(max_steps=8),
            today=TODAY,
        ),
        "It's aoi.suzuki@example.com",
    )
    (finished,) = [e for e in events if isinstance(e, RunFinished)]
    assert finished.answer is not None and finished.answer.startswith("Order A101 is on its way")
    assert session.customer_id == "aoi_suzuki_1002"


@pytest.mark.parametrize(
    ("question", "said"),
    [
        (
            "Where is my refund for A106?",
            "Order A106: 20,000 JPY has been refunded so far; 40,000 JPY of its 60,000 JPY total "
            "is left to refund.",
        ),
        ("How much is left to refund on A106?", "40,000 JPY of its 60,000 JPY total is left"),
        ("A106の返金はどうなっていますか？", "合計60,000円のうち40,000円が未返金です。"),
        (
            "Where is my refund for A100?",
            "Order A100 has had no refund yet; its total is 250,000 JPY.",
        ),
    ],
)
def test_where_is_my_refund_says_what_was_refunded_and_what_is_left(
    question: str, said: str
) -> None:
    code, events, stderr = ask(question)
    assert code == 0, stderr
    answer = events[-1]["answer"]
    assert said in answer and "250,000 JPY is left" not in answer


def test_a_refund_question_is_still_a_verdict() -> None:
    code, events, _ = ask("Is order A106 refundable?")
    assert code == 0 and events[-1]["answer"].startswith("Order A106 is refundable")


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("I was charged twice for order A100", "please reply with your email address"),
        ("I want to talk to a person, please", "please reply with your email address"),
        ("A100で二重請求されました", "担当者に引き継ぎました"),
    ],
)
def test_what_the_desk_cannot_do_is_handed_over_with_a_ticket(question: str, said: str) -> None:
    result = runner.invoke(app, ["ask", question, "--json"])
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.exit_code == 6, result.output  # handed over
    assert [e["tool"] for e in events if e["event"] == "observation"] == [
        "transfer_to_human_agents"
    ]
    assert said in events[-1]["answer"]
    ticket = json.loads(runner.invoke(app, ["tickets", "show", "1", "--json"]).stdout)
    assert question in ticket["summary"]


def test_a_hand_over_promises_only_the_way_a_person_can_reach_the_customer() -> None:
    """No email known: the desk asks for one (above); an identified customer (an email on
    record): by email; a kept conversation: a person answers in it."""
    result = runner.invoke(
        app, ["ask", "Please get me a person, I'm noah.kim@example.com", "--json"]
    )
    assert result.exit_code == 6, result.output
    answer = json.loads(result.stdout.splitlines()[-1])["answer"]
    assert "a colleague will follow up with you by email" in answer
    conversation = agent_cli.Conversation.start(today="2026-10-13")
    turn = conversation.say("I want to talk to a person, please")
    assert turn.status == "handed_over"
    assert "a colleague will answer you here" in turn.replies[0].text
    assert "email" not in turn.replies[0].text


def test_a_dry_run_hand_over_says_no_ticket_was_opened() -> None:
    result = runner.invoke(app, ["ask", "I was charged twice for A100", "--dry-run", "-q"])
    assert result.exit_code == 0 and "no ticket was opened" in result.stdout, result.output
    assert "follow up" not in result.stdout


def test_a_tau2_order_with_no_carrier_is_tracked_without_naming_one() -> None:
    """τ²'s orders name no carrier: the record says `carrier=none`, and the answer says the
    order is on its way with its tracking number, never "with unknown"."""
    from pathlib import Path

    fixture = Path(__file__).parents[2] / "fixtures" / "tau2-retail-small.json"
    imported = runner.invoke(app, ["orders", "import", str(fixture), "--format", "tau2"])
    assert imported.exit_code == 0 and "have no delivery dates and no carriers" in imported.stderr
    code, events, _ = ask("Where is my order #W6310710? anya.garcia2061@example.com")
    assert code == 0
    tracked = [e for e in events if e.get("tool") == "track_order" and "observation" in e]
    assert "carrier=none tracking=951786982868" in tracked[-1]["observation"]
    answer = events[-1]["answer"]
    assert answer == "Order W6310710 is on its way (tracking number 951786982868)."
    assert "unknown" not in answer


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("Where is my refund for Z999?", "Order Z999 was not found; please check the order code."),
        ("Z999の返金はどうなっていますか？", "注文Z999は見つかりませんでした。"),
    ],
)
def test_the_refund_status_of_an_order_not_found_says_so(question: str, said: str) -> None:
    """An order the lookup did not find has no refund to report: the answer says it was not
    found, never "no refund yet" nor an amount."""
    code, events, stderr = ask(question)
    assert code == 0, stderr
    answer = events[-1]["answer"]
    assert answer.startswith(said), answer
    assert "no refund" not in answer and "JPY" not in answer and "返金はまだ" not in answer
