"""A proposed change as the customer reads it (issue 49, points 5 and 6): their language, every
option that changes by name with its old and new value, the price difference, the amount that
goes back, and the proposal's id their yes answers; never the tool's operator line."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.core.decisions import CallTool
from agent_cli.domain.consent import Proposal, carries
from agent_cli.providers.playbook import shown as shown_module
from agent_cli.providers.playbook.shown import ENGLISH, JAPANESE, shown

ORDER = {  # get_order_details's record (tools/records.py), as the playbook reads it
    "order_id": "A105", "user_id": "u", "status": "DELIVERED", "total": 15800, "currency": "JPY",
    "items": [
        {"item_id": "1008001", "product_id": "P-TSHIRT", "name": "T-Shirt", "price": 4900,
         "options": {"size": "M", "color": "navy"}},
        {"item_id": "1009001", "product_id": "P-HOODIE", "name": "Hoodie", "price": 10900,
         "options": {"size": "L"}},
    ],
}  # fmt: skip
PRODUCT = {  # get_product_details's
    "product_id": "P-TSHIRT", "name": "T-Shirt",
    "variants": [
        {"item_id": "1008001", "available": True, "price": 4900, "currency": "JPY",
         "options": {"size": "M", "color": "navy"}},
        {"item_id": "1008002", "available": True, "price": 4900, "currency": "JPY",
         "options": {"size": "L"}},
        {"item_id": "1008003", "available": True, "price": 5400, "currency": "JPY",
         "options": {"size": "XL", "color": "black"}},
    ],
}  # fmt: skip


def swap(new: str, tool: str = "exchange_delivered_order_items") -> CallTool:
    args = {"order_id": "A105", "item_ids": ["1008001"], "new_item_ids": [new]}
    return CallTool(tool=tool, args={**args, "payment_method_id": "gift_card_1"})


@pytest.mark.parametrize(
    ("call", "words", "said"),
    [
        (
            swap("1008002"),
            ENGLISH,
            "exchange the T-Shirt from order A105: size M to L, and colour navy to none; "
            "the same price",
        ),
        (
            swap("1008003", "modify_pending_order_items"),
            ENGLISH,
            "change the T-Shirt in order A105: size M to XL, and colour navy to black; "
            "500 JPY more to pay",
        ),
        (
            swap("1008003"),
            JAPANESE,
            "注文A105のT-Shirtを交換（サイズ：M→XL、色：紺→黒）、差額500円のお支払い",
        ),
        (
            CallTool(tool="cancel_pending_order", args={"order_id": "A105", "reason": "x"}),
            JAPANESE,
            "注文A105をキャンセルし、15,800円を元のお支払い方法に返金",
        ),
        (
            CallTool(
                tool="return_delivered_order_items",
                args={"order_id": "A105", "item_ids": ["1008001", "1009001"]},
            ),
            ENGLISH,
            "return the T-Shirt, and Hoodie from order A105; 15,800 JPY goes back the way it "
            "was paid",
        ),
        (
            CallTool(
                tool="modify_pending_order_payment",
                args={"order_id": "A105", "payment_method_id": "paypal_9"},
            ),
            JAPANESE,
            "注文A105のお支払いをPayPalに変更",
        ),
        (
            CallTool(
                tool="modify_user_address",
                args={
                    "address1": "1-1 Marunouchi",
                    "city": "Chiyoda-ku",
                    "state": "Tokyo",
                    "zip": "100-0005",
                    "country": "Japan",
                },
            ),
            ENGLISH,
            "make 1-1 Marunouchi, Chiyoda-ku, Tokyo 100-0005, Japan your account's address",
        ),
    ],
)
def test_a_change_in_the_customers_words(
    call: CallTool, words: shown_module.Shown, said: str
) -> None:
    text = shown(call, ORDER, PRODUCT, words)
    assert text is not None and text.startswith(said)
    assert "1008001" not in text and "gift_card" not in text  # no operator's ids


@pytest.mark.parametrize(
    "call",
    [
        swap("9999999"),  # a variant the product record does not hold
        CallTool(tool="return_delivered_order_items", args={"order_id": "A105", "item_ids": ["x"]}),
        CallTool(tool="calculate", args={"expression": "1+1"}),
    ],
)
def test_what_cannot_be_said_is_none_and_the_tools_line_is_quoted(call: CallTool) -> None:
    assert shown(call, ORDER, PRODUCT, ENGLISH) is None


def test_a_variant_or_an_item_the_records_lack_is_not_guessed() -> None:
    assert shown(swap("1008002"), ORDER, {"variants": []}, ENGLISH) is None
    assert shown(swap("1008002"), {"items": []}, PRODUCT, ENGLISH) is None


def test_the_question_names_the_proposal_its_yes_answers() -> None:
    question = ENGLISH.ask.format(shown="cancel order B200", id="P3")
    assert carries(question, Proposal("P3", "k", "d", "cancel B200 (1 item): refund 5,400 JPY"))
    assert not carries(question, Proposal("P4", "k", "d", "cancel B200"))


@pytest.mark.parametrize(
    ("question", "yes", "asked"),
    [
        (
            "A105のTシャツをLサイズに交換したいです。mei.watanabe@example.com",
            "はい",
            "次の変更（P1）を行います：注文A105のT-Shirtを交換（サイズ：M→L、色：紺→なし）、価格は同じ。",
        ),
        (
            "Please change the mug in B200 to white. kaito.yamamoto@example.com",
            "yes",
            "Here is the change (P1): change the Ceramic Mug in order B200: colour blue to white; "
            "400 JPY back to you.",
        ),
    ],
)
def test_the_playbook_puts_the_change_to_the_customer_in_their_words(
    question: str, yes: str, asked: str
) -> None:
    argv = ["chat", "--dry-run", "--today", "2026-10-13"]
    env = {"AGENT_TODAY": "2026-10-13"}  # the writes' return window is judged on it too
    result = CliRunner().invoke(app, argv, input=f"{question}\n{yes}\n", env=env)
    assert result.exit_code == 0, result.output
    assert f"? {asked}" in result.stdout


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (
            CallTool(
                tool="modify_pending_order_address",
                args={
                    "order_id": "B200",
                    "address1": "4-5-6 Umeda",
                    "address2": "Apt 3",
                    "city": "Kita-ku",
                    "state": "Osaka",
                    "zip": "530-0001",
                    "country": "Japan",
                },
            ),
            "send order B200 to 4-5-6 Umeda, Apt 3, Kita-ku, Osaka 530-0001, Japan",
        ),
        (
            CallTool(
                tool="modify_pending_order_payment",
                args={"order_id": "B200", "payment_method_id": "credit_card_1007"},
            ),
            "pay for order B200 with your credit card",
        ),
        (
            CallTool(
                tool="modify_pending_order_payment",
                args={"order_id": "B200", "payment_method_id": "store_credit_5"},
            ),
            "pay for order B200 with your store_credit",  # a kind we have no words for: as is
        ),
    ],
)
def test_an_address_and_a_method_in_words(call: CallTool, said: str) -> None:
    assert shown(call, ORDER, PRODUCT, ENGLISH) == said


def test_a_return_whose_price_cannot_be_read_is_not_said() -> None:
    hoodie = {**ORDER["items"][1], "price": None}  # type: ignore[index]
    unpriced = {**ORDER, "items": [ORDER["items"][0], hoodie]}  # type: ignore[index]
    call = CallTool(
        tool="return_delivered_order_items", args={"order_id": "A105", "item_ids": ["1009001"]}
    )
    assert shown(call, unpriced, PRODUCT, ENGLISH) is None
    assert shown(call, ORDER, PRODUCT, ENGLISH) is not None


@pytest.mark.parametrize(
    ("rule", "said"),
    [
        (
            "order A105 was delivered 2026-10-06, 62 days ago; returns and exchanges are "
            "accepted within 30 days of delivery",
            "注文A105は2026-10-06にお届け済み（62日前）で、返品・交換はお届けから30日以内のみ承っています",
        ),
        (
            "order A100 is delivered; only a pending order can be changed or cancelled: once it "
            "is delivered, the customer can return or exchange items",
            "注文A100は発送準備中ではないため、変更やキャンセルはできません（お届け後は返品・交換を承ります）",
        ),
        (
            "order B200 is pending; only a delivered order's items can be returned or exchanged",
            "注文B200はお届け前か、すでに返品・交換済みのため、返品・交換はできません",
        ),
        (
            "order B201's items were changed already, and an order is changed once",
            "注文B201は商品の変更が済んでいるため、これ以上の変更やキャンセルはできません",
        ),
        ("order C300 is cancelled; nothing more can be done", "注文C300はキャンセル済みのため"),
        ("a rule we have no words for", "a rule we have no words for"),  # as the tool said it
    ],
)
def test_the_desks_refusals_in_japanese(rule: str, said: str) -> None:
    from agent_cli.providers.playbook.rules_ja import in_japanese

    assert in_japanese(rule).startswith(said)


def test_a_japanese_customer_reads_a_refusal_and_a_denial_in_japanese() -> None:
    runner = CliRunner()
    refused = runner.invoke(
        app, ["chat", "--dry-run"], input="A100をキャンセルしてください。haruki.sato@example.com\n"
    )
    answer = refused.stdout.split("Answer:")[-1]
    assert "注文A100は発送準備中ではないため、変更やキャンセルはできません" in answer
    assert "only a pending order" not in answer
    env = {"AGENT_TODAY": "2026-10-13"}
    question = "A105のTシャツをLサイズに交換したいです。mei.watanabe@example.com\nはい\n"
    argv = ["chat", "--today", "2026-10-13"]
    denied = runner.invoke(app, [*argv, "--dry-run"], input=question, env=env)
    answer = denied.stdout.split("Answer:")[-1]
    assert "担当者の承認が得られませんでした。何も変更していません。" in answer
    assert "exchange T-Shirt" not in answer  # the tool's line is the operator's
    queued = runner.invoke(app, argv, input=question, env=env)  # no terminal: it waits
    answer = queued.stdout.split("Answer:")[-1]
    assert "承認待ちです（#1）。まだ何も変更されていません：注文A105のT-Shirtを交換" in answer
