"""Readers of outside data, under Hypothesis: every field of a valid document swapped for a value
of another type (strings, integers, NaN and Infinity, lists, null, deep nesting, huge strings,
lone surrogates) ends as that reader's documented error, never an internal error.

The readers: case files (JSON and TOML), the config file, trace files (`agent replay`, `replay
--check`) and run-log records (`agent logs show`), and model replies, whole or streamed, in both
dialects.
"""

from __future__ import annotations

import copy
import json
import math
import os
import tomllib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from agent_cli.cli import app
from agent_cli.errors import AgentError, CaseFileError, MalformedReply, ProviderError
from agent_cli.evaluation.cases import load_cases
from agent_cli.providers.anthropic import AnthropicMessages, AnthropicOptions
from agent_cli.providers.openai import OpenAIChat, OpenAIOptions
from tests.contract.test_provider_replies import _request
from tests.fakellm import (
    _anthropic_events,
    _openai_events,
    anthropic_calls,
    anthropic_text,
    openai_calls,
    openai_text,
)
from tests.helpers import mock_channel

runner = CliRunner()
EXAMPLES = settings(
    max_examples=int(os.environ.get("PROPERTY_EXAMPLES", "40")),  # more: a deeper search
    deadline=None,  # a busy machine is slow; the properties are about outcomes, not time
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=bool(os.environ.get("CI")),  # CI: the same examples every run
)

# -- hostile values and where they go ---------------------------------------------------------

DEEP = "__deep__"  # stands for a value nested 5,000 deep, put in once the document is text
DEPTH = 5_000

hostile: st.SearchStrategy[Any] = st.one_of(
    st.text(max_size=12),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),  # NaN and Infinity included
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.sampled_from(["x" * 200_000, "\ud800", "2026-02-30", "", DEEP]),
)


def places(document: Any) -> list[tuple[Any, ...]]:
    """Every path to a value in a JSON-like document, the document itself included."""
    found: list[tuple[Any, ...]] = [()]
    pending: list[tuple[tuple[Any, ...], Any]] = [((), document)]
    while pending:
        path, node = pending.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            found.append((*path, key))
            if isinstance(value, dict | list):
                pending.append(((*path, key), value))
    return found


