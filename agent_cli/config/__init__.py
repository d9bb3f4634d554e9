"""Settings: defaults < config file (TOML) < environment < command-line options, all validated.

The config file is `--config FILE`, else `$AGENT_CONFIG`, else `~/.config/agent-cli/config.toml`
when it exists. Unknown keys are errors (typos are caught), and so are values out of range.
The provider is chosen from these settings by `providers/choice.py`; API keys are read from the
environment only, never from the file, and never printed. The schema of a refund rule is
`rules.py`, the currencies it may name `currencies.py`.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    ValidationError,
    model_validator,
)

from agent_cli.config.rules import RefundRule, currency_code
from agent_cli.config.sections import HttpUrl
from agent_cli.config.sections import Section as _Section
from agent_cli.config.serve import ServeSettings
from agent_cli.domain.currencies import to_minor
from agent_cli.domain.orders import OrderStatus
from agent_cli.errors import ConfigError
from agent_cli.files import FileRefused, read_file_bytes
from agent_cli.validation_text import describe_settings_error, near_miss

ProviderKind = Literal["openai", "anthropic"]

# Environment variables that set a setting, between the config file and the options.
ENVIRONMENT = {
    "AGENT_DB": ("store", "path"),
    "AGENT_DB_URL": ("store", "url"),
    "AGENT_LOG": ("log", "path"),
    "AGENT_PROVIDER": ("provider", "name"),
    "AGENT_MODEL": ("provider", "model"),
    "AGENT_BASE_URL": ("provider", "base_url"),
}


class LimitSettings(_Section):
    max_steps: int = Field(default=12, ge=1, le=100)  # fits a whole desk flow (issue 49)
    timeout: float = Field(default=120.0, gt=0, le=86_400)
    max_question_chars: int = Field(default=4_000, ge=1, le=100_000)
    max_repairs: int = Field(default=2, ge=0, le=20)
    max_tokens: int | None = Field(default=None, ge=1)
    max_cost: float | None = Field(default=None, gt=0)  # needs the model in [prices]
    max_observation_chars: int = Field(default=2_000, ge=100, le=1_000_000)
    history_tokens: int = Field(default=4_000, ge=500, le=10_000_000)
    answer_at_limit: bool = True
    max_calls_per_reply: int = Field(default=8, ge=1, le=100)
    grounding: bool = True  # answers may name only orders looked up in the run


class PolicySettings(_Section):
    refund_window_days: int = Field(default=30, ge=0, le=3_650)
    # Returns and exchanges, days after delivery; unset: the refund window.
    return_window_days: int | None = Field(default=None, ge=0, le=3_650)
    refundable_statuses: tuple[OrderStatus, ...] = Field(
        default=("DELIVERED",),
        min_length=1,
        strict=False,  # a TOML array is a list
    )


def _cap(value: object) -> int | dict[str, float]:
    """`refunds.max_amount`: one whole number for every currency, or a table of each
    currency's cap as that currency can hold it (12.50 USD, not 12.505); said in one line."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not 1 <= value <= 10**12:
            raise ValueError(f"{value:,} is not between 1 and 1,000,000,000,000")
        return value
    if not isinstance(value, dict):
        raise ValueError("a whole number, or a table by currency ({ JPY = 50000, USD = 500 })")
    if not value:
        raise ValueError("names no currency: name one ({ JPY = 50000, USD = 500 })")
    caps: dict[str, float] = {}
    for currency, cap in value.items():
        currency_code(str(currency))
        if isinstance(cap, bool) or not isinstance(cap, int | float) or not 0 < cap <= 10**12:
            raise ValueError(f"{currency}: {cap!r} is not an amount above 0")
        try:
            to_minor(cap, currency)
        except ValueError as exc:
            raise ValueError(f"{currency}: {exc}") from None
        caps[currency] = float(cap)
    return caps


