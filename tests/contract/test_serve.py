"""`agent serve` (issue 52, point 3, first part): the HTTP API over stored conversations, its
tokens and its errors; in process through starlette's test client, and as a real server on
loopback (a SIGTERM finishes the turn in flight, then exits 0)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from agent_cli.cli import app as cli_app
from agent_cli.domain.tickets import NewTicket
from agent_cli.runtime.converse import setup_for
from agent_cli.serve.app import make_app
from agent_cli.store import conversation_leases as leases
from agent_cli.store import conversations as stored
from agent_cli.store import tickets, tokens
from agent_cli.store.sqlite import OrderStore
from tests.fakellm import FakeLLM, Reply, openai_text

runner = CliRunner()
TODAY = "2026-10-13"
CANCEL = "I want to cancel order B200"


def _store() -> OrderStore:
    return OrderStore.open(Path(os.environ["AGENT_DB"]), create=False)


def token(scope: str = "customer", name: str | None = None) -> str:
    store = _store()
    try:
        return tokens.create(store, name or f"t-{scope}-{time.monotonic_ns()}", scope, by="test")
    finally:
        store.close()


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(make_app(setup_for({"today": TODAY}), max_body=10_000)) as made:
        yield made


def auth(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


def start(client: TestClient, secret: str, **body: Any) -> str:
    made = client.post("/v1/conversations", headers=auth(secret), json=body or None)
    assert made.status_code == 201, made.text
    assert made.json()["status"] == "open"
    return str(made.json()["id"])


def say(client: TestClient, secret: str, conversation: str, key: str, text: str) -> Any:
    return client.post(
        f"/v1/conversations/{conversation}/messages",
        headers=auth(secret),
        json={"id": key, "text": text},
    )


def test_a_conversation_over_http_identifies_proposes_and_waits_for_the_yes(
    client: TestClient,
) -> None:
    secret = token()
    conversation = start(client, secret, channel="web")
    asked = say(client, secret, conversation, "m1", CANCEL)
    assert asked.status_code == 200
    body = asked.json()
    assert body["conversation"] == conversation and body["message"] == "m1"
    assert body["status"] == "awaiting_customer"
    assert body["replies"][0]["kind"] == "question" and "email" in body["replies"][0]["text"]
    assert body["run"]["status"] == "needs_input"
    proposed = say(client, secret, conversation, "m2", "kaito.yamamoto@example.com").json()
    assert proposed["replies"][0]["kind"] == "proposal" and proposed["proposal"]["id"] == "P1"
    shown = client.get(f"/v1/conversations/{conversation}", headers=auth(secret)).json()
    assert shown["customer"] == "kaito_yamamoto_1007" and shown["channel"] == "web"
    assert [m["role"] for m in shown["messages"]] == ["customer", "desk", "customer", "desk"]
    assert shown["proposal"]["id"] == "P1"


def test_a_retried_message_returns_the_same_body_and_runs_nothing(client: TestClient) -> None:
    secret = token()
    conversation = start(client, secret)
    first = say(client, secret, conversation, "same", CANCEL)
    again = say(client, secret, conversation, "same", "a different text, the same id")
    assert again.status_code == 200 and again.json() == first.json()
    shown = client.get(f"/v1/conversations/{conversation}", headers=auth(secret)).json()
    assert len(shown["messages"]) == 2


def test_messages_of_one_conversation_sent_at_once_are_answered_one_at_a_time(
    client: TestClient,
) -> None:
    secret = token()
    conversation = start(client, secret)
    answers: list[int] = []

    def send(n: int) -> None:
        answers.append(
            say(client, secret, conversation, f"k{n}", f"Where is order A10{n}?").status_code
        )

    threads = [threading.Thread(target=send, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert answers == [200, 200, 200, 200]  # none refused as busy
    messages = client.get(f"/v1/conversations/{conversation}", headers=auth(secret)).json()
    roles = [m["role"] for m in messages["messages"]]
    assert roles == ["customer", "desk"] * 4  # each message answered before the next was read


def test_a_conversation_another_process_holds_is_waited_for_not_refused(
    client: TestClient,
) -> None:
    secret = token()
    conversation = start(client, secret)
    store = _store()
    leases.lease(store, conversation, "another-process", 60)
    store.close()

    def release() -> None:  # the other process, done with its turn
        done = _store()
        leases.release(done, conversation, "another-process")
        done.close()

    releaser = threading.Timer(1.0, release)
    releaser.start()
    try:
        answered = say(client, secret, conversation, "m1", "Where is order A101?")
    finally:
        releaser.join()
    assert answered.status_code == 200 and answered.json()["replies"]


def test_tokens_are_checked_and_scoped(client: TestClient) -> None:
    customer, identify, staff = token("customer"), token("identify"), token("staff")
    assert client.post("/v1/conversations").status_code == 401
    wrong = client.post("/v1/conversations", headers=auth("agt_not-a-token"))
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "unauthorized"
    vouch = {"customer": {"user_id": "kaito_yamamoto_1007"}}
    refused = client.post("/v1/conversations", headers=auth(customer), json=vouch)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    for allowed in (identify, staff):
        conversation = start(client, allowed, **vouch)
        turn = say(client, allowed, conversation, "m1", CANCEL).json()
        assert turn["replies"][0]["kind"] == "proposal"  # known: no email asked for
    unknown = client.post(
        "/v1/conversations", headers=auth(identify), json={"customer": {"user_id": "nobody"}}
    )
    assert unknown.status_code == 400 and "No customer" in unknown.json()["error"]["message"]


def test_a_revoked_token_is_refused_from_the_next_request(client: TestClient) -> None:
    secret = token(name="soon-gone")
    conversation = start(client, secret)
    result = runner.invoke(cli_app, ["tokens", "revoke", "soon-gone", "--as", "lead"])
    assert result.exit_code == 0, result.output
    refused = client.get(f"/v1/conversations/{conversation}", headers=auth(secret))
    assert refused.status_code == 401


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"not json", 400, "bad_request"),
        (b"[1, 2]", 400, "bad_request"),
        (json.dumps({"text": "hi"}).encode(), 400, "bad_request"),  # no id
        (json.dumps({"id": "m", "text": "   "}).encode(), 400, "bad_request"),
        (json.dumps({"id": "m", "text": 5}).encode(), 400, "bad_request"),
        (json.dumps({"id": "m", "text": "x" * 4001}).encode(), 400, "bad_request"),
        (json.dumps({"id": "m", "text": "x" * 20_000}).encode(), 413, "too_large"),
    ],
)
def test_bad_requests_are_one_json_error_and_change_nothing(
    client: TestClient, body: bytes, status: int, code: str
) -> None:
    secret = token()
    conversation = start(client, secret)
    answer = client.post(
        f"/v1/conversations/{conversation}/messages", headers=auth(secret), content=body
    )
    assert answer.status_code == status and answer.json()["error"]["code"] == code
    assert set(answer.json()) == {"error"} and "Traceback" not in answer.text
    shown = client.get(f"/v1/conversations/{conversation}", headers=auth(secret)).json()
    assert shown["messages"] == []


def test_unknown_and_closed_conversations(client: TestClient) -> None:
    secret = token()
    missing = say(client, secret, "0" * 32, "m1", "hi")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    conversation = start(client, secret)
    prefix = client.get(f"/v1/conversations/{conversation[:8]}", headers=auth(secret))
    assert prefix.status_code == 404  # ids are secrets: no guessing by prefix over HTTP
    closed = client.post(f"/v1/conversations/{conversation}/close", headers=auth(secret))
    assert closed.status_code == 200 and closed.json()["status"] == "closed"
    again = client.post(f"/v1/conversations/{conversation}/close", headers=auth(secret))
    assert again.status_code == 409 and again.json()["error"]["code"] == "closed"
    late = say(client, secret, conversation, "m1", "hi")
    assert late.status_code == 409 and late.json()["error"]["code"] == "closed"
    assert client.get("/v1/nowhere").json()["error"]["code"] == "not_found"
    assert client.delete("/v1/conversations").status_code == 405


def test_health_and_readiness(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json() == {"status": "ready"}


def test_readiness_says_when_the_store_is_gone(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[store]\nurl = "postgresql://nobody@127.0.0.1:1/none"\n')
    with TestClient(make_app(setup_for({"config": config}))) as client:
        answer = client.get("/readyz")
    assert answer.status_code == 503 and answer.json()["error"]["code"] == "store_unavailable"


# --- the command ---------------------------------------------------------------------------------


def test_tokens_are_shown_once_and_listed_without_the_secret() -> None:
    made = runner.invoke(cli_app, ["tokens", "create", "web-chat", "--scope", "identify"])
    assert made.exit_code == 0, made.output
    secret = made.stdout.strip().splitlines()[-1]
    assert secret.startswith("agt_") and len(secret) > 40
    listed = runner.invoke(cli_app, ["tokens", "list", "--json"])
    row = json.loads(listed.stdout)
    assert row["name"] == "web-chat" and row["scope"] == "identify" and row["revoked_at"] is None
    assert secret not in listed.stdout and tokens.digest(secret) not in listed.stdout
    twice = runner.invoke(cli_app, ["tokens", "create", "web-chat"])
    assert twice.exit_code == 2 and "exists already" in twice.stderr
    bad = runner.invoke(cli_app, ["tokens", "create", "web", "--scope", "admin"])
    assert bad.exit_code == 2 and "not a scope" in bad.stderr
    assert runner.invoke(cli_app, ["tokens", "revoke", "web-chat"]).exit_code == 0
    again = runner.invoke(cli_app, ["tokens", "revoke", "web-chat"])
    assert again.exit_code == 2 and "revoked already" in again.stderr
    none = runner.invoke(cli_app, ["tokens", "revoke", "nobody"])
    assert none.exit_code == 2 and "No token named" in none.stderr


def test_serve_without_its_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn now raises ImportError
    result = runner.invoke(cli_app, ["serve", "--port", "1"])
    assert result.exit_code == 2
    assert "pip install 'agent-cli[serve]'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_serve_on_a_taken_port_is_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(cli_app, ["serve", "--port", str(port)])
    assert result.exit_code == 2 and "cannot listen on 127.0.0.1" in result.stderr
    assert "Traceback" not in result.output


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serving(
    *args: str, env: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`agent serve ARGS` in a process of its own on a free loopback port, answering before the
    body runs; killed after it unless the body stopped it (SIGTERM, to check a clean exit)."""
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "agent_cli", "serve", "--port", str(port), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(base, server)
        yield base, server
    finally:
        if server.poll() is None:
            server.kill()
        server.communicate()


