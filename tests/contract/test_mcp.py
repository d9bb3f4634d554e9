"""MCP tool servers: a real server (tests/mcp_server.py, the official SDK, over stdio) whose tools
the model calls as NAME.tool through both wire formats, and every way such a server can fail."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from agent_cli.cli import app
from agent_cli.config import McpServerSettings, McpToolSettings
from agent_cli.core.seams import ModelRequest, Observation, ToolSpec
from agent_cli.providers.base import WireNames
from agent_cli.tools.mcp_servers import McpServers, ServerUnavailable, expand_env
from tests.fakellm import FakeLLM, anthropic_calls, anthropic_text, openai_calls, openai_text
from tests.helpers import json_lines

runner = CliRunner()
KEY = "sk-test-SECRET-0123456789abcdef"
SERVER = Path(__file__).parents[1] / "mcp_server.py"


def server_config(name: str = "crm", mode: str = "normal", extra: str = "") -> str:
    return (
        f"[mcp.servers.{name}]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(SERVER))}, {json.dumps(mode)}]\n"
        'env = { MCP_CALLS = "${MCP_CALLS}", MCP_STARTS = "${MCP_STARTS}" }\n'
        "startup_timeout = 20.0\n"
        "trust_annotations = true\n"  # our own test server: its read-only marks are true
        f"{extra}"
    )


@pytest.fixture
def crm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config with the test server as `crm`; its calls and starts land in tmp_path."""
    monkeypatch.setenv("MCP_CALLS", str(tmp_path / "calls.jsonl"))
    monkeypatch.setenv("MCP_STARTS", str(tmp_path / "starts"))
    config = tmp_path / "config.toml"
    config.write_text(server_config())
    return config


def calls_made(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "calls.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


def ask(fake: FakeLLM, provider: str, config: Path, *args: str) -> Result:
    variable = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
    base = fake.url if provider == "anthropic" else fake.url + "/v1"
    argv = ["ask", "Which tier is customer C1?", "--provider", provider, "--base-url", base]
    argv += ["--config", str(config), "--json", "--no-grounding", *args]
    return runner.invoke(app, argv, env={variable: KEY})


def observations(result: Result) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in result.stdout.splitlines()]
    return [r for r in records if r["event"] == "observation"]


def finished(result: Result) -> dict[str, Any]:
    return dict(json.loads(result.stdout.splitlines()[-1]))


def calls(provider: str, *made: tuple[str, Any]) -> dict[str, Any]:
    return (openai_calls if provider == "openai" else anthropic_calls)(*made)


def text(provider: str, answer: str) -> dict[str, Any]:
    return (openai_text if provider == "openai" else anthropic_text)(answer)


def tool_names(provider: str, body: dict[str, Any]) -> list[str]:
    if provider == "openai":
        return [tool["function"]["name"] for tool in body["tools"]]
    return [tool["name"] for tool in body["tools"]]


def last_result(provider: str, body: dict[str, Any]) -> str:
    last = body["messages"][-1]
    return str(last["content"] if provider == "openai" else last["content"][0]["content"])


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_server_tool_is_called_as_name_dot_tool_and_its_result_is_delimited_data(
    fake_llm: FakeLLM, crm: Path, tmp_path: Path, provider: str
) -> None:
    fake_llm.queue(
        calls(provider, ("crm__lookup_customer", {"customer_id": "C1"})),
        text(provider, "Customer C1 is gold tier."),
    )
    result = ask(fake_llm, provider, crm)
    assert result.exit_code == 0, result.stderr
    assert fake_llm.violations == []
    first, second = fake_llm.bodies()
    offered = tool_names(provider, first)
    assert {"lookup_order", "crm__lookup_customer", "crm__close_ticket"} <= set(offered)
    assert not any("broken_schema" in name for name in offered)  # skipped, with a warning
    assert "crm: tool broken_schema skipped: its input schema is invalid" in result.stderr
    (observed,) = observations(result)
    assert observed["tool"] == "crm.lookup_customer" and not observed["is_error"]
    sent = last_result(provider, second)
    assert sent.startswith('<data source="crm.lookup_customer">\n') and sent.endswith("</data>")
    assert sent.count("</data") == 1  # the server's own "</data>" cannot close the data
    assert "customer=C1 name=Sato tier=gold" in sent
    assert calls_made(tmp_path) == [{"tool": "lookup_customer", "arguments": {"customer_id": "C1"}}]
    assert finished(result)["status"] == "answered"


