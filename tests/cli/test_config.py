"""Settings: sources in order, and every bad setting named."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.config import default_config_path, load_settings
from agent_cli.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_defaults() -> None:
    settings = load_settings()
    assert (settings.limits.max_steps, settings.limits.timeout) == (12, 120.0)
    assert settings.policy.refund_window_days == 30
    assert settings.policy.refundable_statuses == ("DELIVERED",)


def test_file_then_environment_then_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(
        tmp_path, "[limits]\nmax_steps = 5\ntimeout = 9.5\n[store]\npath = 'from-file.db'\n"
    )
    monkeypatch.setenv("AGENT_DB", "from-env.db")
    settings = load_settings(path, overrides={"limits": {"max_steps": 3, "timeout": None}})
    assert (settings.limits.max_steps, settings.limits.timeout) == (3, 9.5)
    assert settings.store.path == Path("from-env.db")


def test_default_file_is_read_when_present(monkeypatch: pytest.MonkeyPatch) -> None:
    path = default_config_path()
    path.parent.mkdir(parents=True)
    path.write_text("[policy]\nrefund_window_days = 14\n")
    assert load_settings().policy.refund_window_days == 14


def test_agent_config_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_CONFIG", str(write(tmp_path, "[limits]\nmax_steps = 2\n")))
    assert load_settings().limits.max_steps == 2


@pytest.mark.parametrize(
    ("text", "messages"),
    [
        (
            "[limits]\nmax_steps = 0\n",
            ["limits.max_steps (file ", ": must be at least 1"],
        ),
        (
            "[limits]\nmax_steps = -3\ntimeout = 'abc'\n",
            ["limits.max_steps", "limits.timeout (file ", "Input should be a valid number"],
        ),
        ("[limits]\nmax_step = 3\n", ["limits.max_step (file ", "unknown setting"]),
        ("[limtis]\nx = 1\n", ["limtis (file ", "unknown setting"]),
        ("[policy]\nrefundable_statuses = ['LOST']\n", ["policy.refundable_statuses.0"]),
        (
            "[limits]\ntimeout = 1e9\n",
            ["limits.timeout (file ", "must be at most 86400"],
        ),
        (  # x__y's tool z and x's tool y__z would both be sent as x__y__z
            "[mcp.servers.x__y]\ncommand = ['true']\n",
            ["mcp.servers.x__y", "holds '__'", "use one underscore"],
        ),
    ],
)
def test_bad_settings_are_all_named(tmp_path: Path, text: str, messages: list[str]) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, text))
    for message in messages:
        assert message in str(caught.value)
    assert caught.value.exit_code == 2


def test_bad_option_values_are_named() -> None:
    with pytest.raises(
        ConfigError,
        match=r"Invalid option: --max-steps 0: must be at least 1",
    ):
        load_settings(overrides={"limits": {"max_steps": 0}})


def test_invalid_toml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not valid TOML"):
        load_settings(write(tmp_path, "[limits\n"))


def test_missing_explicit_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist; check --config"):
        load_settings(tmp_path / "nope.toml")


def test_example_config_matches_the_defaults() -> None:
    example = Path(__file__).parents[2] / "config.example.toml"  # where users look for it
    assert load_settings(example) == load_settings()


def test_the_package_ships_the_top_level_example() -> None:
    from importlib import resources

    shipped = resources.files("agent_cli").joinpath("config.example.toml").read_text("utf-8")
    top = (Path(__file__).parents[2] / "config.example.toml").read_text("utf-8")
    assert shipped == top  # one file, not two to keep in step


@pytest.mark.parametrize(
    ("text", "setting", "message"),
    [
        ('[refunds]\nenabled = "yes"', "refunds.enabled", "valid boolean"),
        ("[refunds]\nenabled = 1", "refunds.enabled", "valid boolean"),
        ('[limits]\ngrounding = "false"', "limits.grounding", "valid boolean"),
        ("[limits]\nmax_steps = 8.0", "limits.max_steps", "valid integer"),
        ("[limits]\nmax_steps = true", "limits.max_steps", "valid integer"),
        ('[refunds]\nmax_amount = "50000"', "refunds.max_amount", "a whole number, or a table"),
        ('[limits]\ntimeout = "30"', "limits.timeout", "valid number"),
        ('[provider]\ntemperature = "0.5"', "provider.temperature", "valid number"),
        ("[provider]\nmodel = 4", "provider.model", "valid string"),
        ('[policy]\nrefundable_statuses = "DELIVERED"', "policy.refundable_statuses", "tuple"),
        ("[store]\npath = 5", "store.path", "path"),
    ],
)
def test_settings_are_strict_about_types(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, setting: str, message: str
) -> None:
    monkeypatch.delenv("AGENT_DB")  # it would win over store.path
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, text))
    assert setting in str(caught.value) and message in str(caught.value)


def test_strictness_keeps_what_toml_means(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENT_DB")
    text = "[limits]\ntimeout = 30\n[policy]\nrefundable_statuses = ['DELIVERED', 'SHIPPING']\n"
    settings = load_settings(write(tmp_path, text + '[store]\npath = "~/o.db"\n'))
    assert settings.limits.timeout == 30.0  # an integer is a number
    assert settings.policy.refundable_statuses == ("DELIVERED", "SHIPPING")
    assert settings.store.path == Path("~/o.db")


@pytest.mark.parametrize("url", ["not-a-url", "ftp://example.com/v1", "http://", "localhost:8000"])
def test_a_base_url_that_is_not_http_is_refused_at_once_naming_its_source(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from agent_cli.cli import app

    runner = CliRunner()
    option = runner.invoke(app, ["ask", "q", "--provider", "ollama", "--base-url", url])
    assert option.exit_code == 2
    assert option.stderr.strip() == (
        f"agent: error: Invalid option: --base-url: {url!r} is not "
        "an http:// or https:// URL with a host (e.g. http://localhost:11434/v1)"
    )
    monkeypatch.setenv("AGENT_BASE_URL", url)
    env = runner.invoke(app, ["ask", "q", "--provider", "ollama"])
    assert env.exit_code == 2 and "provider.base_url (env AGENT_BASE_URL)" in env.stderr
