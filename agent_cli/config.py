"""Settings: defaults < config file (TOML) < environment < command-line options, all validated.

The config file is `--config FILE`, else `$AGENT_CONFIG`, else `~/.config/agent-cli/config.toml`
when it exists. Unknown keys are errors (typos are caught), and so are values out of range.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_cli.errors import ConfigError

OrderStatus = Literal["PENDING", "SHIPPING", "DELIVERED", "CANCELLED", "REFUNDED"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LimitSettings(_Section):
    max_steps: int = Field(default=8, ge=1, le=100, description="Model decisions per run, at most")
    timeout: float = Field(
        default=120.0, gt=0, le=86_400, description="Seconds a whole run may take"
    )
    max_question_chars: int = Field(default=4_000, ge=1, le=100_000, description="Longest question")


class PolicySettings(_Section):
    refund_window_days: int = Field(default=30, ge=0, le=3_650)
    refundable_statuses: tuple[OrderStatus, ...] = Field(default=("DELIVERED",), min_length=1)


class StoreSettings(_Section):
    path: Path | None = None  # None: $AGENT_DB, else the user's data directory


class Settings(_Section):
    limits: LimitSettings = Field(default_factory=LimitSettings)
    policy: PolicySettings = Field(default_factory=PolicySettings)
    store: StoreSettings = Field(default_factory=StoreSettings)


def default_config_path() -> Path:
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "agent-cli" / "config.toml"


def load_settings(
    config_file: Path | None = None, *, overrides: dict[str, dict[str, Any]] | None = None
) -> Settings:
    """Merge every source and validate once; ConfigError lists every bad setting."""
    path, required = _config_source(config_file)
    data = _read_toml(path, required=required)
    if db := os.environ.get("AGENT_DB"):
        data.setdefault("store", {})["path"] = db
    for section, values in (overrides or {}).items():
        table = data.setdefault(section, {})
        if not isinstance(table, dict):
            raise ConfigError(f"Invalid configuration in {path}: [{section}] must be a table")
        table.update({key: value for key, value in values.items() if value is not None})
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"Invalid configuration ({path}): {_describe(exc)}") from None


def _config_source(config_file: Path | None) -> tuple[Path, bool]:
    if config_file is not None:
        return config_file.expanduser(), True
    if explicit := os.environ.get("AGENT_CONFIG"):
        return Path(explicit).expanduser(), True
    return default_config_path(), False


def _read_toml(path: Path, *, required: bool) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        if required:
            raise ConfigError(f"Config file {path} does not exist; check --config") from None
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Config file {path} is not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read config file {path}: {exc}") from None


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in item["loc"])
        message = "unknown setting" if item["type"] == "extra_forbidden" else item["msg"]
        parts.append(f"{where}: {message}")
    return "; ".join(parts)
