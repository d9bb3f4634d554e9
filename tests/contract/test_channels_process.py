"""The channels with real `agent serve` processes on loopback (issue 53): a webhook is answered
before its turn has run (a slow model never makes the channel wait), and a process killed
between a turn and its delivery loses nothing and sends nothing twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from agent_cli.store import conversations as stored
from agent_cli.store import outbox
from tests.channel_fakes import FakeChatwoot
from tests.contract.test_channels import CW_SECRET, _chatwoot_event, _signed, _store
from tests.contract.test_serve import _free_port, _wait_for, _wait_until_up, serving
from tests.fakellm import FakeLLM, Reply, openai_text


def _serve(config: Path, port: int, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agent_cli", "serve", "--port", str(port), "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )


def _post_chatwoot(base: str, conversation: int, message: int, text: str) -> httpx.Response:
    body = json.dumps(_chatwoot_event(conversation, message, text)).encode()
    stamp, signature = _signed(CW_SECRET, body)
    headers = {
        "X-Chatwoot-Signature": signature,
        "X-Chatwoot-Timestamp": stamp,
        "X-Chatwoot-Delivery": f"d-{message}",
    }
    return httpx.post(f"{base}/channels/chatwoot", content=body, headers=headers, timeout=60)


def _rows() -> list[outbox.Row]:
    store = _store()
    try:
        return [r for c in stored.listed(store) for r in outbox.of_conversation(store, c.id)]
    finally:
        store.close()


def _unanswered() -> list[str]:
    store = _store()
    try:
        return [
            m.text
            for c in stored.listed(store)
            for m in stored.messages(store, c.id)
            if m.role == "customer" and m.reply is None
        ]
    finally:
        store.close()


def test_a_slow_model_never_keeps_chatwoot_waiting(fake_llm: FakeLLM, tmp_path: Path) -> None:
    chatwoot = FakeChatwoot()
    config = tmp_path / "c.toml"
    config.write_text(
        f'[provider]\nname = "slow"\n[profiles.slow]\nkind = "openai"\nbase_url = "{fake_llm.url}"'
        f'\nmodel = "qwen"\n[serve]\noutbox_poll_s = 0.1\n[serve.chatwoot]\nbase_url = '
        f'"{chatwoot.url}"\naccount_id = 7\n'
    )
    fake_llm.queue(Reply(body=openai_text("Let me check that for you."), delay=5))
    env = {"CHATWOOT_API_TOKEN": chatwoot.state.token, "CHATWOOT_BOT_SECRET": CW_SECRET}
    try:
        with serving("--config", str(config), env=env) as (base, server):
            answered = _post_chatwoot(base, 80, 1201, "hello there")
            assert answered.status_code == 200 and answered.json()["status"] == "accepted"
            assert _unanswered() == ["hello there"]  # the 200 came before the turn's answer
            (reply,) = chatwoot.wait_for(1, seconds=120, path="/messages")
            assert reply.body["content"] == "Let me check that for you."
            server.send_signal(signal.SIGTERM)
            assert server.wait(timeout=60) == 0
    finally:
        chatwoot.stop()


def test_a_process_killed_between_turn_and_delivery_delivers_once_after(tmp_path: Path) -> None:
    chatwoot = FakeChatwoot()
    chatwoot.fail(*([503] * 1000))  # Chatwoot is down: the reply waits in the outbox
    config = tmp_path / "c.toml"
    config.write_text(
        f'[serve]\noutbox_poll_s = 0.1\n[serve.chatwoot]\nbase_url = "{chatwoot.url}"\n'
        "account_id = 7\n"
    )
    env = {"CHATWOOT_API_TOKEN": chatwoot.state.token, "CHATWOOT_BOT_SECRET": CW_SECRET}
    base_port = _free_port()
    first = _serve(config, base_port, env)
    try:
        _wait_until_up(f"http://127.0.0.1:{base_port}", first)
        _post_chatwoot(f"http://127.0.0.1:{base_port}", 90, 1301, "Where is order A101?")
        _wait_for(lambda: any(r.attempts >= 1 for r in _rows()))
        first.kill()  # no goodbye: SIGKILL
        first.wait(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
        first.communicate()
    assert [r.status for r in _rows()] == ["pending"]
    chatwoot.state.fail.clear()  # Chatwoot is back
    port = _free_port()
    second = _serve(config, port, env)
    try:
        _wait_until_up(f"http://127.0.0.1:{port}", second)
        chatwoot.wait_for(1, seconds=120, path="/messages")
        _wait_for(lambda: [r.status for r in _rows()] == ["sent"])
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=60) == 0
    finally:
        if second.poll() is None:
            second.kill()
        second.communicate()
        chatwoot.stop()
    assert len(chatwoot.messages(90)) == 1
