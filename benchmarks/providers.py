"""Figures for the HTTP path, against a loopback OpenAI-compatible server in another process.

    python benchmarks/providers.py [--runs N]

(a) in-process cost of a 3-step run through the `openai` adapter at 0 ms server latency;
(b) 100 sequential 3-step runs at 50 ms latency against the 15 s floor (3 x 50 ms x 100);
(c) TCP connections opened per run; (d) request bytes per step, tools mode vs json mode, over a
10-step run; (e) the history's bounds; (f) the first request of the seed's question and of desk
questions, with the tools `agent ask` offers them by the conversation's phase, both modes
(issue 49: the seed's at most 1,500 bytes); (g) every request of a whole exchange on the
sample shop (issue 49: the largest at most 8,000; `--desk` prints it alone). Prints a table;
asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


class Server:
    def __init__(self, *, latency: float, steps: int = 3, mode: str = "tools") -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                str(HERE / "loopback_llm.py"),
                "--latency",
                str(latency),
                "--steps",
                str(steps),
                "--mode",
                mode,
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.url = f"http://127.0.0.1:{self.process.stdout.readline().strip()}"

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + "/stats") as response:
            return dict(json.load(response))

    def reset(self) -> None:
        request = urllib.request.Request(self.url + "/reset", data=b"{}", method="POST")
        urllib.request.urlopen(request).close()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait()


def adapter(url: str, *, mode: str = "tools") -> Any:
    """The `openai` adapter for the loopback server, with its own HTTP client."""
    from agent_cli.config import ProviderSettings
    from agent_cli.providers.choice import ProviderChoice
    from agent_cli.providers.connect import connect

    choice = ProviderChoice(
        name="openai",
        kind="openai",
        model="bench",
        base_url=url + "/v1",
        api_key_env="",
        max_tokens_param="max_tokens",
    )
    return connect(choice, ProviderSettings(mode=mode), None)  # type: ignore[arg-type]


def one_run(
    url: str, *, mode: str = "tools", max_steps: int = 8, limits: Any = None, model: Any = None
) -> None:
    """One 3-step run; with `model`, on that adapter (its client reused, as a chat session and an
    eval worker reuse theirs), else on a new one, closed after the run (as a new process)."""
    from agent_cli.core.budget import Limits
    from agent_cli.core.events import RunFinished
    from agent_cli.core.loop import run
    from agent_cli.tools import ToolRegistry
    from agent_cli.tools.orders import RefundPolicy, order_tools

    used = model if model is not None else adapter(url, mode=mode)
    store = STORE
    tools = ToolRegistry(order_tools(lambda: store, RefundPolicy()))
    try:
        limits = limits or Limits(max_steps=max_steps)
        for event in run("Is order A100 refundable?", used, tools, limits=limits):
            last = event
    finally:
        if model is None:
            used.close()
    assert isinstance(last, RunFinished) and last.status == "answered", last


STORE: Any = None


def main() -> None:
    global STORE  # noqa: PLW0603 - one store for every run, as a long-lived process would have
    from agent_cli.store.sqlite import OrderStore

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--desk", action="store_true", help="(g) alone")
    args = parser.parse_args()
    if args.desk:
        desk_conversation()
        return
    runs = args.runs
    STORE = OrderStore.open(Path(tempfile.mkdtemp()) / "orders.db")

    fast = Server(latency=0.0)
    for _ in range(20):
        one_run(fast.url)  # warm up imports and the server
    wall, cpu = [], []
    for _ in range(200):
        started, started_cpu = time.perf_counter(), time.process_time()
        one_run(fast.url)
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    fast.stop()
    print(
        f"(a) 3-step run via the openai adapter, 0 ms latency (n=200): our process's CPU "
        f"median {statistics.median(cpu):.2f} ms; wall median {statistics.median(wall):.2f} ms "
        "(includes the Python test server's own time)"
    )

    slow = Server(latency=0.05)
    one_run(slow.url)
    slow.reset()
    started = time.perf_counter()
    for _ in range(runs):
        one_run(slow.url)
    total = time.perf_counter() - started
    floor = runs * 3 * 0.05
    connections = slow.stats()["connections"] - 1  # the /stats request's own connection
    slow.stop()
    ratio = total / floor
    print(f"(b) {runs} runs at 50 ms latency: {total:.2f} s vs floor {floor:.2f} s = {ratio:.3f}x")
    print(f"(c) TCP connections per run: {connections / runs:.2f}")

    for mode in ("tools", "json"):
        server = Server(latency=0.0, steps=10, mode=mode)
        one_run(server.url, mode=mode, max_steps=10)
        sizes = server.stats()["request_bytes"]
        server.stop()
        growth = (sizes[-1] - sizes[0]) / (len(sizes) - 1)
        print(
            f"(d) {mode:5} mode, 10 steps: first request {sizes[0]} B, last {sizes[-1]} B, "
            f"+{growth:.0f} B per step"
        )
    bounded_history()
    desk_first_requests()
    desk_conversation()


DESK_QUESTIONS = (
    "Is order A100 refundable?",
    "Where is my order A101? My email is aoi.suzuki@example.com",
    "Please cancel my order B200. My email is kaito.yamamoto@example.com",
    "I want to return the mugs from A100. haruki.sato@example.com",
    "Please change the mug in B200 to white. kaito.yamamoto@example.com",
    "I don't have my order number. My email is haruki.sato@example.com",
    "How long does shipping take to Osaka?",
    "I was charged twice for order A100",
    "B200をキャンセルしてください。kaito.yamamoto@example.com",
)


def desk_first_requests() -> None:
    """(f) The first request's bytes for the seed's question and desk questions, with the tools
    the runtime offers each (tools/offered.py) and the step's own (providers/decision_schema)."""
    from agent_cli.config import Settings
    from agent_cli.core.budget import Limits, RefundCounter
    from agent_cli.core.loop import run
    from agent_cli.runtime.assemble import build_tools
    from agent_cli.tools.offered import offer

    tools = build_tools(Settings(), lambda: STORE, RefundCounter(), dry_run=True)
    for mode in ("tools", "json"):
        server = Server(latency=0.0, steps=1, mode=mode)
        model = adapter(server.url, mode=mode)
        sizes = []
        for question in DESK_QUESTIONS:
            server.reset()
            offered = tools.offering(offer(tools.names(), "phase", [question]))
            for _ in run(question, model, offered, limits=Limits(max_steps=1, grounding=False)):
                pass
            sizes.append(server.stats()["request_bytes"][0])
        model.close()
        server.stop()
        seed, desk = sizes[0], sizes[1:]
        largest = DESK_QUESTIONS[1 + desk.index(max(desk))][:40]
        print(
            f"(f) {mode:5} mode, first request: seed question {seed} B; {len(desk)} desk "
            f"questions {min(desk)}-{max(desk)} B (largest: {largest!r})"
        )


