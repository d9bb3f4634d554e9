"""The CLI's options and help as a user meets them: a server named by its URL alone, an option
that is not used saying so, help that shows what it says (brackets, every exit code, NO_COLOR),
a did-you-mean for a near miss, a provider named where it was set."""

from __future__ import annotations

import re
from pathlib import Path

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
