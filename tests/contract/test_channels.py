"""The channels of `agent serve` (issue 53, points 2-4 and 6): the generic signed webhook,
Chatwoot's agent bot and LINE, against loopback fakes of their APIs (tests/channel_fakes.py);
and the outbox that delivers to them exactly once, in order, with retries."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from agent_cli.cli import app as cli_app
from agent_cli.errors import UsageError
from agent_cli.policy.language import language_of
from agent_cli.runtime import handovers
from agent_cli.runtime.converse import setup_for
from agent_cli.runtime.queue_decisions import decide_item, recheck_for
from agent_cli.serve.app import make_app
from agent_cli.store import conversations as stored
from agent_cli.store import outbox, tickets, tokens
from agent_cli.store.sqlite import OrderStore
from tests.channel_fakes import FakeChatwoot, FakeLine, FakeReceiver

runner = CliRunner()
TODAY = "2026-10-13"
CANCEL = "I want to cancel order B200, my email is kaito.yamamoto@example.com"
HOOK_SECRET = "hook-secret"
CW_SECRET = "cw-bot-secret"
LINE_SECRET = "line-channel-secret"


def _store() -> OrderStore:
    return OrderStore.open(Path(os.environ["AGENT_DB"]), create=False)


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "serve.toml"
    poll = "" if "outbox_poll_s" in text else "outbox_poll_s = 0.05\n"
    path.write_text("[serve]\n" + poll + text)
    return path


def _client(config: Path) -> TestClient:
    return TestClient(make_app(setup_for({"today": TODAY, "config": config})))


def _signed(secret: str, body: bytes, stamp: str | None = None) -> tuple[str, str]:
    stamp = stamp or str(int(time.time()))
    mac = hmac.new(secret.encode(), stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return stamp, f"sha256={mac}"


# --- the generic webhook --------------------------------------------------------------------


def _hook(client: TestClient, conversation: str, key: str, text: str, **headers: str) -> Any:
    body = json.dumps({"conversation": conversation, "message": {"id": key, "text": text}})
    stamp, signature = _signed(HOOK_SECRET, body.encode())
    sent = {"X-Agent-Timestamp": stamp, "X-Agent-Signature": signature, **headers}
    return client.post("/channels/webhook", content=body, headers=sent)


@pytest.fixture
def hook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setenv("AGENT_WEBHOOK_SECRET", HOOK_SECRET)
    with _client(_config(tmp_path, "")) as client:
        yield client


def test_the_webhook_answers_a_signed_message_in_its_response(hook: TestClient) -> None:
    first = _hook(hook, "shop-42", "m1", CANCEL)
    assert first.status_code == 200, first.text
    assert first.json()["conversation"] == "shop-42"
    assert first.json()["replies"][0]["kind"] == "proposal"
    again = _hook(hook, "shop-42", "m1", CANCEL)
    assert again.json()["replies"] == first.json()["replies"]  # a redelivery runs nothing
    yes = _hook(hook, "shop-42", "m2", "yes").json()
    assert yes["status"] == "awaiting_approval"  # the same conversation: the yes made the change
    store = _store()
    try:
        held = stored.listed(store)
        assert [(c.channel, c.external_id) for c in held] == [("webhook", "shop-42")]
        said = [m.role for m in stored.messages(store, held[0].id)]
        assert said == ["customer", "desk", "customer", "desk"]
        assert outbox.of_conversation(store, held[0].id) == []  # replies went back: none owed
    finally:
        store.close()


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Agent-Signature": "sha256=" + "0" * 64},
        {"X-Agent-Signature": ""},
        {"X-Agent-Timestamp": str(int(time.time()) - 600)},  # signed, but ten minutes old
        {"X-Agent-Timestamp": "nan"},
    ],
)
def test_a_bad_or_stale_signature_is_401_and_runs_nothing(
    hook: TestClient, headers: dict[str, str]
) -> None:
    body = json.dumps({"conversation": "c1", "message": {"id": "m1", "text": CANCEL}}).encode()
    stamp, signature = _signed(HOOK_SECRET, body, headers.get("X-Agent-Timestamp"))
    sent = {"X-Agent-Timestamp": stamp, "X-Agent-Signature": signature}
    sent.update({k: v for k, v in headers.items() if k == "X-Agent-Signature"})
    refused = hook.post("/channels/webhook", content=body, headers=sent)
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "bad_signature"
    store = _store()
    try:
        assert stored.listed(store) == []
    finally:
        store.close()


def test_a_body_signed_for_another_body_is_refused(hook: TestClient) -> None:
    signed = json.dumps({"conversation": "c1", "message": {"id": "m1", "text": "hello"}})
    stamp, signature = _signed(HOOK_SECRET, signed.encode())
    swapped = signed.replace("hello", "cancel everything")
    refused = hook.post(
        "/channels/webhook",
        content=swapped,
        headers={"X-Agent-Timestamp": stamp, "X-Agent-Signature": signature},
    )
    assert refused.status_code == 401


def test_the_webhook_posts_replies_signed_to_its_reply_url_and_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver = FakeReceiver()
    receiver.fail(503)  # the first post fails: tried again
    monkeypatch.setenv("AGENT_WEBHOOK_SECRET", HOOK_SECRET)
    config = _config(tmp_path, f'[serve.webhook]\nreply_url = "{receiver.url}/replies"\n')
    try:
        with _client(config) as client:
            accepted = _hook(client, "c9", "m1", CANCEL)
            assert accepted.status_code == 200 and accepted.json()["accepted"] is True
            got = receiver.wait_for(1)
    finally:
        receiver.stop()
    seen = got[0]
    assert seen.body["conversation"] == "c9" and seen.body["role"] == "desk"
    assert "B200" in seen.body["text"]
    raw = json.dumps(seen.body, ensure_ascii=False).encode()
    assert (
        seen.headers["x-agent-signature"]
        == _signed(HOOK_SECRET, raw, seen.headers["x-agent-timestamp"])[1]
    )
    refused = receiver.refused[0][1]
    assert refused.headers["idempotency-key"] == seen.headers["idempotency-key"]  # one key
    assert len(receiver.accepted) == 1


# --- Chatwoot -------------------------------------------------------------------------------


def _chatwoot_event(
    conversation: int, message: int, text: str, *, status: str = "pending", **extra: Any
) -> dict[str, Any]:
    return {
        "event": "message_created",
        "id": message,
        "content": text,
        "message_type": "incoming",
        "private": False,
        "account": {"id": 7, "name": "Shop"},
        "conversation": {"id": conversation, "status": status, "inbox_id": 3},
        "sender": {"id": 55, "name": "Kaito", "type": "contact"},
        **extra,
    }


def _to_chatwoot(
    client: TestClient, event: dict[str, Any], delivery: str, secret: str = CW_SECRET
) -> Any:
    body = json.dumps(event).encode()
    stamp, signature = _signed(secret, body)
    headers = {
        "X-Chatwoot-Signature": signature,
        "X-Chatwoot-Timestamp": stamp,
        "X-Chatwoot-Delivery": delivery,
    }
    return client.post("/channels/chatwoot", content=body, headers=headers)


@pytest.fixture
def chatwoot(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeChatwoot]:
    fake = FakeChatwoot()
    monkeypatch.setenv("CHATWOOT_API_TOKEN", fake.state.token)
    monkeypatch.setenv("CHATWOOT_BOT_SECRET", CW_SECRET)
    yield fake
    fake.stop()


def _chatwoot_config(tmp_path: Path, fake: FakeChatwoot) -> Path:
    return _config(tmp_path, f'[serve.chatwoot]\nbase_url = "{fake.url}"\naccount_id = 7\n')


def test_chatwoot_a_customer_is_answered_through_chatwoots_api_once(
    tmp_path: Path, chatwoot: FakeChatwoot
) -> None:
    with _client(_chatwoot_config(tmp_path, chatwoot)) as client:
        first = _to_chatwoot(client, _chatwoot_event(31, 501, CANCEL), "d-1")
        assert first.status_code == 200
        again = _to_chatwoot(client, _chatwoot_event(31, 501, CANCEL), "d-1")
        assert again.status_code == 200 and again.json()["status"] == "repeat"
        redelivered = _to_chatwoot(client, _chatwoot_event(31, 501, CANCEL), "d-2")
        assert redelivered.json()["status"] == "not_answered"  # a new delivery id, the same message
        chatwoot.wait_for(1, path="/messages")
        _to_chatwoot(client, _chatwoot_event(31, 502, "yes"), "d-3")
        chatwoot.wait_for(2, path="/messages")
    answers = chatwoot.messages(31)
    assert len(answers) == 2
    assert "B200" in answers[0] and "cancel" in answers[0].lower()
    assert all(s.headers["api_access_token"] == "cw-api-token" for s in chatwoot.accepted)


def test_chatwoot_ignores_its_own_replies_notes_and_other_accounts(
    tmp_path: Path, chatwoot: FakeChatwoot
) -> None:
    with _client(_chatwoot_config(tmp_path, chatwoot)) as client:
        ours = _chatwoot_event(31, 601, "Sorry about that", message_type="outgoing")
        note = _chatwoot_event(31, 602, "internal: refund?", private=True)
        other = _chatwoot_event(31, 603, CANCEL, account={"id": 8})
        status = {"event": "conversation_status_changed", "id": 31}
        for n, event in enumerate((ours, note, other, status)):
            answered = _to_chatwoot(client, event, f"d-{n}")
            assert answered.status_code == 200 and answered.json()["status"] == "ignored"
    assert chatwoot.accepted == [] and chatwoot.refused == []
    store = _store()
    try:
        assert stored.listed(store) == []
    finally:
        store.close()


def test_chatwoot_a_conversation_a_person_holds_gets_no_bot_answer(
    tmp_path: Path, chatwoot: FakeChatwoot
) -> None:
    with _client(_chatwoot_config(tmp_path, chatwoot)) as client:
        _to_chatwoot(client, _chatwoot_event(40, 701, "Where is order A101?"), "d-1")
        chatwoot.wait_for(1, path="/messages")
        held = _to_chatwoot(client, _chatwoot_event(40, 702, CANCEL, status="open"), "d-2")
        assert held.status_code == 200
        never_ours = _to_chatwoot(client, _chatwoot_event(41, 703, CANCEL, status="open"), "d-3")
        assert never_ours.json()["status"] == "not_answered"
        time.sleep(0.3)  # room for a wrong answer to go out
    assert len(chatwoot.messages(40)) == 1 and chatwoot.messages(41) == []
    store = _store()
    try:
        (conversation,) = stored.listed(store)
        assert conversation.status == "handed_over"
        assert stored.messages(store, conversation.id)[-1].text == CANCEL  # kept for the person
    finally:
        store.close()


def test_chatwoot_a_hand_over_opens_the_conversation_for_a_person(
    tmp_path: Path, chatwoot: FakeChatwoot
) -> None:
    with _client(_chatwoot_config(tmp_path, chatwoot)) as client:
        _to_chatwoot(client, _chatwoot_event(50, 801, "I want to talk to a real person"), "d-1")
        toggled = chatwoot.wait_for(1, path="/toggle_status")
        _to_chatwoot(client, _chatwoot_event(50, 802, "hello?", status="open"), "d-2")
        paths = [s.path.rsplit("/", 1)[1] for s in chatwoot.accepted]
        assert paths == ["messages", "toggle_status"]  # the desk's word, then the hand-over
        # The team hands it back to the bot (pending again): the desk answers again.
        _to_chatwoot(client, _chatwoot_event(50, 803, "Where is order A101?"), "d-3")
        chatwoot.wait_for(2, path="/messages")
        # A person claims the ticket: the conversation is theirs again, and Chatwoot is told.
        claimed = runner.invoke(cli_app, ["tickets", "claim", "1", "--as", "mia"])
        assert claimed.exit_code == 0, claimed.output
        chatwoot.wait_for(2, path="/toggle_status")
    assert toggled[0].body == {"status": "open"}
    store = _store()
    try:
        assert stored.listed(store)[0].status == "handed_over"
    finally:
        store.close()


def test_a_persons_reply_to_a_ticket_reaches_the_customers_channel(
    tmp_path: Path, chatwoot: FakeChatwoot
) -> None:
    with _client(_chatwoot_config(tmp_path, chatwoot)) as client:
        _to_chatwoot(client, _chatwoot_event(51, 811, "I want to talk to a real person"), "d-1")
        chatwoot.wait_for(1, path="/toggle_status")
        store = _store()
        try:  # `agent tickets reply 1 ...` at a terminal
            handovers.reply(store, tickets.get(store, 1), "Hi, this is Mia from the shop.")
        finally:
            store.close()
        told = chatwoot.wait_for(2, path="/messages")
    assert told[1].body["content"] == "Hi, this is Mia from the shop."


def test_what_is_owed_when_the_server_stops_goes_out_before_it_ends(
    tmp_path: Path, chatwoot: FakeChatwoot
) -> None:
    config = _config(
        tmp_path,
        f'outbox_poll_s = 60\n[serve.chatwoot]\nbase_url = "{chatwoot.url}"\naccount_id = 7\n',
    )
    with _client(config) as client:
        _to_chatwoot(client, _chatwoot_event(52, 821, "I want to talk to a real person"), "d-1")
        chatwoot.wait_for(1, path="/toggle_status")
        store = _store()
        try:  # another process's row: this one would not look for a minute
            handovers.reply(store, tickets.get(store, 1), "Mia here, one moment.")
        finally:
            store.close()
    assert chatwoot.messages(52)[-1] == "Mia here, one moment."


def test_chatwoot_a_stale_or_forged_signature_is_401(
    tmp_path: Path, chatwoot: FakeChatwoot
) -> None:
    event = json.dumps(_chatwoot_event(31, 901, CANCEL)).encode()
    with _client(_chatwoot_config(tmp_path, chatwoot)) as client:
        stamp, signature = _signed(CW_SECRET, event, str(int(time.time()) - 301))
        stale = client.post(
            "/channels/chatwoot",
            content=event,
            headers={"X-Chatwoot-Signature": signature, "X-Chatwoot-Timestamp": stamp},
        )
        forged = _to_chatwoot(client, _chatwoot_event(31, 902, CANCEL), "d-9", secret="guess")
    assert stale.status_code == 401 and forged.status_code == 401
    assert chatwoot.accepted == []


def test_chatwoot_a_failing_api_is_retried_and_the_order_kept(
    tmp_path: Path, chatwoot: FakeChatwoot
) -> None:
    chatwoot.fail(500, 429)
    with _client(_chatwoot_config(tmp_path, chatwoot)) as client:
        _to_chatwoot(client, _chatwoot_event(60, 1001, "Where is order A101?"), "d-1")
        _to_chatwoot(client, _chatwoot_event(60, 1002, "And order A102?"), "d-2")
        answers = chatwoot.wait_for(2, seconds=90, path="/messages")
    store = _store()
    try:
        (conversation,) = stored.listed(store)
        said = [m.text for m in stored.messages(store, conversation.id) if m.role == "desk"]
    finally:
        store.close()
    assert [a.body["content"] for a in answers] == said  # in the order the desk said them
    assert len(said) == 2 and len(chatwoot.refused) == 2


def test_a_failed_delivery_waits_before_it_is_tried_again(
    tmp_path: Path, chatwoot: FakeChatwoot
) -> None:
    chatwoot.fail(503)
    with _client(_chatwoot_config(tmp_path, chatwoot)) as client:
        _to_chatwoot(client, _chatwoot_event(63, 1071, "Where is order A101?"), "d-1")
        (taken,) = chatwoot.wait_for(1, path="/messages")
    ((_, refused),) = chatwoot.refused
    assert taken.at - refused.at >= 0.7  # the first backoff: 1 s, less at most a quarter


def test_a_channel_that_asks_for_time_gets_it_and_later_replies_wait_behind(
    tmp_path: Path, chatwoot: FakeChatwoot
) -> None:
    chatwoot.fail(503, headers={"Retry-After": "120"})
    with _client(_chatwoot_config(tmp_path, chatwoot)) as client:
        _to_chatwoot(client, _chatwoot_event(62, 1061, "Where is order A101?"), "d-1")
        _to_chatwoot(client, _chatwoot_event(62, 1062, "hello?"), "d-2")
        time.sleep(1.0)  # many polls: none may send before the 120 s Chatwoot asked for
    assert len(chatwoot.refused) == 1 and chatwoot.accepted == []
    (conversation,) = _rows_of("pending")
    store = _store()
    try:
        rows = outbox.of_conversation(store, conversation)
    finally:
        store.close()
    assert [(r.status, r.attempts) for r in rows] == [("pending", 1), ("pending", 0)]


def test_a_message_given_up_is_shown_and_counted(
    tmp_path: Path, chatwoot: FakeChatwoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    chatwoot.fail(404)  # a conversation Chatwoot no longer has: trying again would not help
    config = _config(
        tmp_path,
        f'outbox_attempts = 5\n[serve.chatwoot]\nbase_url = "{chatwoot.url}"\naccount_id = 7\n',
    )
    staff = _token("staff")
    with _client(config) as client:
        _to_chatwoot(client, _chatwoot_event(61, 1051, "Where is order A101?"), "d-1")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _rows_of("failed"):
            time.sleep(0.02)
        metrics = client.get("/metrics", headers={"Authorization": f"Bearer {staff}"}).text
    assert 'agent_outbox_rows{status="failed"} 1' in metrics
    assert len(chatwoot.refused) == 1 and chatwoot.accepted == []  # given up at once: a 404
    (conversation,) = _rows_of("failed")
    shown = runner.invoke(cli_app, ["conversations", "show", conversation, "--json"])
    (desk,) = [m for m in json.loads(shown.stdout)["messages"] if m["role"] == "desk"]
    assert desk["delivery"]["status"] == "failed" and "HTTP 404" in desk["delivery"]["last_error"]
    told = runner.invoke(cli_app, ["conversations", "show", conversation])
    assert "not delivered after 1 try: HTTP 404" in told.stdout
    lines = runner.invoke(cli_app, ["doctor", "--json", "--config", str(config)]).stdout
    (serve,) = [r for r in map(json.loads, lines.splitlines()) if r["check"] == "agent serve"]
    assert serve["ok"] is None and "channels: chatwoot" in serve["detail"]
    assert "outbox: 0 waiting, 1 given up" in serve["detail"]


def _rows_of(status: str) -> list[str]:
    store = _store()
    try:
        return [
            c.id
            for c in stored.listed(store)
            if any(r.status == status for r in outbox.of_conversation(store, c.id))
        ]
    finally:
        store.close()


def _token(scope: str) -> str:
    store = _store()
    try:
        return tokens.create(store, f"t-{scope}", scope, by="test")
    finally:
        store.close()


def test_a_decision_made_later_is_told_on_the_customers_channel(
    tmp_path: Path, chatwoot: FakeChatwoot
) -> None:
    with _client(_chatwoot_config(tmp_path, chatwoot)) as client:
        _to_chatwoot(client, _chatwoot_event(70, 1101, CANCEL), "d-1")
        _to_chatwoot(client, _chatwoot_event(70, 1102, "yes"), "d-2")
        chatwoot.wait_for(2, path="/messages")
        store = _store()
        try:  # a person at a terminal (another process, as far as the server knows)
            settings = setup_for({"today": TODAY}).settings
            decide_item(
                store, 1, approve=True, by="lead", reason=None, recheck=recheck_for(settings)
            )
        finally:
            store.close()
        told = chatwoot.wait_for(3, path="/messages")
    assert "approved and made" in told[2].body["content"]


# --- LINE -----------------------------------------------------------------------------------


def _line_event(fake: FakeLine, user: str, event_id: str, text: str, **extra: Any) -> Any:
    return {
        "type": "message",
        "mode": "active",
        "timestamp": int(time.time() * 1000),
        "source": {"type": "user", "userId": user},
        "webhookEventId": event_id,
        "deliveryContext": {"isRedelivery": False},
        "replyToken": fake.reply_token(),
        "message": {"id": f"msg-{event_id}", "type": "text", "quoteToken": "q", "text": text},
        **extra,
    }


def _to_line(client: TestClient, *events: Any, secret: str = LINE_SECRET) -> Any:
    body = json.dumps({"destination": "Ubot", "events": list(events)}).encode()
    mac = hmac.new(secret.encode(), body, hashlib.sha256).digest()
    headers = {"X-Line-Signature": base64.b64encode(mac).decode()}
    return client.post("/channels/line", content=body, headers=headers)


@pytest.fixture
def line(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLine]:
    fake = FakeLine()
    monkeypatch.setenv("LINE_CHANNEL_SECRET", LINE_SECRET)
    monkeypatch.setenv("LINE_CHANNEL_ACCESS_TOKEN", fake.state.token)
    yield fake
    fake.stop()


def _line_config(tmp_path: Path, fake: FakeLine, window: float = 50) -> Path:
    return _config(
        tmp_path, f'[serve.line]\napi_base_url = "{fake.url}"\nreply_window_s = {window}\n'
    )


def test_line_replies_with_the_reply_token_and_shows_the_loading_indicator(
    tmp_path: Path, line: FakeLine
) -> None:
    with _client(_line_config(tmp_path, line)) as client:
        event = _line_event(line, "U1", "ev-1", "注文A101はどこですか？")
        assert _to_line(client, event).status_code == 200
        assert _to_line(client, event).status_code == 200  # LINE's redelivery: dropped
        replied = line.wait_for(1, path="/reply")
    loading = [s for s in line.accepted if s.path == "/v2/bot/chat/loading/start"]
    assert loading and loading[0].body["chatId"] == "U1"
    assert line.accepted.index(loading[0]) < line.accepted.index(replied[0])
    assert len(line.texts()) == 1 and "メールアドレス" in line.texts()[0]  # who is asking?
    assert not [s for s in line.accepted if s.path.endswith("/push")]


def test_line_a_reply_token_past_its_time_becomes_a_push(tmp_path: Path, line: FakeLine) -> None:
    line.token_life = 0.0  # every token has expired by the time the answer is ready
    with _client(_line_config(tmp_path, line)) as client:
        _to_line(client, _line_event(line, "U2", "ev-2", "Where is order A101?"))
        pushed = line.wait_for(1, path="/push")
    assert pushed[0].body["to"] == "U2" and "email" in pushed[0].body["messages"][0]["text"]
    assert [status for status, _ in line.refused] == [400]  # the expired token, tried once


def test_line_a_bad_signature_is_401_and_standby_events_are_not_ours(
    tmp_path: Path, line: FakeLine
) -> None:
    with _client(_line_config(tmp_path, line)) as client:
        forged = _to_line(client, _line_event(line, "U3", "ev-3", CANCEL), secret="guess")
        standby = _to_line(client, _line_event(line, "U3", "ev-4", CANCEL, mode="standby"))
        verify = _to_line(client)  # LINE's "Verify" button sends no events
    assert forged.status_code == 401
    assert standby.status_code == 200 and verify.status_code == 200
    assert line.accepted == []


def test_line_a_push_sent_before_a_crash_is_not_shown_twice(tmp_path: Path, line: FakeLine) -> None:
    """The push went out and the process died before marking it sent: the retry carries the
    same X-Line-Retry-Key, LINE answers 409, and the row is marked sent."""
    line.token_life = 0.0
    config = _line_config(tmp_path, line)
    with _client(config) as client:
        _to_line(client, _line_event(line, "U4", "ev-5", "Where is order A101?"))
        line.wait_for(1, path="/push")
    store = _store()
    try:
        (conversation,) = stored.listed(store)
        (row,) = outbox.of_conversation(store, conversation.id)
        assert row.status == "sent"
        store.execute("UPDATE outbox SET status = 'pending', sent_at = NULL")  # the lost mark
    finally:
        store.close()
    with _client(config):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and line.refused[-1][0] != 409:
            time.sleep(0.02)
    assert len(line.texts()) == 1 and line.refused[-1][0] == 409
    store = _store()
    try:
        assert [r.status for r in outbox.of_conversation(store, conversation.id)] == ["sent"]
    finally:
        store.close()


def test_line_answers_words_of_no_language_in_japanese(tmp_path: Path, line: FakeLine) -> None:
    with _client(_line_config(tmp_path, line)) as client:
        _to_line(client, _line_event(line, "U6", "ev-7", "A101"))
        line.wait_for(1, path="/reply")
    (said,) = line.texts()
    assert language_of(said) == "ja" and "A101" in said


def test_line_pushes_without_trying_a_token_older_than_its_window(
    tmp_path: Path, line: FakeLine
) -> None:
    with _client(_line_config(tmp_path, line, window=0.001)) as client:
        _to_line(client, _line_event(line, "U5", "ev-6", "Where is order A101?"))
        line.wait_for(1, path="/push")
    assert not [s for _, s in line.refused if s.path.endswith("/reply")]
    assert not [s for s in line.accepted if s.path.endswith("/reply")]


# --- set-up ---------------------------------------------------------------------------------


def test_a_channel_not_set_up_says_how(hook: TestClient) -> None:
    off = hook.post("/channels/line", content=b"{}")
    assert off.status_code == 404
    assert off.json()["error"]["code"] == "channel_off"
    assert "channel_secret_env" in off.json()["error"]["message"]


def test_a_channel_half_set_up_is_refused_at_start(tmp_path: Path) -> None:
    config = _config(tmp_path, '[serve.chatwoot]\nbase_url = "http://127.0.0.1:9"\n')
    with pytest.raises(UsageError, match=r"account_id.*CHATWOOT_API_TOKEN.*CHATWOOT_BOT_SECRET"):
        make_app(setup_for({"today": TODAY, "config": config}))


# --- the store's side, on both backends ------------------------------------------------------


def test_the_outbox_and_channel_conversations_hold_on_both_backends(
    either_store: OrderStore,
) -> None:
    from agent_cli.store import channel_conversations as channels

    arrival = channels.Arrival(external_id="77", address={"conversation": 77}, key="m1", text="hi")
    kept = channels.keep(either_store, "chatwoot", arrival)
    assert kept is not None and kept[1] is True
    assert channels.keep(either_store, "chatwoot", arrival) == (kept[0], False)  # a redelivery
    held = channels.Arrival(external_id="78", address={}, key="m2", text="hi", hold=True)
    assert channels.keep(either_store, "chatwoot", held) is None  # a person's, never the desk's
    conversation = kept[0]
    api = stored.create(either_store, channel="api")  # no address: nothing owed
    stored.add_message(either_store, api.id, "desk", "answer", "not owed")
    stored.add_message(either_store, conversation, "desk", "answer", "first")
    stored.add_message(either_store, conversation, "staff", "message", "second")
    assert outbox.due_conversations(either_store, limit=10) == [conversation]
    rows = outbox.claim(either_store, conversation, "p1", 60)
    assert [(r.text, r.role, r.address) for r in rows] == [
        ("first", "desk", {"conversation": 77}),
        ("second", "staff", {"conversation": 77}),
    ]
    assert outbox.claim(either_store, conversation, "p2", 60) == []  # held by p1
    outbox.sent(either_store, rows[0].id, "p1")
    outbox.failed(either_store, rows[1].id, "p1", "HTTP 503", retry_in=3600)
    assert outbox.claim(either_store, conversation, "p2", 60) == []  # waits for its retry
    assert outbox.counts(either_store) == {"sent": 1, "pending": 1}
    shown = outbox.of_conversation(either_store, conversation)
    assert [(r.status, r.attempts, r.last_error) for r in shown] == [
        ("sent", 0, None),
        ("pending", 1, "HTTP 503"),
    ]
    stored.close(either_store, conversation, by="lead")
    again = channels.keep(either_store, "chatwoot", arrival)  # the channel's id, let go of
    assert again is not None and again[0] != conversation


def test_signed_garbage_and_oversized_bodies_are_refused_and_keep_nothing(
    tmp_path: Path, chatwoot: FakeChatwoot, line: FakeLine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_WEBHOOK_SECRET", HOOK_SECRET)
    config = _config(
        tmp_path,
        f'max_body_bytes = 2048\n[serve.chatwoot]\nbase_url = "{chatwoot.url}"\naccount_id = 7\n'
        f'[serve.line]\napi_base_url = "{line.url}"\n',
    )
    with _client(config) as client:
        garbage = b"{not json"
        stamp, signature = _signed(CW_SECRET, garbage)
        refused = client.post(
            "/channels/chatwoot",
            content=garbage,
            headers={"X-Chatwoot-Signature": signature, "X-Chatwoot-Timestamp": stamp},
        )
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "bad_request"
        mac = hmac.new(LINE_SECRET.encode(), b'{"events": "no"}', hashlib.sha256).digest()
        odd = client.post(
            "/channels/line",
            content=b'{"events": "no"}',
            headers={"X-Line-Signature": base64.b64encode(mac).decode()},
        )
        assert odd.status_code == 200  # nothing in it to answer
        huge = json.dumps({"conversation": "c", "message": {"id": "m", "text": "x" * 5000}})
        stamp, signature = _signed(HOOK_SECRET, huge.encode())
        too_big = client.post(
            "/channels/webhook",
            content=huge,
            headers={"X-Agent-Timestamp": stamp, "X-Agent-Signature": signature},
        )
        assert too_big.status_code == 413
        no_message = json.dumps({"conversation": "c"}).encode()
        stamp, signature = _signed(HOOK_SECRET, no_message)
        missing = client.post(
            "/channels/webhook",
            content=no_message,
            headers={"X-Agent-Timestamp": stamp, "X-Agent-Signature": signature},
        )
        assert missing.status_code == 400
    store = _store()
    try:
        assert stored.listed(store) == []
    finally:
        store.close()
    assert chatwoot.accepted == [] and line.accepted == []


def test_a_claim_holds_a_few_rows_so_it_is_sent_within_its_time(either_store: OrderStore) -> None:
    from agent_cli.store import channel_conversations as channels

    arrival = channels.Arrival(external_id="88", address={"conversation": 88}, key="m", text="hi")
    kept = channels.keep(either_store, "chatwoot", arrival)
    assert kept is not None
    for n in range(7):
        stored.add_message(either_store, kept[0], "desk", "answer", f"reply {n}")
    first = outbox.claim(either_store, kept[0], "p1", 60, most=5)
    assert [r.text for r in first] == [f"reply {n}" for n in range(5)]
    assert outbox.claim(either_store, kept[0], "p2", 60) == []  # the rest wait behind p1's
    for row in first:
        outbox.sent(either_store, row.id, "p1")
    rest = outbox.claim(either_store, kept[0], "p2", 60)
    assert [r.text for r in rest] == ["reply 5", "reply 6"]


def test_agent_serve_with_a_channel_half_set_up_is_one_line_and_exit_2(tmp_path: Path) -> None:
    config = _config(tmp_path, '[serve.chatwoot]\nbase_url = "http://127.0.0.1:9"\n')
    refused = runner.invoke(cli_app, ["serve", "--config", str(config), "--port", "18097"])
    assert refused.exit_code == 2
    assert "chatwoot channel is half set up" in refused.stderr
    assert "serving on" not in refused.stderr  # said before anything listens
