"""`agent serve` under load: real server processes on loopback, one store. Prints figures, and
what it checked; asserts nothing (a broken check is printed as BROKEN and exits 1).

    python benchmarks/serve.py [--processes 2] [--store sqlite|postgresql]
                               [--conversations 200] [--messages 5] [--clients 16]
                               [--model offline|loopback] [--latency 0.05] [--kill]

Starts --processes `agent serve` processes on one store (a fresh SQLite file, or a throwaway
PostgreSQL as the tests start one), makes --conversations conversations and sends each
--messages messages, one after another as a customer would (the next after the reply), from
--clients conversations at once, each message to a process chosen at random; every fifth message
is delivered twice, to every process at once, with the same message id (a channel retrying).
With --kill, one process is killed (SIGKILL) a third of the way in; a message it was answering is
sent again to the others with the same id (it waits for the dead process's lease to expire).

Checked from the store afterwards: every message answered exactly once and in the order sent
(each customer message stored once, with one run, followed by the desk's reply); every duplicate
delivery answered with the same body; no lease left behind. Printed: messages per second, p50
and p95 per message, and each process's peak memory. With --model loopback, the model is a
loopback server answering after --latency seconds (benchmarks/loopback_llm.py), and the time a
message takes is printed against the model's own.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import postgres

AGENT = [sys.executable, "-m", "agent_cli"]
QUESTIONS = (
    "Where is order A101?",
    "Is order A100 refundable?",
    "What is your return policy?",
    "When will A101 arrive?",
    "thanks",
)


@dataclass
class Load:
    """What the customers met, gathered from every client thread."""

    servers: list[tuple[subprocess.Popen[str], str]]
    headers: dict[str, str]
    latencies: list[float] = field(default_factory=list)
    duplicates_differing: int = 0
    retried: int = 0
    sent: int = 0
    failed: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)  # answers other than 200
    lock: threading.Lock = field(default_factory=threading.Lock)
    elapsed: float = 0.0
    warnings: list[str] = field(default_factory=list)
    peaks: list[int | None] = field(default_factory=list)


def main() -> int:
    args = _arguments()
    with tempfile.TemporaryDirectory() as folder:
        env, server = _environment(Path(folder), args)
        try:
            return _run(args, env, Path(folder))
        finally:
            if server is not None:
                server.stop()


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--messages", type=int, default=5)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--model", choices=("offline", "loopback"), default="offline")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--kill", action="store_true")
    return parser.parse_args()


def _environment(folder: Path, args: argparse.Namespace) -> tuple[dict[str, str], Any]:
    env = {**os.environ, "AGENT_LOG": str(folder / "runs.db"), "PYTHONPATH": _root()}
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AGENT_CONFIG", "AGENT_DB_URL"):
        env.pop(name, None)
    server = None
    if args.store == "postgresql":
        server = postgres.Server()
        server.start()
        env["AGENT_DB_URL"] = server.database()
    else:
        env["AGENT_DB"] = str(folder / "orders.db")
    subprocess.run([*AGENT, "orders", "init", "--sample"], env=env, check=True, capture_output=True)
    return env, server


def _root() -> str:
    return str(Path(__file__).resolve().parents[1])


def _run(args: argparse.Namespace, env: dict[str, str], folder: Path) -> int:
    config = folder / "agent.toml"
    # A killed process frees its conversations within 30 s (the lease); the load's one token is
    # not rate-limited.
    config.write_text("[limits]\ntimeout = 10\n[serve]\ntoken_rate = 0\n")
    model = None
    if args.model == "loopback":
        model = subprocess.Popen(
            [sys.executable, str(Path(__file__).parent / "loopback_llm.py"),
             "--latency", str(args.latency), "--steps", "1"],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        port = model.stdout.readline().strip() if model.stdout else ""
        # Its one answer names order A100, which no turn looks up: grounding would ask again
        # (a repair, another model call), so the model's own time would not be one call's.
        config.write_text(
            "[limits]\ntimeout = 10\ngrounding = false\n[serve]\ntoken_rate = 0\n"
            f'[provider]\nname = "loop"\n[profiles.loop]\nkind = "openai"\n'
            f'base_url = "http://127.0.0.1:{port}/v1"\nmodel = "bench"\n'
        )
    token = _made_token(env)
    servers = [_started(env, config) for _ in range(args.processes)]
    try:
        code = _measured(args, servers, token, env)
        if model is not None:  # how often the servers connected to the model
            stats = httpx.get(f"http://127.0.0.1:{port}/stats", timeout=10).json()
            total = args.conversations * args.messages
            print(f"  the model accepted {stats['connections']} connections for {total} messages")
        return code
    finally:
        for process, _ in servers:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=60)
        if model is not None:
            model.kill()


def _made_token(env: dict[str, str]) -> str:
    made = subprocess.run(
        [*AGENT, "tokens", "create", "bench", "--scope", "staff"],
        env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return made.stdout.strip().splitlines()[-1]


def _started(env: dict[str, str], config: Path) -> tuple[subprocess.Popen[str], str]:
    """One `agent serve`, its stderr (warnings) in a file beside the config, read at the end."""
    import socket

    log = (config.parent / f"serve-{time.monotonic_ns()}.log").open("w")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [*AGENT, "serve", "--port", str(port), "--config", str(config)],
        env=env, stdout=subprocess.DEVNULL, stderr=log, text=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return process, base
        except httpx.TransportError:
            time.sleep(0.1)
    raise SystemExit(f"agent serve did not start: see {log.name}")


def _measured(
    args: argparse.Namespace,
    servers: list[tuple[subprocess.Popen[str], str]],
    token: str,
    env: dict[str, str],
) -> int:
    load = Load(servers, {"Authorization": f"Bearer {token}"})
    with httpx.Client(headers=load.headers, timeout=180) as http:
        ids = [
            http.post(f"{servers[0][1]}/v1/conversations").json()["id"]
            for _ in range(args.conversations)
        ]
    total = args.conversations * args.messages
    killer = _killer(load, total) if args.kill else None
    started = time.perf_counter()
    with ThreadPoolExecutor(args.clients) as pool:
        for n, conversation in enumerate(ids):
            pool.submit(_customer, load, conversation, n, args.messages)
    load.elapsed = time.perf_counter() - started
    if killer is not None:
        killer.join()
    load.peaks = [_peak_kib(process.pid) for process, _ in servers]
    load.warnings = _warnings(env)
    broken = _checked(env, ids, args.messages, load)
    _report(args, load, total, broken)
    return 1 if broken else 0


def _killer(load: Load, total: int) -> threading.Thread:
    def kill() -> None:
        while load.sent < total // 3:
            time.sleep(0.01)
        load.servers[0][0].send_signal(signal.SIGKILL)

    thread = threading.Thread(target=kill)
    thread.start()
    return thread


def _customer(load: Load, conversation: str, n: int, messages: int) -> None:
    chooser = random.Random(n)
    with httpx.Client(headers=load.headers, timeout=180) as http:
        for m in range(messages):
            text = f"{QUESTIONS[m % len(QUESTIONS)]} #{m}"
            body = {"id": f"{conversation[:8]}-{m}", "text": text}
            started = time.perf_counter()
            twice = (n * messages + m) % 5 == 4
            targets = [b for _, b in load.servers] if twice else [chooser.choice(load.servers)[1]]
            url = f"/v1/conversations/{conversation}/messages"
            bodies = _delivered(load, http, targets, url, body)
            with load.lock:
                load.latencies.append(time.perf_counter() - started)
                load.sent += 1
                if len({json.dumps(b, sort_keys=True) for b in bodies}) > 1:
                    load.duplicates_differing += 1
                if not bodies:
                    load.failed.append(body["id"])


def _delivered(
    load: Load, http: httpx.Client, targets: list[str], url: str, body: dict[str, str]
) -> list[Any]:
    """Each target's reply to the same message (at once when several); a target that is gone is
    replaced by a live one, as a channel retries."""
    replies: list[Any] = []

    def one(base: str) -> None:
        for attempt in range(20):
            try:
                answer = http.post(base + url, json=body)
            except httpx.TransportError:
                with load.lock:
                    load.retried += 1
                base = random.choice([b for p, b in load.servers if p.poll() is None])
                continue
            if answer.status_code == 200:
                replies.append(answer.json())
                return
            if answer.status_code != 409 or attempt == 19:  # 409: busy past the wait, again
                with load.lock:
                    load.refusals.append(f"{body['id']}: HTTP {answer.status_code} {answer.text}")
                return

    threads = [threading.Thread(target=one, args=(base,)) for base in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return replies


def _checked(env: dict[str, str], ids: list[str], messages: int, load: Load) -> list[str]:
    sys.path.insert(0, _root())
    from agent_cli.store.configured import open_configured
    from agent_cli.store.conversations import messages as stored_messages

    store = open_configured(Path(env["AGENT_DB"]) if "AGENT_DB" in env else None,
                            env.get("AGENT_DB_URL"))  # fmt: skip
    broken: list[str] = []
    try:
        for conversation in ids:
            said = stored_messages(store, conversation)
            customer = [m for m in said if m.role == "customer"]
            numbers = [int(m.text.rsplit("#", 1)[1]) for m in customer]
            if numbers != list(range(messages)):
                broken.append(f"{conversation[:8]}: customer messages {numbers}")
            if any(m.reply is None or m.run_id is None for m in customer):
                broken.append(f"{conversation[:8]}: a message never answered")
            for a, b in itertools.pairwise(said):
                if a.role == b.role == "customer":
                    broken.append(f"{conversation[:8]}: two customer messages with no reply")
        held = store.query("SELECT COUNT(*) FROM conversations WHERE lease_owner IS NOT NULL")
        if held[0][0]:
            broken.append(f"{held[0][0]} lease(s) left behind")
    finally:
        store.close()
    if load.duplicates_differing:
        broken.append(f"{load.duplicates_differing} duplicate deliveries answered differently")
    if load.failed:
        broken.append(f"{len(load.failed)} messages got no 200 reply")
    broken += load.refusals[:5]
    return broken


def _warnings(env: dict[str, str]) -> list[str]:
    """The servers' warnings, each kind once with its count."""
    folder = Path(env["AGENT_LOG"]).parent
    lines = [
        line.strip()
        for path in sorted(folder.glob("serve-*.log"))
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    counts: dict[str, int] = {}
    for line in lines:
        counts[line[:160]] = counts.get(line[:160], 0) + 1
    return [f"{n} x {line}" for line, n in counts.items()]


def _peak_kib(pid: int) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None  # killed
    line = next((line for line in status.splitlines() if line.startswith("VmHWM:")), "")
    return int(line.split()[1]) if line else None


def _report(args: argparse.Namespace, load: Load, total: int, broken: list[str]) -> None:
    ms = sorted(x * 1000 for x in load.latencies)
    p50 = statistics.median(ms)
    p95 = ms[int(len(ms) * 0.95) - 1]
    print(
        f"{args.processes} process(es) on {args.store}, model {args.model}"
        + (f" ({args.latency * 1000:.0f} ms)" if args.model == "loopback" else "")
        + (", one killed a third of the way in" if args.kill else "")
    )
    print(f"{total} messages ({args.conversations} conversations x {args.messages}), "
          f"every fifth delivered to every process at once")  # fmt: skip
    rate = total / load.elapsed
    print(f"  {rate:.1f} messages/s; per message p50 {p50:.0f} ms, p95 {p95:.0f} ms")
    if args.model == "loopback":
        model_ms = args.latency * 1000
        print(f"  p50 against the model's own {model_ms:.0f} ms: {p50 / model_ms:.2f}x")
    if load.retried:
        print(f"  {load.retried} deliveries retried on another process (connection lost)")
    shown = ", ".join("killed" if kib is None else f"{kib / 1024:.0f} MiB" for kib in load.peaks)
    print(f"  peak memory per process: {shown}")
    for line in load.warnings[:10]:
        print(f"  server said: {line}")
    if broken:
        print("BROKEN:")
        for line in broken[:20]:
            print(f"  {line}")
    else:
        print("  checked: every message answered exactly once and in order, duplicates alike, "
              "no lease left")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