def test_a_sigterm_finishes_the_turn_in_flight_then_exits_0(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """A real server on loopback, over a model that takes its time: the customer's message is
    answered whole, then the process ends cleanly."""
    config = tmp_path / "c.toml"
    config.write_text(
        f'[provider]\nname = "slow"\n[profiles.slow]\nkind = "openai"\n'
        f'base_url = "{fake_llm.url}"\nmodel = "qwen"\n'
    )
    fake_llm.queue(Reply(body=openai_text("Hello! How can I help?"), delay=1.5))
    secret = token()
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "agent_cli", "serve", "--port", str(port), "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(base, server)
        with httpx.Client(base_url=base, headers=auth(secret), timeout=120) as http:
            conversation = http.post("/v1/conversations").json()["id"]
            answered: list[httpx.Response] = []
            sender = threading.Thread(
                target=lambda: answered.append(
                    http.post(
                        f"/v1/conversations/{conversation}/messages",
                        json={"id": "m1", "text": "hello"},
                    )
                )
            )
            sender.start()
            _wait_for(lambda: len(fake_llm.requests) >= 1)  # the turn is in the model call
            server.send_signal(signal.SIGTERM)
            sender.join(timeout=120)
        assert answered and answered[0].status_code == 200
        assert answered[0].json()["replies"][0]["text"] == "Hello! How can I help?"
        assert server.wait(timeout=60) == 0
    finally:
        if server.poll() is None:
            server.kill()
        server.communicate()


def _wait_until_up(base: str, server: subprocess.Popen[str]) -> None:
    def up() -> bool:
        assert server.poll() is None, server.communicate()[1]
        try:
            return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    _wait_for(up)


def _wait_for(condition: Any, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_chunked_body_over_the_limit_is_refused_as_it_streams(client: TestClient) -> None:
    """No Content-Length to trust: the body is counted as it comes."""
    secret = token()
    conversation = start(client, secret)

    def chunks() -> Iterator[bytes]:
        yield b'{"id": "m", "text": "'
        for _ in range(30):
            yield b"x" * 1_000
        yield b'"}'

    answer = client.post(
        f"/v1/conversations/{conversation}/messages", headers=auth(secret), content=chunks()
    )
    assert answer.status_code == 413 and answer.json()["error"]["code"] == "too_large"


def test_metrics_count_what_was_served_for_staff_only(client: TestClient) -> None:
    customer, staff = token("customer"), token("staff")
    conversation = start(client, customer)
    say(client, customer, conversation, "m1", "Hello there")
    say(client, customer, conversation, "m1", "Hello there")  # a retry
    assert client.get("/metrics", headers=auth(customer)).status_code == 403
    scraped = client.get("/metrics", headers=auth(staff))
    assert scraped.status_code == 200 and scraped.headers["content-type"].startswith("text/plain")
    text = scraped.text
    assert 'agent_turns_total{status="answered"} 1' in text
    assert 'agent_turns_total{status="repeated"} 1' in text
    assert "agent_turn_seconds_count 2" in text and 'agent_turn_seconds_bucket{le="+Inf"} 2' in text
    route = 'route="/v1/conversations/{id}/messages",status="200"'
    assert f"agent_http_responses_total{{{route}}} 2" in text
    assert 'agent_conversations{status="open"} 1' in text
    assert "agent_approval_queue_depth 0" in text
    assert "# TYPE agent_turn_seconds histogram" in text


def test_a_caller_over_its_rate_is_told_when_to_come_back(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[serve]\ntoken_rate = 4\nconversation_rate = 2\n")
    with TestClient(make_app(setup_for({"config": config, "today": TODAY}))) as limited:
        secret = token()
        conversation = start(limited, secret)
        for n in range(2):
            assert say(limited, secret, conversation, f"m{n}", "hi").status_code == 200
        refused = say(limited, secret, conversation, "m2", "hi")
        assert refused.status_code == 429 and refused.json()["error"]["code"] == "rate_limited"
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
        assert "2 messages to this conversation a minute" in refused.json()["error"]["message"]
        over = limited.post("/v1/conversations", headers=auth(secret))  # the token's 5th call
        assert over.status_code == 429 and "token" in over.json()["error"]["message"]


def test_a_rate_frees_up_as_the_minute_slides() -> None:
    from agent_cli.serve.rates import RateLimit

    now = [1000.0]
    limit = RateLimit(2, clock=lambda: now[0])
    assert [limit.wait_for("a"), limit.wait_for("a")] == [0, 0]
    assert limit.wait_for("a") == 60 and limit.wait_for("b") == 0  # another key is its own
    now[0] += 59.5
    assert limit.wait_for("a") == 1
    now[0] += 0.5
    assert limit.wait_for("a") == 0
    assert RateLimit(0).wait_for("a") == 0  # no limit


# --- the staff routes ----------------------------------------------------------------------------


def _queued(client: TestClient, secret: str) -> str:
    conversation = start(client, secret)
    say(client, secret, conversation, "m1", f"{CANCEL}, my email is kaito.yamamoto@example.com")
    queued = say(client, secret, conversation, "m2", "yes").json()
    assert queued["status"] == "awaiting_approval"
    return conversation


def test_staff_decide_the_queue_over_http_and_the_customer_is_told(client: TestClient) -> None:
    customer, staff = token("customer"), token("staff", name="lead")
    conversation = _queued(client, customer)
    assert client.get("/v1/approvals", headers=auth(customer)).status_code == 403
    pending = client.get("/v1/approvals", headers=auth(staff)).json()["approvals"]
    assert [(i["id"], i["state"], i["tool"]) for i in pending] == [
        (1, "pending", "cancel_pending_order")
    ]
    assert client.get("/v1/approvals/1", headers=auth(staff)).json()["order_code"] == "B200"
    approved = client.post("/v1/approvals/1/approve", headers=auth(staff))
    assert approved.status_code == 200, approved.text
    assert approved.json()["state"] == "approved" and approved.json()["decided_by"] == "token:lead"
    again = client.post("/v1/approvals/1/deny", headers=auth(staff), json={"reason": "late"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "decided"
    shown = client.get(f"/v1/conversations/{conversation}", headers=auth(customer)).json()
    assert shown["status"] == "open" and "approved and made" in shown["messages"][-1]["text"]
    store = _store()
    try:
        order = store.get("B200")
        assert order is not None and order.status == "CANCELLED"
    finally:
        store.close()
    assert client.get("/v1/approvals", headers=auth(staff)).json()["approvals"] == []
    everything = client.get("/v1/approvals?state=all", headers=auth(staff)).json()["approvals"]
    assert len(everything) == 1
    assert client.post("/v1/approvals/9/approve", headers=auth(staff)).status_code == 404
    assert client.get("/v1/approvals/x1", headers=auth(staff)).status_code == 404
    assert client.get("/v1/approvals?state=nope", headers=auth(staff)).status_code == 400


def test_a_denial_over_http_keeps_its_reason_from_the_customer(client: TestClient) -> None:
    customer, staff = token("customer"), token("staff")
    conversation = _queued(client, customer)
    denied = client.post(
        "/v1/approvals/1/deny", headers=auth(staff), json={"reason": "card flagged by fraud check"}
    )
    assert denied.status_code == 200 and denied.json()["state"] == "denied"
    assert "card flagged" in denied.json()["outcome"]
    told = client.get(f"/v1/conversations/{conversation}", headers=auth(customer)).json()
    assert "not approved" in told["messages"][-1]["text"]
    assert "fraud" not in told["messages"][-1]["text"]


def test_staff_take_and_close_tickets_over_http(client: TestClient) -> None:
    staff = token("staff", name="desk-lead")
    store = _store()
    try:
        tickets.open_ticket(store, NewTicket("A101 arrived damaged", "My camera is broken", "run1"))
    finally:
        store.close()
    listed = client.get("/v1/tickets", headers=auth(staff)).json()["tickets"]
    assert [(t["id"], t["status"]) for t in listed] == [(1, "open")]
    claimed = client.post("/v1/tickets/1/claim", headers=auth(staff))
    assert claimed.status_code == 200 and claimed.json()["claimed_by"] == "token:desk-lead"
    assert client.post("/v1/tickets/1/claim", headers=auth(staff)).status_code == 409
    mine = client.get("/v1/tickets?status=claimed", headers=auth(staff)).json()["tickets"]
    assert [(t["id"], t["status"]) for t in mine] == [(1, "claimed")]
    closed = client.post("/v1/tickets/1/close", headers=auth(staff), json={"note": "replaced"})
    assert closed.status_code == 200 and closed.json()["note"] == "replaced"
    assert client.get("/v1/tickets", headers=auth(staff)).json()["tickets"] == []
    assert len(client.get("/v1/tickets?status=all", headers=auth(staff)).json()["tickets"]) == 1
    assert client.get("/v1/tickets/7", headers=auth(staff)).status_code == 404
    assert client.get("/v1/tickets?status=lost", headers=auth(staff)).status_code == 400


def test_staff_search_the_help_centre_over_http(client: TestClient) -> None:
    staff = token("staff")
    hits = client.get("/v1/help/search", params={"q": "how long does shipping take"},
                      headers=auth(staff))  # fmt: skip
    assert hits.status_code == 200 and hits.json()["hits"]
    assert {"id", "title", "passage"} <= set(hits.json()["hits"][0])
    assert client.get("/v1/help/search", headers=auth(staff)).status_code == 400


def test_the_turns_are_logged_in_the_one_run_log_the_server_keeps_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_LOG", str(tmp_path / "runs.db"))
    with TestClient(make_app(setup_for({"today": TODAY}))) as served:
        secret = token()
        conversation = start(served, secret)
        for n in range(3):
            assert say(served, secret, conversation, f"m{n}", "hello").status_code == 200
    listed = runner.invoke(cli_app, ["logs", "list", "--kind", "conversation", "--json"])
    runs = [json.loads(line) for line in listed.stdout.splitlines()]
    assert len(runs) == 3 and {r["session_id"] for r in runs} == {conversation}
    assert {r["status"] for r in runs} == {"answered"}


def test_a_subscriber_hears_the_turns_events_and_a_stop_ends_its_stream(tmp_path: Path) -> None:
    """A real server: the events of a turn arrive as server-sent events, each the record
    `agent ask --json` writes; a SIGTERM with the stream still open ends it and the process
    exits 0 (an open stream must not hold the stop up)."""
    secret = token()
    frames: list[str] = []
    ended = threading.Event()
    with serving() as (base, server):
        with httpx.Client(base_url=base, headers=auth(secret), timeout=120) as http:
            conversation = http.post("/v1/conversations").json()["id"]
            subscribed = threading.Event()

            def listen() -> None:
                with http.stream("GET", f"/v1/conversations/{conversation}/events") as stream:
                    for line in stream.iter_lines():
                        subscribed.set()
                        frames.append(line)
                ended.set()

            listener = threading.Thread(target=listen)
            listener.start()
            assert subscribed.wait(60)
            turn = http.post(
                f"/v1/conversations/{conversation}/messages", json={"id": "m1", "text": "hello"}
            ).json()
            # The desk's message is written as the turn ends, after run_finished went out, and
            # reaches the stream at its next look at the store: wait for both before the stop.
            _wait_for(
                lambda: "event: run_finished" in frames and frames.count("event: message") > 1
            )
            server.send_signal(signal.SIGTERM)
            assert ended.wait(60)  # the stream ended
            listener.join(60)
        assert server.wait(timeout=60) == 0
    kinds = [line.split(": ", 1)[1] for line in frames if line.startswith("event: ")]
    records = [json.loads(line[len("data: ") :]) for line in frames if line.startswith("data: ")]
    assert [r["event"] for r in records] == kinds
    of_turn = [r for r in records if r["event"] not in ("message", "status")]
    assert of_turn[0]["event"] == "run_started" and of_turn[-1]["event"] == "run_finished"
    assert {r["run_id"] for r in of_turn} == {turn["run"]["id"]}
    said = [(r["role"], r["text"]) for r in records if r["event"] == "message"]
    assert said == [("customer", "hello"), ("desk", turn["replies"][0]["text"])]


def test_a_subscriber_hears_what_other_processes_write_to_the_conversation(
    tmp_path: Path,
) -> None:
    """A person's reply and a status change written by another process (here: the test, on the
    store) reach the stream as `message` and `status` events."""
    secret = token()
    frames: list[str] = []
    with serving() as (base, server):
        with httpx.Client(base_url=base, headers=auth(secret), timeout=120) as http:
            conversation = http.post("/v1/conversations").json()["id"]
            store = _store()
            try:  # said before the subscriber came: not news to it
                stored.add_message(store, conversation, "customer", "message", "earlier")
            finally:
                store.close()
            subscribed = threading.Event()

            def listen() -> None:
                events = f"/v1/conversations/{conversation}/events"
                with contextlib.suppress(httpx.HTTPError), http.stream("GET", events) as stream:
                    for line in stream.iter_lines():
                        subscribed.set()
                        frames.append(line)

            threading.Thread(target=listen, daemon=True).start()
            assert subscribed.wait(60)
            store = _store()
            try:
                stored.add_message(store, conversation, "staff", "message", "Hi, Mia here.")
                stored.set_status(store, conversation, "handed_over")
            finally:
                store.close()
            _wait_for(lambda: "event: status" in frames)
            server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
    records = [json.loads(line[len("data: ") :]) for line in frames if line.startswith("data: ")]
    assert [(r["event"], r.get("role"), r.get("text"), r.get("status")) for r in records] == [
        ("message", "staff", "Hi, Mia here.", None),
        ("status", None, None, "handed_over"),
    ]


def test_staff_answer_a_handed_over_conversation_and_hand_it_back(
    client: TestClient, tmp_path: Path
) -> None:
    customer, staff = token("customer"), token("staff")
    conversation = start(client, customer)
    script = tmp_path / "handover.json"
    script.write_text(
        json.dumps(
            [
                {"type": "tool", "tool": "transfer_to_human_agents", "args": {"summary": "Help"}},
                {"type": "final", "answer": "A colleague will follow up here."},
            ]
        )
    )
    from agent_cli.runtime.converse import answer_message

    handed = answer_message(setup_for({"script": script}), conversation, "a person please", "m1")
    assert handed.status == "handed_over"
    waiting = say(client, customer, conversation, "m2", "hello?").json()
    assert waiting["replies"] == [] and waiting["status"] == "handed_over"
    sent = client.post("/v1/tickets/1/reply", headers=auth(staff), json={"text": "Hi, I'm here."})
    assert sent.status_code == 200 and sent.json()["conversation"] == conversation
    closed = client.post("/v1/tickets/1/close", headers=auth(staff), json={"note": "done"})
    assert closed.status_code == 200
    shown = client.get(f"/v1/conversations/{conversation}", headers=auth(customer)).json()
    assert shown["status"] == "open"
    assert [(m["role"], m["text"]) for m in shown["messages"]][-1] == ("staff", "Hi, I'm here.")
    late = client.post("/v1/tickets/1/reply", headers=auth(staff), json={"text": "again"})
    assert late.status_code == 409
    bad = client.post(
        "/v1/tickets/1/close", headers=auth(staff), json={"close_conversation": "yes"}
    )
    assert bad.status_code == 400


def test_doctor_says_whether_serve_can_run_and_with_what(monkeypatch: pytest.MonkeyPatch) -> None:
    def checked() -> dict[str, Any]:
        lines = runner.invoke(cli_app, ["doctor", "--json"]).stdout.splitlines()
        return next(r for r in map(json.loads, lines) if r["check"] == "agent serve")

    first = checked()
    assert first["ok"] is True and "0 live token(s) (agent tokens create NAME" in first["detail"]
    token()
    assert "1 live token(s), 0 conversation(s)" in checked()["detail"]
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a)
    )
    missing = checked()
    assert missing["ok"] is None and "pip install 'agent-cli[serve]'" in missing["detail"]


def test_a_caller_that_leaves_while_waiting_for_its_conversation_leaves_nothing_behind() -> None:
    import asyncio

    from agent_cli.serve.app import _Turn

    locks: dict[str, asyncio.Lock] = {}
    waiting: dict[str, int] = {}

    async def scene() -> list[str]:
        order: list[str] = []
        async with _Turn(locks, waiting, "c1"):
            order.append("first")
            second = asyncio.create_task(_Turn(locks, waiting, "c1").__aenter__())
            await asyncio.sleep(0.01)
            assert waiting == {"c1": 2}
            second.cancel()  # the client hung up while waiting
            with pytest.raises(asyncio.CancelledError):
                await second
        async with _Turn(locks, waiting, "c1"):
            order.append("third")
        return order

    assert asyncio.run(scene()) == ["first", "third"]
    assert locks == {} and waiting == {}


def test_errors_a_client_should_retry_say_when() -> None:
    from agent_cli.errors import ConversationBusy, ConversationClosed, StoreBusy
    from agent_cli.serve.errors import from_agent_error

    busy = from_agent_error(ConversationBusy("held elsewhere"))
    assert (busy.status, busy.code, busy.headers()) == (409, "busy", {"Retry-After": "1"})
    down = from_agent_error(StoreBusy("locked"))
    assert (down.status, down.headers()) == (503, {"Retry-After": "5"})
    closed = from_agent_error(ConversationClosed("closed"))
    assert (closed.status, closed.headers()) == (409, {})  # retrying will not help
