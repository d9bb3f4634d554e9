"""Time to the first character of an answer, streamed and not. Prints figures; asserts nothing.

    python benchmarks/streaming.py [--runs N] [--words N] [--token-delay SECONDS]

A loopback OpenAI-compatible server (benchmarks/loopback_llm.py) writes a final answer of
--words words at --token-delay seconds a word (50 ms: a brisk hosted model). Streamed, its text
reaches the screen callback as each word is made; not streamed, the whole reply comes once the
last word is. Measured in process through the `openai` adapter, from the request to the first
text (the on_text callback, or the reply), and to the whole reply, in both modes.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from agent_cli.core.seams import ModelRequest, TextDelta
from agent_cli.providers.http import Channel, Endpoint
from agent_cli.providers.openai import OpenAIChat, OpenAIOptions
from agent_cli.providers.retries import RetryPolicy

HERE = Path(__file__).parent
MODES = ("tools", "json")


def start_server(token_delay: float, words: int, mode: str) -> tuple[subprocess.Popen[str], str]:
    argv = [sys.executable, str(HERE / "loopback_llm.py"), "--steps", "1", "--mode", mode]
    argv += ["--token-delay", str(token_delay), "--answer-words", str(words)]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, f"http://127.0.0.1:{process.stdout.readline().strip()}/v1"


def one(url: str, *, stream: bool, mode: str) -> tuple[float, float]:
    """Seconds to the first answer text and to the whole reply."""
    channel = Channel(
        Endpoint(
            base_url=url,
            headers={},
            secret=None,
            key_env=None,
            connect_timeout=5,
            read_timeout=60,
            retry=RetryPolicy(max_retries=0),
        ),
    )
    model = OpenAIChat(channel, OpenAIOptions(model="bench", mode=mode, stream=stream))  # type: ignore[arg-type]
    first: list[float] = []

    def seen(delta: TextDelta) -> None:
        if delta.text and not first:
            first.append(time.perf_counter())

    began = time.perf_counter()
    request = ModelRequest(
        goal="Is A100 refundable?",
        today=date(2026, 12, 4),
        tools=(),
        history=(),
        deadline=time.monotonic() + 120,
        on_text=seen,
    )
    model.decide(request)
    done = time.perf_counter()
    model.close()
    return (first[0] if first else done) - began, done - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--words", type=int, default=60)
    parser.add_argument("--token-delay", type=float, default=0.05)
    options = parser.parse_args()
    servers = {mode: start_server(options.token_delay, options.words, mode) for mode in MODES}
    try:
        floor = options.words * options.token_delay
        print(
            f"a {options.words}-word answer at {options.token_delay * 1000:.0f} ms a word "
            f"(generation alone: {floor:.2f} s), median of {options.runs}"
        )
        print(f"{'mode':22} {'first char':>11} {'whole reply':>12}")
        for mode, (_, url) in servers.items():
            for stream in (True, False):
                samples = [one(url, stream=stream, mode=mode) for _ in range(options.runs)]
                first = statistics.median(s[0] for s in samples)
                whole = statistics.median(s[1] for s in samples)
                label = f"{mode}, {'streamed' if stream else 'not streamed'}"
                print(f"{label:22} {first * 1000:9.0f}ms {whole * 1000:10.0f}ms")
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait()


if __name__ == "__main__":
    main()
