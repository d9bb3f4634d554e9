"""`agent config path | get KEY | set KEY VALUE | unset KEY | edit`, as `gh config` does: the
config file read and written by key, its comments and layout kept (tomlkit), and never left
invalid: a change that the settings refuse is not written.

The file is the one a run reads (`--config`, else `$AGENT_CONFIG`, else the default path); `set`
creates it when it does not exist. A value is read as TOML when it is TOML (`8`, `true`,
`["DELIVERED"]`, `{ JPY = 5000 }`), else as text (`ollama`, `https://host/v1`).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tomllib
from pathlib import Path
from typing import Any

from agent_cli.config import (
    MAX_CONFIG_BYTES,
    Settings,
    config_source,
    load_settings,
    load_settings_with_sources,
)
from agent_cli.errors import AgentError, ConfigError, UsageError
from agent_cli.files import FileRefused, read_file_bytes
from agent_cli.language import intent_corpus
from agent_cli.policy.instructions import shop_instructions
from agent_cli.text import mask_secrets, print_json_lines
from agent_cli.validation_text import near_miss

_SECRET_HINTS = ("key", "token", "password", "secret")


def config_path(config: Path | None) -> None:
    """`agent config path`: the file runs read, and whether it exists."""
    path, _ = config_source(config)
    print(path)


def config_get(key: str, *, config: Path | None, json_output: bool) -> None:
    """`agent config get KEY`: the effective value (default, file, environment) and its source."""
    settings, sources = load_settings_with_sources(config)
    value = _effective(settings, key)
    source = sources.get(key, "default")
    if json_output:
        print_json_lines([{"key": key, "value": value, "source": source}])
        return
    print(mask_secrets(_shown(value)) if any(h in key for h in _SECRET_HINTS) else _shown(value))


def config_set(key: str, value: str, *, config: Path | None) -> None:
    """`agent config set KEY VALUE`: written into the file, its comments kept; refused (exit 2,
    nothing written) when the settings would not load with it."""
    path, _ = config_source(config)
    document = _document(path)
    _assign(document, key.split("."), _parsed(value))
    _write_checked(path, document, f"{key} = {_shown(_parsed(value))}", setting=key)


def config_unset(key: str, *, config: Path | None) -> None:
    """`agent config unset KEY`: the key taken out of the file (its default applies again)."""
    path, _ = config_source(config)
    document = _document(path)
    parts = key.split(".")
    table: Any = document
    for part in parts[:-1]:
        table = table.get(part) if hasattr(table, "get") else None
        if table is None:
            break
    if table is None or parts[-1] not in table:
        raise UsageError(f"{key} is not set in {path}; nothing to unset")
    del table[parts[-1]]
    _write_checked(path, document, f"{key} unset")


def config_edit(config: Path | None) -> int:
    """`agent config edit`: the file in $VISUAL or $EDITOR (else vi), then checked; exit 2 and
    the problem when the edited file does not load (it is kept, to fix)."""
    path, _ = config_source(config)
    if not path.exists():
        _write(path, "# agent-cli configuration: `agent config init` writes every setting.\n")
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        done = subprocess.run([*shlex.split(editor), str(path)], check=False)
    except OSError as exc:
        raise UsageError(f"Cannot start the editor {editor!r}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        raise UsageError(f"The editor {editor!r} exited with {done.returncode}; nothing checked")
    load_settings(path)
    print(f"{path}: valid")
    return 0


def _effective(settings: Settings, key: str) -> Any:
    """The value of a dotted setting (None: a named table's entry that is not there);
    UsageError, with a near miss, when the settings have no such key."""
    value: Any = settings
    walked: list[str] = []
    for part in key.split("."):
        fields = getattr(type(value), "model_fields", None)
        if fields is not None and part in fields:
            value = getattr(value, part)
        elif isinstance(value, dict):  # a table of named entries: profiles, prices, servers
            value = value.get(part)
        else:
            known = list(fields or ())
            where = ".".join(walked) or "the settings"
            raise UsageError(
                f"{key!r} is not a setting{near_miss(part, known)}; {where} has: "
                f"{', '.join(known) or 'no keys'}"
            )
        walked.append(part)
    return _plain(value)


def _plain(value: Any) -> Any:
    """A setting as plain data (tables as dicts, arrays as lists), as JSON and TOML hold it."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {name: _plain(item) for name, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return str(value) if isinstance(value, Path) else value


def _parsed(value: str) -> Any:
    """`value` as TOML when it is a TOML value, else as the text it is."""
    try:
        return tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return value


def _shown(value: Any) -> str:
    """A value on one line: text as it is, nothing for a value not set, anything else as JSON
    (`5`, `true`, `["A"]`)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _document(path: Path) -> Any:
    import tomlkit

    if not path.exists():
        return tomlkit.document()
    try:
        return tomlkit.parse(read_file_bytes(path, MAX_CONFIG_BYTES).decode("utf-8"))
    except FileRefused as exc:
        raise ConfigError(f"Config file {path} {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read config file {path}: {exc}") from None
    except Exception as exc:  # tomlkit's parse errors share no base class of ours
        raise ConfigError(f"Config file {path} is not valid TOML: {exc}") from None


def _assign(document: Any, parts: list[str], value: Any) -> None:
    import tomlkit

    table = document
    for part in parts[:-1]:
        if part not in table:
            table[part] = tomlkit.table()
        table = table[part]
    table[parts[-1]] = value


def _write_checked(path: Path, document: Any, what: str, *, setting: str = "") -> None:
    """Replace the file with `document` only if the settings load from it (written beside it,
    checked, then moved over it in one step), and the file the `setting` set names (if it
    names one) can be read as that setting's; the file as it was otherwise."""
    import tomlkit

    trial = path.with_name(f".{path.name}.new")
    try:
        _write(trial, tomlkit.dumps(document))
        check_named_file(load_settings(trial), setting)
        trial.replace(path)
    except ConfigError as exc:
        raise ConfigError(f"{str(exc).replace(str(trial), str(path))}; nothing written") from None
    finally:
        trial.unlink(missing_ok=True)
    print(f"{path}: {what}")


def check_named_file(settings: Settings, setting: str) -> None:
    """The file a setting names, read as a run would read it; ConfigError naming the setting
    when it cannot be (a path that does not exist set at once, not a failure of every run)."""
    try:
        if setting == "agent.instructions_file" and settings.agent.instructions_file:
            shop_instructions(settings)
        elif setting == "agent.intent_examples" and settings.agent.intent_examples:
            examples = settings.agent.intent_examples
            intent_corpus.shop_examples(examples, intent_corpus.shop_file(examples))
    except AgentError as exc:
        raise ConfigError(f"{setting}: {exc}") from None


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # a config may hold keys
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"Cannot write {path}: {exc.strerror or exc}") from None
