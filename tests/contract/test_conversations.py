"""Conversations that outlive a process (issue 52, point 1 and 2): a conversation is state in the
store, so the customer identified in one request is known in the next, a change proposed in one
is confirmed by a yes in the next, a retried message runs nothing, a second process waits its
turn, and a closed or handed-over conversation is answered by nobody; on both backends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from contextlib import ExitStack
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

import agent_cli
from agent_cli.cli import app
from agent_cli.core.seams import ModelRequest
from agent_cli.domain.tickets import NewTicket
from agent_cli.errors import (
    ConversationBusy,
    ConversationClosed,
    ConversationNotFound,
    UsageError,
)
from agent_cli.runtime.assemble import open_runtime
from agent_cli.runtime.conversation import exchanges_of, take_turn
from agent_cli.runtime.options import RunOptions
from agent_cli.store import conversation_leases as leases
from agent_cli.store import conversations as stored
from agent_cli.store.conversations import Message
from agent_cli.store.sqlite import OrderStore
from tests.fakellm import FakeLLM, Reply, openai_text

runner = CliRunner()
TODAY = "2026-10-13"
CANCEL = "I want to cancel order B200"
EMAIL = "kaito.yamamoto@example.com"
AUTO_CANCELS = (
    '[[refunds.rules]]\nname = "small cancels"\ndecision = "auto"\n'
    'tools = ["cancel_pending_order"]\nstatuses = ["PENDING"]\nbelow = { JPY = 10000 }\n'
)


def agent(*argv: str) -> Result:
    return runner.invoke(app, list(argv))


def status_of(code: str) -> str:
    store = OrderStore.open(Path(os.environ["AGENT_DB"]), create=False)
    try:
        order = store.get(code)
        assert order is not None
        return order.status
    finally:
        store.close()


def auto_cancels(tmp_path: Path) -> Path:
    config = tmp_path / "config.toml"
    config.write_text(AUTO_CANCELS)
    return config


# --- the Python API -------------------------------------------------------------------------


def test_a_yes_in_a_later_request_makes_the_change_proposed_in_an_earlier_one(
    tmp_path: Path,
) -> None:
    config = auto_cancels(tmp_path)
    started = agent_cli.Conversation.start(channel="web", today=TODAY, config=config)
    first = started.say(CANCEL, message_id="m1")
    assert first.status == "awaiting_customer" and first.replies[0].kind == "question"
    assert "email" in first.replies[0].text
    # Each message from a new object: nothing is carried in memory between requests.
    second = agent_cli.converse(started.id, EMAIL, message_id="m2", today=TODAY, config=config)
    assert second.status == "awaiting_customer" and second.replies[0].kind == "proposal"
    assert second.proposal is not None and "cancel B200" in second.proposal["summary"]
    assert status_of("B200") == "PENDING"  # proposed, not made
    third = agent_cli.converse(started.id, "yes", message_id="m3", today=TODAY, config=config)
    assert third.status == "open" and third.proposal is None
    assert status_of("B200") == "CANCELLED"
    record = agent_cli.Conversation(started.id, config=config).record()
    assert record.customer_id == "kaito_yamamoto_1007" and record.asserted_by is None
    roles = [(m.role, m.kind) for m in started.messages]
    assert roles == [
        ("customer", "message"),
        ("desk", "question"),
        ("customer", "message"),
        ("desk", "proposal"),
        ("customer", "message"),
        ("desk", "answer"),
    ]


def test_a_change_proposed_in_a_final_answer_awaits_the_customers_yes(tmp_path: Path) -> None:
    """A real model may put the change in its answer instead of asking (no ask_user): the
    conversation still waits for the customer, and their yes in the next message makes it."""
    config = auto_cancels(tmp_path)
    cancel = {
        "type": "tool",
        "tool": "cancel_pending_order",
        "args": {"order_id": "B200", "reason": "no longer needed"},
    }
    proposing = tmp_path / "propose.json"
    proposing.write_text(
        json.dumps(
            [
                {"type": "tool", "tool": "find_user_id_by_email", "args": {"email": EMAIL}},
                cancel,
                {"type": "final", "answer": "I can cancel B200 for you (change P1). Yes or no?"},
            ]
        )
    )
    making = tmp_path / "make.json"
    making.write_text(json.dumps([cancel, {"type": "final", "answer": "B200 is cancelled."}]))
    started = agent_cli.Conversation.start(config=config)
    proposed = agent_cli.converse(started.id, CANCEL, today=TODAY, config=config, script=proposing)
    assert proposed.status == "awaiting_customer" and proposed.replies[0].kind == "proposal"
    assert proposed.proposal is not None and proposed.proposal["id"] == "P1"
    assert status_of("B200") == "PENDING"
    done = agent_cli.converse(started.id, "yes", today=TODAY, config=config, script=making)
    assert done.status == "open" and done.replies[0].kind == "answer"
    assert status_of("B200") == "CANCELLED"


def test_a_turn_that_cannot_finish_tells_the_customer_in_their_language(tmp_path: Path) -> None:
    lost = tmp_path / "lost.json"
    lost.write_text(
        json.dumps([{"type": "tool", "tool": "track_order", "args": {"order_id": "A101"}}])
    )
    started = agent_cli.Conversation.start()
    english = agent_cli.converse(started.id, "Where is A101?", script=lost, today=TODAY)
    assert english.replies[0].kind == "notice" and english.status == "open"
    assert english.replies[0].text.startswith("Sorry, I could not finish")
    assert "nothing was changed" in english.replies[0].text and english.error is not None
    japanese = agent_cli.converse(started.id, "A101はどこですか", script=lost, today=TODAY)
    assert "何も変更していません" in japanese.replies[0].text
    # Cut short after proposing: the customer was told it failed, not asked a yes.
    halfway = tmp_path / "halfway.json"
    halfway.write_text(
        json.dumps(
            [
                {"type": "tool", "tool": "find_user_id_by_email", "args": {"email": EMAIL}},
                {
                    "type": "tool",
                    "tool": "cancel_pending_order",
                    "args": {"order_id": "B200", "reason": "no longer needed"},
                },
            ]
        )
    )
    cut = agent_cli.converse(started.id, CANCEL, script=halfway, today=TODAY)
    assert cut.replies[0].kind == "notice" and cut.status == "open"


def test_a_turn_that_changed_something_before_failing_never_says_nothing_changed(
    tmp_path: Path,
) -> None:
    config = auto_cancels(tmp_path)
    cancel = {
        "type": "tool",
        "tool": "cancel_pending_order",
        "args": {"order_id": "B200", "reason": "no longer needed"},
    }
    proposing = tmp_path / "propose.json"
    proposing.write_text(
        json.dumps(
            [
                {"type": "tool", "tool": "find_user_id_by_email", "args": {"email": EMAIL}},
                cancel,
                {"type": "final", "answer": "Shall I cancel B200 (change P1)? Yes or no?"},
            ]
        )
    )
    cut_short = tmp_path / "cut.json"
    cut_short.write_text(json.dumps([cancel]))  # the write, then the model is gone
    started = agent_cli.Conversation.start(config=config)
    agent_cli.converse(started.id, CANCEL, today=TODAY, config=config, script=proposing)
    failed = agent_cli.converse(started.id, "yes", today=TODAY, config=config, script=cut_short)
    assert status_of("B200") == "CANCELLED"
    assert failed.replies[0].kind == "notice"
    assert "nothing was changed" not in failed.replies[0].text


def test_a_yes_with_no_proposal_waiting_changes_nothing(tmp_path: Path) -> None:
    config = auto_cancels(tmp_path)
    started = agent_cli.Conversation.start(today=TODAY, config=config)
    started.say(f"{CANCEL}, my email is {EMAIL}")
    started.say("no")  # the proposal is dropped
    started.say("yes")  # a yes to nothing waiting
    assert status_of("B200") == "PENDING"


def test_a_change_queued_for_approval_leaves_the_conversation_awaiting_it(
    tmp_path: Path,
) -> None:
    started = agent_cli.Conversation.start(today=TODAY)
    started.say(f"{CANCEL}, my email is {EMAIL}")
    queued = started.say("yes")
    assert queued.status == "awaiting_approval" and "approval" in queued.replies[0].text
    assert status_of("B200") == "PENDING"
    later = started.say("thanks")  # a later turn: the change still waits
    assert later.status == "awaiting_approval"


def test_the_same_message_id_again_runs_nothing_and_returns_the_same_turn(
    tmp_path: Path,
) -> None:
    started = agent_cli.Conversation.start(today=TODAY)
    first = started.say(CANCEL, message_id="abc")
    count = len(started.messages)
    again = started.say("something else entirely", message_id="abc")
    assert again.repeated and again.body() == first.body()
    assert len(started.messages) == count  # nothing written, nothing run
    other = started.say(EMAIL, message_id="abd")
    assert not other.repeated and len(started.messages) == count + 2


def test_a_customer_the_caller_vouches_for_is_identified_from_the_start(
    tmp_path: Path,
) -> None:
    started = agent_cli.Conversation.start(
        channel="web", customer="kaito_yamamoto_1007", asserted_by="shop-login", today=TODAY
    )
    turn = started.say(CANCEL)
    assert turn.replies[0].kind == "proposal"  # no email asked for
    record = started.record()
    assert record.customer_id == "kaito_yamamoto_1007" and record.asserted_by == "shop-login"


def test_a_vouched_customer_must_exist_and_a_dry_run_keeps_no_conversation() -> None:
    with pytest.raises(UsageError, match="No customer 'nobody_1'"):
        agent_cli.Conversation.start(customer="nobody_1")
    with pytest.raises(UsageError, match="dry run keeps nothing"):
        agent_cli.Conversation.start(dry_run=True)
    with pytest.raises(UsageError, match="channel"):
        agent_cli.Conversation.start(channel="  ")


def test_a_vouched_customer_sees_only_their_own_orders(tmp_path: Path) -> None:
    started = agent_cli.Conversation.start(customer="aoi_suzuki_1002", today=TODAY)
    turn = started.say(CANCEL)  # B200 is Kaito's
    assert turn.replies and "5,400" not in turn.replies[0].text
    assert status_of("B200") == "PENDING"


def test_a_closed_conversation_answers_nothing_and_keeps_nothing_new() -> None:
    started = agent_cli.Conversation.start()
    started.close(by="lead")
    with pytest.raises(ConversationClosed, match="is closed"):
        started.say("hello")
    assert started.messages == []
    assert started.record().closed_by == "lead"


def test_an_unknown_conversation_is_said_so_with_what_to_do() -> None:
    with pytest.raises(ConversationNotFound, match="agent conversations list"):
        agent_cli.converse("f" * 32, "hello")


def test_a_message_while_a_person_holds_it_is_kept_for_them_and_not_answered(
    either_store: OrderStore,
) -> None:
    made = stored.create(either_store, channel="web")
    either_store.atomically(
        lambda: either_store.execute(
            "UPDATE conversations SET status = 'handed_over' WHERE id = ?", (made.id,)
        )
    )
    with ExitStack() as stack:
        runtime = open_runtime(RunOptions(today=TODAY), stack)
        turn = take_turn(runtime, either_store, made.id, "hello? anyone?")
    assert turn.replies == () and turn.run_id is None and turn.status == "handed_over"
    kept = stored.messages(either_store, made.id)
    assert [(m.role, m.text) for m in kept] == [("customer", "hello? anyone?")]


# --- the store, on both backends ---------------------------------------------------------------


def test_ids_are_unguessable_and_a_prefix_names_one_only(either_store: OrderStore) -> None:
    made = [stored.create(either_store, channel="cli") for _ in range(3)]
    assert len({c.id for c in made}) == 3 and all(len(c.id) == 32 for c in made)
    assert stored.found(either_store, made[0].id[:8].upper()).id == made[0].id
    with pytest.raises(ConversationNotFound):
        stored.found(either_store, made[0].id[:5])  # too short to name one
    with pytest.raises(ConversationNotFound):
        stored.found(either_store, "%%%%%%%%")  # not a pattern


def test_a_leased_conversation_is_busy_for_another_process_until_the_lease_ends(
    either_store: OrderStore,
) -> None:
    made = stored.create(either_store, channel="web")
    leases.lease(either_store, made.id, "process-a", 60)
    with pytest.raises(ConversationBusy, match="send this one again"):
        leases.lease(either_store, made.id, "process-b", 60)
    leases.release(either_store, made.id, "process-b")  # not b's to give back
    with pytest.raises(ConversationBusy):
        leases.lease(either_store, made.id, "process-b", 60)
    leases.release(either_store, made.id, "process-a")
    leases.lease(either_store, made.id, "process-b", 60)


def test_a_lease_left_by_a_killed_process_expires(either_store: OrderStore) -> None:
    made = stored.create(either_store, channel="web")
    past = (datetime.now(UTC) - timedelta(seconds=5)).isoformat(timespec="seconds")
    either_store.atomically(
        lambda: either_store.execute(
            "UPDATE conversations SET lease_owner = 'dead', lease_until = ? WHERE id = ?",
            (past, made.id),
        )
    )
    assert leases.lease(either_store, made.id, "alive", 60).id == made.id


def test_a_message_id_is_unique_in_its_conversation(either_store: OrderStore) -> None:
    one = stored.create(either_store, channel="web")
    two = stored.create(either_store, channel="web")
    stored.add_message(either_store, one.id, "customer", "message", "hi", key="k1")
    stored.add_message(either_store, two.id, "customer", "message", "hi", key="k1")  # another's
    with pytest.raises(Exception):  # noqa: B017 - the backends' own integrity errors
        stored.add_message(either_store, one.id, "customer", "message", "again", key="k1")
    assert stored.by_key(either_store, one.id, "k1") is not None
    assert len(stored.messages(either_store, one.id)) == 1


def test_closing_twice_says_it_was_closed_already(either_store: OrderStore) -> None:
    made = stored.create(either_store, channel="web")
    closed, changed = stored.close(either_store, made.id, by="lead")
    assert changed and closed.status == "closed" and closed.closed_by == "lead"
    again, changed_again = stored.close(either_store, made.id, by="other")
    assert not changed_again and again.closed_by == "lead"
    with pytest.raises(ConversationClosed):
        leases.lease(either_store, made.id, "p", 60)
    rows = either_store.query("SELECT lease_owner FROM conversations WHERE id = ?", (made.id,))
    assert rows == [(None,)]  # refused, and the lease given back


def test_a_damaged_memory_row_loses_a_yes_and_never_makes_one(either_store: OrderStore) -> None:
    from agent_cli.tools.identity import CustomerSession

    session = CustomerSession()
    session.restore({"consent": {"given": {"id": "P1", "key": 3}, "pending": "x"}}, None)
    assert session.consent.given is None and session.consent.pending is None
    session.restore({"failed": -4, "order": 12, "consent": []}, "c1")
    assert session.failed == 0 and session.order is None and session.customer_id == "c1"


def test_the_memory_kept_is_the_memory_taken_up() -> None:
    from agent_cli.tools.identity import CustomerSession

    session = CustomerSession(customer_id="c1", order="B200", failed=2)
    proposal = session.consent.propose("cancel {}", "d1", "cancel B200")
    session.consent.dropped["x"] = "no"
    copy = CustomerSession()
    copy.restore(json.loads(json.dumps(session.state())), "c1")
    assert copy.consent.pending == proposal and copy.consent.dropped == {"x": "no"}
    assert copy.consent.proposed == 1 and copy.order == "B200" and copy.failed == 2


# --- what the model is shown -------------------------------------------------------------------


def _m(n: int, role: str, kind: str, text: str) -> Message:
    return Message(id=n, role=role, kind=kind, text=text, at="")  # type: ignore[arg-type]


def test_answers_to_the_desks_questions_join_the_request_they_answer() -> None:
    exchanges, unanswered = exchanges_of(
        [
            _m(1, "customer", "message", "cancel B200"),
            _m(2, "desk", "question", "Your email?"),
            _m(3, "customer", "message", "k@example.com"),
            _m(4, "desk", "proposal", "Cancel B200 (P1)? yes or no"),
            _m(5, "customer", "message", "yes"),
            _m(6, "desk", "answer", "Cancelled."),
            _m(7, "customer", "message", "thanks"),
            _m(8, "staff", "message", "You're welcome"),
            _m(9, "customer", "message", "one more"),
        ]
    )
    assert [(e.question, e.answer) for e in exchanges] == [
        ("cancel B200\nk@example.com\nyes", "Cancelled."),
        ("thanks", "(a person) You're welcome"),
    ]
    assert unanswered == ["one more"]
    last_asked, _ = exchanges_of(
        [_m(1, "customer", "message", "cancel"), _m(2, "desk", "question", "Email?")]
    )
    assert [(e.question, e.answer) for e in last_asked] == [("cancel", "Email?")]


def test_a_message_no_turn_answered_is_read_with_the_next(tmp_path: Path) -> None:
    started = agent_cli.Conversation.start(today=TODAY)
    with _opened() as store:  # a process that wrote the message, then died
        stored.add_message(store, started.id, "customer", "message", CANCEL)
    turn = started.say(f"my email is {EMAIL}")
    assert turn.replies[0].kind == "proposal" and "B200" in turn.replies[0].text


class _opened:
    def __enter__(self) -> OrderStore:
        self.store = OrderStore.open(Path(os.environ["AGENT_DB"]), create=False)
        return self.store

    def __exit__(self, *_: Any) -> None:
        self.store.close()


# --- the command line --------------------------------------------------------------------------


def test_the_cli_carries_a_conversation_across_processes(tmp_path: Path) -> None:
    config = auto_cancels(tmp_path)

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agent_cli", *argv, "--config", str(config)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    made = run("conversations", "start", "--channel", "web")
    assert made.returncode == 0, made.stderr
    conversation = made.stdout.strip().splitlines()[-1]
    asked = run("ask", "--conversation", conversation[:8], CANCEL, "--today", TODAY, "-q")
    assert asked.returncode == 4 and "email" in asked.stdout
    assert "agent ask --conversation" in asked.stderr
    proposed = run("ask", "--conversation", conversation, EMAIL, "--today", TODAY, "-q")
    assert proposed.returncode == 4 and "yes or no" in proposed.stdout
    done = run("ask", "--conversation", conversation, "yes", "--today", TODAY, "-q")
    assert done.returncode == 0, done.stderr
    assert status_of("B200") == "CANCELLED"


def test_conversations_list_show_and_close(tmp_path: Path) -> None:
    made = agent("conversations", "start", "--channel", "web", "--json")
    assert made.exit_code == 0, made.output
    conversation = json.loads(made.stdout)["id"]
    asked = agent("ask", "--conversation", conversation, CANCEL, "--today", TODAY, "--json")
    assert asked.exit_code == 4
    listed = [json.loads(line) for line in agent("conversations", "list", "--json").stdout.split()]
    assert [(c["id"], c["status"], c["channel"]) for c in listed] == [
        (conversation, "awaiting_customer", "web")
    ]
    shown = json.loads(agent("conversations", "show", conversation[:6], "--json").stdout)
    assert [m["role"] for m in shown["messages"]] == ["customer", "desk"]
    assert shown["messages"][0]["text"] == CANCEL
    table = agent("conversations", "show", conversation)
    assert "desk (question):" in table.stdout and CANCEL in table.stdout
    closed = agent("conversations", "close", conversation, "--as", "lead")
    assert closed.exit_code == 0 and "Closed" in closed.stdout
    again = agent("conversations", "close", conversation)
    assert again.exit_code == 1 and "closed already (by lead)" in again.stderr
    assert agent("conversations", "list").stdout.count(conversation) == 0
    assert conversation in agent("conversations", "list", "--status", "closed").stdout
    refused = agent("ask", "--conversation", conversation, "hello")
    assert refused.exit_code == 1 and "is closed" in refused.stderr


def test_the_cli_refuses_what_makes_no_sense_in_one_line() -> None:
    bad = agent("conversations", "list", "--status", "opne")
    assert bad.exit_code == 2 and "did you mean 'open'" in bad.stderr
    missing = agent("conversations", "show", "0123456789")
    assert missing.exit_code == 1 and "No conversation" in missing.stderr
    dry = agent("ask", "--conversation", "0123456789", "hi", "--dry-run")
    assert dry.exit_code == 2 and "--dry-run keeps nothing" in dry.stderr
    lone = agent("ask", "hi", "--message-id", "m1")
    assert lone.exit_code == 2 and "--conversation" in lone.stderr
    for result in (bad, missing, dry, lone):
        assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1


def test_a_retried_cli_message_prints_the_stored_answer_and_runs_nothing() -> None:
    conversation = agent("conversations", "start").stdout.strip()
    first = agent("ask", "--conversation", conversation, CANCEL, "--message-id", "w-1", "-q")
    again = agent("ask", "--conversation", conversation, "other", "--message-id", "w-1", "-q")
    assert first.exit_code == again.exit_code == 4
    assert "email" in again.stdout and "answered before" in again.stderr
    shown = json.loads(agent("conversations", "show", conversation, "--json").stdout)
    assert len(shown["messages"]) == 2


@pytest.mark.parametrize(
    ("message", "is_no"),
    [
        ("no", True),
        ("Nope.", True),
        ("no thanks", True),
        ("No, don't", True),
        ("never mind", True),
        ("いいえ", True),
        ("やめます", True),
        ("no, cancel it", False),  # a request of its own
        ("no?", False),
        ("not yet, I want the address changed first", False),
        ("いいえ、キャンセルしてください", False),
        ("yes", False),
    ],
)
def test_a_plain_no_is_read_as_one_and_nothing_more(message: str, is_no: bool) -> None:
    from agent_cli.policy.consent import refused

    assert refused(message) is is_no


def test_a_real_model_is_told_the_customer_is_known_only_when_they_are() -> None:
    from datetime import date

    from agent_cli.providers.prompts import system_prompt

    request = ModelRequest(goal="", today=date(2026, 10, 13), tools=(), history=(), deadline=0.0)
    known = system_prompt(replace(request, customer="kaito_yamamoto_1007"), "tools")
    unknown = system_prompt(request, "tools")
    assert 'identified already (user id "kaito_yamamoto_1007")' in known
    assert "identified already" not in unknown


# --- what happens later reaches the conversation ----------------------------------------------


def _queued_cancel() -> agent_cli.Conversation:
    started = agent_cli.Conversation.start(today=TODAY)
    started.say(f"{CANCEL}, my email is {EMAIL}")
    assert started.say("yes").status == "awaiting_approval"
    return started


def test_an_approval_decided_later_is_told_in_the_conversation() -> None:
    started = _queued_cancel()
    decided = agent("approvals", "approve", "1", "--as", "lead")
    assert decided.exit_code == 0, decided.output
    assert status_of("B200") == "CANCELLED"
    told = started.messages[-1]
    assert (told.role, told.kind) == ("desk", "notice")
    assert "approved and made" in told.text and "#1" not in told.text and "lead" not in told.text
    assert started.status == "open"


def test_a_denial_is_told_too_without_the_operators_reason() -> None:
    started = _queued_cancel()
    denied = agent("approvals", "deny", "1", "--reason", "fraud check: card flagged")
    assert denied.exit_code == 0, denied.output
    told = started.messages[-1]
    assert "not approved, so nothing was changed" in told.text and "fraud" not in told.text
    assert started.status == "open" and status_of("B200") == "PENDING"


def test_a_japanese_conversation_is_told_in_japanese() -> None:
    started = agent_cli.Conversation.start(today=TODAY)
    started.say(f"注文B200をキャンセルしたいです。メールは{EMAIL}です。")
    assert started.say("はい").status == "awaiting_approval"
    assert agent("approvals", "approve", "1").exit_code == 0
    assert "承認され、完了しました" in started.messages[-1].text


def test_a_decision_on_a_run_of_no_conversation_tells_nobody() -> None:
    other = agent_cli.Conversation.start()
    piped = runner.invoke(
        app, ["chat", "--today", TODAY], input=f"{CANCEL}, my email is {EMAIL}\nyes\n"
    )
    assert "approval" in piped.stdout  # queued from a chat: piped lines never approve
    decided = agent("approvals", "approve", "1")
    assert decided.exit_code == 0, decided.output
    assert status_of("B200") == "CANCELLED" and other.messages == []


def test_a_closed_conversation_is_told_nothing_more() -> None:
    started = _queued_cancel()
    started.close(by="lead")
    count = len(started.messages)
    assert agent("approvals", "approve", "1").exit_code == 0
    assert len(started.messages) == count and started.status == "closed"


# --- a person takes over, answers, and hands back ---------------------------------------------

HANDOVER = [
    {"type": "tool", "tool": "find_user_id_by_email", "args": {"email": "aoi.suzuki@example.com"}},
    {"type": "tool", "tool": "transfer_to_human_agents", "args": {"summary": "Camera broken."}},
    {"type": "final", "answer": "A colleague will follow up with you here."},
]


def _handed_over(tmp_path: Path) -> agent_cli.Conversation:
    script = tmp_path / "handover.json"
    script.write_text(json.dumps(HANDOVER))
    started = agent_cli.Conversation.start()
    turn = agent_cli.converse(started.id, "My camera is broken, a human please", script=script)
    assert turn.status == "handed_over"
    return started


def test_a_person_answers_in_the_conversation_and_hands_it_back(tmp_path: Path) -> None:
    started = _handed_over(tmp_path)
    kept = started.say("hello? is anyone there?")
    assert kept.replies == () and kept.status == "handed_over"  # the desk says nothing
    replied = agent("tickets", "reply", "1", "I am sorry; a new camera ships today.")
    assert replied.exit_code == 0, replied.output
    assert (started.messages[-1].role, started.messages[-1].text) == (
        "staff",
        "I am sorry; a new camera ships today.",
    )
    shown = json.loads(agent("tickets", "show", "1", "--json").stdout)
    assert shown["conversation"] == started.id
    assert (shown["name"], shown["email"], shown["channel"]) == (
        "Aoi Suzuki",
        "aoi.suzuki@example.com",
        "api",
    )
    table = agent("tickets", "show", "1").stdout
    assert "aoi_suzuki_1002 (Aoi Suzuki <aoi.suzuki@example.com>)" in table
    assert [m["role"] for m in shown["transcript"]] == ["customer", "desk", "customer", "staff"]
    closed = agent("tickets", "close", "1", "--note", "replaced")
    assert closed.exit_code == 0 and "conversation" in closed.stdout
    assert started.status == "open"
    answered = started.say("thanks, bye")
    assert answered.replies and answered.replies[0].kind == "answer"  # the desk is back


def test_closing_the_ticket_may_close_the_conversation_too(tmp_path: Path) -> None:
    started = _handed_over(tmp_path)
    assert agent("tickets", "close", "1", "--close-conversation").exit_code == 0
    assert started.status == "closed"
    late = agent("tickets", "reply", "1", "one more thing")
    assert late.exit_code == 1 and "closed" in late.stderr


def test_a_reply_needs_a_ticket_of_a_stored_conversation() -> None:
    from agent_cli.store import tickets as stored_tickets

    with _opened() as store:
        stored_tickets.open_ticket(store, NewTicket("s", "q", "no-such-run"))
    refused = agent("tickets", "reply", "1", "hello")
    assert refused.exit_code == 1 and "no stored conversation" in refused.stderr
    empty = agent("tickets", "reply", "1", "   ")
    assert empty.exit_code == 2


def test_a_reply_to_a_conversation_closed_meanwhile_is_refused(tmp_path: Path) -> None:
    started = _handed_over(tmp_path)
    started.close(by="lead")  # the ticket stays open
    refused = agent("tickets", "reply", "1", "hello")
    assert refused.exit_code == 1 and "is closed; nothing sent" in refused.stderr
    assert [m.role for m in started.messages] == ["customer", "desk"]


def test_a_conversation_whose_memory_row_is_damaged_still_reads_and_answers() -> None:
    started = agent_cli.Conversation.start(today=TODAY)
    started.say(f"{CANCEL}, my email is {EMAIL}")  # a proposal waits
    with _opened() as store:
        store.atomically(
            lambda: store.execute(
                "UPDATE conversations SET state = '{not json' WHERE id = ?", (started.id,)
            )
        )
    assert started.record().proposal is None  # the damaged memory holds nothing
    shown = agent("conversations", "show", started.id, "--json")
    assert shown.exit_code == 0 and json.loads(shown.stdout)["proposal"] is None
    turn = started.say("yes")  # a yes to nothing the store still holds
    assert turn.replies and status_of("B200") == "PENDING"


# --- pins found by breaking the modules on purpose (tests/mutate.sh) ---------------------------


def test_a_retried_proposal_returns_the_same_proposal_and_a_kept_message_has_no_run(
    tmp_path: Path,
) -> None:
    started = agent_cli.Conversation.start(today=TODAY)
    proposed = started.say(f"{CANCEL}, my email is {EMAIL}", message_id="p1")
    again = started.say("whatever", message_id="p1")
    assert again.repeated and again.proposal == proposed.proposal is not None
    assert again.body() == proposed.body() and again.body()["run"]["status"] == "needs_input"
    plain = started.say("hello")  # no message id: the stored message's number stands for it
    assert plain.message.isdigit() and plain.body()["message"] == plain.message
    held = _handed_over(tmp_path)
    kept = held.say("anyone?", message_id="k9")
    assert kept.body()["run"] is None and (kept.conversation, kept.message) == (held.id, "k9")
    assert [m.run_id for m in held.messages][-1] is None


def test_a_message_received_but_never_answered_is_answered_once_when_sent_again() -> None:
    started = agent_cli.Conversation.start(today=TODAY)
    with _opened() as store:  # a process that wrote it, then died
        stored.add_message(store, started.id, "customer", "message", "hello", key="k1")
    turn = started.say("hello", message_id="k1")
    assert not turn.repeated and turn.replies and turn.message == "k1"
    assert [(m.role, m.message_key) for m in started.messages] == [
        ("customer", "k1"),
        ("desk", None),
    ]


def test_a_turn_longer_than_its_lease_keeps_it_while_it_runs(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """The lease is short (a killed process frees the conversation soon) and renewed while the
    turn runs: another process finds the conversation busy long after the first lease's end."""
    import agent_cli.runtime.conversation as turns

    monkeypatch.setattr(turns, "LEASE_S", 3.0)  # renewed every second
    config = tmp_path / "c.toml"
    config.write_text(
        f'[provider]\nname = "slow"\n[profiles.slow]\nkind = "openai"\n'
        f'base_url = "{fake_llm.url}"\nmodel = "qwen"\n'
    )
    fake_llm.queue(Reply(body=openai_text("Hello there."), delay=8))
    started = agent_cli.Conversation.start(config=config)
    found: list[str] = []

    def another_process() -> None:
        time.sleep(5)  # the first lease (3 s) would have ended by now
        store = OrderStore.open(Path(os.environ["AGENT_DB"]), create=False)
        try:
            leases.lease(store, started.id, "another", 60)
            found.append("taken")
        except ConversationBusy:
            found.append("busy")
        finally:
            store.close()

    other = threading.Thread(target=another_process)
    other.start()
    turn = started.say("hello")
    other.join()
    assert found == ["busy"]
    assert turn.replies[0].text == "Hello there." and started.status == "open"


