"""`agent config push` and `agent config shop`: a team's one set of rules (issue 52, point 5).
`push` writes this machine's `[policy]`, `[refunds]` and instructions to the team's PostgreSQL
as a new version; `shop` shows the version in force and the rules this machine decides by (its
own config may only tighten them: config/shop.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_cli.config import Settings, load_settings
from agent_cli.config.shop import pushed_body
from agent_cli.errors import UsageError
from agent_cli.policy.instructions import shop_instructions
from agent_cli.runtime.assemble import operator_name
from agent_cli.runtime.shop import applied
from agent_cli.runtime.stores import opened_store
from agent_cli.store import shop_rules
from agent_cli.text import print_json_lines

_ON_ONE_MACHINE = (
    '{what} needs a team\'s store: set [store] url = "postgresql://..." (or AGENT_DB_URL); on '
    "one machine (SQLite) the config file is the shop's rules"
)


def push(*, config: Path | None, json_output: bool) -> None:
    settings = _team(load_settings(config), "agent config push")
    body = pushed_body(settings, shop_instructions(settings).text)
    with opened_store(settings) as store:
        version, written = shop_rules.push(store, body, by=operator_name())
    if json_output:
        print_json_lines([{"version": version, "pushed": written}])
    elif written:
        print(
            f"Pushed the shop's rules as version {version} to the team's store: every run on it "
            "decides money by them from its next start (a machine's own config may only "
            "tighten them)."
        )
    else:
        print(f"Unchanged: the store holds these rules already, as version {version}.")


def show(*, config: Path | None, json_output: bool) -> None:
    local = _team(load_settings(config), "agent config shop")
    with opened_store(local) as store:
        pushed = shop_rules.latest(store)
        count = shop_rules.versions(store)
        if pushed is None:
            print(
                "No shop's rules were pushed to this store: each machine's config decides. "
                "Push them with 'agent config push'."
            )
            return
    settings, instructions = applied(local, pushed)
    rules = _rules(settings, instructions)
    if json_output:
        head = {"version": pushed.version, "versions": count}
        print_json_lines(
            [
                head
                | {"pushed_by": pushed.pushed_by, "pushed_at": pushed.pushed_at}
                | {"in_force": rules}
            ]
        )
        return
    print(
        f"The shop's rules: version {pushed.version} of {count}, pushed by {pushed.pushed_by} "
        f"at {pushed.pushed_at}. In force on this machine (its config may only tighten them):"
    )
    for key, value in _flat(rules):
        print(f"  {key} = {json.dumps(value, ensure_ascii=False)}")


def _team(settings: Settings, what: str) -> Settings:
    if settings.store.url is None:
        raise UsageError(_ON_ONE_MACHINE.format(what=what))
    return settings


def _rules(settings: Settings, instructions: str) -> dict[str, Any]:
    return {
        "policy": settings.policy.model_dump(mode="json"),
        "refunds": settings.refunds.model_dump(mode="json", exclude={"rules"})
        | {"rules": [rule.name + f" ({rule.decision})" for rule in settings.refunds.rules]},
        "instructions": instructions,
    }


def _flat(rules: dict[str, Any]) -> list[tuple[str, Any]]:
    lines: list[tuple[str, Any]] = []
    for section, values in rules.items():
        if isinstance(values, dict):
            lines += [(f"{section}.{key}", value) for key, value in values.items()]
        else:
            lines.append((section, values))
    return lines
