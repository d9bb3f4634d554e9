"""The offline playbook's answers through the CLI: a follow-up answered as the question before, a
double charge handed over with the customer and order on the ticket, the step limit that fits a
whole exchange, a customer told nothing was changed at a limit, a refund found in a τ² order's
payment history."""

from __future__ import annotations

import json

import pytest


def test_an_expired_order_it_did_not_understand_is_answered_grounded() -> None:
    from typer.testing import CliRunner

    from agent_cli.cli import app

    result = CliRunner().invoke(app, ["ask", "A100?", "--dry-run", "--today", "2027-01-01"])
    assert result.exit_code == 0, result.output
    assert "Order A100 is delivered." in result.stdout


@pytest.mark.parametrize(
    ("question", "no", "said"),
    [
        (
            "Please change my default address to 1-1 Marunouchi, Chiyoda-ku, Tokyo 100-0005, "
            "Japan. alex.morgan@example.com",
            "no",
            "I have not changed anything on your account",
        ),
        (
            "登録住所を1-1 Marunouchi, Chiyoda-ku, Tokyo 100-0005, Japanに変更してください。"
            "alex.morgan@example.com",
            "いいえ",
            "ご登録情報は何も変更していません",
        ),
    ],
)
def test_an_accounts_change_is_said_to_the_customer_without_its_id(
    question: str, no: str, said: str
) -> None:
    """What the customer reads names their account in words, never its id (issue 49, 6)."""
    from typer.testing import CliRunner

    from agent_cli.cli import app

    result = CliRunner().invoke(app, ["chat", "--dry-run"], input=f"{question}\n{no}\n")
    assert result.exit_code == 0, result.output
    assert said in result.stdout
    answer = result.stdout.split("Answer:")[-1]  # the answer, not the tool lines above it
    assert said in answer and "alex_morgan_2001" not in answer


def test_where_is_my_refund_reads_a_tau2_orders_payment_history() -> None:
    """τ²-bench's orders keep their refunds in the payment history: "where is my refund?"
    says what went back, never "no refund yet" (issue 49, point 7)."""
    from pathlib import Path

    from typer.testing import CliRunner

    from agent_cli.cli import app

    fixture = Path(__file__).parents[1] / "fixtures" / "tau2-retail-small.json"
    runner = CliRunner()
    imported = runner.invoke(app, ["orders", "import", "--format", "tau2", str(fixture)])
    assert imported.exit_code == 0, imported.output
    result = runner.invoke(app, ["ask", "Where is my refund for #W4140680?", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "1,048.51 USD has been refunded so far" in result.stdout
    assert "no refund yet" not in result.stdout


def test_a_double_charge_hands_over_with_the_customer_and_order_on_the_ticket() -> None:
    """The customer and the order they gave are found before the hand-over, so the person who
    picks the ticket up has them (issue 49, point 7); nothing is asked for first."""
    from typer.testing import CliRunner

    from agent_cli.cli import app

    runner = CliRunner()
    said = runner.invoke(app, ["ask", "I was charged twice for A100. haruki.sato@example.com"])
    assert said.exit_code == 6, said.output  # handed over
    assert "About order A100: I have passed this to a person" in said.stdout
    tickets = runner.invoke(app, ["tickets", "list"]).stdout.splitlines()[1:]
    assert [line.split("\t")[2:4] for line in tickets] == [["haruki_sato_1001", "A100"]]
    plain = runner.invoke(app, ["ask", "Can I talk to a human?"])
    assert plain.exit_code == 6 and "About order" not in plain.stdout


@pytest.mark.parametrize(
    ("question", "said"),
    [
        (
            "I'd like to exchange the T-shirt in A105 for size L. mei.watanabe@example.com",
            "I could not finish this here (order A105), so nothing was changed.",
        ),
        (
            "A105のTシャツをLサイズに交換したいです。mei.watanabe@example.com",
            "注文A105について、ここでは手続きを完了できなかったため、何も変更していません。",
        ),
    ],
)
def test_at_the_step_limit_in_a_flow_the_customer_is_told_nothing_was_changed(
    question: str, said: str
) -> None:
    from typer.testing import CliRunner

    from agent_cli.cli import app

    argv = ["ask", question, "--dry-run", "--max-steps", "3", "--today", "2026-10-13"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 3  # a limit, as documented
    assert said in result.stdout


def test_the_default_step_limit_fits_a_whole_exchange_with_both_questions() -> None:
    """Which item, which variant, the customer's yes: an ordinary flow the limit must not cut
    (issue 49, point 7)."""
    from typer.testing import CliRunner

    from agent_cli.cli import app

    question = "I'd like to exchange something from A105. mei.watanabe@example.com"
    replies = "The T-shirt\nsize L\nyes\n"
    result = CliRunner().invoke(
        app, ["chat", "--dry-run", "--today", "2026-10-13"], input=f"{question}\n{replies}"
    )
    assert result.exit_code == 0, result.output
    assert "max_steps" not in result.stdout


def test_a_hand_over_with_an_email_nobody_has_reads_no_order() -> None:
    from typer.testing import CliRunner

    from agent_cli.cli import app

    argv = ["ask", "I was charged twice for A100. nobody@example.com", "--json"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 6, result.output
    called = [line for line in result.stdout.splitlines() if '"event":"observation"' in line]
    tools = [json.loads(line)["tool"] for line in called]
    assert tools == ["find_user_id_by_email", "transfer_to_human_agents"]


def test_chat_answers_a_follow_up_as_the_question_before() -> None:
    from typer.testing import CliRunner

    from agent_cli.cli import app

    result = CliRunner().invoke(
        app,
        ["chat", "--dry-run", "--today", "2026-10-13"],
        input="Is A100 refundable?\nwhat about A103?\nA101は？\n",
    )
    assert result.exit_code == 0, result.output
    assert "Order A103 is not refundable" in result.stdout
    assert "A101" in result.stdout and "返金" in result.stdout
