"""Start-up and loop-overhead figures for agent-cli. Prints a table; asserts nothing.

    python benchmarks/startup.py [--runs N]

Whole-process wall times (median, min-max over N runs) side by side with `python -c pass` and
the Typer+Rich floor (`import typer.rich_utils`, what any Typer app with Rich help pays), each
as a ratio to that floor; the peak memory of each; and, in process, the loop's own overhead per
3-step run with the scripted model and rendering off. `agent ask` (the offline default) also
logs the run. With the MCP SDK installed, `agent tools` with one MCP server configured (the test
suite's, over stdio) shows what a configured server costs: the SDK's import and the server's
start; with none configured nothing of MCP is imported. With the OpenTelemetry extra installed,
`agent ask` with `OTEL_EXPORTER_OTLP_ENDPOINT` set (a loopback receiver that takes every batch)
shows what export costs; unset, the plain `agent ask` row is the run without it (nothing of
OpenTelemetry is imported).
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
from importlib.util import find_spec
from pathlib import Path

AGENT = [sys.executable, "-m", "agent_cli"]
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import typer.rich_utils (floor)": [sys.executable, "-c", "import typer.rich_utils"],
    "agent --help": [*AGENT, "--help"],
    "agent ask --dry-run": [*AGENT, "ask", "Is order A100 refundable?", "--dry-run"],
    "agent ask (offline, logged)": [*AGENT, "ask", "Is order A100 refundable?"],
    "agent tools": [*AGENT, "tools"],
}
MCP_SERVER = Path(__file__).parent.parent / "tests" / "mcp_server.py"


def mcp_config(directory: str) -> Path:
    config = Path(directory) / "mcp.toml"
    config.write_text(
        f"[mcp.servers.crm]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(MCP_SERVER))}]\n"
    )
    return config


def time_process(argv: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one run of argv."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed")
    return elapsed, usage.ru_maxrss


def loop_overhead_ms(runs: int) -> float:
    """Median in-process time of a 3-step scripted run through the loop, no rendering."""
    from collections.abc import Mapping
    from typing import Any

    from agent_cli.core.decisions import CallTool, FinalAnswer
    from agent_cli.core.loop import run
    from agent_cli.core.seams import Observation, ToolSpec
    from agent_cli.providers.scripted import ScriptedModel

    class NullTools:
        def specs(self) -> tuple[ToolSpec, ...]:
            return (ToolSpec("lookup_order", "d", {}), ToolSpec("refund_policy", "d", {}))

        def invoke(
            self, name: str, args: Mapping[str, Any], *, time_left: float = 0.0
        ) -> Observation:
            return Observation("ok")

    script = [
        CallTool(tool="lookup_order", args={"order_code": "A100"}),
        CallTool(tool="refund_policy"),
        FinalAnswer(answer="yes"),
    ]
    tools = NullTools()
    samples = []
    for _ in range(runs):
        model = ScriptedModel(script)
        started = time.perf_counter()
        for _event in run("Is order A100 refundable?", model, tools):
            pass
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def clean_env(home: str) -> dict[str, str]:
    """The environment with `home` as HOME, where the database and the run log are made."""
    env = {**os.environ, "HOME": home}
    for variable in ("AGENT_DB", "AGENT_LOG", "AGENT_CONFIG", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        env.pop(variable, None)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as home:
        env = clean_env(home)
        commands = dict(COMMANDS)
        if find_spec("mcp") is not None and MCP_SERVER.exists():
            commands["agent tools, 1 MCP server"] = [
                *AGENT,
                "tools",
                "--config",
                str(mcp_config(home)),
            ]
        for argv in commands.values():
            time_process(argv, env)  # warm the file cache; seeds the database
        figures: dict[str, list[tuple[float, int]]] = {name: [] for name in commands}
        for _ in range(runs):  # round-robin, so drift in the machine's load hits all alike
            for name, argv in commands.items():
                figures[name].append(time_process(argv, env))
    floor_samples = [t for t, _ in figures["import typer.rich_utils (floor)"]]
    floor, floor_min = statistics.median(floor_samples), min(floor_samples)
    print(
        f"{'command':34} {'median':>9} {'min-max':>17} {'x floor':>8} {'min/min':>8} "
        f"{'peak RSS':>9}"
    )
    for name, samples in figures.items():
        times = [t * 1000 for t, _ in samples]
        median = statistics.median(times)
        peak = max(rss for _, rss in samples) / 1024
        print(
            f"{name:34} {median:7.0f}ms {min(times):7.0f}-{max(times):.0f}ms "
            f"{median / (floor * 1000):7.2f}x {min(times) / (floor_min * 1000):7.2f}x "
            f"{peak:7.1f}MB"
        )
    print(f"loop overhead, 3-step scripted run: {loop_overhead_ms(2000):.3f} ms (median of 2000)")
    if find_spec("opentelemetry.sdk") is not None:
        exported = otel_ask_ms(runs)
        print(f"agent ask (offline, logged), OTel export on: median {exported:.0f} ms")


def otel_ask_ms(runs: int) -> float:
    """`agent ask` exporting its spans to a loopback receiver: the median wall time."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    class Taker(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Taker)
    Thread(target=receiver.serve_forever, daemon=True).start()
    argv = COMMANDS["agent ask (offline, logged)"]
    with tempfile.TemporaryDirectory() as home:
        env = clean_env(home)
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{receiver.server_address[1]}"
        time_process(argv, env)
        times = [time_process(argv, env)[0] * 1000 for _ in range(runs)]
    receiver.shutdown()
    return statistics.median(times)


if __name__ == "__main__":
    main()
