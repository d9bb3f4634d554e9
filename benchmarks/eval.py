"""What `agent eval` costs. Prints figures; asserts nothing.

    python benchmarks/eval.py [--offline N] [--http N] [--concurrency C] [--latency S]

(a) N offline cases (the built-in set, repeated) on the playbook, in process: time per case,
    each with its own in-memory store; (b) N cases against a loopback OpenAI-compatible server
    (benchmarks/loopback_llm.py) answering after S seconds, C workers: the wall time against its
    floor, cases x steps x latency / C; and the TCP connections the workers opened.
"""

from __future__ import annotations

import argparse
import os
import time

from providers import Server

from agent_cli.evaluation.cases import EvalCase, builtin_cases, parse_cases
from agent_cli.evaluation.runner import Contender, plan_jobs, run_jobs
from agent_cli.record.outcomes import CaseResult
from agent_cli.runtime.options import ProviderOptions, RunOptions

STEPS = 3  # the loopback server's run: lookup_order, refund_policy, then the answer
HTTP_CASE = """
[[cases]]
id = "a100-{n}"
question = "Is order A100 refundable?"
today = 2026-10-13
verdict = {{ A100 = "refundable" }}
"""


def timed(
    contender: Contender, cases: tuple[EvalCase, ...], concurrency: int
) -> tuple[float, list[CaseResult]]:
    results: list[CaseResult] = []
    jobs = plan_jobs(cases, (contender,), 1)
    started = time.perf_counter()
    run_jobs(jobs, concurrency=concurrency, on_result=results.append)
    return time.perf_counter() - started, results


def offline(count: int) -> None:
    builtin = builtin_cases()
    cases = tuple((builtin * (count // len(builtin) + 1))[:count])
    options = RunOptions(dry_run=True)
    contender = Contender("offline/playbook", options, options.settings())
    timed(contender, cases[:20], 1)  # warm up imports and caches
    elapsed, results = timed(contender, cases, 1)
    passed = sum(r.passed for r in results)
    print(
        f"offline: {count} cases in {elapsed * 1000:.0f} ms, {elapsed / count * 1000:.2f} ms per "
        f"case (target < 5 ms); {passed}/{count} passed"
    )


def over_http(count: int, concurrency: int, latency: float) -> None:
    server = Server(latency=latency, steps=STEPS)
    try:
        os.environ["OPENAI_API_KEY"] = "bench-key"  # never a real key, even to loopback
        text = "".join(HTTP_CASE.format(n=n) for n in range(count))
        cases = parse_cases(text, "benchmark", json_file=False)
        options = RunOptions(
            provider=ProviderOptions("openai", "bench", server.url + "/v1"),
            timeout=60,
        )
        contender = Contender("openai/bench", options, options.settings())
        server.reset()
        elapsed, results = timed(contender, cases, concurrency)
        floor = count * STEPS * latency / concurrency
        connections = server.stats()["connections"] - 1  # this /stats request is one
    finally:
        server.stop()
    passed = sum(r.passed for r in results)
    print(
        f"http: {count} cases x {STEPS} steps at {latency * 1000:.0f} ms, {concurrency} workers: "
        f"{elapsed:.2f} s against a {floor:.2f} s floor = {elapsed / floor:.2f}x (target <= 1.2x); "
        f"{connections} TCP connections; {passed}/{count} passed"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--offline", type=int, default=200)
    parser.add_argument("--http", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    offline(args.offline)
    over_http(args.http, args.concurrency, args.latency)


if __name__ == "__main__":
    main()