class RefundSettings(_Section):
    enabled: bool = False  # issue_refund exists only when enabled
    # per refund, in major units: one number for every currency, or a table by currency (a
    # currency the table leaves out has no refunds)
    max_amount: Annotated[int | dict[str, float], BeforeValidator(_cap)] = 50_000
    max_per_run: int = Field(default=1, ge=0, le=100)
    max_per_session: int = Field(default=5, ge=0, le=10_000)
    # With nobody at the run's terminal to approve it, a refund waits this long in the approval
    # queue (`agent approvals`); 0: it is denied, as with the queue off.
    queue_hours: float = Field(default=72.0, ge=0, le=24 * 366)
    # Refund rules as policy (policy/refund_rules.py): the first that matches decides auto, ask,
    # queue or deny; none: ask.
    rules: list[RefundRule] = Field(default_factory=list, max_length=100)

    @model_validator(mode="after")
    def _rule_names_are_unique(self) -> RefundSettings:
        names = [rule.name for rule in self.rules]
        if twice := sorted({name for name in names if names.count(name) > 1}):
            raise ValueError(f"refund rules must have distinct names; {twice[0]!r} is used twice")
        return self


class StoreSettings(_Section):
    path: Annotated[Path, Field(strict=False)] | None = None  # None: the user's data directory
    # A team's PostgreSQL (store/postgres.py) instead of the SQLite file: postgresql://user@host/db.
    # The password comes from PGPASSWORD, ~/.pgpass or ${NAME}, never from this file.
    url: str | None = Field(default=None, pattern=r"^postgres(ql)?://", max_length=2_000)


class LogSettings(_Section):
    enabled: bool = True  # every run is logged for `agent logs`
    path: Annotated[Path, Field(strict=False)] | None = None  # None: the user's state directory
    keep_runs: int = Field(default=10_000, ge=1, le=10_000_000)  # older runs are deleted


class AgentSettings(_Section):
    # The shop's own instructions (policy/instructions.py): added to our rules, never in their
    # place.
    instructions: str | None = Field(default=None, max_length=8_000)
    instructions_file: Annotated[Path, Field(strict=False)] | None = None
    # The shop's own labelled customer messages, learnt beside the package's corpus
    # (language/intent_corpus.py's format); `agent doctor` counts them.
    intent_examples: Annotated[Path, Field(strict=False)] | None = None
    # Which tools a real model is offered (tools/offered.py): by the conversation's phase, or
    # also narrowed to the intents its words may mean (for small local models).
    tool_offer: Literal["phase", "narrow"] = "phase"

    @model_validator(mode="after")
    def _one_source(self) -> AgentSettings:
        if self.instructions is not None and self.instructions_file is not None:
            raise ValueError("set instructions or instructions_file, not both")
        return self


class ChatSettings(_Section):
    memory_turns: int = Field(default=10, ge=0, le=1_000)  # earlier exchanges the model sees
    memory_chars: int = Field(default=8_000, ge=0, le=1_000_000)  # ...and their total size
    history_file: str | None = None  # None: the user's state directory; "" turns it off


class ProviderSettings(_Section):
    name: str | None = None  # offline, openai, anthropic, ollama or a [profiles.NAME]; None: auto
    model: str | None = None
    base_url: HttpUrl | None = None
    api_key_env: str | None = None
    mode: Literal["tools", "json"] = "tools"
    temperature: float = Field(default=0.0, ge=0, le=2)
    max_output_tokens: int = Field(default=1024, ge=1, le=1_000_000)
    # JSON mode: one decision (a tool call, or a short answer) needs far fewer; a small model
    # left without a cap writes until its context is full.
    max_decision_tokens: int = Field(default=400, ge=16, le=1_000_000)
    # None: max_completion_tokens for OpenAI's own API, max_tokens for any other server (what
    # llama.cpp, vLLM and Ollama honour), unless a profile says otherwise.
    max_tokens_param: Literal["max_completion_tokens", "max_tokens"] | None = None
    connect_timeout: float = Field(default=5.0, gt=0, le=600)
    read_timeout: float = Field(default=60.0, gt=0, le=3_600)
    max_retries: int = Field(default=2, ge=0, le=10)
    max_retry_wait: float = Field(default=60.0, ge=0, le=3_600)
    response_format: Literal[
        "json_schema",
        "json_object_schema",
        "json_object",
        "none",
        "llama_cpp_json_schema",
        "vllm_structured_outputs",
    ] = "json_schema"
    stream: bool = True  # replies as server-sent events, shown as they arrive (--no-stream)


