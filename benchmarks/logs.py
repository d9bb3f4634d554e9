"""What the run log costs. Prints figures; asserts nothing.

    python benchmarks/logs.py [--runs 10000] [--repeat 20] [--report-runs 100000]

Fills a fresh log (in a temporary directory) with N runs shaped like real ones (a question, an
answer, ten trace lines), then prints: the cost of logging one run (its start and its end, two
transactions), `RunLog.search` for a rare word, a common word, several words and a word under
three characters (which is scanned, not indexed), each with the first 20 results as on a terminal
and with every result, `RunLog.runs` for the newest 20, and the whole `agent logs search`
command as a process (start-up included) against its `python -c pass` floor; then `agent logs
report` (in all, and by intent) on a log of --report-runs runs, in process and as a process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agent_cli.record.runlog import LoggedRun, RunLog

CUSTOMERS = ("Sato", "Suzuki", "Takahashi", "Tanaka", "Watanabe", "Ito", "Yamamoto", "Nakamura")


def logged_run(number: int) -> tuple[LoggedRun, list[str]]:
    code = f"A{100 + number % 9000}"
    question = f"Is order {code} for {CUSTOMERS[number % len(CUSTOMERS)]} refundable?"
    answer = f"Order {code} is refundable: delivered 12 days ago, within the 30-day window."
    run = LoggedRun(
        run_id=f"{number:032x}",
        session_id=None,
        kind="ask",
        started_at=f"2026-11-{1 + number % 28:02d}T09:{number % 60:02d}:00.000+00:00",
        question=question,
        provider="openai",
        model="gpt-4o-mini",
        status="answered",
        answer=answer,
        steps=3,
        input_tokens=900,
        output_tokens=120,
        cost=0.0002,
        elapsed_ms=2100.0,
    )
    lines = [json.dumps({"event": "step", "n": step, "text": question * 3}) for step in range(10)]
    return run, lines


INTENTS = ("refund", "status", "cancel", "return", "help", "handover")


def facts(number: int) -> tuple[object, ...]:
    """Desk figures as real runs have them: an intent, now and then a write proposed."""
    intent = INTENTS[number % len(INTENTS)]
    wrote = intent in ("cancel", "return")
    approved, queued = int(wrote and number % 3 == 0), int(wrote and number % 3 == 1)
    return (intent, int(wrote), approved, 0, queued, 0)


def fill(log: RunLog, runs: int) -> float:
    """Seconds per run logged (started + finished)."""
    began = time.perf_counter()
    for number in range(runs):
        run, lines = logged_run(number)
        log.started(run, lines[0])
        log.finished(run, lines, facts(number))
    return (time.perf_counter() - began) / runs


def median_ms(work: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        began = time.perf_counter()
        work()
        samples.append(time.perf_counter() - began)
    return statistics.median(samples) * 1000


def process_ms(argv: list[str], env: dict[str, str], repeat: int) -> float:
    return median_ms(lambda: subprocess.run(argv, env=env, capture_output=True, check=True), repeat)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--report-runs", type=int, default=100_000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "runs.db"
        log = RunLog.open(path, keep_runs=options.runs)
        per_run = fill(log, options.runs)
        size_mb = path.stat().st_size / 1e6
        print(f"{options.runs:,} runs logged: {per_run * 1000:.2f} ms per run, {size_mb:.1f} MB")
        queries = {
            "a rare word (A4242)": "A4242",
            "a common word (refundable)": "refundable",
            "two words (Tanaka A1)": "Tanaka A1",
            "three words (tanaka refund window)": "tanaka refund window",
        }
        print(f"{'RunLog.search':40} {'first 20':>10} {'all':>10} {'matches':>8}")
        for label, text in queries.items():
            first = median_ms(lambda text=text: log.search(text, limit=21), options.repeat)
            every = median_ms(lambda text=text: log.search(text), options.repeat)
            matches = len(log.search(text))
            print(f"  {label:38} {first:8.2f}ms {every:8.2f}ms {matches:8,}")
        newest = median_ms(lambda: log.runs(limit=20), options.repeat)
        print(f"{'RunLog.runs, newest 20':40} {newest:8.2f}ms")
        log.close()
        env = {**os.environ, "AGENT_LOG": str(path), "NO_COLOR": "1"}
        floor = process_ms([sys.executable, "-c", "pass"], env, options.repeat)
        command = [sys.executable, "-m", "agent_cli", "logs", "search", "tanaka refund window"]
        whole = process_ms([*command, "-n", "20"], env, options.repeat)
        floor = f"python -c pass: {floor:.0f} ms"
        print(f"agent logs search -n 20, as a process: {whole:.0f} ms ({floor})")
    report(options.report_runs, options.repeat)


def report(runs: int, repeat: int) -> None:
    """`agent logs report` on a log of `runs` runs: in process (the query and the figures)
    and as the command (start-up included)."""
    from agent_cli.commands.logs_report import KINDS, figures

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "runs.db"
        log = RunLog.open(path, keep_runs=runs)
        fill(log, runs)
        tries = max(3, repeat // 4)
        whole = median_ms(lambda: figures(log.report_rows(None, KINDS), None), tries)
        by_intent = median_ms(lambda: figures(log.report_rows(None, KINDS), "intent"), tries)
        log.close()
        env = {**os.environ, "AGENT_LOG": str(path), "NO_COLOR": "1"}
        command = [sys.executable, "-m", "agent_cli", "logs", "report", "--by", "day"]
        process = process_ms(command, env, tries)
    print(
        f"agent logs report on {runs:,} runs: {whole:.0f} ms in all, {by_intent:.0f} ms by "
        f"intent (in process); {process:.0f} ms as a process, --by day"
    )


if __name__ == "__main__":
    main()
