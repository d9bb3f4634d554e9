"""`agent config init | path | get | set | unset | edit | push | shop | show`
(commands/config.py)."""

from pathlib import Path
from typing import Annotated

import typer

from agent_cli.cli._apps import config_app
from agent_cli.cli._options import (
    BaseUrlOption,
    ConfigOption,
    ModelOption,
    ProviderOption,
)


@config_app.command(name="init")
def config_init(
    path: Annotated[
        Path | None,
        typer.Option("--path", help="Write here (default: ~/.config/agent-cli/config.toml)."),
    ] = None,
) -> None:
    """Write the example configuration file, every setting with its default, to edit.

    Exit code 2 when the file exists already: nothing is overwritten.
    """
    from agent_cli.commands.doctor import init_config

    init_config(path)


@config_app.command(name="path")
def config_path_command(config: ConfigOption = None) -> None:
    """Print the config file runs read (--config, else $AGENT_CONFIG, else the default), whether
    or not it exists yet."""
    from agent_cli.commands.config import config_path

    config_path(config)


@config_app.command(name="get")
def config_get_command(
    key: Annotated[str, typer.Argument(help="A setting, e.g. limits.max_steps.")],
    json_output: Annotated[
        bool, typer.Option("--json", help="One JSON line: key, value, source.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Print a setting's effective value (the default, the file, or the environment)."""
    from agent_cli.commands.config import config_get

    config_get(key, config=config, json_output=json_output)


@config_app.command(name="set")
def config_set_command(
    key: Annotated[str, typer.Argument(help="A setting, e.g. limits.max_steps.")],
    value: Annotated[str, typer.Argument(help='Its value: TOML (8, true, ["A"]) or text.')],
    config: ConfigOption = None,
) -> None:
    """Write a setting into the config file, keeping its comments; the file is created when
    missing. Exit code 2, and nothing written, when the settings would not load with it."""
    from agent_cli.commands.config import config_set

    config_set(key, value, config=config)


@config_app.command(name="unset")
def config_unset_command(
    key: Annotated[str, typer.Argument(help="A setting, e.g. limits.max_steps.")],
    config: ConfigOption = None,
) -> None:
    """Take a setting out of the config file: its default applies again."""
    from agent_cli.commands.config import config_unset

    config_unset(key, config=config)


@config_app.command(name="edit")
def config_edit_command(config: ConfigOption = None) -> int:
    """Open the config file in $VISUAL or $EDITOR (else vi), then check it: exit code 2 and
    the problem when it does not load (the file is kept, to fix)."""
    from agent_cli.commands.config import config_edit

    return config_edit(config)


@config_app.command(name="push")
def config_push_command(
    json_output: Annotated[
        bool, typer.Option("--json", help="One JSON line: version, pushed.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Write this config's [policy], [refunds] and instructions to the team's store as the
    shop's rules, a new version (nothing when unchanged). Every run on the store then decides
    money by them; a machine's own config may only tighten them. Needs [store] url (a team's
    PostgreSQL): exit code 2 on one machine's SQLite."""
    from agent_cli.commands.shop_rules import push

    push(config=config, json_output=json_output)


@config_app.command(name="shop")
def config_shop_command(
    json_output: Annotated[
        bool, typer.Option("--json", help="One JSON line: the version and the rules in force.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Show the shop's rules pushed to the team's store (version, who, when) and the rules in
    force on this machine, its own config's tightening included."""
    from agent_cli.commands.shop_rules import show

    show(config=config, json_output=json_output)


@config_app.command(name="show")
def config_show(
    provider: ProviderOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the settings as JSON.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Print the effective configuration, where each value came from, with secrets masked."""
    from agent_cli.commands.doctor import show_config
    from agent_cli.runtime.options import ProviderOptions

    show_config(ProviderOptions(provider, model, base_url, None, config), json_output=json_output)
