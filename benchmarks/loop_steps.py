"""Loop time per model call as a run grows, with a scripted model and the real tools on an
in-memory store. Prints figures; asserts nothing.

    python benchmarks/loop_steps.py

A loop linear in its steps keeps the time per call flat from 3 to 32 steps.
"""

from __future__ import annotations

import time

from agent_cli.core.budget import Limits
from agent_cli.core.decisions import CallTool, FinalAnswer
from agent_cli.core.loop import run
from agent_cli.providers.scripted import ScriptedModel
from agent_cli.store.samples import SAMPLE_DAY
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools import ToolRegistry
from agent_cli.tools.orders import RefundPolicy, order_tools

RUNS = 200


def per_call_us(steps: int) -> float:
    store = OrderStore.in_memory()
    tools = ToolRegistry(order_tools(lambda: store, RefundPolicy()))
    calls = [CallTool(tool="lookup_order", args={"order_code": f"Z{n:03d}"}) for n in range(steps)]
    decisions = [*calls, FinalAnswer(answer="done")]
    began = time.perf_counter()
    for _ in range(RUNS):
        model = ScriptedModel(decisions)
        for _event in run(
            "Is order A100 refundable?",
            model,
            tools,
            limits=Limits(max_steps=steps + 1),
            today=SAMPLE_DAY,
        ):
            pass
    return (time.perf_counter() - began) / RUNS / (steps + 1) * 1e6


def main() -> None:
    for steps in (3, 8, 16, 32):
        print(f"{steps:3} steps: {per_call_us(steps):7.1f} µs of loop per model call")


if __name__ == "__main__":
    main()
