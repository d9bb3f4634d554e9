"""`agent config path | get | set | unset | edit`: the config file by key, its comments kept,
never left invalid."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app

runner = CliRunner()


def config_file() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "agent-cli" / "config.toml"


def test_path_names_the_file_runs_read(tmp_path: Path) -> None:
    assert runner.invoke(app, ["config", "path"]).stdout.strip() == str(config_file())
    named = tmp_path / "shop.toml"
    assert runner.invoke(app, ["config", "path", "--config", str(named)]).stdout.strip() == str(
        named
    )
    env = runner.invoke(app, ["config", "path"], env={"AGENT_CONFIG": str(named)})
    assert env.stdout.strip() == str(named)


def test_set_writes_the_value_and_keeps_every_comment() -> None:
    assert runner.invoke(app, ["config", "init"]).exit_code == 0
    before = config_file().read_text()
    result = runner.invoke(app, ["config", "set", "limits.max_steps", "5"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == f"{config_file()}: limits.max_steps = 5"
    after = config_file().read_text()
    comments = [line for line in before.splitlines() if line.startswith("#")]
    assert comments == [line for line in after.splitlines() if line.startswith("#")]
    assert "max_steps = 5" in after and "max_steps = 12" not in after
    assert runner.invoke(app, ["config", "get", "limits.max_steps"]).stdout == "5\n"
    shown = json.loads(runner.invoke(app, ["config", "get", "limits.max_steps", "--json"]).stdout)
    assert shown == {"key": "limits.max_steps", "value": 5, "source": f"file {config_file()}"}


@pytest.mark.parametrize(
    ("key", "value", "stored"),
    [
        ("provider.name", "ollama", '"ollama"'),
        ("refunds.enabled", "true", "true"),
        ("policy.refundable_statuses", '["DELIVERED", "SHIPPING"]', '["DELIVERED", "SHIPPING"]'),
        ("provider.base_url", "http://localhost:8000/v1", '"http://localhost:8000/v1"'),
        ("limits.timeout", "30.5", "30.5"),
    ],
)
def test_a_value_is_toml_when_it_is_toml_else_text(key: str, value: str, stored: str) -> None:
    result = runner.invoke(app, ["config", "set", key, value])
    assert result.exit_code == 0, result.stderr
    assert f"{key.rsplit('.', maxsplit=1)[-1]} = {stored}" in config_file().read_text()
    assert runner.invoke(app, ["config", "get", key]).exit_code == 0


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("limits.max_step", "5", "unknown setting (did you mean 'max_steps'?)"),
        ("limits.max_steps", "0", "limits.max_steps"),
        ("provider.name", "olama", "Unknown provider 'olama'"),
        ("limits.max_steps", '"five"', "limits.max_steps"),
    ],
)
def test_a_value_the_settings_refuse_is_not_written(key: str, value: str, said: str) -> None:
    runner.invoke(app, ["config", "set", "limits.timeout", "30"])
    before = config_file().read_text()
    result = runner.invoke(app, ["config", "set", key, value])
    assert result.exit_code == 2
    assert said in result.stderr and "nothing written" in result.stderr
    assert config_file().read_text() == before
    assert [p.name for p in config_file().parent.iterdir()] == ["config.toml"]  # no leftovers


def test_set_creates_a_missing_file_and_unset_takes_a_key_out() -> None:
    assert not config_file().exists()
    assert runner.invoke(app, ["config", "set", "chat.memory_turns", "3"]).exit_code == 0
    assert runner.invoke(app, ["config", "get", "chat.memory_turns"]).stdout == "3\n"
    assert runner.invoke(app, ["config", "unset", "chat.memory_turns"]).exit_code == 0
    assert runner.invoke(app, ["config", "get", "chat.memory_turns"]).stdout == "10\n"
    again = runner.invoke(app, ["config", "unset", "chat.memory_turns"])
    assert again.exit_code == 2 and "is not set" in again.stderr


def test_get_of_an_unknown_key_has_a_near_miss_and_a_value_not_set_is_empty() -> None:
    bad = runner.invoke(app, ["config", "get", "provider.nam"])
    assert bad.exit_code == 2 and "(did you mean 'name'?)" in bad.stderr
    assert runner.invoke(app, ["config", "get", "store.url"]).stdout == "\n"


def test_edit_opens_the_editor_then_checks_the_file(tmp_path: Path) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\necho "[limits]\nmax_steps = 0" > "$1"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    broken = runner.invoke(app, ["config", "edit"], env={"EDITOR": str(editor), "VISUAL": ""})
    assert broken.exit_code == 2 and "limits.max_steps" in broken.stderr
    assert "max_steps = 0" in config_file().read_text()  # kept, to fix
    editor.write_text('#!/bin/sh\necho "[limits]\nmax_steps = 4" > "$1"\n')
    fixed = runner.invoke(app, ["config", "edit"], env={"EDITOR": str(editor), "VISUAL": ""})
    assert fixed.exit_code == 0 and fixed.stdout.strip() == f"{config_file()}: valid"
    missing = runner.invoke(app, ["config", "edit"], env={"EDITOR": "no-such-editor-x"})
    assert missing.exit_code == 2 and "Cannot start the editor" in missing.stderr


@pytest.mark.parametrize("key", ["agent.instructions_file", "agent.intent_examples"])
def test_a_file_setting_naming_no_readable_file_is_not_written(key: str, tmp_path: Path) -> None:
    """A path that does not exist (or a FIFO) would fail every run: refused when set, exit 2,
    the file as it was; the same path once the file is there is written."""
    missing = tmp_path / "shop.md"
    refused = runner.invoke(app, ["config", "set", key, str(missing)])
    assert refused.exit_code == 2
    assert f"{key}: " in refused.stderr and "nothing written" in refused.stderr
    assert not config_file().exists() or key not in config_file().read_text()
    instructions = key.endswith("instructions_file")
    missing.write_text("# Be kind\n" if instructions else "[refund]\nrefund?\n")
    assert runner.invoke(app, ["config", "set", key, str(missing)]).exit_code == 0


def test_doctor_says_when_the_instructions_file_has_gone(tmp_path: Path) -> None:
    shop = tmp_path / "shop.md"
    shop.write_text("Always greet the customer by name.\n")
    assert (
        runner.invoke(app, ["config", "set", "agent.instructions_file", str(shop)]).exit_code == 0
    )
    assert "instructions: " in runner.invoke(app, ["doctor"]).stdout
    shop.unlink()
    doctor = runner.invoke(app, ["doctor"])
    assert doctor.exit_code != 0
    assert f"instructions: {shop}: cannot read" in doctor.stdout