def swapped(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    changed = copy.deepcopy(document)
    node = changed
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return changed


@st.composite
def mutants(draw: st.DrawFn, document: Any) -> Any:
    """The document with one value, anywhere in it, swapped for a hostile one."""
    return swapped(document, draw(st.sampled_from(places(document))), draw(hostile))


def as_json(document: Any) -> str:
    text = json.dumps(document)  # NaN and Infinity bare, as a careless writer leaves them
    return text.replace(json.dumps(DEEP), "[" * DEPTH + "]" * DEPTH)


def toml_value(value: Any) -> str | None:
    """A value in TOML (None for null, which TOML cannot say: the key is left out)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return (
            ("nan" if math.isnan(value) else "inf" if value > 0 else "-inf")
            if not math.isfinite(value)
            else repr(value)
        )
    if isinstance(value, str):
        return "[" * DEPTH + "]" * DEPTH if value == DEEP else json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(v for v in map(toml_value, value) if v is not None) + "]"
    pairs = ((json.dumps(str(k)), toml_value(v)) for k, v in value.items())
    return "{ " + ", ".join(f"{k} = {v}" for k, v in pairs if v is not None) + " }"


def as_toml(document: Any) -> str:
    """A document whose top level is a table of tables (or arrays of tables), in TOML."""
    if not isinstance(document, dict):
        return f"value = {toml_value(document)}\n"
    lines = []
    for name, table in document.items():
        if isinstance(table, dict):
            lines.append(f"[{json.dumps(str(name))}]")
            lines += [f"{json.dumps(str(k))} = {v}" for k, v in _toml_pairs(table)]
        elif isinstance(table, list) and all(isinstance(item, dict) for item in table):
            for item in table:
                lines.append(f"[[{json.dumps(str(name))}]]")
                lines += [f"{json.dumps(str(k))} = {v}" for k, v in _toml_pairs(item)]
        elif (value := toml_value(table)) is not None:
            lines.insert(0, f"{json.dumps(str(name))} = {value}")
    return "\n".join(lines) + "\n"


def _toml_pairs(table: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for key, value in table.items():
        if (text := toml_value(value)) is not None:
            yield key, text


def one_clean_line(result: Result) -> None:
    """A documented ending: no internal error, and at most one error line."""
    assert "internal error" not in result.stderr, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("agent: error")]
    assert len(errors) <= 1, result.stderr


# -- case files -------------------------------------------------------------------------------

CASE = {
    "cases": [
        {
            "id": "a100",
            "question": "Is order A100 refundable?",
            "today": "2026-10-13",
            "orders": [
                {
                    "code": "A100",
                    "status": "DELIVERED",
                    "total": 250000,
                    "delivered_at": "2026-10-01",
                    "currency": "JPY",
                    "customer": "Sato",
                }
            ],
            "verdict": {"A100": "refundable"},
            "answer_matches": ["250,000"],
            "must_call": ["lookup_order"],
            "must_not_call": ["issue_refund"],
            "max_steps": 4,
            "replies": ["A100"],
        }
    ]
}


def _read_cases(path: Path) -> None:
    try:
        load_cases(path)
    except CaseFileError as exc:
        assert exc.exit_code == 2
        assert "\n" not in str(exc) and str(path) in str(exc), str(exc)


@EXAMPLES
@given(document=mutants(CASE), suffix=st.sampled_from([".json", ".toml"]))
def test_any_case_file_loads_or_is_a_case_file_error(
    tmp_path: Path, document: Any, suffix: str
) -> None:
    path = tmp_path / f"cases{suffix}"
    text = as_json(document) if suffix == ".json" else as_toml(document)
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    _read_cases(path)


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_a_case_file_nested_5000_deep_is_exit_2_naming_it(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"deep{suffix}"
    deep = "[" * DEPTH + "]" * DEPTH
    path.write_text(f"x = {deep}\n" if suffix == ".toml" else deep, encoding="utf-8")
    result = runner.invoke(app, ["eval", "run", str(path), "--dry-run"])
    assert result.exit_code == 2, result.stderr
    assert str(path) in result.stderr and "nested" in result.stderr
    one_clean_line(result)


# -- the config file --------------------------------------------------------------------------

CONFIG = {
    "limits": {"max_steps": 8, "timeout": 120.0, "max_calls_per_reply": 8, "grounding": True},
    "policy": {"refund_window_days": 30, "refundable_statuses": ["DELIVERED"]},
    "store": {"path": "orders.db"},
    "log": {"keep_runs": 100},
    "refunds": {"enabled": False, "max_amount": 50000, "max_per_run": 1},
    "chat": {"memory_turns": 10, "memory_chars": 8000},
    "provider": {"mode": "tools", "temperature": 0.0, "max_retries": 2, "stream": True},
    "prices": {"gpt-4o-mini": {"input": 0.15, "output": 0.6}},
    "profiles": {"local": {"kind": "openai", "base_url": "http://127.0.0.1:8000/v1", "model": "m"}},
    "mcp": {
        "servers": {
            "crm": {
                "command": "python",
                "args": ["server.py"],
                "env": {"A": "b"},
                "startup_timeout": 5.0,
                "tools": {"lookup": {"approval": "never"}},
            }
        }
    },
}


def test_the_base_config_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(as_toml(CONFIG), encoding="utf-8")
    assert tomllib.loads(path.read_text()) == CONFIG  # the TOML writer writes what it means
    result = runner.invoke(app, ["config", "show", "--config", str(path)])
    assert result.exit_code == 0, result.stderr


@EXAMPLES
@given(document=mutants(CONFIG))
def test_any_config_file_is_read_or_exit_2(tmp_path: Path, document: Any) -> None:
    path = tmp_path / "config.toml"
    path.write_text(as_toml(document), encoding="utf-8", errors="surrogatepass")
    result = runner.invoke(app, ["config", "show", "--config", str(path)])
    assert result.exit_code in (0, 2), result.stderr
    one_clean_line(result)
    if result.exit_code == 2:
        assert str(path) in result.stderr or "config" in result.stderr.lower()


def test_a_config_nested_5000_deep_is_exit_2_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[limits]\nmax_steps = " + "[" * DEPTH + "]" * DEPTH + "\n", encoding="utf-8")
    for argv in (["config", "show"], ["ask", "Is A100 refundable?", "--dry-run"]):
        result = runner.invoke(app, [*argv, "--config", str(path)])
        assert result.exit_code == 2, result.stderr
        assert str(path) in result.stderr
        one_clean_line(result)


# -- traces and the run log -------------------------------------------------------------------


@pytest.fixture(scope="module")
def trace_records(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """A real trace of a dry run that looks up two orders (in a home of its own: a module's
    fixture runs before each test's isolation)."""
    from tests.conftest import isolate

    folder = tmp_path_factory.mktemp("trace")
    path = folder / "runs.jsonl"
    argv = ["ask", "Are A100 and A101 refundable?", "--dry-run", "--today", "2026-10-13"]
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(folder, monkeypatch)
        assert runner.invoke(app, [*argv, "--trace", str(path), "-q"]).exit_code == 0
    return [json.loads(line) for line in path.read_text().splitlines()]


@st.composite
def traces(draw: st.DrawFn, records: list[dict[str, Any]]) -> list[Any]:
    """The trace with one value of one record swapped."""
    number = draw(st.integers(0, len(records) - 1))
    changed = list(records)
    changed[number] = draw(mutants(records[number]))
    return changed


@EXAMPLES
@given(data=st.data())
def test_any_trace_replays_or_is_reported_never_an_internal_error(
    tmp_path: Path, trace_records: list[dict[str, Any]], data: st.DataObject
) -> None:
    records = data.draw(traces(trace_records))
    path = tmp_path / "runs.jsonl"
    lines = [as_json(record) for record in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    shown = runner.invoke(app, ["replay", str(path)])
    assert shown.exit_code in (0, 2), shown.stderr
    one_clean_line(shown)
    checked = runner.invoke(app, ["replay", str(path), "--check"])
    assert checked.exit_code in (0, 2, 3), checked.stderr
    one_clean_line(checked)


@EXAMPLES
@given(data=st.data())
def test_any_logged_trace_shows_or_is_reported_never_an_internal_error(
    tmp_path: Path, trace_records: list[dict[str, Any]], data: st.DataObject
) -> None:
    from agent_cli.record.runlog import LoggedRun, RunLog

    records = data.draw(traces(trace_records))
    path = tmp_path / f"runs-{os.urandom(4).hex()}.db"
    log = RunLog.open(path)
    run = LoggedRun(
        run_id="ab" * 16,
        session_id=None,
        kind="ask",
        started_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
        question="Are A100 and A101 refundable?",
        provider="offline",
        model="playbook",
        status="answered",
        answer="Yes.",
        steps=3,
        input_tokens=0,
        output_tokens=0,
        cost=None,
        elapsed_ms=1.0,
    )
    lines = [as_json(record) for record in records]
    log.started(run, lines[0])
    log.finished(run, lines)
    log.close()
    shown = runner.invoke(app, ["logs", "show", "abab"], env={"AGENT_LOG": str(path)})
    assert shown.exit_code in (0, 2), shown.stderr
    one_clean_line(shown)


# -- model replies, whole and streamed --------------------------------------------------------

TOOLS_REPLIES = {
    "openai": [
        openai_calls(("lookup_order", {"order_code": "A100"}), ("refund_policy", "{}")),
        openai_text("Order A100 is refundable."),
    ],
    "anthropic": [
        anthropic_calls(("lookup_order", {"order_code": "A100"}), text="Let me look."),
        anthropic_text("Order A100 is refundable."),
    ],
}
DECISION = '{"type": "tool", "tool": "lookup_order", "args": {"order_code": "A100"}}'
JSON_REPLIES = {
    "openai": [openai_text(DECISION), openai_text('{"type": "final", "answer": "Yes."}')],
    "anthropic": [anthropic_text(DECISION), anthropic_text('{"type": "final", "answer": "Yes."}')],
}
CHOICES = st.sampled_from([(d, m) for d in ("openai", "anthropic") for m in ("tools", "json")])


def seed(dialect: str, mode: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.sampled_from((TOOLS_REPLIES if mode == "tools" else JSON_REPLIES)[dialect])


def adapter(
    dialect: str, body: bytes, *, stream: bool, mode: str = "tools"
) -> OpenAIChat | AnthropicMessages:
    kind = "text/event-stream" if stream else "application/json"

    def respond(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": kind})

    channel = mock_channel(respond)
    if dialect == "openai":
        return OpenAIChat(channel, OpenAIOptions(model="m", mode=mode, stream=stream))  # type: ignore[arg-type]
    return AnthropicMessages(channel, AnthropicOptions("m", mode=mode, stream=stream))  # type: ignore[arg-type]


def decide_or_fail_cleanly(model: OpenAIChat | AnthropicMessages) -> None:
    try:
        reply = model.decide(_request())
    except (MalformedReply, ProviderError):
        return  # the documented endings: a repair, or one clear provider error
    finally:
        model.close()
    for decision in reply.decisions:  # whatever was read can be sent back in the next request
        json.dumps(decision.model_dump(mode="json"), allow_nan=False)


@EXAMPLES
@given(choice=CHOICES, data=st.data())
def test_any_whole_reply_is_a_decision_or_a_clean_error(
    choice: tuple[str, str], data: st.DataObject
) -> None:
    dialect, mode = choice
    body = as_json(data.draw(mutants(data.draw(seed(dialect, mode)))))
    decide_or_fail_cleanly(
        adapter(dialect, body.encode("utf-8", "surrogatepass"), stream=False, mode=mode)
    )


def _events(dialect: str, reply: dict[str, Any]) -> list[dict[str, Any]]:
    """A reply's stream as (event name, data) records the test can change."""
    raw = _openai_events(reply, True) if dialect == "openai" else _anthropic_events(reply)
    events = []
    for text in raw:
        name = next((line[7:] for line in text.splitlines() if line.startswith("event: ")), None)
        data = next(line[6:] for line in text.splitlines() if line.startswith("data: "))
        events.append({"event": name, "data": data if data == "[DONE]" else json.loads(data)})
    return events


def _stream_body(events: list[dict[str, Any]]) -> bytes:
    parts = []
    for event in events:
        data = event["data"] if event["data"] == "[DONE]" else as_json(event["data"])
        name = f"event: {event['event']}\n" if event["event"] else ""
        parts.append(f"{name}data: {data}\n\n")
    return "".join(parts).encode("utf-8", "surrogatepass")


@EXAMPLES
@given(choice=CHOICES, data=st.data())
def test_any_streamed_delta_is_a_decision_or_a_clean_error(
    choice: tuple[str, str], data: st.DataObject
) -> None:
    dialect, mode = choice
    events = _events(dialect, data.draw(seed(dialect, mode)))
    number = data.draw(st.integers(0, len(events) - 1))
    if events[number]["data"] != "[DONE]":
        events[number] = {**events[number], "data": data.draw(mutants(events[number]["data"]))}
    decide_or_fail_cleanly(adapter(dialect, _stream_body(events), stream=True, mode=mode))


def test_a_tool_calls_delta_of_the_wrong_type_is_an_invalid_response() -> None:
    body = b'data: {"choices":[{"index":0,"delta":{"tool_calls":5}}]}\n\ndata: [DONE]\n\n'
    with pytest.raises(AgentError) as caught:
        adapter("openai", body, stream=True).decide(_request())
    assert isinstance(caught.value, MalformedReply | ProviderError)


# -- read_json's shortcut reads exactly what the full walk reads ------------------------------

JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6) | st.just("\ud800"),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=3) | st.just("\udfff"), inner, max_size=3)
    ),
    max_leaves=30,
)