class ProfileSettings(_Section):
    kind: ProviderKind
    base_url: HttpUrl
    model: str
    api_key_env: str = ""  # empty: the server needs no key
    max_tokens_param: Literal["max_completion_tokens", "max_tokens"] = "max_tokens"


class PriceSettings(_Section):
    input: float = Field(ge=0)  # per million input tokens
    output: float = Field(ge=0)  # per million output tokens


Approval = Literal["always", "never"]
_MCP_SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")


def _server_name(name: str) -> str:
    if not _MCP_SERVER_NAME.fullmatch(name):
        raise ValueError(
            "an MCP server's name prefixes its tools' names (NAME.tool): use 1-32 letters, "
            "digits, _ or -"
        )
    if "__" in name:  # a provider is sent NAME__tool: the first "__" must end the server's name
        raise ValueError(
            f"{name!r} holds '__', which providers read as the end of a server's name (x__y's "
            "tool z and x's tool y__z would meet as x__y__z): use one underscore"
        )
    return name


class McpToolSettings(_Section):
    approval: Approval | None = None  # None: the server's setting


class McpServerSettings(_Section):
    """One MCP tool server: a command to start (stdio), or the URL of a running one."""

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)  # "${NAME}" takes NAME from ours
    cwd: Annotated[Path, Field(strict=False)] | None = None
    url: HttpUrl | None = None  # streamable HTTP
    headers: dict[str, str] = Field(default_factory=dict)  # for a url; "${NAME}" as in env
    # None: "always", unless trust_annotations and the server marks the tool read-only.
    approval: Approval | None = None
    # A server's own readOnlyHint is a hint (the MCP spec says so): a hostile server can mark a
    # destructive tool read-only. Only a server trusted here skips approval on its say-so.
    trust_annotations: bool = False
    tools: dict[str, McpToolSettings] = Field(default_factory=dict)  # by the server's tool name
    startup_timeout: float = Field(default=10.0, gt=0, le=600)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a server to start) or url (a running one)")
        if self.url is not None and (self.args or self.env or self.cwd):
            raise ValueError("args, env and cwd are for a command, not a url")
        if self.command is not None and self.headers:
            raise ValueError("headers are for a url, not a command")
        return self

    def approval_of(self, tool: str, *, read_only: bool) -> Approval:
        """Whether a call of `tool` needs a person's approval: the tool's setting, else the
        server's, else "always", unless the server is trusted and marks the tool read-only."""
        chosen = self.tools[tool].approval if tool in self.tools else None
        trusted_read_only = read_only and self.trust_annotations
        return chosen or self.approval or ("never" if trusted_read_only else "always")


class McpSettings(_Section):
    servers: dict[Annotated[str, AfterValidator(_server_name)], McpServerSettings] = Field(
        default_factory=dict
    )


