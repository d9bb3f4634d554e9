"""The run log: every ask, chat turn and eval case recorded in SQLite, and `agent logs`."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from agent_cli.cli import app
from agent_cli.commands.logs import parse_since
from agent_cli.core.decisions import Usage
from agent_cli.core.events import RunFinished, RunStarted
from agent_cli.errors import UsageError
from agent_cli.evaluation.cases import builtin_cases
from agent_cli.evaluation.heard import with_heard
from agent_cli.record.recorder import RunRecorder
from agent_cli.record.run_filters import RunFilter
from agent_cli.record.runlog import _MIGRATIONS, SCHEMA_VERSION, RunLog
from tests.fakellm import FakeLLM, openai_calls, openai_text

runner = CliRunner()
KEY = "sk-test-SECRET-0123456789abcdef"


def agent(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(app, list(args), input=stdin, env=env or {})


def log_path() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "agent-cli" / "runs.db"


def logged(*args: str) -> list[dict[str, Any]]:
    result = agent("logs", "list", "--json", *args)
    assert result.exit_code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def ask(question: str, *args: str) -> Result:
    result = agent("ask", question, "--today", "2026-10-13", *args)
    return result


def test_an_ask_is_logged_with_its_figures_in_an_owner_only_file() -> None:
    assert ask("Is order A100 refundable?").exit_code == 0
    (run,) = logged()
    assert run["kind"] == "ask" and run["status"] == "answered"
    assert run["question"] == "Is order A100 refundable?"
    assert run["answer"].startswith("Order A100 is refundable")
    assert (run["provider"], run["model"], run["steps"]) == ("offline", "playbook", 3)
    assert run["session_id"] is None and len(run["run_id"]) == 32
    assert stat.S_IMODE(log_path().stat().st_mode) == 0o600


def test_logs_show_renders_the_run_as_replay_does_and_its_json_replays(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    assert ask("Is order A100 refundable?", "--trace", str(trace)).exit_code == 0
    run_id = logged()[0]["run_id"]
    shown = agent("logs", "show", run_id[:6])
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout == agent("replay", str(trace)).stdout
    assert '[1] lookup_order(order_code="A100")' in shown.stdout
    assert agent("logs", "show").stdout == shown.stdout  # the newest by default
    lines = agent("logs", "show", run_id, "--json").stdout
    assert lines == trace.read_text(encoding="utf-8")  # the same trace lines, replayable
    assert agent("logs", "show", run_id, "-q").stdout.startswith("Order A100 is refundable")


def test_logs_show_errors_name_what_to_do() -> None:
    assert ask("Is order A100 refundable?").exit_code == 0
    assert ask("Is order A101 refundable?").exit_code == 0
    for argument, message in [
        ("zz", "is not a run id"),
        ("0000000", "No logged run 0000000"),
        ("", "is not a run id"),
    ]:
        result = agent("logs", "show", argument)
        assert result.exit_code == 2 and message in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def searched(text: str) -> list[str]:
    """The questions of the runs `agent logs search TEXT` finds, newest first."""
    result = agent("logs", "search", text, "--json")
    assert result.exit_code == 0, result.stderr
    return [json.loads(line)["question"] for line in result.stdout.splitlines()]


def test_search_finds_words_in_questions_and_answers_in_any_case() -> None:
    ask("Is order A100 refundable?")
    ask("Is order A101 refundable?")
    ask("本日は2026-10-13です。注文A101は返金できますか？")

    found = searched
    assert found("a101") == [
        "本日は2026-10-13です。注文A101は返金できますか？",
        "Is order A101 refundable?",
    ]
    assert found("shipping refundable") == ["Is order A101 refundable?"]  # every word, anywhere
    assert found("返金") == ["本日は2026-10-13です。注文A101は返金できますか？"]  # short: a scan
    assert found("SHIPPINGです") == ["本日は2026-10-13です。注文A101は返金できますか？"]
    for hostile in ['"', "a%", "_1", 'A1"00', "NEAR(a b)", "*"]:
        assert agent("logs", "search", hostile).exit_code == 0  # never an FTS syntax error
    for literal in ("a%", "_1"):  # % and _ are the customer's characters, not wildcards
        assert agent("logs", "search", literal).stdout == "", literal
    ask("Is 100% of A100 refundable?")
    backslash = agent("logs", "search", "0\\")  # a backslash is one too: not "0%"
    assert backslash.exit_code == 0 and backslash.stdout == ""
    assert "100%" in agent("logs", "search", "0%").stdout
    none = agent("logs", "search", "A999")
    assert none.exit_code == 0 and none.stdout == ""
    assert "No logged run mentions 'A999'" in none.stderr
    assert agent("logs", "search", "  ").exit_code == 2


def test_list_filters_by_status_and_time_and_limits() -> None:
    for code in ("A100", "A101", "A102"):
        ask(f"Is order {code} refundable?")
    ask("Is it refundable?")  # no code: the playbook asks which order; nobody answers
    assert [r["status"] for r in logged("--status", "needs_input")] == ["needs_input"]
    assert len(logged("--status", "ANSWERED")) == 3
    assert len(logged("--since", "1h")) == 4
    assert logged("--since", (datetime.now() + timedelta(days=1)).date().isoformat()) == []
    limited = agent("logs", "list", "-n", "2", "--json")
    assert len(limited.stdout.splitlines()) == 2
    assert "2 of 4 runs shown (newest first); -n N shows more" in limited.stderr
    piped = agent("logs", "list").stdout.splitlines()  # a pipe gets every run, tab-separated
    assert piped[0].startswith("run\tstarted\tkind\tsession\tstatus") and len(piped) == 5
    for args, message in [
        (["--status", "happy"], "--status 'happy' is not a status; use answered"),
        (["--since", "last week"], "--since 'last week' is not a date"),
        (["-n", "0"], "-n must be 1 or more"),
    ]:
        result = agent("logs", "list", *args)
        assert result.exit_code == 2 and message in result.stderr


def test_since_reads_dates_times_and_ages() -> None:
    now = datetime(2026, 12, 3, 15, 30, tzinfo=UTC)
    assert parse_since("2h", now=now) == now - timedelta(hours=2)
    assert parse_since("7d", now=now) == now - timedelta(days=7)
    assert parse_since("today", now=now) == datetime(2026, 12, 3, tzinfo=UTC)
    assert parse_since("yesterday", now=now) == datetime(2026, 12, 2, tzinfo=UTC)
    assert parse_since("2026-12-01T09:30+09:00").utcoffset() == timedelta(hours=9)
    assert parse_since("2026-12-01").tzinfo is not None  # local midnight
    with pytest.raises(UsageError):
        parse_since("soon")


def test_dry_runs_are_not_logged_and_the_log_can_be_turned_off(tmp_path: Path) -> None:
    assert ask("Is order A100 refundable?", "--dry-run").exit_code == 0
    assert not log_path().exists()
    config = tmp_path / "c.toml"
    config.write_text("[log]\nenabled = false\n")
    assert ask("Is order A100 refundable?", "--config", str(config)).exit_code == 0
    assert not log_path().exists()
    result = agent("logs", "list", "--config", str(config))  # said, not an error
    assert result.exit_code == 0 and "[log] enabled = false" in result.stderr
    assert "warning" not in result.stderr and "error" not in result.stderr
    never = agent("logs", "list")  # an empty log is not an error either
    assert never.exit_code == 0 and never.stdout == "" and "No runs logged yet" in never.stderr
    shown = agent("logs", "show")  # but there is no run to show
    assert shown.exit_code == 1 and "No runs logged yet" in shown.stderr


def test_a_log_that_cannot_be_written_is_one_warning_and_the_run_goes_on(tmp_path: Path) -> None:
    broken = tmp_path / "not-a-db"
    broken.write_bytes(b"this is not SQLite" * 100)
    result = agent("ask", "Is order A100 refundable?", "--json", env={"AGENT_LOG": str(broken)})
    assert result.exit_code == 0
    assert json.loads(result.stdout.splitlines()[-1])["status"] == "answered"
    warnings = [line for line in result.stderr.splitlines() if "not being logged" in line]
    assert len(warnings) == 1 and str(broken) in warnings[0]
    listed = agent("logs", "list", env={"AGENT_LOG": str(broken)})
    assert listed.exit_code == 1
    assert f"Cannot read the run log {broken}" in listed.stderr
    assert len(listed.stderr.strip().splitlines()) == 1


def test_old_runs_beyond_keep_runs_go_and_leave_search_consistent(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[log]\nkeep_runs = 2\n")
    for code in ("A100", "A101", "A102"):
        ask(f"Is order {code} refundable?", "--config", str(config))
    assert [r["question"] for r in logged()] == [
        "Is order A102 refundable?",
        "Is order A101 refundable?",
    ]
    assert agent("logs", "search", "A100").stdout == ""
    with sqlite3.connect(log_path()) as db:  # the index holds nothing of the deleted run
        db.execute("INSERT INTO runs_text(runs_text) VALUES ('integrity-check')")
        traced = db.execute("SELECT count(*) FROM traces JOIN runs USING (id)").fetchone()
        assert traced == (2,) and db.execute("SELECT count(*) FROM traces").fetchone() == (2,)


def test_chat_turns_are_logged_as_one_session_and_continue_resumes_it(fake_llm: FakeLLM) -> None:
    fake_llm.queue(
        openai_calls(("lookup_order", {"order_code": "A100"})),
        openai_text("A100 is refundable."),
        openai_text("You asked about the first order."),
    )
    provider = ["--provider", "openai", "--base-url", fake_llm.url, "--today", "2026-10-13"]
    env = {"OPENAI_API_KEY": KEY}
    first = agent("chat", *provider, stdin="Is order A100 refundable?\n", env=env)
    assert first.exit_code == 0, first.stderr
    again = agent("chat", "--continue", *provider, stdin="Which order did I ask about?\n", env=env)
    assert again.exit_code == 0, again.stderr
    assert "1 of 1 turns remembered" in again.stdout
    messages = fake_llm.bodies()[2]["messages"]
    assert messages[1] == {"role": "user", "content": "Is order A100 refundable?"}
    assert messages[2] == {"role": "assistant", "content": "A100 is refundable."}
    runs = logged()
    assert [r["kind"] for r in runs] == ["chat", "chat"]
    assert runs[0]["session_id"] == runs[1]["session_id"] is not None  # the same session goes on
    assert runs[1]["input_tokens"] == 200 and runs[1]["steps"] == 2


def test_continue_without_an_earlier_session_starts_a_new_one() -> None:
    result = agent("chat", "--continue", stdin="Is A100 refundable?\n")
    assert result.exit_code == 0
    assert "No earlier session to continue; starting a new one." in result.stdout


def test_every_eval_case_is_logged_under_one_id_even_from_threads() -> None:
    result = agent("eval", "run", "--builtin", "--concurrency", "4", "--json")
    assert result.exit_code == 0, result.stderr
    cases = [json.loads(line) for line in result.stdout.splitlines() if '"case"' in line]
    assert logged() == []  # kept apart from the operators' runs
    runs = logged("--kind", "eval")
    assert len(cases) == len(with_heard(builtin_cases()))
    assert len(runs) == sum(c["runs"] for c in cases)  # a conversation's turns are runs
    assert {r["kind"] for r in runs} == {"eval"} and len({r["session_id"] for r in runs}) == 1
    assert {c["run_id"] for c in cases} <= {r["run_id"] for r in runs}


def _started(run_id: str, goal: str = "Is A100 refundable?") -> RunStarted:
    return RunStarted(
        run_id=run_id,
        goal=goal,
        remembered_turns=0,
        provider="p",
        model="m",
        max_steps=8,
        timeout_s=60.0,
        today="2026-10-13",
        tools=(),
        ts=time.time(),
    )


def test_a_run_is_in_the_log_from_its_start_and_an_interrupted_end_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    recorder = RunRecorder(path, kind="ask", warn=pytest.fail)
    recorder(_started("ab" * 16))
    log = RunLog.open(path, create=False)
    assert [(r.status, r.answer) for r in log.runs()] == [("unfinished", None)]
    recorder(
        RunFinished(
            run_id="ab" * 16,
            status="interrupted",
            answer=None,
            steps=1,
            usage=Usage(),
            elapsed_ms=5,
            ts=time.time(),
        )
    )
    (run,) = log.runs()
    assert run.status == "interrupted" and run.steps == 1
    assert [json.loads(line)["event"] for line in log.trace_lines(run.run_id)] == [
        "run_started",
        "run_finished",
    ]
    recorder.close()
    log.close()


def test_a_version_1_log_keeps_its_runs_and_traces_when_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with sqlite3.connect(path) as db:
        db.executescript(
            "".join(f"{sql};\n" for sql in _MIGRATIONS[0]) + "PRAGMA user_version = 1;"
        )
        db.execute(
            "INSERT INTO runs (run_id, kind, started_at, question, provider, model, status, "
            "answer, trace) VALUES (?, 'ask', '2026-12-01T09:00:00.000+00:00', 'Is A100 "
            "refundable?', 'offline', 'playbook', 'answered', 'Yes.', ?)",
            ("cd" * 16, '{"event": "run_started"}\n{"event": "run_finished"}\n'),
        )
    db.close()
    log = RunLog.open(path)
    (run,) = log.search("a100")
    assert run.answer == "Yes."
    assert log.trace_lines(run.run_id) == ['{"event": "run_started"}', '{"event": "run_finished"}']
    log.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert db.execute("SELECT trace FROM runs").fetchall() == [("",)]  # not kept twice
    db.close()


def test_a_log_from_a_newer_agent_is_refused_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    listed = agent("logs", "list", env={"AGENT_LOG": str(path)})
    assert listed.exit_code == 1
    assert "newer than this agent-cli knows" in listed.stderr
    assert len(listed.stderr.strip().splitlines()) == 1


def test_short_words_still_filter_and_every_word_must_match() -> None:
    ask("Is order A100 refundable? xq")
    ask("Is order A101 refundable? zw")
    ask("Is order A100 refundable?")

    found = searched
    assert found("refundable xq") == ["Is order A100 refundable? xq"]  # the short word counts
    assert found("xq A100") == ["Is order A100 refundable? xq"]
    assert found("XQ") == ["Is order A100 refundable? xq"]  # any case, by a scan
    assert found("xq zw") == []  # all words, not any
    assert found("zw A100") == []


def test_a_prefix_shared_by_two_runs_is_ambiguous(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    recorder = RunRecorder(path, kind="ask", warn=pytest.fail)
    first, second = "ab" * 16, "ab" * 15 + "cd"
    recorder(_started(first))
    recorder(_started(second))
    recorder.close()
    env = {"AGENT_LOG": str(path)}
    shared = agent("logs", "show", "abab", env=env)
    assert shared.exit_code == 2
    assert "Run id abab is ambiguous" in shared.stderr and "give more of it" in shared.stderr
    assert agent("logs", "show", second[:-1], env=env).exit_code == 0  # one run: shown
    assert agent("logs", "show", first, env=env).exit_code == 0


def test_continue_remembers_only_answered_chat_turns_never_asks_or_evals(
    fake_llm: FakeLLM,
) -> None:
    from tests.fakellm import error

    fake_llm.queue(
        openai_text("Yes, it is refundable."),
        error(400, "this turn failed"),
        openai_text("You asked about the first one."),
    )
    provider = ["--provider", "openai", "--base-url", fake_llm.url, "--today", "2026-10-13"]
    env = {"OPENAI_API_KEY": KEY}
    lines = "Is order A100 refundable?\nWhat about order A101?\n"
    first = agent("chat", *provider, stdin=lines, env=env)
    assert first.exit_code == 1, first.stdout  # piped chat: a failed turn
    ask("Is order A102 refundable?")  # newer runs that are not chat sessions
    script = Path(os.environ["HOME"]) / "script.json"
    script.write_text('[{"type": "final", "answer": "No idea."}]')
    assert (
        agent("eval", "run", "--builtin", "--script", str(script), "--min-pass", "0").exit_code == 0
    )
    assert {r["kind"] for r in logged()} == {"chat", "ask"}  # eval cases are kept apart
    assert {r["kind"] for r in logged("--kind", "all")} == {"chat", "ask", "eval"}
    again = agent("chat", "--continue", *provider, stdin="Which order was it?\n", env=env)
    assert again.exit_code == 0, again.stderr
    assert "1 of 1 turns remembered" in again.stdout
    sent = [m["content"] for m in fake_llm.bodies()[-1]["messages"][1:]]
    assert sent == ["Is order A100 refundable?", "Yes, it is refundable.", "Which order was it?"]


def test_since_includes_a_run_started_at_that_very_moment(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    recorder = RunRecorder(path, kind="ask", warn=pytest.fail)
    recorder(_started("cd" * 16))
    recorder.close()
    log = RunLog.open(path, create=False)
    (run,) = log.runs()
    moment = datetime.fromisoformat(run.started_at)
    assert [r.run_id for r in log.runs(only=RunFilter(since=moment))] == ["cd" * 16]
    assert log.runs(only=RunFilter(since=moment + timedelta(milliseconds=1))) == []
    log.close()


def test_a_secret_pasted_into_the_question_is_redacted_at_rest_but_reaches_the_model(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    question = "My order A100: can you refund it? My password=hunter2xyz and sk-live-abcdefgh1234"
    fake_llm.queue(openai_text("I cannot use passwords; order A100 was not looked up."))
    trace = tmp_path / "t.jsonl"
    argv = ["ask", question, "--provider", "openai", "--base-url", fake_llm.url]
    result = agent(*argv, "--trace", str(trace), "--no-grounding", env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 0, result.stderr
    assert question in json.dumps(fake_llm.bodies()[0])  # the model gets it as typed
    stored = [trace.read_text(), json.dumps(logged()), agent("logs", "show", "--json").stdout]
    for text in stored:
        assert "hunter2xyz" not in text and "abcdefgh1234" not in text
        assert "password=***" in text


def test_runs_are_filtered_by_kind_provider_model_and_session(fake_llm: FakeLLM) -> None:
    ask("Is order A100 refundable?")
    provider = ["--provider", "openai", "--base-url", fake_llm.url, "--today", "2026-10-13"]
    fake_llm.queue(openai_text("Yes."), openai_text("No."))
    lines = "Is order A100 refundable?\nIs order A101 refundable?\n"
    assert agent("chat", *provider, stdin=lines, env={"OPENAI_API_KEY": KEY}).exit_code == 0
    chats = logged("--kind", "chat")
    assert len(chats) == 2 and {r["provider"] for r in chats} == {"openai"}
    session = chats[0]["session_id"]
    assert len(logged("--session", session[:6])) == 2
    assert logged("--session", "zz") == []
    piped = [line.split("\t") for line in agent("logs", "list").stdout.splitlines()]
    column = piped[0].index("session")
    assert sorted(row[column] for row in piped[1:] if row[2] == "chat") == [session, session]
    assert {row[column] for row in piped[1:] if row[2] == "ask"} == {"-"}
    assert {r["kind"] for r in logged("--provider", "offline")} == {"ask"}
    assert {r["model"] for r in logged("--model", chats[0]["model"])} == {chats[0]["model"]}
    bad = agent("logs", "list", "--kind", "cron")
    assert bad.exit_code == 2 and "--kind 'cron' is not a kind" in bad.stderr


def test_logs_path_says_where_the_log_is_and_a_named_one_makes_no_directories(
    tmp_path: Path,
) -> None:
    assert agent("logs", "path").stdout.strip() == str(log_path())
    typo = tmp_path / "no-such-dir" / "runs.db"
    result = agent("ask", "Is order A100 refundable?", "-q", env={"AGENT_LOG": str(typo)})
    assert result.exit_code == 0  # the run goes on, and says its runs are not logged
    assert "not being logged" in result.stderr and str(typo) in result.stderr
    assert not typo.parent.exists()
    assert agent("logs", "path", env={"AGENT_LOG": str(typo)}).stdout.strip() == str(typo)


def test_a_count_of_the_runs_shown_is_a_note_not_a_warning() -> None:
    for _ in range(3):
        ask("Is order A100 refundable?")
    result = agent("logs", "list", "-n", "2")
    assert "2 of 3 runs shown" in result.stderr and "warning" not in result.stderr


def test_chat_session_resumes_a_named_session_not_only_the_newest(fake_llm: FakeLLM) -> None:
    fake_llm.queue(openai_text("First session answer."), openai_text("Second session answer."))
    provider = ["--provider", "openai", "--base-url", fake_llm.url, "--today", "2026-10-13"]
    env = {"OPENAI_API_KEY": KEY}
    assert agent("chat", *provider, stdin="What are your hours?\n", env=env).exit_code == 0
    assert agent("chat", *provider, stdin="Do you ship abroad?\n", env=env).exit_code == 0
    older = logged("--kind", "chat")[-1]
    assert older["question"] == "What are your hours?"
    fake_llm.queue(openai_text("You asked about our hours."))
    again = agent(
        "chat", "--session", older["session_id"][:8], *provider, stdin="Which one?\n", env=env
    )
    assert again.exit_code == 0, again.stderr
    assert f"Continuing session {older['session_id'][:8]}: 1 of 1 turns remembered" in again.stdout
    sent = [m["content"] for m in fake_llm.bodies()[-1]["messages"][1:]]
    assert sent == ["What are your hours?", "First session answer.", "Which one?"]
    unknown = agent("chat", "--session", "zzzz", *provider, stdin="Hi\n", env=env)
    assert unknown.exit_code == 2 and "Chat session 'zzzz' is no session" in unknown.stderr


def _log_db() -> sqlite3.Connection:
    return sqlite3.connect(Path(os.environ["XDG_STATE_HOME"]) / "agent-cli" / "runs.db")


@pytest.mark.parametrize(
    "change",
    [
        "input_tokens = 'many', output_tokens = 'x'",
        "steps = 'x', cost = 'c', elapsed_ms = 'e'",
        "steps = -3, started_at = 12",
        "question = x'00ff', provider = 5",
    ],
)
@pytest.mark.parametrize("command", [["list"], ["search", "A100"]])
def test_a_tampered_run_row_is_listed_and_marked_never_an_internal_error(
    change: str, command: list[str]
) -> None:
    runner.invoke(app, ["ask", "Is order A100 refundable?"])
    runner.invoke(app, ["ask", "Is order A101 refundable?"])
    db = _log_db()
    with db:
        db.execute(f"UPDATE runs SET {change} WHERE id = 1")
    db.close()
    for argv in ([*command], [*command, "--json"]):
        result = runner.invoke(app, ["logs", *argv])
        assert result.exit_code == 0, result.stderr
        assert "internal error" not in result.stderr
        assert "not what the log holds" in result.stderr
    rows = [
        json.loads(line)
        for line in runner.invoke(app, ["logs", "list", "--json"]).stdout.splitlines()
    ]
    damaged = [row for row in rows if row["unreadable"]]
    assert len(damaged) == 1 and len(rows) == 2


def _with(line: str, **fields: Any) -> str:
    return json.dumps({**json.loads(line), **fields})


@pytest.mark.parametrize(
    "tamper",
    [
        lambda lines: ["[" * 100_000 + "]" * 100_000, *lines],
        lambda lines: [*lines[:-1], _with(lines[-1], usage="lots")],
        lambda lines: [
            _with(line, usage={"input_tokens": "many", "output_tokens": 0})
            if '"usage"' in line
            else line
            for line in lines
        ],
    ],
)
def test_a_tampered_logged_trace_is_shown_as_far_as_it_can_be(tamper: Any) -> None:
    runner.invoke(app, ["ask", "Is order A100 refundable?"])
    db = _log_db()
    (lines,) = db.execute("SELECT lines FROM traces").fetchone()
    with db:
        db.execute("UPDATE traces SET lines = ?", ("\n".join(tamper(lines.splitlines())) + "\n",))
    db.close()
    shown = runner.invoke(app, ["logs", "show"])
    assert shown.exit_code == 0, shown.stderr
    assert "internal error" not in shown.stderr
    assert "order=A100 status=DELIVERED" in shown.stdout  # what can be read is shown
    assert "not readable" in shown.stderr  # what cannot is named
    assert runner.invoke(app, ["logs", "show", "--json"]).exit_code == 0


def test_a_logged_run_whose_every_trace_line_is_damaged_says_so_in_every_view() -> None:
    runner.invoke(app, ["ask", "Is order A100 refundable?"])
    db = _log_db()
    with db:
        db.execute("UPDATE traces SET lines = ?", ("{not json\n[1, 2\n",))
    db.close()
    for view in ([], ["-q"]):
        shown = runner.invoke(app, ["logs", "show", *view])
        assert shown.exit_code == 0, shown.stderr
        assert "internal error" not in shown.stderr and shown.stdout == ""
        assert "none of its 2 trace line(s) could be read" in shown.stderr
        assert "--json' prints them as stored" in shown.stderr
    stored = runner.invoke(app, ["logs", "show", "--json"])
    assert stored.exit_code == 0 and stored.stdout == "{not json\n[1, 2\n"


def test_a_resumed_chat_takes_the_next_line_as_the_answer_to_a_question_left_open() -> None:
    """The desk asked for the customer's email and the session ended before anyone answered:
    `chat --continue` remembers that turn, its question as the desk's last words, so the email
    typed next carries the tracking request on (it was forgotten before)."""
    today = ("--today", "2026-10-13")
    first = agent("chat", *today, stdin="Where is order A101?\n")  # no reply: the input ends
    assert "what is the email address on your account" in first.stdout
    (run,) = logged("--kind", "chat")
    assert run["status"] == "needs_input" and "email address" in run["answer"]
    again = agent("chat", "--continue", *today, stdin="aoi.suzuki@example.com\n")
    assert again.exit_code == 0, again.output
    assert "1 of 1 turns remembered" in again.stdout
    assert "A101" in again.stdout and "email address" not in again.stdout.split("remembered")[1]
