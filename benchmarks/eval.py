"""What `agent eval` costs. Prints figures; asserts nothing.

    python benchmarks/eval.py [--offline N] [--http N] [--concurrency C] [--latency S]
                              [--conversations N] [--turns T]

(a) N offline cases (the built-in set, repeated) on the playbook, in process: time per case,
    each with its own in-memory store; (b) N cases against a loopback OpenAI-compatible server
    (benchmarks/loopback_llm.py) answering after S seconds, C workers: the wall time against its
    floor, cases x steps x latency / C; and the TCP connections the workers opened;
(c) the built-in conversations (issue 42) on the playbook, repeated to N: conversations and
    turns per second, each judged on its end state against its reference replayed on a copy;
(d) the harness's own time per conversation turn: one conversation of T turns whose model is
    a script answering at once (a 0 ms stub), so all the time is ours: the run, the memory,
    the store, the judge, the reference replay and the two stores compared.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

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
    contender = Contender(label="offline/playbook", options=options, settings=options.settings())
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
        contender = Contender(label="openai/bench", options=options, settings=options.settings())
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


def conversations(count: int) -> None:
    convs = tuple(c for c in builtin_cases() if c.kind == "conversation")
    cases = tuple((convs * (count // len(convs) + 1))[:count])
    options = RunOptions(dry_run=True)
    contender = Contender(label="offline/playbook", options=options, settings=options.settings())
    timed(contender, cases[:10], 1)
    elapsed, results = timed(contender, cases, 1)
    turns = sum(r.record.runs for r in results)
    print(
        f"conversations offline: {count} in {elapsed:.2f} s = {count / elapsed:.0f} per second, "
        f"{turns} turns ({turns / elapsed:.0f} per second); "
        f"{sum(r.passed for r in results)}/{count} passed"
    )


def per_turn(turns: int) -> None:
    """A conversation of `turns` turns against a script that answers each at once."""
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "answers.json"
        script.write_text(json.dumps([{"type": "final", "answer": "ok"}] * turns))
        messages = ", ".join(json.dumps(f"question {n}") for n in range(turns))
        text = f'[[cases]]\nid = "t"\nturns = [{messages}]\nmax_turns = 50\nfacts = ["ok"]\n'
        text += "reference = []\n"
        cases = parse_cases(text, "benchmark", json_file=False)
        options = RunOptions(script=script, grounding=False)
        contender = Contender(label="script", options=options, settings=options.settings())
        timed(contender, cases, 1)
        rounds = 20
        started = time.perf_counter()
        for _ in range(rounds):
            _, results = timed(contender, cases, 1)
        elapsed = (time.perf_counter() - started) / rounds
    assert all(r.passed for r in results), results[0].failures
    print(
        f"harness per turn: a {turns}-turn conversation against a 0 ms stub takes "
        f"{elapsed * 1000:.1f} ms = {elapsed / turns * 1000:.2f} ms per turn (the case's "
        "store, memory, judge and end-state comparison included)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--offline", type=int, default=200)
    parser.add_argument("--http", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--conversations", type=int, default=140)
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args()
    offline(args.offline)
    over_http(args.http, args.concurrency, args.latency)
    conversations(args.conversations)
    per_turn(args.turns)


if __name__ == "__main__":
    main()