def _walked(text: str | bytes, max_depth: int) -> tuple[str, Any]:
    """What read_json gave before its shortcut: every value walked by `tidy`."""
    from agent_cli.text import JsonTextError, NonFinite, tidy

    value = json.loads(text, parse_constant=NonFinite, strict=False)
    try:
        return "ok", tidy(value, max_depth=max_depth)
    except JsonTextError as exc:
        return "error", str(exc)


@EXAMPLES
@given(
    value=JSON_VALUES,
    ascii_only=st.booleans(),
    as_bytes=st.booleans(),
    max_depth=st.integers(min_value=1, max_value=6),
)
@example(value=[[[[1]]]], ascii_only=True, as_bytes=False, max_depth=3)  # one level too deep
@example(value={"a": {"b": {"c": {}}}}, ascii_only=True, as_bytes=True, max_depth=3)
@example(value=["\ud800"], ascii_only=True, as_bytes=False, max_depth=3)  # an escaped surrogate
@example(value={"\udfff": 1}, ascii_only=False, as_bytes=True, max_depth=3)  # a raw one
def test_read_json_reads_what_the_full_walk_reads(
    value: Any, ascii_only: bool, as_bytes: bool, max_depth: int
) -> None:
    from agent_cli.text import JsonTextError, read_json

    text: str | bytes = json.dumps(value, ensure_ascii=ascii_only)
    if as_bytes:
        text = text.encode("utf-8", "surrogatepass")  # raw surrogates, as a hostile server sends
    try:
        got: tuple[str, Any] = ("ok", read_json(text, max_depth=max_depth))
    except JsonTextError as exc:
        got = ("error", str(exc))
    assert got == _walked(text, max_depth)
