"""What a new user trips on, round 4: a server named by its URL alone, options that are not used
saying so, help that shows what it says, near misses, a provider named where it was set.

Pins agent_cli/providers/choice.py (a provider named by its URL),
agent_cli/cli/_options.py and agent_cli/cli/_help.py (options and help)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from tests.fakellm import FakeLLM, openai_calls, openai_text
from tests.helpers import json_lines

runner = CliRunner()


def test_a_base_url_alone_is_a_keyless_openai_compatible_server(fake_llm: FakeLLM) -> None:
    fake_llm.queue(
        openai_calls(("lookup_order", {"order_code": "A101"})),
        openai_text("Order A101 is not refundable: it is still shipping."),
    )
    argv = ["ask", "Is A101 refundable?", "--base-url", fake_llm.url, "--model", "qwen", "--json"]
    result = runner.invoke(app, [*argv, "--no-stream"])
    assert result.exit_code == 0, result.stderr
    started = json_lines(result.stdout)[0]
    assert (started["provider"], started["model"]) == ("openai-compatible", "qwen")
    assert "authorization" not in {k.lower() for k in fake_llm.requests[0].headers}
    assert "offline" not in result.stderr


def test_the_header_names_the_provider_chosen_not_its_dialect(fake_llm: FakeLLM) -> None:
    fake_llm.queue(openai_text("Order A101 is not refundable: it is still shipping."))
    argv = ["ask", "Is A101 refundable?", "--provider", "ollama", "--base-url", fake_llm.url]
    result = runner.invoke(app, [*argv, "--no-stream", "--no-grounding"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("ollama/llama3.2 · ")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--dry-run", "--provider", "openai"], "--provider openai is not used: --dry-run"),
        (["--dry-run", "--model", "gpt-4o"], "--model gpt-4o is not used: --dry-run"),
        (["--json", "-q"], "-q is not used with --json"),
    ],
)
def test_an_option_that_is_not_used_says_so(argv: list[str], said: str) -> None:
    result = runner.invoke(app, ["ask", "Is order A100 refundable?", *argv])
    assert result.exit_code == 0, result.stderr
    assert said in result.stderr


def test_instructions_for_the_offline_model_say_they_are_not_used(tmp_path: Path) -> None:
    shop = tmp_path / "shop.md"
    shop.write_text("Be warm.")
    result = runner.invoke(app, ["ask", "Is A100 refundable?", "--instructions", str(shop), "-q"])
    assert "--instructions is not used by the offline playbook model" in result.stderr


def test_chat_json_says_what_to_use_instead() -> None:
    result = runner.invoke(app, ["chat", "--json"])
    assert result.exit_code == 2
    assert "--trace FILE" in result.stderr and "agent ask --json" in result.stderr
    assert "--json" not in runner.invoke(app, ["chat", "--help"]).stdout  # not offered


def test_help_shows_brackets_as_written_and_every_exit_code() -> None:
    explain = runner.invoke(app, ["approvals", "explain", "--help"]).stdout
    assert "[[refunds.rules]]" in " ".join(explain.split())
    top = " ".join(runner.invoke(app, ["--help"]).stdout.split())
    for code in (0, 1, 2, 3, 4, 5, 130, 141, 143):
        assert re.search(rf"[;:] {code} \w", top), code


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["orders", "list", "--status", "shipped"], "(did you mean 'SHIPPING'?)"),
        (["logs", "list", "--status", "answerd"], "(did you mean 'answered'?)"),
        (["logs", "list", "--kind", "chats"], "(did you mean 'chat'?)"),
        (["approvals", "list", "--state", "pendng"], "(did you mean 'pending'?)"),
        (["ask", "q", "--provider", "olama"], "(did you mean 'ollama'?)"),
    ],
)
def test_a_near_miss_gets_a_did_you_mean(argv: list[str], hint: str) -> None:
    runner.invoke(app, ["ask", "Is order A100 refundable?", "-q"])  # a log to list
    result = runner.invoke(app, argv)
    assert result.exit_code == 2
    assert hint in result.stderr and result.stderr.count("\n") == 1


def test_an_unknown_provider_in_a_file_names_the_file_and_key(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[provider]\nname = "olama"\n')
    result = runner.invoke(app, ["ask", "q", "--config", str(config)])
    assert result.exit_code == 2
    assert f"Unknown provider 'olama' (provider.name, file {config})" in result.stderr
    env = runner.invoke(app, ["ask", "q"], env={"AGENT_PROVIDER": "x"})
    assert "Unknown provider 'x' (provider.name, env AGENT_PROVIDER)" in env.stderr


def test_the_sample_config_tells_what_happens_to_a_refund_without_a_terminal() -> None:
    sample = (Path(__file__).parents[2] / "config.example.toml").read_text()
    refunds = sample[sample.index("[refunds]") :]
    assert "approval queue" in refunds and "queue_hours = 0" in refunds


def test_quiet_at_a_step_limit_never_looks_like_a_finished_answer() -> None:
    argv = ["ask", "Is A100 refundable?", "--dry-run", "--max-steps", "1", "-q"]
    result = runner.invoke(app, [*argv, "--today", "2026-10-13"])
    assert result.exit_code == 3
    assert result.stdout.startswith("Incomplete answer (max_steps): I could not check order A100")
    done = runner.invoke(app, ["ask", "Is A100 refundable?", "--dry-run", "-q"])
    assert done.stdout.startswith("Order A100 is")  # a finished one is the answer alone


@pytest.mark.parametrize(
    "argv",
    [
        ["ask", "Is order A100 refundable?", "--dry-run", "--json"],
        ["tools", "--json"],
        ["orders", "list", "--json"],
        ["config", "show", "--json"],
        ["logs", "list", "--json"],
        ["eval", "run", "--builtin", "--dry-run", "--json"],
    ],
)
def test_json_lines_are_compact_as_jq_c_writes_them(argv: list[str]) -> None:
    runner.invoke(app, ["ask", "Is order A100 refundable?", "-q"])  # a run to list
    lines = runner.invoke(app, argv).stdout.splitlines()
    assert lines
    for line in lines:
        assert line == json.dumps(json.loads(line), ensure_ascii=False, separators=(",", ":"))


def _terminal(width: int) -> Any:
    import io

    from rich.console import Console

    return Console(file=io.StringIO(), force_terminal=True, width=width, color_system=None)


@pytest.mark.parametrize("width", [80, 100, 130, 200])
def test_logs_list_keeps_every_value_whole_at_any_width(width: int) -> None:
    from agent_cli.record.runlog import LoggedRun
    from agent_cli.ui.tables import show_logged_runs

    question = "Is order A100 refundable now that the box arrived with a dent in its corner?"
    run = LoggedRun(
        "f07492fe68a640249ad2080e526294c2",
        None,
        "ask",
        "2026-10-13T09:00:00+00:00",
        question,
        "openai-compatible",
        "qwen2.5-7b-instruct",
        "pending_approval",
        "x",
        3,
        100,
        20,
        None,
        5.0,
    )
    console = _terminal(width)
    show_logged_runs(console, [run])
    shown = console.file.getvalue()
    cells = _cells(shown) if "│" in shown else ["".join(shown.split())]  # a table, or blocks
    for value in (question, "openai-compatible/qwen2.5-7b-instruct", "pending_approval"):
        assert any("".join(value.split()) in "".join(cell.split()) for cell in cells), shown
    assert all(len(line) <= width for line in shown.splitlines())


def _cells(shown: str) -> list[str]:
    """Each column of a table, its folded lines joined."""
    rows = [line.split("│")[1:-1] for line in shown.splitlines() if line.startswith("│")]
    return ["".join(row[i].strip() for row in rows) for i in range(len(rows[0]))]


def test_orders_show_piped_is_lines_not_a_box(tmp_path: Path) -> None:
    import os

    from agent_cli.store.sqlite import OrderStore

    store = OrderStore.open(Path(os.environ["AGENT_DB"]))
    store.record_refund("A100", 1000, "scratched\tlid", key="k")
    store.close()
    out = runner.invoke(app, ["orders", "show", "A100"]).stdout
    assert not set(out) & set("┏┃┡│└━─")
    assert "refund\tamount\treason\trecorded (UTC)" in out
    assert "#2\t1,000 JPY\tscratched\\tlid\t" in out  # refund #1 is the sample A106's


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("Is order A100 refundable?", "This desk refunds at most 50,000 JPY at a time"),
        ("注文A100は返金できますか？", "この窓口で一度に返金できるのは50,000円までです"),
    ],
)
def test_an_answer_says_what_the_shop_allows_when_it_is_less(
    tmp_path: Path, question: str, said: str
) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[refunds]\nenabled = true\nmax_amount = 50000\n")
    argv = ["ask", question, "--today", "2026-10-13", "--config", str(config), "--json"]
    records = json_lines(runner.invoke(app, argv).stdout)
    policy = [r for r in records if r["event"] == "observation" and r["tool"] == "refund_policy"]
    assert policy[0]["observation"].endswith(" max_refund=50000")
    assert said in records[-1]["answer"]
    small = runner.invoke(app, [*argv[:1], "Is order A105 refundable?", *argv[2:]]).stdout
    assert "at most" not in json_lines(small)[-1]["answer"]  # 15,800: within the cap
    off = runner.invoke(app, ["ask", question, "--today", "2026-10-13", "-q"]).stdout
    assert said not in off  # refunds off: no cap to speak of


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("Is order C300 refundable?", "This desk refunds at most 12.50 USD at a time"),
        ("Is order A100 refundable?", "This desk refunds at most 1,000 JPY at a time"),
        ("注文A100は返金できますか？", "この窓口で一度に返金できるのは1,000円までです"),
    ],
)
def test_a_cap_per_currency_is_said_in_the_orders_own_currency(
    tmp_path: Path, question: str, said: str
) -> None:
    """`max_amount = { JPY = 1000, USD = 12.50 }`: a dollar order is capped at 12.50 USD, a yen
    order at 1,000 JPY; never the first number of the table for every order."""
    config = tmp_path / "c.toml"
    config.write_text("[refunds]\nenabled = true\nmax_amount = { JPY = 1000, USD = 12.50 }\n")
    argv = ["ask", question, "--today", "2026-10-13", "--config", str(config), "-q"]
    result = runner.invoke(app, argv)
    assert result.exit_code == 0, result.stderr
    assert said in result.stdout


def test_the_amount_said_is_what_is_left_after_a_refund() -> None:
    import os

    from agent_cli.store.sqlite import OrderStore

    store = OrderStore.open(Path(os.environ["AGENT_DB"]))
    store.record_refund("A105", 800, "scratch", key="k")
    store.close()
    argv = ["ask", "Is order A105 refundable?", "--today", "2026-10-13", "-q"]
    assert "refund amount 15,000 JPY" in runner.invoke(app, argv).stdout


@pytest.mark.parametrize(("no_color", "styled"), [("1", False), ("", True)])
def test_no_color_makes_help_plain_text_on_a_terminal(no_color: str, styled: bool) -> None:
    import os
    import sys

    import pexpect

    env = {**os.environ, "NO_COLOR": no_color, "TERM": "xterm-256color", "COLUMNS": "100"}
    child = pexpect.spawn(
        sys.executable, ["-m", "agent_cli", "ask", "--help"], env=env, encoding="utf-8"
    )
    child.expect(pexpect.EOF, timeout=60)
    out = child.before or ""
    assert "Answer one question" in out
    assert ("\x1b[" in out) is styled
