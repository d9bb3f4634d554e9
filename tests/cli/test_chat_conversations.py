"""`agent chat` speaks in a conversation kept in the store (issue 52): what `agent conversations`
shows of it, what `--continue` / `--session` take up (the customer identified included), a
session from before conversations were kept, /reset, dry runs, interruptions; and eval
conversations kept in the case's store."""

from __future__ import annotations

import json
import os
import time
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from agent_cli.cli import app
from agent_cli.commands.chat import INTERRUPTED, Session
from agent_cli.core.decisions import Usage
from agent_cli.core.events import Event, RunFinished
from agent_cli.evaluation.conversation import ScriptedCustomer, converse
from agent_cli.record.recorder import RunRecorder
from agent_cli.runtime.answerers import refuse
from agent_cli.runtime.assemble import open_runtime
from agent_cli.runtime.conversation import exchanges_of
from agent_cli.runtime.options import RunOptions
from agent_cli.store import conversations as stored
from agent_cli.store.sqlite import OrderStore
from tests.cli.test_logs import _started
from tests.contract.test_conversations import _m

runner = CliRunner()
TODAY = ("--today", "2026-10-13")
EMAIL = "aoi.suzuki@example.com"


def agent(*argv: str, stdin: str | None = None) -> Result:
    return runner.invoke(app, list(argv), input=stdin)


def chat(lines: str, *args: str) -> Result:
    result = agent("chat", *TODAY, *args, stdin=lines)
    assert result.exit_code in (0, 1), result.output
    return result


def conversations() -> list[dict[str, Any]]:
    listed = agent("conversations", "list", "--json")
    assert listed.exit_code == 0, listed.output
    return [json.loads(line) for line in listed.stdout.splitlines()]


def shown(conversation: str) -> list[tuple[str, str, str]]:
    """The conversation's messages as (role, kind, text)."""
    result = agent("conversations", "show", conversation, "--json")
    assert result.exit_code == 0, result.output
    return [(m["role"], m["kind"], m["text"]) for m in json.loads(result.stdout)["messages"]]


def test_a_chat_session_is_a_conversation_in_the_store_under_the_logs_session_id() -> None:
    chat("Is A100 refundable?\n")
    (conversation,) = conversations()
    assert conversation["channel"] == "chat" and conversation["status"] == "open"
    messages = shown(conversation["id"])
    assert [(role, kind) for role, kind, _ in messages] == [
        ("customer", "message"),
        ("desk", "answer"),
    ]
    assert messages[0][2] == "Is A100 refundable?" and "Order A100 is refundable" in messages[1][2]
    logged = agent("logs", "list", "--kind", "chat", "--json")
    assert [json.loads(line)["session_id"] for line in logged.stdout.splitlines()] == [
        conversation["id"]
    ]


def test_answers_typed_at_the_reply_prompt_are_kept_in_order() -> None:
    chat("Is my order refundable?\na100\n")
    (conversation,) = conversations()
    assert [(role, kind) for role, kind, _ in shown(conversation["id"])] == [
        ("customer", "message"),
        ("desk", "question"),
        ("customer", "message"),
        ("desk", "answer"),
    ]
    assert shown(conversation["id"])[2][2] == "a100"


def test_continue_takes_up_the_customer_the_session_identified() -> None:
    first = chat(f"Which orders do I have? I am {EMAIL}\n")
    assert "A101" in first.stdout
    (conversation,) = conversations()
    assert conversation["customer"] == "aoi_suzuki_1002"
    again = chat("Which orders do I have?\n", "--continue")
    assert f"Continuing session {conversation['id'][:8]}: 1 of 1 turns remembered" in again.stdout
    assert "find_user_id_by_email" not in again.stdout and "A101" in again.stdout
    fresh = chat("Which orders do I have?\n")  # a new session knows nobody: it asks
    assert "email" in fresh.stdout.lower() and "A101" not in fresh.stdout
    assert len(conversations()) == 2


def test_continue_takes_the_newest_session_even_in_the_same_second() -> None:
    for code in ("A100", "A101", "A102"):
        chat(f"Is {code} refundable?\n")
    (newest,) = [c for c in conversations() if shown(c["id"])[0][2] == "Is A102 refundable?"]
    again = chat("/history\n", "--continue")
    assert f"Continuing session {newest['id'][:8]}" in again.stdout


