"""agent-cli against the floor: a hand-written bare httpx loop, on the same 3-call scenario
(lookup_order -> refund_policy -> answer) against the same loopback server, in one run. Prints
one table of figures and ratios; asserts nothing.

    python benchmarks/compare.py [--runs N]
    python benchmarks/compare.py --bare-once URL [--with-deps]   # one bare run as a process

The bare loop is what a person writes in an afternoon: one short system prompt, two tools with
a line each, a dict of functions, no limits, no grounding, no trace. Every row compares like
with like: the same server, latency and machine, in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

if TYPE_CHECKING:
    from providers import Server

Row = tuple[str, str, str]  # figure, bare loop, agent-cli
QUESTION = "Is order A100 refundable?"
BARE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "Look up an order by code.",
            "parameters": {
                "type": "object",
                "properties": {"order_code": {"type": "string"}},
                "required": ["order_code"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "refund_policy",
            "description": "The refund policy.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
]


def bare_run(client: httpx.Client, url: str, db: sqlite3.Connection) -> str:
    """The floor: ask, run each call, append, until an answer."""

    def lookup_order(order_code: str) -> str:
        row = db.execute("SELECT status, total FROM o WHERE code = ?", (order_code,)).fetchone()
        return json.dumps({"status": row[0], "total": row[1]} if row else "NOT_FOUND")

    def refund_policy() -> str:
        return "Refunds within 30 days of delivery for DELIVERED orders."

    functions: dict[str, Any] = {"lookup_order": lookup_order, "refund_policy": refund_policy}
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a support agent. Use the tools."},
        {"role": "user", "content": QUESTION},
    ]
    while True:
        body = {"model": "bench", "messages": messages, "tools": BARE_TOOLS}
        reply = client.post(url + "/v1/chat/completions", json=body).json()
        message = reply["choices"][0]["message"]
        messages.append(message)
        if not message.get("tool_calls"):
            return str(message["content"])
        for call in message["tool_calls"]:
            args = json.loads(call["function"]["arguments"])
            result = functions[call["function"]["name"]](**args)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})


def bare_db() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.execute("CREATE TABLE o (code TEXT PRIMARY KEY, status TEXT, total INTEGER)")
    db.execute("INSERT INTO o VALUES ('A100', 'DELIVERED', 250000)")
    return db


def in_process_ms(run_once: Any, count: int) -> float:
    for _ in range(20):
        run_once()  # warm up imports, connections and the server
    times = []
    for _ in range(count):
        started = time.perf_counter()
        run_once()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def request_bytes(server: Server, run_once: Any) -> tuple[int, float]:
    server.reset()
    run_once()
    sizes = server.stats()["request_bytes"]
    return sizes[0], (sizes[-1] - sizes[0]) / max(len(sizes) - 1, 1)


def import_runtime_deps() -> None:
    """What any CLI built on agent-cli's runtime dependencies imports before its first line
    runs: Typer (which builds a pydantic TypeAdapter per parameter), pydantic's models and
    Rich's console, with the collector off and then frozen, as agent-cli's entry point does."""
    import gc

    gc.disable()
    import pydantic.main
    import rich.console
    import typer._adapters
    import typer.main

    assert pydantic.main and rich.console and typer._adapters and typer.main
    gc.freeze()
    gc.enable()


def process_ms(argv: list[str], env: dict[str, str], count: int = 10) -> float:
    subprocess.run(argv, env=env, capture_output=True, check=True)  # first use makes files
    times = []
    for _ in range(count):
        started = time.perf_counter()
        subprocess.run(argv, env=env, capture_output=True, check=True)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def eval_process_s() -> float:
    """The median of 3 whole `agent eval` processes: 100 three-step cases, 10 workers."""
    from providers import Server

    directory = tempfile.mkdtemp()
    case = '[[cases]]\nid = "c{n}"\nquestion = "Is order A100 refundable?"\n'
    cases = Path(directory) / "cases.toml"
    cases.write_text("".join(case.format(n=n) for n in range(100)))
    server = Server(latency=0.05)
    env = {**os.environ, "HOME": directory, "OPENAI_API_KEY": "bench"}
    argv = [sys.executable, "-m", "agent_cli", "eval", "run", str(cases), "--provider", "openai"]
    argv += ["--base-url", server.url + "/v1", "--model", "bench", "--concurrency", "10"]
    argv += ["--json", "--min-pass", "0"]
    try:
        return process_ms(argv, env, count=3) / 1000
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--bare-once", metavar="URL")
    parser.add_argument("--with-deps", action="store_true", help="import Typer, pydantic, Rich")
    args = parser.parse_args()
    if args.bare_once:
        if args.with_deps:
            import_runtime_deps()
        with httpx.Client() as client:
            print(bare_run(client, args.bare_once, bare_db()))
        return
    # Imported here, not at the top: the bare one-shot process must not pay for agent_cli.
    import compileall

    import providers
    from loop_steps import per_call_us
    from providers import Server, one_run

    from agent_cli.store.sqlite import OrderStore

    # An installed package has its bytecode; an editable checkout under
    # PYTHONDONTWRITEBYTECODE would compile every module on every process.
    compileall.compile_dir(HERE.parent / "agent_cli", quiet=1)

    providers.STORE = OrderStore.open(Path(tempfile.mkdtemp()) / "orders.db")
    rows: list[Row] = []
    client, db = httpx.Client(), bare_db()

    fast = Server(latency=0.0)
    ours_bytes = request_bytes(fast, lambda: one_run(fast.url))
    bare_bytes = request_bytes(fast, lambda: bare_run(client, fast.url, db))
    rows.append(
        (
            "request bytes at step 1 / growth per step",
            f"{bare_bytes[0]:,} / +{bare_bytes[1]:.0f}",
            f"{ours_bytes[0]:,} / +{ours_bytes[1]:.0f}",
        )
    )
    rows += in_process_rows(fast.url, client, db)

    home = tempfile.mkdtemp()
    env = {**os.environ, "HOME": home, "OPENAI_API_KEY": "bench", "NO_COLOR": "1"}
    env.pop("XDG_DATA_HOME", None)
    agent = [sys.executable, "-m", "agent_cli", "ask", "-q", "--provider", "openai"]
    agent += ["--base-url", fast.url + "/v1", "--model", "bench", QUESTION]
    bare_once = process_ms([sys.executable, __file__, "--bare-once", fast.url], env)
    deps_once = process_ms([sys.executable, __file__, "--bare-once", fast.url, "--with-deps"], env)
    ours_once = process_ms(agent, env)
    rows.append(
        (
            "whole process, 3 steps at 0 ms",
            f"{bare_once:.0f} ms",
            f"{ours_once:.0f} ms ({ours_once / bare_once:.2f}x)",
        )
    )
    rows.append(
        (
            "the bare process also importing Typer, pydantic and Rich (agent-cli's floor)",
            "-",
            f"{deps_once:.0f} ms ({deps_once / bare_once:.2f}x)",
        )
    )
    fast.stop()

    rows.append(sequential_row(args.runs, client, db))
    rows.append(
        (
            "`agent eval`, 100 cases at 50 ms, 10 workers, whole process vs the 1.5 s floor",
            "-",
            f"{eval_process_s() / 1.5:.2f}x",
        )
    )
    flat = [per_call_us(steps) for steps in (3, 32)]
    rows.append(
        ("loop time per model call, 3 -> 32 steps", "-", f"{flat[0]:.0f} -> {flat[1]:.0f} us")
    )
    client.close()
    show(rows)


def in_process_rows(url: str, client: httpx.Client, db: sqlite3.Connection) -> list[Row]:
    """A 3-step run in process at 0 ms: agent-cli keeping one HTTP client for every run, as a
    chat session and an eval worker do and as the bare loop does; then a new client per run."""
    from providers import adapter, one_run

    bare_ms = in_process_ms(lambda: bare_run(client, url, db), 200)
    shared = adapter(url)
    ours_ms = in_process_ms(lambda: one_run(url, model=shared), 200)
    shared.close()
    fresh_ms = in_process_ms(lambda: one_run(url), 200)
    return [
        (
            "HTTP at 0 ms, ms per 3-step run in process, one client kept",
            f"{bare_ms:.2f}",
            f"{ours_ms:.2f} ({ours_ms / bare_ms:.2f}x)",
        ),
        ("the same with a new client per run (agent-cli)", "-", f"{fresh_ms:.2f}"),
    ]


def sequential_row(runs: int, client: httpx.Client, db: sqlite3.Connection) -> Row:
    """`runs` runs one after another at 50 ms a reply, each side keeping one client."""
    from providers import Server, adapter, one_run

    slow = Server(latency=0.05)
    floor = runs * 3 * 0.05
    started = time.perf_counter()
    for _ in range(runs):
        bare_run(client, slow.url, db)
    bare_slow = time.perf_counter() - started
    shared = adapter(slow.url)
    started = time.perf_counter()
    for _ in range(runs):
        one_run(slow.url, model=shared)
    ours_slow = time.perf_counter() - started
    shared.close()
    slow.stop()
    return (
        f"50 ms latency, {runs} sequential runs, one client kept, vs the {floor:.0f} s floor",
        f"{bare_slow / floor:.3f}x",
        f"{ours_slow / floor:.3f}x",
    )


def show(rows: list[Row]) -> None:
    print("| figure | bare loop | agent-cli |")
    print("|---|---|---|")
    for figure, bare, ours in rows:
        print(f"| {figure} | {bare} | {ours} |")


if __name__ == "__main__":
    main()
