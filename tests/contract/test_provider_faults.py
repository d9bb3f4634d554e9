"""What the provider layer does when the service misbehaves: retries, limits, clear errors."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
from typer.testing import Result

from agent_cli.core.decisions import Usage
from agent_cli.core.seams import DeadlineExceeded, ModelCall
from agent_cli.errors import (
    InvalidProviderResponse,
    ProviderBillingError,
    ProviderError,
    ProviderRateLimited,
    ProviderUnavailable,
)
from agent_cli.providers.http import Channel, Endpoint, ReplyReading
from agent_cli.providers.retries import RetryPolicy, retry_after_seconds
from agent_cli.text import mask_secrets
from tests.contract.test_providers import KEY, ask, final, records
from tests.fakellm import FakeLLM, Reply, anthropic_text, error, openai_calls, openai_text


def model_calls(result: Result) -> list[dict[str, Any]]:
    return [r for r in records(result) if r["event"] == "model_call"]


def test_429_with_retry_after_ms_waits_then_succeeds(fake_llm: FakeLLM) -> None:
    fake_llm.queue(
        error(429, "slow down", type_="rate_limit_error", headers={"retry-after-ms": "50"}),
        openai_text("ok"),
    )
    result = ask(fake_llm, "openai")
    assert result.exit_code == 0, result.stderr
    calls = model_calls(result)
    assert [(c["attempt"], c["status"], c["retry_in_s"]) for c in calls] == [
        (1, 429, 0.05),
        (2, 200, None),
    ]
    assert calls[1]["usage"] == {"input_tokens": 100, "output_tokens": 20}
    assert fake_llm.connections == 1


def test_429_asking_for_too_long_a_wait_fails_at_once(fake_llm: FakeLLM) -> None:
    fake_llm.queue(error(429, "slow down", headers={"retry-after": "3600"}))
    started = time.monotonic()
    result = ask(fake_llm, "openai")
    assert time.monotonic() - started < 30  # not the hour asked for (wide: a busy machine)
    assert result.exit_code == 1
    assert "asks to wait 3600 s, longer than the 60 s we wait; try again after" in result.stderr
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize(
    "reply",
    [
        error(
            429,
            "You exceeded your current quota",
            type_="insufficient_quota",
            code="insufficient_quota",
        ),
        Reply(
            429,
            {
                "type": "error",
                "error": {
                    "type": "rate_limit_error",
                    "message": "spend limit",
                    "details": {"error_code": "enforced_spend_limit_reached"},
                },
            },
        ),
        error(402, "payment required", type_="billing_error"),
    ],
)
def test_quota_and_billing_errors_are_not_retried(fake_llm: FakeLLM, reply: Reply) -> None:
    fake_llm.queue(reply)
    result = ask(fake_llm, "openai")
    assert result.exit_code == 1
    assert (
        "Billing or quota problem" in result.stderr
        and "check your plan and billing" in result.stderr
    )
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_overloaded_retries_with_backoff_then_fails_keeping_the_steps(
    fake_llm: FakeLLM, provider: str
) -> None:
    status = 529 if provider == "anthropic" else 503
    first = openai_calls(("lookup_order", {"order_code": "A100"})) if provider == "openai" else None
    if first:
        fake_llm.queue(first)
    overloaded = error(status, "Overloaded", type_="overloaded_error")
    fake_llm.queue(overloaded, overloaded, overloaded)
    result = ask(fake_llm, provider)
    assert result.exit_code == 1
    assert f"Provider overloaded or unavailable ({status}) after 3 attempts" in result.stderr
    calls = model_calls(result)
    waits = [c["retry_in_s"] for c in calls if c["retry_in_s"] is not None]
    assert len(waits) == 2 and 0.375 <= waits[0] <= 0.5 and 0.75 <= waits[1] <= 1.0
    assert final(result)["status"] == "error"
    if first:
        assert any(r["event"] == "observation" for r in records(result))


@pytest.mark.parametrize(
    ("status", "fragment"),
    [
        (400, "The provider refused the request (400): bad"),
        (401, "Authentication failed (401): the key in OPENAI_API_KEY was rejected: bad"),
        (403, "Permission denied (403): bad"),
        (404, "Not found (404) at "),
        (413, "Request too large (413): bad"),
        (422, "The provider refused the request (422): bad"),
    ],
)
def test_client_errors_are_sent_once(fake_llm: FakeLLM, status: int, fragment: str) -> None:
    fake_llm.queue(error(status, "bad"))
    result = ask(fake_llm, "openai")
    assert result.exit_code == 1
    assert fragment in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert len(fake_llm.requests) == 1


def test_x_should_retry_false_is_obeyed(fake_llm: FakeLLM) -> None:
    fake_llm.queue(error(500, "boom", headers={"x-should-retry": "false"}))
    result = ask(fake_llm, "openai")
    assert result.exit_code == 1
    assert len(fake_llm.requests) == 1


def test_a_server_that_never_answers_hits_the_run_deadline(fake_llm: FakeLLM) -> None:
    fake_llm.queue(Reply(body=openai_text("late"), delay=60))
    started = time.monotonic()
    result = ask(fake_llm, "openai", "--timeout", "1")
    assert time.monotonic() - started < 20  # far from the server's 60 s, whatever the load
    assert result.exit_code == 3
    assert final(result)["status"] == "timeout"
    assert "timed out after 1 s" in result.stderr


def test_a_server_that_trickles_bytes_hits_the_run_deadline(fake_llm: FakeLLM) -> None:
    fake_llm.queue(Reply(body=openai_text("late"), trickle=0.5))  # over a minute of body
    started = time.monotonic()
    result = ask(fake_llm, "openai", "--timeout", "1")
    assert time.monotonic() - started < 20
    assert result.exit_code == 3 and final(result)["status"] == "timeout"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_server_that_trickles_its_status_line_and_headers_hits_the_run_deadline(
    fake_llm: FakeLLM, provider: str
) -> None:
    body = openai_text("late") if provider == "openai" else anthropic_text("late")
    fake_llm.queue(Reply(body=body, trickle_head=1.0))  # ~80 bytes: 80 s of headers
    started = time.monotonic()
    result = ask(fake_llm, provider, "--timeout", "2")
    assert time.monotonic() - started < 20  # the run's deadline, not the server's 80 s
    assert result.exit_code == 3 and final(result)["status"] == "timeout"
    assert "timed out after 2 s" in result.stderr


@pytest.mark.parametrize("body", ["null", "3", "true", '"text"'])
def test_a_200_with_a_json_scalar_is_an_invalid_response(fake_llm: FakeLLM, body: str) -> None:
    fake_llm.queue(Reply(body=body, headers={"content-type": "application/json"}))
    result = ask(fake_llm, "openai", "--no-stream")
    assert result.exit_code == 1
    assert "that is not a JSON object" in result.stderr


def test_a_200_with_html_is_an_invalid_response(fake_llm: FakeLLM) -> None:
    fake_llm.queue(Reply(200, "<html><body>Gateway login</body></html>", {"set-cookie": "s=1"}))
    result = ask(fake_llm, "openai")
    assert result.exit_code == 1
    assert "Invalid provider response" in result.stderr and "text/html" in result.stderr
    assert "set-cookie" not in result.stderr and "Gateway login" not in result.stderr


def test_connection_refused_is_retried_then_explained() -> None:
    from typer.testing import CliRunner

    from agent_cli.cli import app

    result = CliRunner().invoke(
        app,
        ["ask", "q", "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1"],
        env={"OPENAI_API_KEY": KEY},
    )
    assert result.exit_code == 1
    assert "Cannot reach http://127.0.0.1:9/v1/chat/completions after 3 attempts" in result.stderr


# --- the channel on its own, over httpx.MockTransport --------------------------------------------


def channel(handler: Any, *, sleeps: list[float], retries: int = 2) -> Channel:
    def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    return Channel(
        Endpoint(
            base_url="http://model.test",
            headers={"authorization": f"Bearer {KEY}"},
            secret=KEY,
            key_env="OPENAI_API_KEY",
            connect_timeout=1,
            read_timeout=1,
            retry=RetryPolicy(max_retries=retries),
        ),
        transport=httpx.MockTransport(handler),
        sleep=sleep,
        jitter=lambda: 1.0,
    )


def statuses(*codes: int, headers: dict[str, str] | None = None) -> Any:
    queue = list(codes)

    def handler(request: httpx.Request) -> httpx.Response:
        code = queue.pop(0)
        body = {"ok": True} if code == 200 else {"error": {"message": f"status {code}"}}
        return httpx.Response(code, json=body, headers=headers or {})

    return handler


def post(ch: Channel, calls: list[ModelCall] | None = None) -> dict[str, Any]:
    return ch.request_json(
        "POST",
        "/x",
        {},
        deadline=time.monotonic() + 30,
        on_call=(calls if calls is not None else []).append,
    )


def test_backoff_doubles_and_is_capped() -> None:
    sleeps: list[float] = []
    ch = channel(statuses(500, 502, 503, 504, 529, 500, 503, 200), sleeps=sleeps, retries=7)
    assert post(ch) == {"ok": True}
    assert sleeps == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]  # never past the SDKs' 8 s


def test_retried_statuses_and_not_retried_ones() -> None:
    for code in (408, 409, 429, 500, 529):
        sleeps: list[float] = []
        assert post(channel(statuses(code, 200), sleeps=sleeps)) == {"ok": True}
        assert len(sleeps) == 1
    for code in (400, 401, 403, 404, 413, 422):
        sleeps = []
        with pytest.raises(ProviderError):
            post(channel(statuses(code), sleeps=sleeps))
        assert sleeps == []


def test_x_should_retry_true_retries_a_400() -> None:
    sleeps: list[float] = []
    assert post(channel(statuses(400, 200, headers={"x-should-retry": "true"}), sleeps=sleeps)) == {
        "ok": True
    }
    assert len(sleeps) == 1


def test_retry_after_forms() -> None:
    now = time.time()
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}, now) == 0.25
    assert retry_after_seconds({"retry-after": "3"}, now) == 3.0
    when = format_datetime(datetime.fromtimestamp(now, UTC) + timedelta(seconds=30), usegmt=True)
    assert 28 <= (retry_after_seconds({"retry-after": when}, now) or 0) <= 31
    assert retry_after_seconds({"retry-after": "soon"}, now) is None
    assert retry_after_seconds({}, now) is None


def test_ctrl_c_during_a_retry_wait_stops_at_once() -> None:
    def interrupted(seconds: float) -> None:
        raise KeyboardInterrupt

    ch = channel(statuses(503, 200), sleeps=[])
    ch._sleep = interrupted  # the real time.sleep raises KeyboardInterrupt the same way
    with pytest.raises(KeyboardInterrupt):
        post(ch)


def test_a_wait_past_the_deadline_ends_the_request_now() -> None:
    sleeps: list[float] = []
    ch = channel(statuses(503, 200, headers={"retry-after": "20"}), sleeps=sleeps)
    with pytest.raises(DeadlineExceeded):
        ch.request_json("POST", "/x", {}, deadline=time.monotonic() + 5, on_call=lambda _: None)
    assert sleeps == []


def test_attempts_are_reported_with_usage() -> None:
    calls: list[ModelCall] = []
    ch = channel(statuses(503, 200), sleeps=[])
    ch.request_json(
        "POST",
        "/x",
        {},
        deadline=time.monotonic() + 30,
        on_call=calls.append,
        reading=ReplyReading(usage_of=lambda _: Usage(7, 3)),
    )
    assert [(c.attempt, c.status, c.retry_in_s) for c in calls] == [(1, 503, 0.5), (2, 200, None)]
    assert calls[1].usage == Usage(7, 3)


def test_error_messages_mask_an_echoed_key_and_stay_short() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"error": {"message": f"bad key {KEY} " + "x" * 1000}})

    with pytest.raises(ProviderError) as caught:
        post(channel(handler, sleeps=[]))
    assert KEY not in str(caught.value) and "***" in str(caught.value)
    assert len(str(caught.value)) < 500


def test_a_short_key_is_not_searched_for_in_messages(fake_llm: FakeLLM) -> None:
    fake_llm.queue(error(400, "'text' is not one of 'json_object', 'xml'", type_="invalid_request"))
    result = ask(fake_llm, "openai", env={"OPENAI_API_KEY": "x"})
    assert result.exit_code == 1
    assert "'text' is not one of 'json_object', 'xml'" in result.stderr
    assert "***" not in result.stderr


def test_masking_covers_long_keys_their_escaped_forms_and_token_shapes() -> None:
    key = "abcd\nefgh-1234"
    assert mask_secrets(f"key {key} and {repr(key)[1:-1]}", key) == "key *** and ***"
    assert mask_secrets("got Authorization: Bearer abc.def-ghi, retry", None) == (
        "got Authorization: Bearer ***, retry"
    )
    assert mask_secrets("Incorrect API key provided: sk-proj-AbC123xyz_-9.", None) == (
        "Incorrect API key provided: sk-***."
    )
    assert (
        mask_secrets("task-manager and sk-short stay", "short") == "task-manager and sk-short stay"
    )


def test_exhausted_errors_name_the_kind() -> None:
    with pytest.raises(ProviderRateLimited, match=r"Rate limited \(429\) after 3 attempts"):
        post(channel(statuses(429, 429, 429), sleeps=[]))
    with pytest.raises(ProviderUnavailable):
        post(channel(statuses(500, 500, 500), sleeps=[]))
    with pytest.raises(ProviderBillingError):
        post(
            channel(
                lambda r: httpx.Response(429, json={"error": {"code": "insufficient_quota"}}),
                sleeps=[],
            )
        )


def test_a_non_object_json_body_is_invalid() -> None:
    with pytest.raises(InvalidProviderResponse):
        post(channel(lambda r: httpx.Response(200, json=[1, 2]), sleeps=[]))


def test_anthropic_error_body_is_read(fake_llm: FakeLLM) -> None:
    fake_llm.queue(
        Reply(
            400,
            {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "prompt is too long"},
            },
        )
    )
    result = ask(fake_llm, "anthropic")
    assert result.exit_code == 1
    assert "The provider refused the request (400): prompt is too long" in result.stderr


@pytest.mark.parametrize("stream", [False, True])
def test_a_reply_the_run_gives_up_on_is_hung_up_so_the_server_can_stop(
    fake_llm: FakeLLM, stream: bool
) -> None:
    """A local server generates for whoever waits: at the deadline the connection is closed,
    which is how llama.cpp and vLLM learn to stop."""
    body = openai_text(" ".join(["word"] * 200))
    slow = Reply(body=body, token_delay=1.0) if stream else Reply(body=body, delay=120)
    fake_llm.queue(slow)
    result = ask(fake_llm, "openai", "--timeout", "2", *([] if stream else ["--no-stream"]))
    assert result.exit_code == 3 and final(result)["status"] == "timeout"
    deadline = time.monotonic() + 30
    while fake_llm.abandoned == 0:
        assert time.monotonic() < deadline, "the server was left generating for nobody"
        time.sleep(0.05)
    assert fake_llm.abandoned == 1 and len(fake_llm.requests) == 1


def test_credentials_in_the_base_url_are_never_shown_nor_recorded(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from agent_cli.cli import app

    runner = CliRunner()
    config = tmp_path / "config.toml"
    config.write_text("[provider]\nmax_retries = 0\n")
    trace = tmp_path / "t.jsonl"
    base = ["--provider", "openai", "--base-url", "http://bob:hunter2pass@127.0.0.1:9/v1"]
    base += ["--config", str(config)]
    env = {"OPENAI_API_KEY": KEY}
    asked = runner.invoke(
        app, ["ask", "Is A100 refundable?", *base, "--trace", str(trace)], env=env
    )
    assert asked.exit_code == 1 and "Cannot reach http://bob:***@127.0.0.1:9" in asked.stderr
    shown = [
        asked,
        runner.invoke(app, ["config", "show", *base], env=env),
        runner.invoke(app, ["config", "show", "--json", *base], env=env),
        runner.invoke(app, ["doctor", *base], env=env),
    ]
    for result in shown:
        assert "hunter2pass" not in result.stdout + result.stderr
    assert "hunter2pass" not in trace.read_text()
    assert "bob:***@" in shown[2].stdout  # the rest of the URL still says where it points


def test_one_watchdog_thread_serves_every_attempt_of_a_channel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading

    from tests.helpers import mock_channel

    started: list[str] = []
    real_start = threading.Thread.start

    def start(thread: threading.Thread) -> None:
        started.append(thread.name)
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    channel = mock_channel(lambda request: httpx.Response(200, json={"ok": True}))
    for _ in range(20):
        answer = channel.request_json(
            "POST", "/x", {}, deadline=time.monotonic() + 60, on_call=lambda _: None
        )
        assert answer == {"ok": True}
    channel.close()
    assert started.count("watchdog") == 1 and len(started) == 1  # not a Timer per request


def test_a_run_wakes_its_watchdog_once_not_at_every_attempt() -> None:
    """Each wake-up is a context switch; every attempt of a run carries the run's deadline."""
    from tests.helpers import mock_channel

    channel = mock_channel(lambda request: httpx.Response(200, json={"ok": True}))
    wakes: list[int] = []
    condition = channel._watchdog._changed
    real_notify = condition.notify
    condition.notify = lambda n=1: (wakes.append(n), real_notify(n))[1]  # type: ignore[method-assign]
    deadline = time.monotonic() + 60
    for _ in range(20):
        answer = channel.request_json("POST", "/x", {}, deadline=deadline, on_call=lambda _: None)
        assert answer == {"ok": True}
    assert len(wakes) <= 1  # 0, but for a preemption between two reads of the clock
    before = len(wakes)
    waited = time.monotonic() + 60  # a busy machine may not have run the thread yet
    while not channel._watchdog._waiting and time.monotonic() < waited:
        time.sleep(0.01)
    earlier = time.monotonic() + 30  # a sooner deadline (another run) must wake it at once
    channel.request_json("POST", "/x", {}, deadline=earlier, on_call=lambda _: None)
    assert len(wakes) == before + 1
    channel.close()


def test_the_watchdog_fires_once_after_its_time_and_not_once_disarmed() -> None:
    import threading

    from agent_cli.providers.watchdog import Watchdog

    fired = threading.Event()
    watchdog = Watchdog()
    watchdog.arm(60, fired.set)
    watchdog.disarm()  # an attempt that ended in time
    watchdog.arm(0.01, fired.set)  # re-armed for the next attempt, which hangs
    assert fired.wait(30)
    fired.clear()
    watchdog.arm(2, fired.set)  # 2 s: a busy machine does not stall that long between lines
    watchdog.disarm()
    assert not fired.wait(3)  # disarmed: the alarm never comes
    watchdog.close()