def test_a_turn_that_lost_its_lease_writes_nothing(either_store: OrderStore) -> None:
    made = stored.create(either_store, channel="web")
    leases.lease(either_store, made.id, "stalled", -1)  # its lease ran out while it stalled
    leases.lease(either_store, made.id, "next", 60)  # and another process took it
    message = stored.add_message(either_store, made.id, "customer", "message", "hi")
    record = stored.TurnRecord(
        answered=message.id,
        replies=(("answer", "hello"),),
        run_id="r1",
        status="open",
        customer_id=None,
        state={},
        outcome="{}",
    )
    with pytest.raises(ConversationBusy, match="lost its lease"):
        stored.finish_turn(either_store, made.id, "stalled", record)
    assert [m.role for m in stored.messages(either_store, made.id)] == ["customer"]
    assert not leases.renew(either_store, made.id, "stalled", 60)
    assert leases.renew(either_store, made.id, "next", 60)


def test_a_lease_taken_ends_when_its_time_is_up(either_store: OrderStore) -> None:
    made = stored.create(either_store, channel="web")
    leases.lease(either_store, made.id, "short-lived", -1)  # ended a second ago
    assert leases.lease(either_store, made.id, "next", 60).id == made.id
    with pytest.raises(ConversationBusy, match=f"conversation {made.id[:8]} is answering"):
        leases.lease(either_store, made.id, "third", 60)
    with pytest.raises(ConversationNotFound, match="No conversation 'f"):
        leases.lease(either_store, "f" * 32, "x", 60)