class Settings(_Section):
    agent: AgentSettings = Field(default_factory=AgentSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    policy: PolicySettings = Field(default_factory=PolicySettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    provider: ProviderSettings = Field(default_factory=ProviderSettings)
    profiles: dict[str, ProfileSettings] = Field(default_factory=dict)
    chat: ChatSettings = Field(default_factory=ChatSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    refunds: RefundSettings = Field(default_factory=RefundSettings)
    prices: dict[str, PriceSettings] = Field(default_factory=dict)  # by model name
    mcp: McpSettings = Field(default_factory=McpSettings)
    serve: ServeSettings = Field(default_factory=ServeSettings)


BUILTIN_PROFILES = {
    "openai": ProfileSettings(
        kind="openai",
        base_url="https://api.openai.com/v1",
        model="gpt-4o-mini",
        api_key_env="OPENAI_API_KEY",
        max_tokens_param="max_completion_tokens",
    ),
    "anthropic": ProfileSettings(
        kind="anthropic",
        base_url="https://api.anthropic.com",
        model="claude-haiku-4-5",
        api_key_env="ANTHROPIC_API_KEY",
    ),
    "ollama": ProfileSettings(
        kind="openai", base_url="http://localhost:11434/v1", model="llama3.2", api_key_env=""
    ),
}


def cache_dir() -> Path:
    """Where what can be rebuilt is kept (the trained intent model): `$XDG_CACHE_HOME/agent-cli`,
    else ~/.cache/agent-cli."""
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_home) / "agent-cli"


def state_dir() -> Path:
    """Where agent-cli keeps what it learns on this machine (the run log, the chat history,
    what servers refused): `$XDG_STATE_HOME/agent-cli`, else ~/.local/state/agent-cli."""
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "agent-cli"


def default_config_path() -> Path:
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "agent-cli" / "config.toml"


def load_settings(
    config_file: Path | None = None, *, overrides: dict[str, dict[str, Any]] | None = None
) -> Settings:
    return load_settings_with_sources(config_file, overrides=overrides)[0]


def load_settings_with_sources(
    config_file: Path | None = None, *, overrides: dict[str, dict[str, Any]] | None = None
) -> tuple[Settings, dict[str, str]]:
    """Merge every source and validate once; ConfigError lists every bad setting. The second
    value says where each non-default setting came from (`section.key` -> source)."""
    path, named_by = config_source(config_file)
    data = _read_toml(path, named_by=named_by)
    sources = {
        f"{section}.{key}": f"file {path}"
        for section, table in data.items()
        if isinstance(table, dict)
        for key in table
    }
    layers = [
        (f"env {name}", {section: {key: value}})
        for name, (section, key) in ENVIRONMENT.items()
        if (value := os.environ.get(name))
    ]
    layers.append(("option", overrides or {}))
    for source, layer in layers:
        for section, values in layer.items():
            table = data.setdefault(section, {})
            if not isinstance(table, dict):
                raise ConfigError(f"Invalid configuration in {path}: [{section}] must be a table")
            for key, value in values.items():
                if value is not None:
                    table[key] = value
                    sources[f"{section}.{key}"] = source
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        message = describe_settings_error(exc, sources, Settings)
        raise ConfigError(_rules_named(message, data)) from None
    _check_provider(settings, sources.get("provider.name"))
    return settings, sources


def _check_provider(settings: Settings, source: str | None) -> None:
    """A provider name that is neither offline, built in nor a profile, named where it was set
    (--provider, AGENT_PROVIDER, or the config file)."""
    name = settings.provider.name
    known = ["offline", *BUILTIN_PROFILES, *settings.profiles]
    if name is None or name in known:
        return
    where = "--provider" if source == "option" else f"provider.name, {source}"
    hint = near_miss(name, known)
    raise ConfigError(
        f"Unknown provider {name!r} ({where}){hint}; choose one of: {', '.join(known)}"
    )


def _rules_named(message: str, data: dict[str, Any]) -> str:
    """`refunds.rules.1` in a message, followed by that rule's name, when it has one."""
    rules = data.get("refunds", {}).get("rules") if isinstance(data.get("refunds"), dict) else None

    def named(found: re.Match[str]) -> str:
        index = int(found.group(1))
        rule = rules[index] if isinstance(rules, list) and index < len(rules) else None
        name = rule.get("name") if isinstance(rule, dict) else None
        return f"{found.group(0)} ({name!r})" if isinstance(name, str) else found.group(0)

    return re.sub(r"refunds\.rules\.(\d+)", named, message)


def config_source(config_file: Path | None) -> tuple[Path, str | None]:
    """The config file to read, and what named it (None: the default path, read if present)."""
    if config_file is not None:
        return config_file.expanduser(), "--config"
    if explicit := os.environ.get("AGENT_CONFIG"):
        return Path(explicit).expanduser(), "AGENT_CONFIG"
    return default_config_path(), None


MAX_CONFIG_BYTES = 2**20  # a config is a page or two; a larger one is not one


def _read_toml(path: Path, *, named_by: str | None) -> dict[str, Any]:
    try:
        return tomllib.loads(read_file_bytes(path, MAX_CONFIG_BYTES).decode("utf-8"))
    except FileRefused as exc:
        raise ConfigError(f"Config file {path} {exc}") from None
    except FileNotFoundError:
        if named_by is not None:
            raise ConfigError(
                f"Config file {path} does not exist; check {named_by} "
                "(agent config init writes one)"
            ) from None
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Config file {path} is not valid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses once per level of nesting
        raise ConfigError(f"Config file {path} is nested too deeply to read") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read config file {path}: {exc}") from None
