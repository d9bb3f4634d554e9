"""`agent doctor` and `agent config show`: what is configured, from where, and does it work."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from agent_cli.commands.chat import history_path
from agent_cli.commands.serve import INSTALL
from agent_cli.config import (
    Settings,
    config_source,
    default_config_path,
    load_settings_with_sources,
)
from agent_cli.config.serve import channels_on
from agent_cli.errors import AgentError, UsageError
from agent_cli.language import intents
from agent_cli.policy.instructions import shop_instructions
from agent_cli.policy.refund_rules import hidden_by
from agent_cli.providers.choice import ProviderChoice, choose_provider, key_problem
from agent_cli.providers.connect import channel_for
from agent_cli.record import otel_gate
from agent_cli.record.runlog import configured_log_path
from agent_cli.runtime.assemble import mcp_servers
from agent_cli.runtime.options import ProviderOptions
from agent_cli.runtime.shop import applied
from agent_cli.runtime.stores import opened_store
from agent_cli.store import conversations, outbox, shop_rules, tokens
from agent_cli.store.configured import configured_path, open_configured
from agent_cli.text import mask_secrets, print_json_lines
from agent_cli.ui import make_console, show_checks, show_settings

DOCTOR_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class Check:
    ok: bool | None  # None: skipped
    name: str
    detail: str


def doctor(options: ProviderOptions, *, json_output: bool = False) -> int:
    """Run every check, print them (`--json`: a line each, `ok` true, false or null for not
    applicable), and return the exit code (0 all passed, 1 otherwise)."""
    checks = list(_checks(options))
    if json_output:
        print_json_lines({"check": c.name, "ok": c.ok, "detail": c.detail} for c in checks)
    else:
        show_checks(make_console(), [(c.ok, c.name, c.detail) for c in checks])
    return 0 if all(c.ok is not False for c in checks) else 1


def _checks(options: ProviderOptions) -> Iterator[Check]:
    try:
        settings, _ = load_settings_with_sources(options.config, overrides=options.overrides())
        choice = choose_provider(settings, os.environ)
    except AgentError as exc:
        yield Check(False, "configuration", f"{exc}")
        return
    yield Check(True, "configuration", "valid")
    yield Check(True, "provider", _describe(choice))
    yield _store_check(settings)
    if settings.store.url is not None:
        yield _shop_rules_check(settings)
    yield from _rules_checks(settings)
    if settings.agent.instructions_file is not None:
        yield _instructions_check(settings)
    yield _intents_check(settings)
    yield _serve_check(settings)
    yield _otel_check()
    yield from _mcp_checks(settings)
    if choice.kind == "offline":
        yield Check(None, "endpoint", "offline playbook model: nothing to reach")
        return
    try:
        key = choice.api_key(os.environ)
    except AgentError as exc:
        yield Check(False, "API key", str(exc))
        return
    yield Check(True, "API key", f"{choice.api_key_env} is set" if key else "none needed")
    yield _endpoint_check(choice, settings, key)


def _rules_checks(settings: Settings) -> Iterator[Check]:
    """Which refund rules approve with nobody asked, and a deny rule an auto rule hides."""
    refunds = settings.refunds
    if not refunds.enabled:
        if refunds.rules:
            yield Check(None, "refund rules", "refunds are off ([refunds] enabled = false)")
        return
    autos = [
        f"{rule.name!r} (below {', '.join(f'{v:,} {c}' for c, v in (rule.below or {}).items())})"
        for rule in refunds.rules
        if rule.decision == "auto"
    ]
    automatic = (
        f"approve automatically: {'; '.join(autos)}" if autos else "none approves automatically"
    )
    yield Check(True, "refund rules", f"{len(refunds.rules)} rule(s); {automatic}")
    for auto, deny in hidden_by(list(refunds.rules)):
        yield Check(
            False,
            "refund rules",
            f"auto rule {auto!r} comes before deny rule {deny!r} and decides first for refunds "
            "both match: put the deny rule first",
        )


def _instructions_check(settings: Settings) -> Check:
    """The shop's instructions file, read as every run reads it."""
    try:
        text = shop_instructions(settings).text
    except AgentError as exc:
        return Check(False, "instructions", str(exc))
    where = settings.agent.instructions_file
    return Check(True, "instructions", f"{where}: {len(text):,} characters")


def _intents_check(settings: Settings) -> Check:
    """The intent model: the shop's own examples, if any, and the held-out accuracy with them."""
    path = settings.agent.intent_examples
    try:
        shop, accuracy = intents.measured(path)
    except AgentError as exc:
        return Check(False, "intent model", str(exc))
    scores = ", ".join(f"{language} {share:.1%}" for language, share in accuracy.items())
    added = f"{shop} of the shop's examples ({path}) and " if path is not None else ""
    return Check(True, "intent model", f"{added}the package's corpus; held-out accuracy {scores}")