def test_a_vouched_customer_stays_known_while_a_person_holds_the_conversation() -> None:
    started = agent_cli.Conversation.start(customer="kaito_yamamoto_1007")
    with _opened() as store:
        stored.set_status(store, started.id, "handed_over")
    started.say("hello?")
    assert started.record().customer_id == "kaito_yamamoto_1007"


def test_what_the_store_hands_back_is_what_it_holds(either_store: OrderStore) -> None:
    made = stored.create(either_store, channel="web")
    written = stored.add_message(either_store, made.id, "customer", "message", "hi", key="k")
    assert stored.messages(either_store, made.id) == [written]
    again = stored.get(either_store, made.id)
    assert again is not None and again.created_at <= again.updated_at
    assert datetime.fromisoformat(again.updated_at).tzinfo == UTC
    assert again.updated_at >= written.at >= made.created_at


def test_a_prefix_that_names_two_conversations_says_so(either_store: OrderStore) -> None:
    at = "2026-12-07T00:00:00+00:00"
    for tail in ("01", "02"):
        either_store.atomically(
            lambda tail=tail: either_store.execute(
                "INSERT INTO conversations (id, channel, status, state, created_at, updated_at)"
                " VALUES (?, 'web', 'open', '{}', ?, ?)",
                (f"abcdef{tail}" + "0" * 24, at, at),
            )
        )
    with pytest.raises(ConversationNotFound, match="starts more than one conversation's id"):
        stored.found(either_store, "abcdef")
    assert stored.found(either_store, "abcdef01").id.startswith("abcdef01")


