"""OpenTelemetry traces (issue 54): runs exported as GenAI spans over OTLP/HTTP, both encodings,
to a loopback receiver (tests/otlp_receiver.py); every run in a process of its own, as a user
runs `agent`, since a process exports through one provider."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.contract.test_serve import auth, serving, token
from tests.fakellm import FakeLLM, error, openai_calls
from tests.otlp_receiver import OtlpReceiver

TODAY = "2026-10-13"
ENCODINGS = ["http/protobuf", "http/json"]


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    made = OtlpReceiver()
    yield made
    made.stop()


def _agent(
    *args: str, env: dict[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_cli", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        input=stdin,
        timeout=300,
        check=False,
    )


def _otel(receiver: OtlpReceiver, encoding: str = "http/protobuf", **more: str) -> dict[str, str]:
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
        "OTEL_EXPORTER_OTLP_PROTOCOL": encoding,
        **more,
    }


def _by_name(spans: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    return [s for s in spans if s["name"].startswith(prefix)]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_run_is_an_invoke_agent_span_over_its_chat_and_tool_spans(
    receiver: OtlpReceiver, encoding: str
) -> None:
    env = _otel(
        receiver,
        encoding,
        OTEL_SERVICE_NAME="shop-desk",
        OTEL_RESOURCE_ATTRIBUTES="deployment.environment=test",
        OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20s3cret",
    )
    ran = _agent("ask", "--today", TODAY, "-q", "Is order A100 refundable?", env=env)
    assert ran.returncode == 0, ran.stderr
    spans = receiver.wait_for(6)
    (run,) = _by_name(spans, "invoke_agent")
    chats, tools = _by_name(spans, "chat "), _by_name(spans, "execute_tool ")
    assert len(chats) == 3 and [t["name"] for t in tools] == [
        "execute_tool lookup_order",
        "execute_tool refund_policy",
    ]
    assert all(s["parent"] == run["span"] and s["trace"] == run["trace"] for s in chats + tools)
    assert run["parent"] is None
    assert run["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    assert run["attributes"]["gen_ai.provider.name"] == "offline"
    assert run["attributes"]["agent_cli.run.status"] == "answered"
    assert run["attributes"]["agent_cli.intent"] == "refund"
    assert run["attributes"]["agent_cli.customer.identified"] is False
    assert "agent_cli.consent" not in run["attributes"]
    assert chats[0]["attributes"]["gen_ai.request.model"] == "playbook"
    assert chats[0]["attributes"]["gen_ai.response.finish_reasons"] == ["tool_call"]
    assert chats[-1]["attributes"]["gen_ai.response.finish_reasons"] == ["stop"]
    assert tools[0]["attributes"]["gen_ai.tool.name"] == "lookup_order"
    assert "gen_ai.tool.call.id" not in tools[0]["attributes"]  # the playbook gives none
    assert tools[0]["attributes"]["agent_cli.outcome.kind"] == "read"
    assert run["resource"]["service.name"] == "shop-desk"
    assert run["resource"]["deployment.environment"] == "test"
    assert run["schema"] == "https://opentelemetry.io/schemas/1.37.0"
    assert receiver.got.headers[0]["authorization"] == "Bearer s3cret"
    assert set(receiver.got.encodings) == {encoding.split("/")[1]}
    assert "gen_ai.input.messages" not in run["attributes"]  # content is off by default
    assert "gen_ai.tool.call.arguments" not in tools[0]["attributes"]


def test_content_is_exported_only_when_asked_for(receiver: OtlpReceiver) -> None:
    env = _otel(receiver, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")
    ran = _agent("ask", "--today", TODAY, "-q", "Is order A100 refundable?", env=env)
    assert ran.returncode == 0, ran.stderr
    spans = receiver.wait_for(6)
    (run,) = _by_name(spans, "invoke_agent")
    asked = json.loads(run["attributes"]["gen_ai.input.messages"])
    assert asked[0]["parts"][0]["content"] == "Is order A100 refundable?"
    assert (
        "A100" in json.loads(run["attributes"]["gen_ai.output.messages"])[0]["parts"][0]["content"]
    )
    (lookup,) = _by_name(spans, "execute_tool lookup_order")
    assert json.loads(lookup["attributes"]["gen_ai.tool.call.arguments"]) == {"order_code": "A100"}


def test_a_dead_endpoint_costs_the_run_nothing_and_is_said_once() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}"}
    plain = _agent("ask", "--today", TODAY, "-q", "Is order A100 refundable?", env={})
    ran = _agent("ask", "--today", TODAY, "-q", "Is order A100 refundable?", env=env)
    assert ran.returncode == 0 and ran.stdout == plain.stdout
    lines = [line for line in ran.stderr.splitlines() if "could not be exported" in line]
    assert len(lines) == 1 and "runs were not affected" in lines[0]


def test_a_failing_model_is_an_error_on_its_chat_span(
    receiver: OtlpReceiver, fake_llm: FakeLLM
) -> None:
    fake_llm.queue(openai_calls(("lookup_order", {"order_code": "A100"})))
    fake_llm.queue(error(400, "this model refuses"))
    env = {**_otel(receiver), "OPENAI_API_KEY": "sk-test-key"}
    provider = ["--provider", "openai", "--base-url", fake_llm.url, "--today", TODAY]
    ran = _agent("ask", *provider, "-q", "Is order A100 refundable?", env=env)
    assert ran.returncode != 0
    spans = receiver.wait_for(4)
    answered, failed = _by_name(spans, "chat ")
    (run,) = _by_name(spans, "invoke_agent")
    (lookup,) = _by_name(spans, "execute_tool lookup_order")
    assert lookup["attributes"]["gen_ai.tool.call.id"] == "call_lookup_order_0"
    assert answered["attributes"]["gen_ai.usage.input_tokens"] == 100
    assert answered["attributes"]["gen_ai.usage.output_tokens"] == 20
    assert "error.type" not in answered["attributes"]
    assert failed["attributes"]["error.type"] == "400"
    assert failed["status"].get("code") in (2, "STATUS_CODE_ERROR")
    assert run["attributes"]["gen_ai.provider.name"] == "openai"
    assert "error.type" in run["attributes"]


def test_a_desk_write_and_a_hand_over_carry_the_desks_facts(receiver: OtlpReceiver) -> None:
    env = _otel(receiver)
    made = _agent("conversations", "start", env=env)
    conversation = made.stdout.strip()
    for text in ("I want to cancel order B200, my email is kaito.yamamoto@example.com", "yes"):
        said = _agent("ask", "--today", TODAY, "-q", "--conversation", conversation, text, env=env)
        assert said.returncode in (0, 4, 5), said.stderr
    handed = _agent("ask", "--today", TODAY, "-q", "I want to talk to a real person", env=env)
    assert handed.returncode == 6, handed.stderr
    spans = receiver.wait_for(10)
    runs = _by_name(spans, "invoke_agent")
    assert [r["attributes"].get("gen_ai.conversation.id") for r in runs[:2]] == [conversation] * 2
    proposing, confirming = runs[0]["attributes"], runs[1]["attributes"]
    assert proposing["agent_cli.intent"] == "cancel"
    assert proposing["agent_cli.customer.identified"] is True
    assert confirming["agent_cli.customer.identified"] is True  # by the first message
    assert (proposing["agent_cli.desk.proposed"], confirming["agent_cli.desk.queued"]) == (1, 1)
    assert (proposing["agent_cli.consent"], confirming["agent_cli.consent"]) == ("asked", "given")
    queued = [
        attributes
        for r in runs
        for name, attributes in zip(r["events"], r["event_attributes"], strict=True)
        if name == "agent_cli.approval"
    ]
    assert queued and queued[0]["agent_cli.approval.tool"] == "cancel_pending_order"
    assert queued[0]["agent_cli.approval.queued"] == 1
    (transfer,) = _by_name(spans, "execute_tool transfer_to_human_agents")
    assert transfer["attributes"]["agent_cli.ticket"] == 1
    assert runs[-1]["attributes"]["agent_cli.run.status"] == "handed_over"


def test_without_an_endpoint_nothing_of_opentelemetry_is_imported() -> None:
    probe = (
        "import sys, agent_cli;"
        f"agent_cli.ask('Is order A100 refundable?', today='{TODAY}');"
        "print(sorted(m for m in sys.modules if m.startswith(('opentelemetry', 'google'))))"
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip().splitlines()[-1] == "[]"


def test_a_traceparent_sent_to_agent_serve_is_continued(
    receiver: OtlpReceiver, tmp_path: Path
) -> None:
    secret = token()
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    with serving(env=_otel(receiver)) as (base, server):
        with httpx.Client(base_url=base, headers=auth(secret), timeout=120) as http:
            conversation = http.post("/v1/conversations").json()["id"]
            answered = http.post(
                f"/v1/conversations/{conversation}/messages",
                json={"id": "m1", "text": "hello"},
                headers={"traceparent": f"00-{trace_id}-{parent_id}-01"},
            )
            assert answered.status_code == 200
        spans = receiver.wait_for(2)
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
    (run,) = _by_name(spans, "invoke_agent")
    assert (run["trace"], run["parent"]) == (trace_id, parent_id)
    assert run["attributes"]["gen_ai.conversation.id"] == conversation


def test_doctor_says_whether_runs_are_exported_and_the_endpoint_answers(
    receiver: OtlpReceiver,
) -> None:
    def checked(env: dict[str, str]) -> dict[str, Any]:
        lines = _agent("doctor", "--json", env=env).stdout.splitlines()
        return next(r for r in map(json.loads, lines) if r["check"] == "OpenTelemetry")

    off = checked({})
    assert off["ok"] is None and "not exported" in off["detail"]
    live = checked(_otel(receiver, "http/json"))
    assert live["ok"] is True and f"{receiver.url}/v1/traces (http/json)" in live["detail"]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dead = checked({"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}"})
    assert dead["ok"] is None and "does not answer" in dead["detail"]
    grpc = checked({**_otel(receiver), "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert "not supported" in grpc["detail"]
