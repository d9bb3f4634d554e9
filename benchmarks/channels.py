"""The channels of `agent serve`: how soon a webhook is answered while the model is slow, and how
soon the outbox delivers a reply once the desk has written it. Prints figures; asserts nothing.

    python benchmarks/channels.py [--messages 40] [--latency 5] [--conversations 8] [--rate 0]

One `agent serve` on loopback with the Chatwoot channel pointed at a loopback Chatwoot (it takes
every message at once), the model a loopback server answering after --latency seconds
(benchmarks/loopback_llm.py). --messages signed webhooks are sent, spread over --conversations
Chatwoot conversations, one after another (--rate N: N a second, as customers would write;
0: each as soon as the last was answered). Printed: the time to the webhook's 200 (p50, p95,
max: Chatwoot waits 5 s, LINE 2 s, and both retry a slow webhook), and the outbox's delivery
latency (from the desk's reply written to Chatwoot taking it, from the store's own times)."""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.serve import AGENT, _root, _started

SECRET = "bench-secret"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=40)
    parser.add_argument("--latency", type=float, default=5.0)
    parser.add_argument("--conversations", type=int, default=8)
    parser.add_argument("--rate", type=float, default=0.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        return _run(args, Path(folder))


class _Chatwoot(BaseHTTPRequestHandler):
    taken: ClassVar[list[float]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        _Chatwoot.taken.append(time.time())
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


def _run(args: argparse.Namespace, folder: Path) -> int:
    chatwoot = ThreadingHTTPServer(("127.0.0.1", 0), _Chatwoot)
    threading.Thread(target=chatwoot.serve_forever, daemon=True).start()
    model = subprocess.Popen(
        [sys.executable, str(Path(__file__).parent / "loopback_llm.py"),
         "--latency", str(args.latency), "--steps", "1"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    port = model.stdout.readline().strip() if model.stdout else ""
    env = {**os.environ, "PYTHONPATH": _root(), "AGENT_DB": str(folder / "orders.db")}
    env.update(CHATWOOT_API_TOKEN="t", CHATWOOT_BOT_SECRET=SECRET, AGENT_LOG=str(folder / "r.db"))
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AGENT_CONFIG", "AGENT_DB_URL"):
        env.pop(name, None)
    subprocess.run([*AGENT, "orders", "init", "--sample"], env=env, check=True, capture_output=True)
    config = folder / "agent.toml"
    config.write_text(
        f"[limits]\ntimeout = {args.latency * 4 + 10}\ngrounding = false\n"
        f'[provider]\nname = "loop"\n[profiles.loop]\nkind = "openai"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\nmodel = "bench"\n'
        "[serve]\nconversation_rate = 0\n[serve.chatwoot]\n"
        f'base_url = "http://127.0.0.1:{chatwoot.server_address[1]}"\naccount_id = 1\n'
    )
    server, base = _started(env, config)
    try:
        waits = []
        for n in range(args.messages):
            started = time.monotonic()
            waits.append(_send(base, n, n % args.conversations))
            if args.rate > 0:
                time.sleep(max(0.0, 1 / args.rate - (time.monotonic() - started)))
        _wait_delivered(args.messages, args.latency)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=300)
        model.kill()
        chatwoot.shutdown()
    _report(args, waits, _delivery_latencies(env))
    return 0


def _send(base: str, n: int, conversation: int) -> float:
    event = {
        "event": "message_created",
        "id": 10_000 + n,
        "content": f"hello, this is message {n}",
        "message_type": "incoming",
        "account": {"id": 1},
        "conversation": {"id": 500 + conversation, "status": "pending"},
    }
    body = json.dumps(event).encode()
    stamp = str(int(time.time()))
    mac = hmac.new(SECRET.encode(), stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    headers = {"X-Chatwoot-Signature": f"sha256={mac}", "X-Chatwoot-Timestamp": stamp}
    started = time.perf_counter()
    answered = httpx.post(f"{base}/channels/chatwoot", content=body, headers=headers, timeout=30)
    took = time.perf_counter() - started
    answered.raise_for_status()
    return took


def _wait_delivered(count: int, latency: float) -> None:
    deadline = time.monotonic() + count * (latency + 5) + 60
    while len(_Chatwoot.taken) < count and time.monotonic() < deadline:
        time.sleep(0.1)


def _delivery_latencies(env: dict[str, str]) -> list[float]:
    """Seconds from each reply's row written to its being marked sent (the store's times)."""
    from agent_cli.store.sqlite import OrderStore

    store = OrderStore.open(Path(env["AGENT_DB"]), create=False)
    try:
        rows = store.query("SELECT created_at, sent_at FROM outbox WHERE status = 'sent'")
    finally:
        store.close()
    return [
        (datetime.fromisoformat(sent) - datetime.fromisoformat(made)).total_seconds()
        for made, sent in rows
    ]


def _report(args: argparse.Namespace, waits: list[float], delivered: list[float]) -> None:
    def ms(values: list[float], q: float) -> str:
        ordered = sorted(values)
        return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000:.0f} ms"

    pace = f"{args.rate:g} a second" if args.rate > 0 else "back to back"
    print(f"webhooks: {len(waits)}, {pace} (the model answers after {args.latency:g} s)")
    print(
        f"time to 200: p50 {ms(waits, 0.5)}, p95 {ms(waits, 0.95)}, max {max(waits) * 1000:.0f} ms"
    )
    if delivered:
        print(
            f"outbox delivery: {len(delivered)} replies, p50 {ms(delivered, 0.5)}, p95 "
            f"{ms(delivered, 0.95)}, mean {statistics.mean(delivered) * 1000:.0f} ms"
        )
    else:
        print("outbox delivery: nothing was delivered (BROKEN)")


if __name__ == "__main__":
    raise SystemExit(main())