def test_listing_filters_by_status_and_stops_at_the_limit(either_store: OrderStore) -> None:
    made = [stored.create(either_store, channel="web") for _ in range(3)]
    stored.close(either_store, made[0].id, by="lead")
    assert [c.id for c in stored.listed(either_store, status="closed")] == [made[0].id]
    assert len(stored.listed(either_store, limit=2)) == 2
    assert len(stored.listed(either_store)) == 3


def test_a_question_too_long_with_the_unanswered_ones_is_read_alone() -> None:
    from agent_cli.runtime.conversation import _question

    assert _question([], "now", 10) == "now"
    assert _question(["before"], "now", 10) == "before\nnow"  # exactly 10
    assert _question(["before"], "now!", 10) == "now!"  # 11 would be over
    exchanges, _ = exchanges_of(
        [
            _m(1, "customer", "message", "q"),
            _m(2, "desk", "answer", "a1"),
            _m(3, "desk", "notice", "a2"),
            _m(4, "customer", "message", "next"),
        ]
    )
    assert [(e.question, e.answer) for e in exchanges] == [("q", "a1\na2")]


def test_a_turn_that_cannot_finish_says_so_in_these_words(tmp_path: Path) -> None:
    lost = tmp_path / "lost.json"
    lost.write_text(
        json.dumps([{"type": "tool", "tool": "track_order", "args": {"order_id": "A101"}}])
    )
    started = agent_cli.Conversation.start()
    english = agent_cli.converse(started.id, "Where is A101?", script=lost, today=TODAY)
    assert english.replies[0].text == (
        "Sorry, I could not finish answering that, and nothing was changed. Please send it "
        "again, or ask for a person."
    )
    japanese = agent_cli.converse(started.id, "A101はどこですか", script=lost, today=TODAY)
    assert japanese.replies[0].text == (
        "申し訳ありません、最後までお答えできませんでした。何も変更していません。"
        "もう一度お送りいただくか、担当者をご希望ください。"
    )