def _mcp_checks(settings: Settings) -> Iterator[Check]:
    """Each configured MCP server started (or reached) and its tools listed, as a run would."""
    if not settings.mcp.servers:
        return
    try:
        servers = mcp_servers(settings, warn=lambda _: None)
    except UsageError as exc:
        yield Check(False, "MCP servers", str(exc))
        return
    try:
        servers.start(DOCTOR_TIMEOUT_S)
    finally:
        servers.close()
    for report in servers.reports:
        skipped = "".join(f"; {line}" for line in report.skips())
        yield Check(report.ok, f"MCP server {report.name}", f"{report.detail}{skipped}")


def _describe(choice: ProviderChoice) -> str:
    how = " (chosen automatically)" if choice.automatic else ""
    if choice.kind == "offline":
        return f"offline playbook model{how}"
    at = mask_secrets(choice.base_url)  # credentials in a URL are a secret too
    return f"{choice.name} ({choice.kind}) model {choice.model} at {at}{how}"


def _serve_check(settings: Settings) -> Check:
    """Whether `agent serve` can run here (its extra) and what it would serve with: the live
    tokens and the conversations in the store. Never a failure: only that command needs it."""
    missing = [name for name in ("starlette", "uvicorn") if importlib.util.find_spec(name) is None]
    if missing:
        return Check(None, "agent serve", f"not installed ({', '.join(missing)}): {INSTALL}")
    try:
        store = open_configured(settings.store.path, settings.store.url)
    except AgentError:
        return Check(None, "agent serve", "installed; the order store cannot be opened")
    try:
        live = sum(t.revoked_at is None for t in tokens.listed(store))
        held = len(conversations.listed(store))
        owed = outbox.counts(store)
    except AgentError as exc:
        return Check(False, "agent serve", str(exc))
    finally:
        store.close()
    hint = "" if live else " (agent tokens create NAME to let a caller in)"
    detail = f"installed; {live} live token(s){hint}, {held} conversation(s); {_channels(settings)}"
    waiting, lost = owed.get("pending", 0), owed.get("failed", 0)
    if waiting or lost:
        detail += f"; outbox: {waiting} waiting, {lost} given up (agent conversations show ID)"
    return Check(None if lost else True, "agent serve", detail)  # a warning, never a failure


def _otel_check() -> Check:
    """Whether runs are exported as OpenTelemetry traces, and whether the endpoint answers (a
    TCP connection, 2 s at most): never a failure, since runs do not depend on it."""
    name = "OpenTelemetry"
    if not otel_gate.configured():
        return Check(
            None, name, "not exported (set OTEL_EXPORTER_OTLP_ENDPOINT; docs/observability.md)"
        )
    if missing := [m for m in ("opentelemetry.sdk", "google.protobuf") if not _installed(m)]:
        return Check(
            None, name, f"an endpoint is set but {missing[0]} is missing: {otel_gate.INSTALL}"
        )
    where = otel_gate.endpoint()
    protocol = otel_gate.protocol()
    if protocol not in ("http/protobuf", "http/json"):
        return Check(
            None,
            name,
            f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol} is not supported: use http/protobuf or "
            "http/json",
        )
    parsed = urllib.parse.urlsplit(where)
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        socket.create_connection((parsed.hostname or "", port), timeout=2).close()
    except (OSError, ValueError) as exc:
        return Check(
            None, name, f"{where} ({protocol}) does not answer: {exc}; runs go on, spans are lost"
        )
    return Check(True, name, f"runs exported to {where} ({protocol})")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _channels(settings: Settings) -> str:
    on = channels_on(settings.serve, os.environ)
    return f"channels: {', '.join(on)}" if on else "no channels set up (docs/channels/)"


def _store_check(settings: Settings) -> Check:
    try:
        store = open_configured(settings.store.path, settings.store.url)
        path = store.where
    except AgentError as exc:
        return Check(False, "order store", str(exc))
    try:
        count = store.count()
        checkup = getattr(store, "checkup", None)  # PostgreSQL: version, schema, privileges
        ok, detail = checkup() if checkup is not None else (True, "")
    except AgentError as exc:
        return Check(False, "order store", str(exc))
    finally:
        store.close()
    more = f"; {detail}" if detail else ""
    return Check(ok, "order store", f"{path} ({count} orders{more})")


