"""The `agent` command through CliRunner: outputs, exit codes, one-line errors, help text."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from agent_cli.cli import app
from agent_cli.tools.offered import DESK
from tests.helpers import json_lines, write_script

runner = CliRunner()
TODAY = ["--today", "2026-10-13"]


def agent(*args: str, input: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=input)


def assert_one_line_error(result: Result, code: int, fragment: str) -> None:
    assert result.exit_code == code, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("agent: error: ")
    assert fragment in lines[0]
    assert "Traceback" not in result.stderr + result.stdout


def test_ask_answers_with_the_offline_default_and_says_so() -> None:
    result = agent("ask", "Is order A100 refundable?", *TODAY)
    assert result.exit_code == 0, result.stderr
    (notice,) = result.stderr.splitlines()  # one line, and how to be rid of it
    assert notice.startswith("agent: offline playbook model (no API key)")
    assert len(notice) <= 80  # one line on any terminal
    assert 'provider.name = "offline"' in notice
    assert "Order A100 is refundable: delivered 2026-10-01, 12 days ago" in result.stdout
    assert "[1] lookup_order" in result.stdout and "[2] refund_policy" in result.stdout
    assert "3 steps" in result.stdout


def test_dry_run_has_no_notice() -> None:
    result = agent("ask", "Is order A100 refundable?", "--dry-run", *TODAY)
    assert result.exit_code == 0
    assert result.stderr == ""


def test_quiet_prints_only_the_answer() -> None:
    result = agent("ask", "Is order A101 refundable?", "--quiet", *TODAY)
    assert result.exit_code == 0
    assert result.stdout == (
        "Order A101 is not refundable: its status is SHIPPING; "
        "only DELIVERED orders can be refunded.\n"
    )
    assert result.stderr == ""


def test_json_prints_only_trace_lines_on_stdout() -> None:
    result = agent("ask", "Is order A100 refundable?", "--json", "--dry-run", *TODAY)
    assert result.exit_code == 0
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["event"] for r in records] == [
        "run_started",
        "decision",
        "observation",
        "decision",
        "observation",
        "decision",
        "run_finished",
    ]
    assert records[-1]["status"] == "answered"
    assert records[0]["today"] == "2026-10-13"


def test_trace_file_is_written_while_rendering(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    result = agent("ask", "A100?", "--dry-run", "--trace", str(trace), *TODAY)
    assert result.exit_code == 0
    assert "Answer" in result.stdout
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert records[0]["event"] == "run_started" and records[-1]["event"] == "run_finished"
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600


def test_unwritable_trace_fails_before_the_run(tmp_path: Path) -> None:
    result = agent("ask", "A100?", "--dry-run", "--trace", str(tmp_path / "no" / "t.jsonl"))
    assert_one_line_error(result, 2, "Cannot write the trace file")
    assert result.stdout == ""


def test_script_replay(tmp_path: Path) -> None:
    script = write_script(
        tmp_path,
        [
            {"type": "tool", "tool": "lookup_order", "args": {"order_code": "A101"}},
            {"type": "final", "answer": "Order A101 is on its way."},
        ],
    )
    result = agent("ask", "Where is A101?", "--script", script)
    assert result.exit_code == 0
    assert "status=SHIPPING" in result.stdout and "Order A101 is on its way." in result.stdout


def test_script_that_runs_out_exits_1_and_is_traced(tmp_path: Path) -> None:
    script = write_script(tmp_path, [{"type": "tool", "tool": "refund_policy"}])
    trace = tmp_path / "t.jsonl"
    result = agent("ask", "q", "--script", script, "--trace", str(trace))
    assert_one_line_error(result, 1, "ran out after 1 decisions without a final answer")
    last = json.loads(trace.read_text().splitlines()[-1])
    assert (last["event"], last["status"]) == ("run_finished", "error")


def test_bad_script_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("[{")
    assert_one_line_error(agent("ask", "q", "--script", str(path)), 2, "is not valid JSON")


def test_max_steps_exits_3_and_keeps_the_steps(tmp_path: Path) -> None:
    script = write_script(tmp_path, [{"type": "tool", "tool": "refund_policy"}] * 5)
    result = agent("ask", "q", "--script", script, "--max-steps", "2", "--json")
    assert_one_line_error(result, 3, "Max steps (2) exceeded")
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert sum(r["event"] == "observation" for r in records) == 2
    assert records[-1]["status"] == "max_steps"


@pytest.mark.parametrize(
    ("args", "code", "fragment"),
    [
        (["ask", "q", "--max-steps", "0"], 2, "Invalid option: --max-steps 0: must be at least 1"),
        (["ask", "q", "--timeout", "-1"], 2, "Invalid option: --timeout -1.0: must be more than 0"),
        (["ask", "q", "--timeout", "nan"], 2, "--timeout nan: must be a number (not nan or inf)"),
        (
            ["ask", "q", "--provider", "ollama", "--base-url", "http://localhost:abc/v1"],
            2,
            "--base-url: 'http://localhost:abc/v1' has no valid port (a number from 1 to 65535)",
        ),
        (
            ["ask", "q", "--provider", "ollama", "--base-url", "http://localhost:99999/v1"],
            2,
            "has no valid port",
        ),
        (
            ["ask", "q", "--provider", "ollama", "--base-url", "http://local host/v1"],
            2,
            "is not an http:// or https:// URL with a host",
        ),
        (["ask", "q", "--provider", "offline", "--model", "gpt-4"], 2, "'gpt-4' is not used"),
        (["ask", "q", "--timeout", "abc"], 2, "Invalid value for '--timeout'"),
        (
            ["ask", "q", "--today", "13/10/2026"],
            2,
            "--today '13/10/2026' is not a date; use YYYY-MM-DD",
        ),
        (["ask", "q", "--bogus"], 2, "No such option: --bogus (see 'agent ask --help')"),
        (["ask"], 2, "The question is empty"),  # stdin (piped, empty) is read
        (["ask", "   "], 2, "The question is empty"),
        (["ask", "x" * 5000], 2, "The question is 5,000 characters; the limit is 4,000"),
        (["ask", "a\x00b"], 2, "NUL bytes"),
        (["ask", "bad \udcff text"], 2, "not valid UTF-8"),
        (["ask", "q", "--config", "/nonexistent.toml"], 2, "does not exist"),
        (["frobnicate"], 2, "No such command 'frobnicate'"),
        (["orders", "show", "../etc"], 2, "is not an order code"),
        (["orders", "show", "Z999"], 1, "No order with code Z999"),
        (["orders", "import", "/nonexistent.csv"], 2, "cannot read"),
    ],
)
def test_bad_input_is_one_line_with_a_documented_code(
    args: list[str], code: int, fragment: str
) -> None:
    assert_one_line_error(agent(*args), code, fragment)


def test_bad_config_file_is_named(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[limits]\nmax_stepz = 3\n")
    assert_one_line_error(agent("ask", "q", "--config", str(config)), 2, "limits.max_stepz (file ")


def test_a_corrupt_database_is_a_runtime_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "corrupt.db"
    db.write_text("garbage " * 1000)
    monkeypatch.setenv("AGENT_DB", str(db))
    assert_one_line_error(agent("orders", "list"), 1, "Cannot open the order database")


def test_tools_lists_names_and_descriptions() -> None:
    result = agent("tools")
    assert result.exit_code == 0
    assert "lookup_order" in result.stdout and "refund_policy" in result.stdout
    assert "order_code: string" in result.stdout


def test_tools_json_has_schemas() -> None:
    tools = json_lines(agent("tools", "--json").stdout)
    names = [t["name"] for t in tools]
    assert names[:2] == ["lookup_order", "refund_policy"] and sorted(names[2:]) == sorted(DESK)
    assert tools[0]["parameters"]["required"] == ["order_code"]


def test_orders_list_and_show() -> None:
    listing = agent("orders", "list")
    assert listing.exit_code == 0
    assert "A100\tDELIVERED\t250000\tJPY\t2026-10-01\tSato Haruki\n" in listing.stdout  # piped
    shown = json.loads(agent("orders", "show", "a100", "--json").stdout)
    assert shown == {
        "code": "A100",
        "status": "DELIVERED",
        "total": 250000,
        "currency": "JPY",
        "delivered_at": "2026-10-01",
        "customer": "Sato Haruki",
        "note": "Please gift-wrap.",
        "refunds": [],
        "approvals": [],
        "changes": [],
    }
    human = agent("orders", "show", "A100").stdout
    assert "note      Please gift-wrap." in human and "refunds   none" in human
    assert "item      1002001 Ceramic Mug 5,000 JPY" in human  # the desk's history follows
    assert "payment   250,000 JPY via credit_card_1001" in human


def test_orders_import_then_ask(tmp_path: Path) -> None:
    path = tmp_path / "orders.csv"
    path.write_text("code,status,total,delivered_at\nN900,DELIVERED,5000,2026-10-10\n")
    result = agent("orders", "import", str(path))
    assert result.exit_code == 0
    assert result.stdout.strip() == f"Imported 1 orders from {path} (1 new, 0 replaced)"
    answer = agent("ask", "Is N900 refundable?", "--quiet", *TODAY)
    assert "Order N900 is refundable: delivered 2026-10-10, 3 days ago" in answer.stdout


def test_a_bad_import_names_the_line_and_imports_nothing(tmp_path: Path) -> None:
    path = tmp_path / "orders.csv"
    path.write_text("code,status,total\nN1,PENDING,1\nN2,PENDING,lots\n")
    assert_one_line_error(agent("orders", "import", str(path)), 2, "line 3: total")
    assert agent("orders", "show", "N1").exit_code == 1


def test_version() -> None:
    result = agent("--version")
    assert result.exit_code == 0 and result.stdout.startswith("agent-cli ")


def test_no_arguments_shows_help() -> None:
    result = agent()
    assert result.exit_code == 2
    assert "Usage" in result.stdout and "ask" in result.stdout


def _commands(group: object, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:
    found = []
    for name, command in getattr(group, "commands", {}).items():
        found.append(((*path, name), command))
        found.extend(_commands(command, (*path, name)))
    return found


def test_every_command_and_option_has_help_text() -> None:
    from typer.main import get_command

    commands = _commands(get_command(app))
    assert len(commands) >= 6
    for path, command in commands:
        assert getattr(command, "help", None), f"agent {' '.join(path)} has no help"
        for param in getattr(command, "params", []):
            assert getattr(param, "help", None), f"{path} {param.name} has no help"
        help_run = agent(*path, "--help")
        assert help_run.exit_code == 0, path


def test_exit_codes_are_in_the_help() -> None:
    out = " ".join(agent("ask", "--help").stdout.replace("│", " ").split())
    assert "130 interrupted" in out and "3 a limit was reached" in out


def test_an_internal_error_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import agent_cli.commands.ask

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(agent_cli.commands.ask, "ask_once", explode)
    assert_one_line_error(agent("ask", "q"), 1, "internal error (RuntimeError: bug)")


def test_ctrl_c_during_a_run_exits_130_and_closes_the_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_cli.core.seams import ModelReply, ModelRequest
    from agent_cli.providers.playbook import PlaybookModel

    real_decide = PlaybookModel.decide

    def interrupted_on_step_two(self: PlaybookModel, request: ModelRequest) -> ModelReply:
        if request.history:
            raise KeyboardInterrupt
        return real_decide(self, request)

    monkeypatch.setattr(PlaybookModel, "decide", interrupted_on_step_two)
    trace = tmp_path / "t.jsonl"
    result = agent("ask", "A100?", "--dry-run", "--trace", str(trace))
    assert_one_line_error(result, 130, f"Interrupted; the trace {trace} keeps every completed step")
    untraced = agent("ask", "A100?", "--dry-run")  # no trace: none is promised
    assert untraced.exit_code == 130 and untraced.stderr == "agent: error: Interrupted\n"
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [r["event"] for r in records] == [
        "run_started",
        "decision",
        "observation",
        "run_finished",
    ]
    assert records[-1]["status"] == "interrupted"


def test_ctrl_c_while_rendering_is_recorded_too(tmp_path: Path) -> None:
    from agent_cli.core.events import Event, RunFinished, ToolObserved
    from agent_cli.core.loop import run
    from agent_cli.errors import Interrupted
    from agent_cli.providers.playbook import PlaybookModel
    from agent_cli.runtime.drive import drive
    from agent_cli.store.sqlite import OrderStore
    from tests.helpers import registry

    store = OrderStore.open(tmp_path / "o.db")
    seen: list[Event] = []

    def impatient(event: Event) -> None:
        if isinstance(event, ToolObserved):
            raise KeyboardInterrupt

    with pytest.raises(Interrupted):
        drive(run("A100?", PlaybookModel(), registry(store)), [seen.append, impatient])
    assert isinstance(seen[-1], RunFinished) and seen[-1].status == "interrupted"
    store.close()


def test_a_question_with_no_terminal_to_answer_exits_4(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    result = agent("ask", "Is my order refundable?", "--dry-run", "--trace", str(trace))
    assert_one_line_error(
        result,
        4,
        "The agent needs an answer: Which order is this about? Please give the order code",
    )
    last = json.loads(trace.read_text().splitlines()[-1])
    assert (last["event"], last["status"]) == ("run_finished", "needs_input")
    assert "[1] ? Which order is this about?" in result.stdout


def test_ask_user_in_a_script(tmp_path: Path) -> None:
    script = write_script(
        tmp_path,
        [{"type": "ask_user", "question": "Which one?"}, {"type": "final", "answer": "x"}],
    )
    result = agent("ask", "q", "--script", script, "--json")
    assert result.exit_code == 4
    events = [json.loads(line)["event"] for line in result.stdout.splitlines()]
    assert events == ["run_started", "decision", "question", "run_finished"]


def test_help_shows_config_tables_literally() -> None:
    out = " ".join(agent("ask", "--help").stdout.replace("│", " ").split())
    assert "[profiles.NAME]" in out and "[prices]" in out


HELP_PAGES = [
    [],
    ["ask"],
    ["chat"],
    ["eval"],
    ["eval", "run"],
    ["eval", "tau2"],
    ["eval", "replay"],
    ["eval", "list"],
    ["replay"],
    ["serve"],
    ["tokens", "create"],
    ["tokens", "list"],
    ["tokens", "revoke"],
    ["conversations"],
    ["conversations", "start"],
    ["conversations", "list"],
    ["conversations", "show"],
    ["conversations", "close"],
    ["doctor"],
    ["tools"],
    ["tools", "list"],
    ["tools", "call"],
    ["orders"],
    ["orders", "init"],
    ["orders", "list"],
    ["orders", "show"],
    ["orders", "import"],
    ["orders", "export"],
    ["config"],
    ["config", "show"],
]


@pytest.mark.parametrize("path", HELP_PAGES, ids=lambda path: " ".join(path) or "agent")
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_every_help_page_renders_cleanly(path: list[str], flag: str) -> None:
    result = runner.invoke(app, [*path, flag], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.stderr
    page = result.stdout
    assert "Usage: agent" in page
    unquoted = re.sub(r"'\{[^']*\}'", "", page)  # a JSON argument of an example is meant
    for leftover in ("<bool>", "<str>", "<int>", "<float>", "<path>", "{", "}"):
        assert leftover not in unquoted, leftover
    if len(path) == 2 or path in (["ask"], ["chat"], ["serve"], ["replay"], ["doctor"], ["tools"]):
        assert "Examples:" in page and "$ agent " in page


def test_the_exit_codes_in_the_help_are_complete() -> None:
    page = runner.invoke(app, ["ask", "--help"], env={"COLUMNS": "200"}).stdout
    for code in ("0 answered", "130 interrupted", "141 stdout closed", "143 terminated"):
        assert code in page


def test_orders_list_filters_limits_and_says_what_it_left_out() -> None:
    delivered = agent("orders", "list", "--status", "delivered", "--limit", "2")
    assert delivered.exit_code == 0
    rows = delivered.stdout.splitlines()[1:]
    assert [row.split("\t")[:2] for row in rows] == [["A100", "DELIVERED"], ["A103", "DELIVERED"]]
    assert "2 of 5 orders shown; --limit N shows more" in delivered.stderr
    assert len(agent("orders", "list").stdout.splitlines()) == 1 + 9  # piped: all, no cut
    bad = agent("orders", "list", "--status", "lost")
    assert bad.exit_code == 2 and "--status 'LOST' is not a status" in bad.stderr


@pytest.mark.parametrize("group", ["config", "logs", "orders", "approvals"])
def test_a_bare_command_group_prints_its_help(group: str) -> None:
    result = agent(group)
    assert result.exit_code == 2  # a usage error, as bare `agent` is
    assert f"Usage: agent {group} [OPTIONS] COMMAND" in result.stdout
    assert "Missing command" not in result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["ask", "Is order A100 refundable?", "--dry-run"],
        ["orders", "list"],
        ["orders", "show", "A100"],
        ["tools"],
        ["config", "show"],
        ["doctor"],
        ["approvals", "list"],
        ["eval", "run", "--builtin", "--dry-run"],
        ["logs", "list"],
    ],
)
def test_every_json_option_prints_one_json_object_per_line(argv: list[str]) -> None:
    agent("ask", "Is order A100 refundable?", "--dry-run", "--trace", "/dev/null")
    agent("ask", "Is order A101 refundable?")  # something in the run log
    result = agent(*argv, "--json")
    assert result.exit_code == 0, result.stderr
    records = json_lines(result.stdout)  # each line whole JSON: the one documented rule
    assert records or argv == ["approvals", "list"]  # an empty queue: no lines
    assert all(isinstance(record, dict) for record in records)
    assert all(line == line.strip() and line.startswith("{") for line in result.stdout.splitlines())


def _completed(words: str, **env: str) -> list[str]:
    """What the shell would offer for the last of `words` (Typer's bash completion protocol)."""
    parts = words.split(" ")
    variables = {"_AGENT_COMPLETE": "complete_bash", "COMP_WORDS": words}
    variables["COMP_CWORD"] = str(len(parts) - 1)
    result = runner.invoke(app, [], env={**variables, **env}, prog_name="agent")
    return result.stdout.split()


def test_completion_offers_providers_profiles_and_order_codes(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        '[profiles.lab]\nkind = "openai"\nbase_url = "http://localhost:8000/v1"\nmodel = "m"\n'
    )
    assert _completed("agent ask --provider o") == ["offline", "openai", "ollama"]
    assert "lab" in _completed("agent ask --provider ", AGENT_CONFIG=str(config))
    assert _completed("agent orders show A10") == [f"A10{n}" for n in range(7)]
    missing = tmp_path / "none.db"
    assert _completed("agent orders show A", AGENT_DB=str(missing)) == []
    assert not missing.exists()  # a Tab never creates the store


def test_completion_offers_statuses_states_items_and_recent_runs(tmp_path: Path) -> None:
    assert _completed("agent orders list --status del") == ["delivered"]  # read in any case
    assert _completed("agent orders list --status SH") == ["SHIPPING"]
    assert _completed("agent logs list --status t") == ["timeout", "token_budget"]
    assert _completed("agent approvals list --state p") == ["pending"]
    assert _completed("agent logs show ") == []  # no log yet, and none is made
    log = Path(os.environ["XDG_STATE_HOME"]) / "agent-cli" / "runs.db"
    assert not log.exists()
    first = json_lines(agent("ask", "Is order A100 refundable?", "--json").stdout)[0]["run_id"]
    assert _completed(f"agent logs show {first[:3]}") == [first]
    from tests.cli.test_approval_queue import many_pending

    many_pending(12)
    runner.invoke(app, ["approvals", "deny", "1", "--reason", "no"])
    assert _completed("agent approvals approve 1") == ["10", "11", "12", "1"]  # pending first
    assert _completed("agent approvals show 2") == ["2"]


def test_the_offline_notice_is_said_once_per_terminal_session(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from agent_cli.commands import notices

    # the real session may be out of sight (a CI container's leader in another pid namespace),
    # so the session is fixed here and told for real in a session of its own below
    monkeypatch.setattr(notices, "terminal_session", lambda: "4242:17")
    question = ("ask", "Is order A100 refundable?", *TODAY)
    assert "offline playbook model" in agent(*question).stderr
    second = agent(*question)
    assert second.exit_code == 0 and second.stderr == ""  # same terminal: said already
    assert "refundable" in second.stdout
    chat = agent("chat", input="/exit\n")
    assert "offline playbook model" not in chat.stderr
    kept = tmp_path / "home" / "state" / "agent-cli" / "notices.json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    # a later terminal whose session id was reused is a new session: said again
    monkeypatch.setattr(notices, "terminal_session", lambda: "1:999999")
    assert "offline playbook model" in agent(*question).stderr
    assert agent(*question).stderr == ""


def _session_of_a_new_terminal() -> tuple[str, str]:
    """A child started in a session of its own (as a new terminal's shell is): its pid and
    what it tells of its session."""
    code = (
        "import os; from agent_cli.commands.notices import terminal_session; "
        "print(os.getpid(), terminal_session())"
    )
    told = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        start_new_session=True,
        check=True,
    ).stdout.split()
    return told[0], told[1]


def test_a_terminal_session_is_its_leader_and_the_leaders_start() -> None:
    pid, session = _session_of_a_new_terminal()
    sid, started = session.split(":")
    assert sid == pid and int(started) > 0  # the leader is this process: a session of its own
    assert _session_of_a_new_terminal()[1] != session  # a new terminal is a new session


def test_a_session_whose_leader_is_out_of_sight_is_not_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent_cli.commands import notices

    monkeypatch.setattr(notices.os, "getsid", lambda pid: 2**22 + 7)  # above pid_max: no /proc
    assert notices.terminal_session() is None


@pytest.mark.parametrize("kept", ["not json", "[1, 2]", '{"x": 3}', ""])
def test_a_notice_cannot_be_lost_to_what_is_kept(kept: str, tmp_path: Path) -> None:
    path = tmp_path / "home" / "state" / "agent-cli" / "notices.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(kept)
    result = agent("ask", "Is order A100 refundable?", *TODAY)
    assert result.exit_code == 0 and "offline playbook model" in result.stderr


def test_without_a_session_to_tell_the_notice_is_said_every_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent_cli.commands import notices

    monkeypatch.setattr(notices, "terminal_session", lambda: None)
    for _ in range(2):
        assert "offline playbook model" in agent("ask", "Is order A100 refundable?", *TODAY).stderr


def test_old_sessions_are_forgotten_and_the_current_one_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent_cli.commands import notices

    said: list[str] = []
    say = notices.once_per_terminal(said.append)
    for n in range(notices.MAX_KEPT + 5):
        monkeypatch.setattr(notices, "terminal_session", lambda n=n: f"{n}:1")
        say(notices.OFFLINE_NOTICE)
        say(notices.OFFLINE_NOTICE)  # the same session again: not said
        say("agent: another notice")  # not one of those said once
    assert said.count(notices.OFFLINE_NOTICE) == notices.MAX_KEPT + 5
    assert said.count("agent: another notice") == notices.MAX_KEPT + 5
    kept = json.loads((notices.state_dir() / "notices.json").read_text())
    (sessions,) = kept.values()
    assert len(sessions) == notices.MAX_KEPT and sessions[-1] == f"{notices.MAX_KEPT + 4}:1"