def test_a_question_left_unanswered_is_the_conversations_last_word_and_status() -> None:
    chat("Where is order A101?\n")  # the desk asks for the email; the input ends
    (conversation,) = conversations()
    assert conversation["status"] == "awaiting_customer"
    assert shown(conversation["id"])[-1][:2] == ("desk", "question")


def test_reset_starts_a_new_conversation_and_leaves_the_one_before_as_it_was() -> None:
    chat(f"Which orders do I have? I am {EMAIL}\n/reset\nIs A100 refundable?\n")
    both = conversations()
    (older,) = [c for c in both if c["customer"] == "aoi_suzuki_1002"]
    (newest,) = [c for c in both if c["customer"] is None]
    assert [text for role, _, text in shown(newest["id"]) if role == "customer"] == [
        "Is A100 refundable?"
    ]
    sessions = agent("logs", "list", "--kind", "chat", "--json").stdout.splitlines()
    assert {json.loads(line)["session_id"] for line in sessions} == {newest["id"], older["id"]}


def test_a_dry_run_keeps_no_conversation() -> None:
    chat("Is A100 refundable?\n", "--dry-run")
    assert conversations() == []


def test_a_closed_conversation_is_not_taken_up() -> None:
    chat("Is A100 refundable?\n")
    (conversation,) = conversations()
    assert agent("conversations", "close", conversation["id"]).exit_code == 0
    named = agent("chat", *TODAY, "--session", conversation["id"][:8], stdin="Hi\n")
    assert named.exit_code == 2 and "is closed" in named.stderr
    assert "No earlier session to continue" in chat("Hi\n", "--continue").stdout


def test_an_unknown_session_is_a_usage_error_naming_where_to_look() -> None:
    result = agent("chat", *TODAY, "--session", "zzzz", stdin="Hi\n")
    assert result.exit_code == 2 and "Chat session 'zzzz' is no session" in result.stderr


def _log_path() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "agent-cli" / "runs.db"


def _logged_turn(session: str, run_id: str, question: str, answer: str) -> None:
    """A chat turn as the run log kept it before conversations were kept in the store."""
    recorder = RunRecorder(_log_path(), kind="chat", session_id=session, warn=pytest.fail)
    started = replace(_started(run_id, question), provider="offline", model="playbook")
    recorder(started)
    recorder(
        RunFinished(
            run_id=run_id,
            status="answered",
            answer=answer,
            steps=1,
            usage=Usage(),
            elapsed_ms=5.0,
            ts=time.time(),
        )
    )
    recorder.close()


def test_a_session_logged_before_conversations_were_kept_is_taken_up_once() -> None:
    session = "ab" * 16
    _logged_turn(session, "01" * 16, "Is A100 refundable?", "Yes, A100 is refundable.")
    first = chat("And A101?\n", "--session", session[:8])
    assert f"Continuing session {session[:8]}: 1 of 1 turns remembered" in first.stdout
    assert [text for _, _, text in shown(session)][:2] == [
        "Is A100 refundable?",
        "Yes, A100 is refundable.",
    ]
    again = chat("Thanks\n", "--continue")
    assert f"Continuing session {session[:8]}: 2 of 2 turns remembered" in again.stdout
    assert len(conversations()) == 1  # taken up once, then found in the store


def test_an_interrupted_turn_leaves_a_notice_so_the_next_turn_does_not_read_it_again() -> None:
    options = RunOptions(today=None, dry_run=False)
    with ExitStack() as stack:
        session = Session(options, options.settings(), stack)

        def interrupting(*more: Any) -> list[Any]:
            def stop(event: Event) -> None:
                raise KeyboardInterrupt

            return [stop]

        session._sinks = interrupting  # type: ignore[method-assign]
        assert session.turn("Is A100 refundable?") is False
        with session.conversation.store() as store:
            messages = stored.messages(store, session.id)
    assert [(m.role, m.kind, m.text) for m in messages] == [
        ("customer", "message", "Is A100 refundable?"),
        ("desk", "notice", INTERRUPTED),
    ]
    assert exchanges_of(messages) == ([], [])  # neither remembered nor read again