def test_a_conversation_change_waiting_for_approval_exits_5_at_the_cli() -> None:
    conversation = agent("conversations", "start").stdout.strip()
    agent("ask", "--conversation", conversation, f"{CANCEL}, my email is {EMAIL}", "--today", TODAY)
    queued = agent("ask", "--conversation", conversation, "yes", "--today", TODAY, "-q")
    assert queued.exit_code == 5 and "agent approvals approve 1" in queued.stderr
    shown = json.loads(agent("conversations", "show", conversation, "--json").stdout)
    desk = [m for m in shown["messages"] if m["role"] == "desk"]
    assert all(m["run_id"] for m in desk) and all("T" in m["at"] for m in shown["messages"])


def test_the_list_leaves_the_closed_ones_out_unless_asked_and_stops_at_n() -> None:
    made = [agent_cli.Conversation.start() for _ in range(3)]
    made[1].close()
    live = [
        json.loads(line)["id"] for line in agent("conversations", "list", "--json").stdout.split()
    ]
    assert sorted(live) == sorted([made[0].id, made[2].id])
    one = agent("conversations", "list", "-n", "1", "--json").stdout.split()
    assert len(one) == 1 and json.loads(one[0])["id"] in live
    everything = agent("conversations", "list", "--status", "all", "--json").stdout.split()
    assert len(everything) == 3


