"""`agent doctor` and `agent config show`."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.config import load_settings
from agent_cli.providers.choice import choose_provider
from tests.fakellm import FakeLLM, Reply, error
from tests.helpers import json_lines

KEY = "sk-test-SECRET-0123456789abcdef"
runner = CliRunner()


def test_doctor_all_good_against_a_live_endpoint(fake_llm: FakeLLM) -> None:
    fake_llm.queue(Reply(body={"data": [{"id": "gpt-4o-mini"}, {"id": "other"}]}))
    result = runner.invoke(
        app,
        ["doctor", "--provider", "openai", "--base-url", fake_llm.url + "/v1"],
        env={"OPENAI_API_KEY": KEY},
    )
    assert result.exit_code == 0, result.stdout
    assert "✓ API key: OPENAI_API_KEY is set" in result.stdout
    assert "2 models, gpt-4o-mini listed" in result.stdout
    assert fake_llm.requests[0].path == "/v1/models"
    assert KEY not in result.stdout


def test_doctor_reports_a_rejected_key(fake_llm: FakeLLM) -> None:
    fake_llm.queue(error(401, "invalid x-api-key"))
    result = runner.invoke(
        app,
        ["doctor", "--provider", "anthropic", "--base-url", fake_llm.url],
        env={"ANTHROPIC_API_KEY": KEY},
    )
    assert result.exit_code == 1
    assert "✗ endpoint: Authentication failed (401)" in result.stdout
    assert len(fake_llm.requests) == 1  # doctor does not retry


def test_doctor_reports_a_missing_key_without_a_request(fake_llm: FakeLLM) -> None:
    result = runner.invoke(app, ["doctor", "--provider", "openai", "--base-url", fake_llm.url])
    assert result.exit_code == 1
    assert "✗ API key: No API key for openai: set OPENAI_API_KEY" in result.stdout
    assert fake_llm.requests == []


def test_doctor_offline() -> None:
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0
    assert "offline playbook model (chosen automatically)" in result.stdout
    assert "✓ order store" in result.stdout


def test_doctor_says_how_many_examples_a_shop_added_and_the_held_out_score(
    tmp_path: Path,
) -> None:
    examples = tmp_path / "intents.txt"
    examples.write_text("[cancel]\nzap my order\nzap it please\n[status]\nparcel on the boat?\n")
    config = tmp_path / "c.toml"
    config.write_text(f"[agent]\nintent_examples = {str(examples)!r}\n")
    result = runner.invoke(app, ["doctor", "--config", str(config), "--json"])
    assert result.exit_code == 0, result.output
    (check,) = [json.loads(x) for x in result.stdout.splitlines() if "intent model" in x]
    assert check["ok"] is True
    assert check["detail"].startswith(f"3 of the shop's examples ({examples})")
    assert re.search(r"held-out accuracy en \d+\.\d%, ja \d+\.\d%", check["detail"])
    plain = runner.invoke(app, ["doctor"])
    assert "✓ intent model: the package's corpus; held-out accuracy en" in plain.stdout


def test_doctor_names_a_bad_line_of_a_shops_examples(tmp_path: Path) -> None:
    examples = tmp_path / "intents.txt"
    examples.write_text("[cancel]\nzap\n[zapping]\nzap zap\n")
    config = tmp_path / "c.toml"
    config.write_text(f"[agent]\nintent_examples = {str(examples)!r}\n")
    result = runner.invoke(app, ["doctor", "--config", str(config)])
    assert result.exit_code == 1
    assert (
        "✗ intent model:" in result.stdout
        and "intents.txt:3: unknown intent [zapping]" in result.stdout
    )
    asked = runner.invoke(app, ["ask", "Is A100 refundable?", "--config", str(config)])
    assert asked.exit_code == 2 and "intents.txt:3: unknown intent [zapping]" in asked.stderr
    assert "Traceback" not in asked.output


def test_doctor_reports_a_bad_config(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[provider]\nmode = 'yaml'\n")
    result = runner.invoke(app, ["doctor", "--config", str(config)])
    assert result.exit_code == 1
    assert "✗ configuration: Invalid configuration" in result.stdout


def test_config_show_masks_the_key_and_names_sources(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[limits]\nmax_steps = 5\n")
    result = runner.invoke(
        app,
        ["config", "show", "--config", str(config), "--model", "gpt-x", "--json"],
        env={"OPENAI_API_KEY": KEY, "AGENT_DB": "/tmp/x.db"},
    )
    assert result.exit_code == 0, result.stderr
    rows = {row["key"]: row for row in json_lines(result.stdout)}
    assert rows["limits.max_steps"]["value"] == 5
    assert rows["limits.max_steps"]["source"] == f"file {config}"
    assert rows["limits.timeout"]["source"] == "default"
    assert rows["store.path"]["source"] == "env AGENT_DB"
    assert rows["provider.model"]["source"] == "option"
    assert rows["effective provider"] == {
        "key": "effective provider",
        "value": "openai",
        "source": "automatic",
    }
    assert rows["api key"]["value"] == "***cdef"
    assert KEY not in result.stdout


def test_config_show_table() -> None:
    result = runner.invoke(app, ["config", "show"])
    assert result.exit_code == 0
    assert "limits.max_steps" in result.stdout and "effective provider" in result.stdout


def test_automatic_choice_order(monkeypatch: object) -> None:
    settings = load_settings()
    assert choose_provider(settings, {}).kind == "offline"
    assert choose_provider(settings, {"ANTHROPIC_API_KEY": "k"}).kind == "anthropic"
    both = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
    assert choose_provider(settings, both).kind == "openai"
    assert choose_provider(settings, {"OPENAI_API_KEY": "  \n"}).kind == "offline"


def test_config_show_is_the_effective_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENT_DB")
    config = tmp_path / "c.toml"
    config.write_text("[limits]\nmax_steps = 5\n[refunds]\nenabled = true\n")
    result = runner.invoke(app, ["config", "show", "--config", str(config), "--json"])
    assert result.exit_code == 0, result.stderr
    rows = {row["key"]: row for row in json_lines(result.stdout)}
    assert rows["config file"] == {"key": "config file", "value": str(config), "source": "--config"}
    assert rows["limits.max_steps"]["value"] == 5  # a number, not "5"
    assert rows["refunds.enabled"]["value"] is True
    home = Path(os.environ["HOME"])
    assert rows["store.path"]["value"] == str(home / "data" / "agent-cli" / "orders.db")
    assert rows["store.path"]["source"] == "default location"
    assert rows["chat.history_file"]["value"].endswith("agent-cli/history")


def test_config_errors_name_what_named_the_file_and_suggest_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_CONFIG", str(tmp_path / "missing.toml"))
    missing = runner.invoke(app, ["config", "show"])
    assert missing.exit_code == 2 and "does not exist; check AGENT_CONFIG" in missing.stderr
    typo = tmp_path / "typo.toml"
    typo.write_text("[limits]\nmax_step = 3\n[refund]\nenabled = false\n")
    result = runner.invoke(app, ["config", "show", "--config", str(typo)])
    assert result.exit_code == 2
    assert "limits.max_step" in result.stderr and "(did you mean 'max_steps'?)" in result.stderr
    assert "(did you mean 'refunds'?)" in result.stderr


def test_config_init_writes_the_example_once(tmp_path: Path) -> None:
    target = tmp_path / "conf" / "config.toml"
    result = runner.invoke(app, ["config", "init", "--path", str(target)])
    assert result.exit_code == 0, result.stderr
    assert "[limits]" in target.read_text()
    shown = runner.invoke(app, ["config", "show", "--config", str(target)])
    assert shown.exit_code == 0  # the example is a valid config
    again = runner.invoke(app, ["config", "init", "--path", str(target)])
    assert again.exit_code == 2 and "exists already" in again.stderr
