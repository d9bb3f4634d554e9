"""The shop's rules on a team's store, and how one machine's config may only tighten them
(issue 52, point 5). A team pushes its `[policy]`, `[refunds]` and `[agent] instructions` to its
PostgreSQL (`agent config push`); every process on that store then decides money by them. What
a machine's own file sets of those keys counts only where it is stricter:

- windows, caps, counts and the queue's hours: the lower;
- refundable statuses: those both allow; refunds on only where both have them on;
- a cap by currency: the currencies both name, each at the lower amount;
- rules: the shop's, after this machine's `deny` rules (a deny is never loosened by coming
  first); any other decision in a local rule could loosen the shop's, and is refused (a rule
  the shop's rules hold as it is, as in the file the team pushed from, is the shop's);
- instructions: the shop's, then this machine's (added, never in their place).

A key the file leaves out takes the shop's value. Pure: the store is store/shop_rules.py's,
the glue runtime/shop.py's."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from agent_cli.config import PolicySettings, RefundSettings, Settings
from agent_cli.errors import ConfigError

SECTIONS = ("policy", "refunds")


def pushed_body(settings: Settings, instructions: str) -> dict[str, Any]:
    """What `agent config push` stores: the shop's sections as the file sets them (every key,
    defaults included, so a later default changed in the code changes nothing pushed)."""
    return {
        "policy": settings.policy.model_dump(mode="json"),
        "refunds": settings.refunds.model_dump(mode="json"),
        "instructions": instructions,
    }


def read_body(body: dict[str, Any], version: int) -> tuple[PolicySettings, RefundSettings, str]:
    """A pushed version's sections, checked as a file's are; ConfigError when it cannot be
    (a damaged row, or one written by a newer agent-cli)."""
    try:
        policy = PolicySettings.model_validate(_section(body.get("policy")))
        refunds = RefundSettings.model_validate(_section(body.get("refunds")))
    except (ValidationError, TypeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(
            f"the shop's rules in the store (version {version}) cannot be read ({first}); "
            "push them again with 'agent config push'"
        ) from None
    instructions = body.get("instructions") or ""
    if not isinstance(instructions, str):
        raise ConfigError(
            f"the shop's rules in the store (version {version}) hold instructions that are not "
            "text; push them again with 'agent config push'"
        )
    return policy, refunds, instructions


def _section(section: object) -> dict[str, Any]:
    if not isinstance(section, dict):
        raise TypeError("a section is missing")
    return section


def tightened(
    local: Settings, shop: tuple[PolicySettings, RefundSettings, str], version: int
) -> Settings:
    """`local` with the shop's policy and refunds, each key the file set counting only where
    it is stricter; ConfigError when what is left cannot work or a local rule could loosen."""
    policy, refunds, _ = shop
    policy = _policy(policy, local.policy)
    refunds = _refunds(refunds, local.refunds, version)
    try:  # what is left must still be settings (a status or a currency both allow...)
        policy = PolicySettings.model_validate(policy.model_dump())
        refunds = RefundSettings.model_validate(refunds.model_dump())
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise ConfigError(
            f"this machine's config and the shop's rules (version {version}) together leave "
            f"{where} with nothing that works ({error['msg']}); loosen the local setting, or "
            "push new rules"
        ) from None
    return local.model_copy(update={"policy": policy, "refunds": refunds})


def combined_instructions(shop: str, local: str) -> str:
    """The shop's instructions, then this machine's (both in force)."""
    return "\n\n".join(text for text in (shop.strip(), local.strip()) if text)


def _set(section: BaseModel) -> set[str]:
    return set(section.model_fields_set)


def _policy(shop: PolicySettings, local: PolicySettings) -> PolicySettings:
    keys = _set(local)
    refund_days = shop.refund_window_days
    if "refund_window_days" in keys:
        refund_days = min(refund_days, local.refund_window_days)
    returns = _return_days(shop)
    if keys & {"return_window_days", "refund_window_days"}:
        returns = min(returns, _return_days(local))
    if shop.return_window_days is None and returns == refund_days:
        returns_set: int | None = None  # as the shop has it: the refund window's
    else:
        returns_set = returns
    statuses = shop.refundable_statuses
    if "refundable_statuses" in keys:
        statuses = tuple(s for s in statuses if s in local.refundable_statuses)
    return PolicySettings.model_construct(
        refund_window_days=refund_days,
        return_window_days=returns_set,
        refundable_statuses=statuses,
    )


def _return_days(policy: PolicySettings) -> int:
    days = policy.return_window_days
    return policy.refund_window_days if days is None else days


def _refunds(shop: RefundSettings, local: RefundSettings, version: int) -> RefundSettings:
    keys = _set(local)
    values: dict[str, Any] = shop.model_dump()
    values["rules"] = list(shop.rules)
    if "enabled" in keys:
        values["enabled"] = shop.enabled and local.enabled
    for key in ("max_per_run", "max_per_session", "queue_hours"):
        if key in keys:
            values[key] = min(getattr(shop, key), getattr(local, key))
    if "max_amount" in keys:
        values["max_amount"] = _lower_cap(shop.max_amount, local.max_amount)
    if "rules" in keys:
        values["rules"] = [*_local_denials(local, shop, version), *shop.rules]
    return RefundSettings.model_construct(**values)


Cap = int | dict[str, float]


def _lower_cap(shop: Cap, local: Cap) -> Cap:
    if isinstance(shop, int) and isinstance(local, int):
        return min(shop, local)
    if isinstance(shop, dict) and isinstance(local, dict):
        return {c: min(v, local[c]) for c, v in shop.items() if c in local}
    table, flat = (shop, local) if isinstance(shop, dict) else (local, shop)
    assert isinstance(table, dict) and isinstance(flat, int)
    return {c: min(v, float(flat)) for c, v in table.items()}


def _local_denials(local: RefundSettings, shop: RefundSettings, version: int) -> list[Any]:
    """This machine's rules that are not the shop's own (the file a team pushed from holds
    them too), each of which must deny."""
    mine = [rule for rule in local.rules if rule not in shop.rules]
    loosening = [rule.name for rule in mine if rule.decision != "deny"]
    if loosening:
        raise ConfigError(
            f"[[refunds.rules]] {loosening[0]!r} is in this machine's config, and the team's "
            f"store holds the shop's rules (version {version}): a local rule may only deny. "
            "Remove it, or add it to the shop's rules and run 'agent config push'"
        )
    return mine