def test_a_japanese_customer_answers_the_desks_question_in_a_message_of_its_own() -> None:
    """The desk's Japanese question ends "…教えてください。", no question mark: the email sent
    next still answers it (the cancel goes on), and a reply with no words of a language (an
    email address) is answered in the conversation's Japanese."""
    conversation = agent_cli.Conversation.start(today="2026-10-13")
    asked = conversation.say("注文B200をキャンセルしたいです")
    assert asked.status == "awaiting_customer" and "メールアドレス" in asked.replies[0].text
    proposed = conversation.say("kaito.yamamoto@example.com")
    assert proposed.proposal is not None and proposed.replies[0].kind == "proposal"
    assert "注文B200をキャンセル" in proposed.replies[0].text
    queued = conversation.say("はい")
    assert queued.status == "awaiting_approval" and "承認待ち" in queued.replies[0].text


def test_the_customers_language_is_their_words_then_the_conversations_then_the_channels() -> None:
    from agent_cli.policy.language import customer_language, has_words

    assert not any(map(has_words, ["B200", "mia@example.com", "ok", "👍", "12345", "A101?"]))
    assert all(map(has_words, ["yes", "はい", "B200をお願いします", "where is B200"]))
    assert customer_language(["B200", "注文をキャンセルしたい"]) == "ja"  # earlier words
    assert customer_language(["yes", "注文をキャンセルしたい"]) == "en"  # their words first
    assert customer_language(["B200"], "ja") == "ja" and customer_language(["B200"]) == "en"