def test_a_failed_turn_is_left_out_of_what_the_model_reads_but_a_later_notice_is_kept() -> None:
    exchanges, unanswered = exchanges_of(
        [
            _m(1, "customer", "message", "Is A100 refundable?"),
            _m(2, "desk", "answer", "Yes."),
            _m(3, "customer", "message", "What about A101?"),
            _m(4, "desk", "notice", "Sorry, I could not finish answering that."),
            _m(5, "customer", "message", "Cancel B200"),
            _m(6, "desk", "proposal", "Cancel B200? yes or no"),
            _m(7, "customer", "message", "yes"),
            _m(8, "desk", "answer", "Queued for approval."),
            _m(9, "desk", "notice", "The change you confirmed has been approved and made."),
        ]
    )
    assert [(e.question, e.answer) for e in exchanges] == [
        ("Is A100 refundable?", "Yes."),
        (
            "Cancel B200\nyes",
            "Queued for approval.\nThe change you confirmed has been approved and made.",
        ),
    ]
    assert unanswered == []


def test_an_eval_conversation_is_kept_in_the_cases_store_message_by_message() -> None:
    options = RunOptions(dry_run=True)
    store = OrderStore.in_memory()
    with ExitStack() as stack:
        runtime = open_runtime(options, stack, settings=options.settings())
        customer = ScriptedCustomer.of("Is my order refundable?", ("a100", "and A101?"))
        over = converse(runtime, store, customer, [], approve=refuse, max_turns=5, turns=True)
    (conversation,) = stored.listed(store)
    messages = stored.messages(store, conversation.id)
    store.close()
    assert over is False and conversation.channel == "eval"
    assert [(m.role, m.kind) for m in messages] == [
        ("customer", "message"),
        ("desk", "question"),
        ("customer", "message"),
        ("desk", "answer"),
        ("customer", "message"),
        ("desk", "answer"),
    ]
    assert "A101" in messages[-1].text and "refundable" in messages[-1].text


def test_a_hand_over_in_chat_is_recorded_and_the_operator_goes_on() -> None:
    lines = "I was charged twice for A100. haruki.sato@example.com\nIs A100 refundable?\n"
    result = agent("chat", *TODAY, stdin=lines)
    assert result.exit_code in (0, 6), result.output
    (conversation,) = conversations()
    assert conversation["status"] == "handed_over"
    assert "Order A100 is refundable" in shown(conversation["id"])[-1][2]


def test_a_change_proposed_at_reply_is_kept_as_a_proposal_with_the_yes_after_it() -> None:
    chat("Please cancel B200, kaito.yamamoto@example.com\nyes\n")
    (conversation,) = conversations()
    messages = shown(conversation["id"])
    assert [(role, kind) for role, kind, _ in messages][:3] == [
        ("customer", "message"),
        ("desk", "proposal"),
        ("customer", "message"),
    ]
    assert "B200" in messages[1][2] and messages[2][2] == "yes"


def test_a_session_named_by_too_few_characters_says_so_and_where_to_look() -> None:
    chat("Is A100 refundable?\n")  # the store made
    store = OrderStore.open(Path(os.environ["AGENT_DB"]), create=False)
    for last in ("1", "2"):
        stored.create(store, channel="chat", conversation_id="abcdef" + last * 26)
    store.close()
    both = agent("chat", *TODAY, "--session", "abcdef", stdin="Hi\n")
    assert both.exit_code == 2, both.output
    assert "starts more than one conversation's id" in both.stderr
    one = chat("Hi\n", "--session", "abcdef2")
    assert "Continuing session abcdef22: 0 of 0 turns remembered" in one.stdout
    unknown = agent("chat", *TODAY, "--session", "zzzz", stdin="Hi\n")
    assert unknown.exit_code == 2 and "see agent conversations list" in unknown.stderr


def test_continue_takes_up_this_operators_chat_never_a_colleagues(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENT_OPERATOR", "mina")
    chat("Is A100 refundable?\n")
    monkeypatch.setenv("AGENT_OPERATOR", "ken")
    chat("Is A101 refundable?\n")  # ken's is the newest of the store
    monkeypatch.setenv("AGENT_OPERATOR", "mina")
    (minas,) = [c for c in conversations() if shown(c["id"])[0][2] == "Is A100 refundable?"]
    again = chat("Thanks\n", "--continue")
    assert f"Continuing session {minas['id'][:8]}" in again.stdout
    monkeypatch.setenv("AGENT_OPERATOR", "sora")  # nobody's chat is sora's
    assert "No earlier session to continue" in chat("Hi\n", "--continue").stdout
    (kens,) = [c for c in conversations() if shown(c["id"])[0][2] == "Is A101 refundable?"]
    named = chat("Hi\n", "--session", kens["id"][:8])  # anyone's, by its id
    assert f"Continuing session {kens['id'][:8]}" in named.stdout