MEI = "mei.watanabe@example.com"
# The sample shop's exchange of A105's T-shirt (M, navy) for its size L, paid by gift card.
EXCHANGE = dict(order_id="A105", item_ids=["1008001"], new_item_ids=["1008002"])
EXCHANGE["payment_method_id"] = "gift_card_1006"


def desk_conversation() -> None:
    """(g) Every request of a whole exchange, as the `openai` adapter would send it (its body
    measured, nothing sent): look the order up, identify, read the order and the product,
    propose, ask for the yes, commit, answer; on the sample shop, offered by phase
    (issue 49: the largest at most 8,000 bytes)."""
    import os
    from contextlib import ExitStack
    from dataclasses import replace

    from agent_cli.core.decisions import AskUser, CallTool, FinalAnswer
    from agent_cli.core.events import ApprovalRequested, QuestionAsked
    from agent_cli.core.seams import ModelReply, ModelRequest, Verdict
    from agent_cli.runtime.assemble import open_runtime
    from agent_cli.runtime.options import RunOptions
    from agent_cli.store.samples import SAMPLE_SHOP
    from agent_cli.store.sqlite import OrderStore

    script = [
        CallTool(tool="lookup_order", args={"order_code": "A105"}),
        CallTool(tool="find_user_id_by_email", args={"email": MEI}),
        CallTool(tool="get_order_details", args={"order_id": "A105"}),
        CallTool(tool="get_product_details", args={"product_id": "P-TSHIRT"}),
        CallTool(tool="exchange_delivered_order_items", args=EXCHANGE),
        AskUser(question="Shall I make change P1, the T-shirt for size L? Please say yes or no."),
        CallTool(tool="exchange_delivered_order_items", args=EXCHANGE),
        FinalAnswer(answer="Order A105: your T-shirt is exchanged for size L (change #1)."),
    ]
    measure = adapter("http://127.0.0.1:9")  # never called: only its bodies are built
    sizes: list[int] = []

    class Measured:
        provider, model = "openai", "bench"

        def decide(self, request: ModelRequest) -> ModelReply:
            body = json.dumps(measure.body(request), separators=(",", ":"), ensure_ascii=False)
            sizes.append(len(body.encode()))
            return ModelReply(script.pop(0))

    database = Path(tempfile.mkdtemp()) / "sample.db"  # the run's changes land here
    OrderStore.open(database, seed=SAMPLE_SHOP).close()
    os.environ.update(AGENT_DB=str(database), AGENT_TODAY="2026-10-13")
    with ExitStack() as stack:
        runtime = open_runtime(RunOptions(today="2026-10-13"), stack)  # a throwaway store
        runtime = replace(runtime, model=Measured())
        events = runtime.events(f"I'd like to exchange the T-shirt in A105 for size L. {MEI}")
        event: Any = next(events)
        try:
            while True:
                if isinstance(event, QuestionAsked):
                    event = events.send("yes")
                elif isinstance(event, ApprovalRequested):
                    event = events.send(Verdict(approved=True, by="operator"))
                else:
                    event = next(events)
        except StopIteration:
            pass
    print(
        f"(g) a whole exchange, {len(sizes)} requests (tools mode): "
        f"{', '.join(f'{s:,}' for s in sizes)} B; the largest {max(sizes):,} B"
    )


def bounded_history() -> None:
    """(e) 20 lookups of orders with 5,000-character notes: request bytes per step without the
    bounds (no observation cap, no elision) and with the defaults (2,000 chars, 4,000 tokens)."""
    from agent_cli.core.budget import Limits
    from agent_cli.domain.orders import Order

    note = "Customer note. " * 334  # 5,010 characters
    STORE.import_orders([Order(f"N{n:03d}", "PENDING", 100, note=note) for n in range(1, 21)])
    unbounded = Limits(max_steps=20, max_observation_chars=10**6, history_tokens=10**7)
    for name, limits in (("unbounded", unbounded), ("defaults", Limits(max_steps=20))):
        server = Server(latency=0.0, steps=20)
        one_run(server.url, limits=limits)
        sizes = server.stats()["request_bytes"]
        server.stop()
        marks = ", ".join(f"step {i + 1}: {sizes[i] / 1024:.1f}" for i in (0, 4, 9, 14, 19))
        print(
            f"(e) 20 steps, {name:9}: KiB per request at {marks}; total {sum(sizes) / 1024:.0f} KiB"
        )


if __name__ == "__main__":
    main()