def _shop_rules_check(settings: Settings) -> Check:
    """On a team's store: the shop's rules version in force, and whether this machine's config
    runs under it (a local rule that could loosen it, or nothing left, stops every run)."""
    name = "shop's rules"
    try:
        with opened_store(settings) as store:
            pushed = shop_rules.latest(store)
        applied(settings, pushed)
    except AgentError as exc:
        return Check(False, name, str(exc))
    if pushed is None:
        return Check(None, name, "none pushed: each machine's config decides (agent config push)")
    return Check(
        True,
        name,
        f"version {pushed.version}, pushed by {pushed.pushed_by} at {pushed.pushed_at}; this "
        "machine's config only tightens it; runs are logged in the team's store",
    )


def _endpoint_check(choice: ProviderChoice, settings: Settings, key: str | None) -> Check:
    channel = channel_for(choice, settings.provider, key, max_retries=0)
    path = "/v1/models" if choice.kind == "anthropic" else "/models"
    try:
        payload = channel.request_json(
            "GET", path, deadline=time.monotonic() + DOCTOR_TIMEOUT_S, on_call=lambda _: None
        )
    except AgentError as exc:
        return Check(False, "endpoint", mask_secrets(str(exc)))
    except Exception as exc:
        shown = mask_secrets(channel.base_url)
        return Check(False, "endpoint", f"no answer from {shown} ({type(exc).__name__})")
    finally:
        channel.close()
    models = [m.get("id") for m in payload.get("data", []) if isinstance(m, dict)]
    listed = "listed" if choice.model in models else "not listed; check --model"
    return Check(
        True,
        "endpoint",
        f"{mask_secrets(channel.base_url)} answered: {len(models)} models, {choice.model} {listed}",
    )


def show_config(options: ProviderOptions, *, json_output: bool) -> None:
    """The settings in effect: each value as used (default paths resolved), where it came from,
    and the config file read; `--json` keeps numbers and booleans as JSON values."""
    settings, sources = load_settings_with_sources(options.config, overrides=options.overrides())
    choice = choose_provider(settings, os.environ)
    rows: list[tuple[str, object, str]] = [_config_file_row(options)]
    for section, table in settings.model_dump(mode="json").items():
        if section == "profiles":
            continue
        for key, value in table.items():
            name = f"{section}.{key}"
            rows.append((name, *_effective(name, value, sources.get(name, "default"))))
    rows += _provider_rows(choice)
    if json_output:
        print_json_lines({"key": k, "value": _masked(v), "source": s} for k, v, s in rows)
        return
    show_settings(make_console(), [(k, _show(v), s) for k, v, s in rows])


def _config_file_row(options: ProviderOptions) -> tuple[str, object, str]:
    path, named_by = config_source(options.config)
    if path.is_file():
        return ("config file", str(path), named_by or "default path")
    return ("config file", None, f"none at {path}: defaults apply")


def _effective(name: str, value: object, source: str) -> tuple[object, str]:
    """Settings whose default is "the usual place" show the place."""
    if value is None and name == "store.path":
        return str(configured_path(None)), "default location"
    if value is None and name == "chat.history_file":
        return str(history_path(None)), "default location"
    if value is None and name == "log.path":
        return str(configured_log_path(None)), "default location"
    return value, source


def _provider_rows(choice: ProviderChoice) -> list[tuple[str, str, str]]:
    how = "automatic" if choice.automatic else "chosen"
    rows = [("effective provider", choice.name, how)]
    if choice.kind == "offline":
        return rows
    rows += [
        ("effective model", choice.model, "provider.model or the profile"),
        ("effective base_url", choice.base_url, "provider.base_url or the profile"),
    ]
    if choice.api_key_env:
        value = os.environ.get(choice.api_key_env, "").strip()
        problem = key_problem(value) if value else None
        shown = "(not set)" if not value else f"(invalid: {problem})" if problem else mask(value)
        rows.append(("api key", shown, f"env {choice.api_key_env}"))
    return rows


def mask(secret: str) -> str:
    """Enough to tell two keys apart, never enough to use one."""
    return f"***{secret[-4:]}" if len(secret) >= 16 else "***"


def _masked(value: object) -> object:
    """A value as shown: credentials in a URL (`https://user:pass@host`) masked."""
    return mask_secrets(value) if isinstance(value, str) else value


def _show(value: object) -> str:
    if value is None:
        return "(none)"
    return mask_secrets(value) if isinstance(value, str) else json.dumps(value)


def init_config(path: Path | None) -> None:
    """`agent config init`: the example config (every setting, its default, what it means)."""
    target = (path or default_config_path()).expanduser()
    if target.exists():
        raise UsageError(f"{target} exists already; nothing was changed (edit it, or --path)")
    text = resources.files("agent_cli").joinpath("config.example.toml").read_text("utf-8")
    try:
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"Cannot write {target}: {exc.strerror or exc}") from None
    print(f"Wrote {target}: every setting with its default; change what you need")