def test_a_long_result_is_cut_like_ours_before_the_model_sees_it(
    fake_llm: FakeLLM, crm: Path
) -> None:
    crm.write_text(
        server_config().replace("env = { MCP_CALLS", f'env = {{ BIG = "{"x" * 5000}", MCP_CALLS')
    )
    fake_llm.queue(openai_calls(("crm__show_env", {"name": "BIG"})), openai_text("Long."))
    result = ask(fake_llm, "openai", crm)
    assert result.exit_code == 0, result.stderr
    sent = last_result("openai", fake_llm.bodies()[1])
    assert "x" * 2000 in sent and "x" * 2001 not in sent
    assert "[... 3,000 more characters cut]" in sent


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_stdio_server_gets_only_the_safe_environment_and_its_own_env(
    fake_llm: FakeLLM, crm: Path, monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-NEVER-SHOWN-0123456789")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-NEVER-SHOWN-0123456789")
    monkeypatch.setenv("SHOP_DB_PASSWORD", "hunter2-hunter2")
    fake_llm.queue(calls(provider, ("crm__show_env", {"name": "*"})), text(provider, "Seen."))
    result = ask(fake_llm, provider, crm)
    assert result.exit_code == 0, result.stderr
    names = set(last_result(provider, fake_llm.bodies()[1]).split("\n")[1].split())
    safe = {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LC_CTYPE"}  # LC_CTYPE: Python's
    assert {"MCP_CALLS", "MCP_STARTS", "PATH"} <= names  # its configured env, and the safe part
    assert names - {"MCP_CALLS", "MCP_STARTS"} <= safe, names
    assert not {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SHOP_DB_PASSWORD", "AGENT_DB"} & names


def test_approval_is_the_tools_setting_else_the_servers_else_by_a_trusted_read_only_mark() -> None:
    server = McpServerSettings(command="x", tools={"close": McpToolSettings(approval="never")})
    assert server.approval_of("close", read_only=False) == "never"
    assert server.approval_of("open", read_only=False) == "always"
    assert server.approval_of("look", read_only=True) == "always"  # a hint, not trusted
    trusting = McpServerSettings(command="x", trust_annotations=True)
    assert trusting.approval_of("look", read_only=True) == "never"
    assert trusting.approval_of("open", read_only=False) == "always"
    strict = McpServerSettings(
        command="x", approval="always", tools={"close": McpToolSettings(approval="never")}
    )
    assert strict.approval_of("look", read_only=True) == "always"
    assert strict.approval_of("close", read_only=False) == "never"


def test_a_tool_the_server_does_not_mark_read_only_needs_approval_unless_configured(
    fake_llm: FakeLLM, crm: Path, tmp_path: Path
) -> None:
    fake_llm.queue(
        openai_calls(("crm__close_ticket", {"ticket": 7})), openai_text("I could not close it.")
    )
    denied = ask(fake_llm, "openai", crm)
    assert denied.exit_code == 0, denied.stderr
    (observed,) = observations(denied)
    assert observed["observation"].startswith("DENIED")
    assert calls_made(tmp_path) == []  # nobody at a terminal: the server never saw the call
    crm.write_text(
        server_config(extra='[mcp.servers.crm.tools.close_ticket]\napproval = "never"\n')
    )
    fake_llm.queue(openai_calls(("crm__close_ticket", {"ticket": 7})), openai_text("Closed."))
    allowed = ask(fake_llm, "openai", crm)
    assert allowed.exit_code == 0, allowed.stderr
    assert observations(allowed)[0]["observation"] == "ticket 7 closed"
    assert calls_made(tmp_path) == [{"tool": "close_ticket", "arguments": {"ticket": 7}}]


def test_arguments_are_validated_against_the_servers_schema_strictly_before_any_call(
    fake_llm: FakeLLM, crm: Path, tmp_path: Path
) -> None:
    fake_llm.queue(
        openai_calls(("crm__lookup_customer", {"customer_id": 1})),
        openai_calls(("crm__lookup_customer", {"customer_id": "C1", "admin": True})),
        openai_text("I could not look it up."),
    )
    result = ask(fake_llm, "openai", crm)
    assert result.exit_code == 0, result.stderr
    wrong_type, extra = (o["observation"] for o in observations(result))
    assert "invalid arguments for crm.lookup_customer: customer_id: 1 is not of type" in wrong_type
    assert "'admin' was unexpected" in extra and "Expected crm.lookup_customer(" in extra
    assert calls_made(tmp_path) == []


def test_a_hanging_tool_is_an_error_observation_bounded_by_the_run_deadline(
    fake_llm: FakeLLM, crm: Path
) -> None:
    fake_llm.queue(openai_calls(("crm__wait", {"seconds": 3600})), openai_text("Never reached."))
    began = time.monotonic()
    # 8 s: room for the server's start on a loaded machine, which the run's deadline covers too
    result = ask(fake_llm, "openai", crm, "--timeout", "8")
    assert time.monotonic() - began < 60  # the deadline, not the hour the tool would take
    assert result.exit_code == 3, result.stderr
    (observed,) = observations(result)
    assert observed["observation"].startswith("ERROR: crm.wait did not answer within")
    assert finished(result)["status"] == "timeout"


def dead(pid: int) -> bool:
    """Gone, or a zombie waiting to be reaped: it runs no more."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def test_a_server_that_ignores_sigterm_is_killed_with_its_process_group(
    fake_llm: FakeLLM, crm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_CHILDREN", str(tmp_path / "children"))
    config = tmp_path / "stubborn.toml"
    config.write_text(
        server_config().replace("MCP_STARTS = ", 'MCP_CHILDREN = "${MCP_CHILDREN}", MCP_STARTS = ')
    )
    fake_llm.queue(openai_calls(("crm__stubborn", {})), openai_text("Never reached."))
    began = time.monotonic()
    result = ask(fake_llm, "openai", config, "--timeout", "8")
    took = time.monotonic() - began
    assert result.exit_code == 3, result.stderr
    (observed,) = observations(result)
    assert observed["observation"].startswith("ERROR: crm.stubborn did not answer within")
    server = int((tmp_path / "starts").read_text().split()[0])
    child = int((tmp_path / "children").read_text().split()[0])
    deadline = time.monotonic() + 10
    while not (dead(server) and dead(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert dead(server), "the server outlived the run"
    assert dead(child), "its child outlived the run"
    assert took < 8 + 30  # bounded (the margin is for a busy machine, not a measure)


def test_a_50_mb_result_is_not_read_whole_it_becomes_an_error_saying_how_it_began(
    fake_llm: FakeLLM, crm: Path
) -> None:
    fake_llm.queue(openai_calls(("crm__huge", {"mb": 50})), openai_text("Too big."))
    result = ask(fake_llm, "openai", crm, "--timeout", "60")
    assert result.exit_code == 0, result.stderr
    (observed,) = observations(result)
    text = observed["observation"]
    assert text.startswith("ERROR: crm.huge failed: its answer was over 4 MB and was not read")
    assert "it began: HUGEaaaa" in text and len(text) < 2_000
    assert finished(result)["status"] == "answered"


def test_a_result_under_the_cap_is_read_and_cut_as_usual(fake_llm: FakeLLM, crm: Path) -> None:
    fake_llm.queue(openai_calls(("crm__huge", {"mb": 1})), openai_text("Read it."))
    result = ask(fake_llm, "openai", crm, "--timeout", "60")
    assert result.exit_code == 0, result.stderr
    (observed,) = observations(result)
    assert observed["observation"].startswith("HUGEaaaa")
    assert finished(result)["status"] == "answered"


def test_a_crashed_server_is_an_error_observation_and_its_last_words_are_kept(
    fake_llm: FakeLLM, crm: Path
) -> None:
    fake_llm.queue(
        openai_calls(("crm__crash", {})),
        openai_calls(("crm__lookup_customer", {"customer_id": "C1"})),
        openai_text("The CRM is unavailable."),
    )
    result = ask(fake_llm, "openai", crm)
    assert result.exit_code == 0, result.stderr
    crashed, after = (o["observation"] for o in observations(result))
    assert crashed.startswith("ERROR: crm.crash failed: MCP server crm stopped")
    assert "the ticket database went away" in crashed
    assert after.startswith("ERROR: MCP server crm is not available: it stopped")
    assert finished(result)["status"] == "answered"


def test_servers_that_fail_to_start_are_warnings_and_their_tools_say_why(
    fake_llm: FakeLLM, crm: Path, tmp_path: Path
) -> None:
    # `gone` may take long to exit on a busy machine: it has 60 s. `stuck` never answers: 3 s.
    gone = server_config("gone", "exit").replace("startup_timeout = 20.0", "startup_timeout = 60.0")
    stuck = server_config("stuck", "hang").replace(
        "startup_timeout = 20.0", "startup_timeout = 3.0"
    )
    crm.write_text(gone + stuck)
    fake_llm.queue(openai_calls(("gone__lookup_customer", {"customer_id": "C1"})), openai_text("?"))
    result = ask(fake_llm, "openai", crm)
    assert result.exit_code == 0, result.stderr
    assert (
        "MCP server gone exited before it was ready; it said: cannot open crm.db" in result.stderr
    )
    assert "MCP server stuck did not start within 3 s" in result.stderr
    (observed,) = observations(result)
    assert observed["observation"].startswith(
        "ERROR: 'gone.lookup_customer' cannot be called: MCP server gone exited before it was"
    )
    assert "cannot open crm.db" in observed["observation"]
    assert "lookup_order" in tool_names("openai", fake_llm.bodies()[0])


def test_a_chat_session_starts_each_server_once_even_across_models_and_stops_it(
    fake_llm: FakeLLM, crm: Path, tmp_path: Path
) -> None:
    fake_llm.queue(openai_text("First answer."), openai_text("Second answer."))
    argv = ["chat", "--provider", "openai", "--base-url", fake_llm.url + "/v1"]
    result = runner.invoke(
        app,
        [*argv, "--config", str(crm)],
        input="one\n/model gpt-other\ntwo\n",  # a model switch keeps the servers
        env={"OPENAI_API_KEY": KEY},
    )
    assert result.exit_code == 0, result.stderr
    first, second = fake_llm.bodies()
    assert second["model"] == "gpt-other"
    assert "crm__lookup_customer" in tool_names("openai", first)
    # a later turn is offered every tool (who the customer is was found in an earlier turn)
    assert set(tool_names("openai", first)) <= set(tool_names("openai", second))
    (pid,) = (tmp_path / "starts").read_text().split()
    with pytest.raises(ProcessLookupError):  # the server is gone with the session
        os.kill(int(pid), 0)


@contextlib.contextmanager
def serving(argv: list[str], env: dict[str, str] | None = None) -> Iterator[str]:
    """`argv` (program, script, mode, ...), with a free loopback port after the mode, served
    until the block ends: its /mcp URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [*argv[:3], str(port), *argv[3:]],  # the port after the mode
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as attempt:
                if attempt.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def http_server() -> Iterator[str]:
    """The test server over streamable HTTP on a free loopback port: its URL."""
    argv = [sys.executable, str(SERVER), "http"]
    with serving(argv, {"MCP_TOKEN": "t0ken-for-the-test"}) as url:
        yield url


def test_a_running_server_is_reached_by_url_over_streamable_http_with_its_headers(
    fake_llm: FakeLLM, tmp_path: Path, http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[mcp.servers.web]\nurl = "{http_server}"\ntrust_annotations = true\n'
        'headers = { Authorization = "Bearer ${WEB_TOKEN}" }\n'
        f'[mcp.servers.anonymous]\nurl = "{http_server}"\n'
        '[mcp.servers.down]\nurl = "http://127.0.0.1:9/mcp"\nstartup_timeout = 5.0\n'
    )
    fake_llm.queue(
        openai_calls(("web__lookup_customer", {"customer_id": "C2"})), openai_text("Gold.")
    )
    monkeypatch.setenv("WEB_TOKEN", "t0ken-for-the-test")
    result = ask(fake_llm, "openai", config)
    assert result.exit_code == 0, result.stderr
    (observed,) = observations(result)
    assert observed["observation"].startswith("customer=C2 name=Sato")
    assert "MCP server down did not start" in result.stderr
    assert "MCP server anonymous did not start" in result.stderr  # no token: refused
    assert "it answered HTTP 401 (unauthorized: check its headers)" in result.stderr
    assert "t0ken" not in result.stderr


def test_agent_tools_lists_server_tools_and_doctor_checks_each_server(crm: Path) -> None:
    crm.write_text(server_config() + server_config("gone", "exit"))
    listed = runner.invoke(app, ["tools", "--json", "--config", str(crm)])
    assert listed.exit_code == 0, listed.stderr
    tools = {tool["name"]: tool for tool in json_lines(listed.stdout)}
    assert tools["crm.lookup_customer"]["parameters"]["additionalProperties"] is False
    assert tools["crm.lookup_customer"]["description"] == (
        "Find a customer by id, e.g. C1. (from MCP server crm)"  # its escape sequence removed
    )
    assert tools["crm.close_ticket"]["description"] == (
        "Close a support ticket. (from MCP server crm; each call needs a person's approval)"
    )
    assert "crm.broken_schema" not in tools and "MCP server gone exited" in listed.stderr
    table = runner.invoke(app, ["tools", "--config", str(crm)])
    assert "crm.lookup_customer" in table.stdout and "\x1b" not in table.stdout
    checked = runner.invoke(app, ["doctor", "--config", str(crm)])
    assert checked.exit_code == 1
    assert "MCP server crm" in checked.stdout and "8 tools" in checked.stdout
    assert "MCP server gone" in checked.stdout and "exited before it was ready" in checked.stdout


def test_every_listing_page_is_read(tmp_path: Path) -> None:
    config = McpServerSettings(command=sys.executable, args=[str(SERVER), "many"])
    warnings: list[str] = []
    servers = McpServers({"big": config}, warn=warnings.append)
    try:
        servers.start(30)
        # 8 + 150 tools on two pages: all read, 128 offered, the rest counted in one warning
        assert len(servers.tools) == 128
        assert "MCP server big: 30 more tools not offered: at most 128 from one server" in warnings
    finally:
        servers.close()


def test_at_most_256_tools_are_taken_from_all_servers_in_the_configs_order() -> None:
    config = McpServerSettings(command=sys.executable, args=[str(SERVER), "many"])
    warnings: list[str] = []
    servers = McpServers({"one": config, "two": config, "three": config}, warn=warnings.append)
    try:
        servers.start(60)
        assert len(servers.tools) == 256
        assert [t.server for t in servers.tools] == ["one"] * 128 + ["two"] * 128
        assert "128 more MCP tools not offered: at most 256 from all servers together" in warnings
    finally:
        servers.close()


def test_a_server_printing_a_banner_on_stdout_still_works() -> None:
    config = McpServerSettings(
        command=sys.executable, args=[str(SERVER), "noisy"], trust_annotations=True
    )
    servers = McpServers({"noisy": config}, warn=lambda _: None)
    try:
        servers.start(30)
        tool = next(t for t in servers.tools if t.name == "noisy.lookup_customer")
        observed = tool.bind({"customer_id": "C9"}, time_left=10)()
        assert isinstance(observed, Observation) and observed.text.startswith("customer=C9")
    finally:
        servers.close()


def test_nothing_of_mcp_is_imported_without_a_server_nor_by_the_offline_model(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(server_config())
    probe = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from agent_cli.cli import app\n"
        "for extra in ([], ['--config', sys.argv[1]]):\n"
        "    result = CliRunner().invoke(app, ['ask', 'Is A100 refundable?', '-q', *extra])\n"
        "    assert result.exit_code == 0, result.output\n"
        "    loaded = [m for m in sys.modules if m.split('.')[0] in ('mcp', 'jsonschema')]\n"
        "    assert not loaded, loaded\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(config)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_server_settings_are_checked_when_the_config_is_read(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[mcp.servers.both]\ncommand = "x"\nurl = "http://localhost:1/mcp"\n'
        '[mcp.servers."a.b"]\ncommand = "x"\n'
        '[mcp.servers.web]\nurl = "http://localhost:1/mcp"\nargs = ["x"]\n'
        '[mcp.servers.typo]\ncommand = "x"\napprove = "never"\n'
        '[mcp.servers.local]\ncommand = "x"\nheaders = { A = "b" }\n'
    )
    result = runner.invoke(app, ["tools", "--config", str(config)])
    assert result.exit_code == 2
    message = result.stderr
    assert "mcp.servers.both" in message and "either command" in message
    assert "prefixes its tools' names" in message
    assert "args, env and cwd are for a command" in message
    assert "headers are for a url, not a command" in message
    assert "mcp.servers.typo.approve" in message and "approval" in message  # did you mean
    assert len(message.strip().splitlines()) == 1


def test_env_values_take_variables_from_ours_and_an_unset_one_says_which() -> None:
    assert expand_env({"TOKEN": "Bearer ${CRM_KEY}"}, {"CRM_KEY": "k1"}) == {"TOKEN": "Bearer k1"}
    with pytest.raises(ServerUnavailable, match=r"TOKEN needs \$CRM_KEY, which is not set"):
        expand_env({"TOKEN": "${CRM_KEY}"}, {})


def _request(*names: str) -> ModelRequest:
    specs = tuple(ToolSpec(name, "d", {"type": "object"}) for name in names)
    return ModelRequest(goal="g", today=date(2026, 12, 4), tools=specs, history=(), deadline=0.0)


def test_wire_names_are_accepted_by_the_apis_distinct_and_map_back() -> None:
    names = WireNames.of(_request("lookup_order", "crm.get", "crm_get", "crm__get", "a.b.c-d"))
    assert names.out("lookup_order") == "lookup_order"
    sent = [names.out(n) for n in ("crm.get", "crm_get", "crm__get", "a.b.c-d")]
    assert len(set(sent)) == 4 and "crm__get" in sent
    for name, wire in zip(("crm.get", "crm_get", "crm__get", "a.b.c-d"), sent, strict=True):
        assert names.back(wire) == name
    assert names.out("made.up name!") == "made__up_name_"  # a call the model invented
    assert names.back("made__up") == "made.up" and names.back("plain_name") == "plain_name"


def test_an_mcp_call_needing_approval_is_asked_at_the_terminal_per_exact_call(
    crm: Path, tmp_path: Path
) -> None:
    import pexpect

    from tests.cli.test_chat_terminal import spawn

    script = tmp_path / "s.json"
    close = [{"type": "tool", "tool": "crm.close_ticket", "args": {"ticket": n}} for n in (7, 8)]
    script.write_text(json.dumps([*close, {"type": "final", "answer": "Ticket 7 closed."}]))
    child = spawn(
        "ask", "Close tickets 7 and 8", "--script", str(script), env={"AGENT_CONFIG": str(crm)}
    )
    child.expect(r'needs approval: call crm.close_ticket on MCP server crm with \{"ticket": 7\}')
    child.expect(r"Approve\? \[y/N/q\] ")
    child.sendline("y")
    child.expect("ticket 7 closed")
    child.expect(r'with \{"ticket": 8\}')
    child.expect(r"Approve\? \[y/N/q\] ")
    child.sendline("")  # just Enter: a No
    child.expect("DENIED")
    child.expect("Ticket 7 closed.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert calls_made(tmp_path) == [{"tool": "close_ticket", "arguments": {"ticket": 7}}]


def test_servers_configured_without_the_sdk_installed_say_what_to_install(
    crm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "agent_cli.tools.mcp_servers", None)  # import fails
    listed = runner.invoke(app, ["tools", "--config", str(crm)])
    assert listed.exit_code == 2
    assert "the MCP SDK cannot be imported" in listed.stderr
    assert "pip install 'agent-cli[mcp]'" in listed.stderr
    checked = runner.invoke(app, ["doctor", "--config", str(crm)])
    assert (
        checked.exit_code == 1 and "✗ MCP servers: the MCP SDK cannot be imported" in checked.stdout
    )


def test_names_past_64_characters_are_skipped_and_descriptions_cut_at_1000() -> None:
    from mcp import types

    from agent_cli.tools.mcp_tools import mcp_tool

    servers = McpServers({}, warn=lambda _: None)
    settings = McpServerSettings(command="x")

    def made(name: str, description: str = "d") -> Any:
        tool = types.Tool(name=name, description=description, input_schema={"type": "object"})
        return mcp_tool("crm", settings, tool, servers)

    assert made("t" * 60).name == "crm." + "t" * 60  # 64 characters: offered
    skipped = made("t" * 61)  # crm. + 61 = 65
    assert isinstance(skipped, str) and "at most 64 characters" in skipped
    long = made("long", "a" * 998 + "bz" + "z" * 500)
    assert long.description.startswith("a" * 998 + "b… (from MCP server crm")  # marked as cut
    assert "z" not in long.description
    words = made("words", "word " * 400)
    assert words.description.startswith(("word " * 198) + "word… (from")  # not mid-word


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_an_error_result_reaches_the_model_as_an_error(
    fake_llm: FakeLLM, crm: Path, provider: str
) -> None:
    fake_llm.queue(calls(provider, ("crm__fail", {})), text(provider, "The CRM is down."))
    result = ask(fake_llm, provider, crm)
    assert result.exit_code == 0, result.stderr
    (observed,) = observations(result)
    assert observed["is_error"] and observed["observation"].startswith("ERROR: the CRM is down")
    sent = last_result(provider, fake_llm.bodies()[1])
    assert "ERROR: the CRM is down for maintenance" in sent
    if provider == "anthropic":
        assert fake_llm.bodies()[1]["messages"][-1]["content"][0]["is_error"] is True


def test_a_read_only_mark_of_an_untrusted_server_does_not_skip_approval(
    fake_llm: FakeLLM, crm: Path, tmp_path: Path
) -> None:
    """A hostile server can mark a destructive tool read-only: by default that changes nothing."""
    crm.write_text(server_config().replace("trust_annotations = true\n", ""))
    fake_llm.queue(
        openai_calls(("crm__lookup_customer", {"customer_id": "C1"})), openai_text("Unknown.")
    )
    result = ask(fake_llm, "openai", crm)  # no terminal: nobody can approve
    assert result.exit_code == 0, result.stderr
    (observed,) = observations(result)
    assert observed["observation"].startswith("DENIED")
    assert calls_made(tmp_path) == []
    listed = runner.invoke(app, ["tools", "--json", "--config", str(crm)])
    tools = {tool["name"]: tool for tool in json_lines(listed.stdout)}
    assert "each call needs a person's approval" in tools["crm.lookup_customer"]["description"]


def test_a_flood_of_skipped_tools_is_a_few_warnings_and_a_count() -> None:
    from agent_cli.tools.mcp_servers import ServerReport

    report = ServerReport(
        "crm", True, "3 tools", tuple(f"tool t{n} skipped" for n in range(10_000))
    )
    assert report.skips() == [
        "tool t0 skipped",
        "tool t1 skipped",
        "tool t2 skipped",
        "and 9,997 more like these",
    ]
    few = ServerReport("crm", True, "3 tools", ("a", "b", "c", "d"))
    assert few.skips() == ["a", "b", "c", "d"]  # a count would save nothing


def _capped(chunks: list[bytes], cap: int) -> bytes:
    """What the SDK reads from a server that wrote `chunks`, through CappedLines."""
    import anyio

    from agent_cli.tools.mcp_processes import CappedLines

    class Chunks(anyio.abc.ByteReceiveStream):
        def __init__(self) -> None:
            self.left = list(chunks)

        async def receive(self, max_bytes: int = 65536) -> bytes:
            if not self.left:
                raise anyio.EndOfStream
            return self.left.pop(0)

        async def aclose(self) -> None:
            pass

    async def read_all() -> bytes:
        stream, out = CappedLines(Chunks(), cap), b""
        with contextlib.suppress(anyio.EndOfStream):
            while True:
                out += await stream.receive()
        return out

    return anyio.run(read_all)


def _reply(request_id: int, text: str, *, id_last: bool = False) -> bytes:
    result = {"content": [{"type": "text", "text": text}]}
    if id_last:  # the TypeScript SDK writes the result first
        return json.dumps({"result": result, "jsonrpc": "2.0", "id": request_id}).encode() + b"\n"
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode() + b"\n"


@given(cuts=st.lists(st.integers(min_value=0, max_value=3_000), max_size=12))
@settings(max_examples=60, deadline=None)
def test_capped_lines_pass_short_lines_whole_and_replace_long_ones_however_split(
    cuts: list[int],
) -> None:
    short, long_head, long_tail, no_id = (
        _reply(1, "ok"),
        _reply(2, "x" * 1_500),
        _reply(3, "y" * 1_500, id_last=True),
        b'{"jsonrpc": "2.0", "method": "notify", "params": {"p": "' + b"z" * 1_500 + b'"}}\n',
    )
    written = short + long_head + no_id + long_tail + short
    bounds = sorted({0, len(written), *(c % (len(written) + 1) for c in cuts)})
    chunks = [written[a:b] for a, b in itertools.pairwise(bounds) if b > a]
    lines = _capped(chunks, cap=1_000).splitlines()
    assert lines[0] == short.strip() and lines[-1] == short.strip()
    second, third = (json.loads(line) for line in lines[1:3])
    assert len(lines) == 4  # the long line with no id is dropped: nothing waits for it
    assert second["id"] == 2 and third["id"] == 3
    for replaced, letter in ((second, "x"), (third, "y")):
        message = replaced["error"]["message"]
        assert message.startswith("its answer was over 1,000 bytes and was not read")
        assert f"it began: {letter * 10}" in message and len(message) < 1_000


def test_only_the_malformed_tools_of_a_listing_are_skipped_each_named(tmp_path: Path) -> None:
    raw = Path(__file__).parents[1] / "raw_mcp_server.py"
    config = McpServerSettings(command=sys.executable, args=[str(raw)], trust_annotations=True)
    warnings: list[str] = []
    servers = McpServers({"raw": config}, warn=warnings.append)
    try:
        servers.start(30)
        assert sorted(tool.name for tool in servers.tools) == ["raw.also_good", "raw.good"]
        assert servers.unavailable == {}
        said = "\n".join(warnings)
        assert "MCP server raw: tool number 2 skipped: name: Input should be a valid string" in said
        assert "tool 'no_schema' skipped: inputSchema: Field required" in said
        assert "tool 'odd_description' skipped: description:" in said
        assert "tool number 5 skipped: the tool: Input should be a valid dictionary" in said
        called = servers.call("raw", "good", {"q": "x"}, time.monotonic() + 30)
        assert called.text == "ok from good"
    finally:
        servers.close()


RAW = Path(__file__).parents[1] / "raw_mcp_server.py"


@pytest.mark.parametrize("form", ["json", "sse"])
def test_over_http_only_malformed_tools_are_skipped_and_a_50_mb_result_is_not_downloaded(
    tmp_path: Path, form: str
) -> None:
    sent = tmp_path / "sent"
    argv = [sys.executable, str(RAW), "http", form]
    with serving(argv, {"RAW_MCP_SENT": str(sent)}) as url:
        warnings: list[str] = []
        servers = McpServers({"raw": McpServerSettings(url=url)}, warn=warnings.append)
        try:
            servers.start(30)
            assert sorted(tool.name for tool in servers.tools) == ["raw.also_good", "raw.good"]
            said = "\n".join(warnings)
            assert "MCP server raw: tool number 2 skipped: name: Input should be" in said
            assert "tool 'no_schema' skipped: inputSchema: Field required" in said
            good = servers.call("raw", "good", {"q": "x"}, time.monotonic() + 30)
            assert good.text == "ok from good"
            huge = servers.call("raw", "huge", {}, time.monotonic() + 60)
        finally:
            servers.close()
        said = "ERROR: raw.huge failed: its answer was over 4 MB and was not read"
        assert huge.text.startswith(said)
        assert "it began: HUGEaaaa" in huge.text and len(huge.text) < 2_000
        deadline = time.monotonic() + 30
        while not sent.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sent.exists(), "the whole 50 MB was downloaded"
        assert int(sent.read_text()) < 40 * 2**20  # the connection was closed, the rest unsent


@pytest.mark.parametrize("form", ["stdio", "json", "sse"])
def test_a_tool_listing_of_3_mb_starts_the_server_with_every_tool(form: str) -> None:
    """Within the documented 4 MB a message, a large listing is read whole, however it comes."""
    big = {"RAW_MCP_BIG": "1"}
    warnings: list[str] = []
    with ExitStack() as stack:
        if form == "stdio":
            config = McpServerSettings(command=sys.executable, args=[str(RAW)], env=big)
        else:
            url = stack.enter_context(serving([sys.executable, str(RAW), "http", form], big))
            config = McpServerSettings(url=url)
        servers = McpServers({"raw": config}, warn=warnings.append)
        stack.callback(servers.close)
        servers.start(60)
        assert len(servers.tools) == 30 and servers.unavailable == {}
    assert warnings == []


def test_the_documented_server_and_config_work_as_written(tmp_path: Path) -> None:
    import re

    section = (Path(__file__).parents[2] / "docs" / "mcp.md").read_text(encoding="utf-8")
    config = re.search(r"```toml\n(\[mcp\.servers\.crm\].*?)```", section, re.DOTALL)
    server = re.search(r"```python\n# crm_server\.py\n(.*?)```", section, re.DOTALL)
    assert config is not None and server is not None
    (tmp_path / "crm_server.py").write_text(server.group(1), encoding="utf-8")
    toml = config.group(1).replace('command = "python"', f"command = {json.dumps(sys.executable)}")
    toml = toml.replace(
        'args = ["crm_server.py"]', f"args = [{json.dumps(str(tmp_path / 'crm_server.py'))}]"
    )
    (tmp_path / "agent.toml").write_text(toml, encoding="utf-8")
    listed = runner.invoke(
        app, ["tools", "--json", "--config", str(tmp_path / "agent.toml")], env={"CRM_TOKEN": "t"}
    )
    assert listed.exit_code == 0, listed.stderr
    names = [tool["name"] for tool in json_lines(listed.stdout)]
    assert names[-2:] == ["crm.lookup_customer", "crm.close_ticket"]


def test_a_replay_of_an_mcp_run_says_its_mcp_calls_are_not_replayed(
    fake_llm: FakeLLM, crm: Path, tmp_path: Path
) -> None:
    fake_llm.queue(
        openai_calls(("crm__lookup_customer", {"customer_id": "C1"})),
        openai_calls(("lookup_order", {"order_code": "A100"})),
        openai_text("Customer C1 is gold tier."),
    )
    result = ask(fake_llm, "openai", crm)
    assert result.exit_code == 0, result.stderr
    trace = tmp_path / "mcp-run.jsonl"
    trace.write_text(result.stdout, encoding="utf-8")
    checked = runner.invoke(app, ["replay", str(trace), "--check"])
    assert checked.exit_code == 0, checked.stdout + checked.stderr  # ours still match
    assert "1 observations match (MCP calls are not replayed: crm.lookup_customer)" in (
        checked.stdout
    )
    assert "unknown tool" not in checked.stdout + checked.stderr
    assert len(calls_made(tmp_path)) == 1  # the server was not called again
