"""`agent approvals list | show | approve | deny`: the queue from any terminal with access to the
order store. Deciding takes the store's write lock per item, so two people (or processes)
approving the same item at once make one refund: the second finds it closed."""

from __future__ import annotations

import sqlite3
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from agent_cli.config import Settings, load_settings
from agent_cli.core import interrupts
from agent_cli.core.events import QueueDecided
from agent_cli.dates import system_today
from agent_cli.domain import ledger
from agent_cli.domain.currencies import to_minor
from agent_cli.domain.orders import Order
from agent_cli.errors import AgentError, Interrupted, StoreError, Terminated, UsageError
from agent_cli.policy.refund_rules import rule_for, unmet
from agent_cli.record.log_place import log_place
from agent_cli.record.tracing import dumps_event
from agent_cli.runtime.assemble import operator_name, policy_of
from agent_cli.runtime.drive import warn
from agent_cli.runtime.queue_decisions import decide_item, recheck_for
from agent_cli.runtime.shop import in_force
from agent_cli.runtime.stores import opened_store
from agent_cli.store import approval_queue
from agent_cli.store.approval_items import ITEM_STATUSES, Approval, Unreadable, item_json
from agent_cli.store.approval_queue import Decided
from agent_cli.store.formats.order_files import normalise_code
from agent_cli.store.sqlite import OrderStore
from agent_cli.text import clean_text, print_json_lines
from agent_cli.tools import Denied
from agent_cli.tools.refunds import check_rules, refund_facts
from agent_cli.ui.approvals_view import show_approval, show_approvals
from agent_cli.ui.console import make_console, notice
from agent_cli.validation_text import near_miss

STATES = (*ITEM_STATUSES, "unreadable")
MAX_REASON_CHARS = 1_000  # a deny reason, kept on the item


class ApprovalNotFound(AgentError):
    exit_code = 1


class ApprovalUnreadable(AgentError):
    """The item's row in the store cannot be read."""

    exit_code = 1


class NotApproved(AgentError):
    """At least one item was not approved (expired, refused at commit, closed already)."""

    exit_code = 1


def list_approvals(
    *, state: str | None, order: str | None, json_output: bool, config: Path | None
) -> None:
    if state is not None and state not in STATES:
        hint = near_miss(state, STATES)
        raise UsageError(f"--state {state!r} is not a state{hint}; use {', '.join(STATES)}")
    now = approval_queue.now_utc()
    with opened_store(load_settings(config)) as store:
        items = approval_queue.listed(store, order=order.upper() if order else None)
    items = [item for item in items if state is None or item.state(now) == state]
    if json_output:
        print_json_lines(item_json(item, now) for item in items)
        return
    show_approvals(make_console(), items, now)


def show_approval_command(item: int, *, json_output: bool, config: Path | None) -> None:
    with opened_store(load_settings(config)) as store:
        found = approval_queue.get(store, item)
    if found is None:
        raise ApprovalNotFound(f"No approval #{item}; see 'agent approvals list'")
    if isinstance(found, Unreadable):
        raise ApprovalUnreadable(_unreadable(found))
    now = approval_queue.now_utc()
    if json_output:
        print_json_lines([item_json(found, now)])
        return
    show_approval(make_console(), found, now)


def decide(
    items: list[int], *, approve: bool, reason: str | None, by: str | None, config: Path | None
) -> None:
    """Approve (commit) or deny each item in turn; one line per item; exit 1 if any was not
    done as asked."""
    if reason is not None and len(reason) > MAX_REASON_CHARS:
        raise UsageError(
            f"--reason is {len(reason):,} characters; at most {MAX_REASON_CHARS:,} are kept"
        )
    settings = load_settings(config)
    who = by or operator_name()
    missed = 0
    made: list[Approval] = []  # decided now: each added to its run's log
    try:
        with opened_store(settings) as store:
            recheck = recheck_for(in_force(settings, lambda: store)[0])  # the shop's rules
            for item in items:
                with interrupts.deferred():  # each item decided and reported whole
                    decided = decide_item(
                        store, item, approve=approve, by=who, reason=reason, recheck=recheck
                    )
                    missed += not _report(item, decided, approve)
                    if (
                        decided is not None
                        and decided.changed
                        and isinstance(decided.item, Approval)
                    ):
                        made.append(decided.item)
    except KeyboardInterrupt as stop:  # a Ctrl-C or SIGTERM between two items
        _log_decisions(settings, made)
        raise Interrupted(terminated=isinstance(stop, Terminated)) from None
    _log_decisions(settings, made)
    if missed:
        verb = "approved" if approve else "denied"
        raise NotApproved(f"{missed} of {len(items)} item(s) were not {verb}; see the lines above")


def _report(item: int, decided: Decided | None, approve: bool) -> bool:
    """Print what happened to one item; True when it was done as asked."""
    if decided is None:
        print(f"#{item}: no such item", file=sys.stderr)
        return False
    found = decided.item
    if isinstance(found, Unreadable):
        print(f"{_unreadable(found)}; nothing done", file=sys.stderr)
        return False
    outcome = clean_text(found.outcome or "")  # an operator's reason, printed safely
    if not decided.changed:
        print(f"#{item}: already {found.status} ({outcome}); nothing done", file=sys.stderr)
        return False
    print(f"#{item}: {found.status}: {outcome}")
    return found.status == ("approved" if approve else "denied")


def _log_decisions(settings: Settings, decided: list[Approval]) -> None:
    """Each decision, added to the log of the run that queued the item (`agent logs show
    RUN` shows it). The queue lives in the shared store, the run log on each machine: a run
    queued elsewhere is not in this one, and a note says so. The log is a record, never a part
    of the decision: a failure is a warning, and the exit code is the decision's."""
    if not decided or not settings.log.enabled:
        return
    place = log_place(settings)
    try:
        log = place.open(create=False)
    except (UsageError, OSError, sqlite3.Error, StoreError):
        notice(
            f"agent: the decisions are kept in the order store; no run log here ({place}) "
            "to add them to"
        )
        return
    try:
        missing = sum(not log.append(item.run_id, _decision_line(item)) for item in decided)
    except (sqlite3.Error, StoreError) as exc:
        warn(f"the run log could not record the decisions ({exc}); they are in the order store")
        return
    finally:
        log.close()
    if missing:
        notice(
            f"agent: {missing} decision(s) not added to the run log: their runs were logged on "
            "another machine (the decisions are kept in the order store)"
        )


def _decision_line(item: Approval) -> str:
    event = QueueDecided(
        run_id=item.run_id,
        ts=time.time(),
        item=item.id,
        status=item.status,
        decided_by=item.decided_by or "",
        outcome=item.outcome or "",
        refund_id=item.refund_id,
    )
    return dumps_event(event)


def _unreadable(item: Unreadable) -> str:
    return f"#{item.id}: cannot be read ({item.problem}): fix or remove its row in the order store"


def explain(code: str, amount: str, reason: str, *, json_output: bool, config: Path | None) -> None:
    """`agent approvals explain CODE AMOUNT`: what would happen to this refund: denied by a
    check in code (status, window, cap, what is left), else which refund rule decides and why
    each rule before it does not apply; nothing is run or written."""
    amount_given = _amount_given(amount)
    local = load_settings(config)
    with opened_store(local) as store:
        settings, _ = in_force(local, lambda: store)  # the shop's rules on a team's store
        rules = tuple(r for r in settings.refunds.rules if "issue_refund" in r.decides)
        order = store.get(normalise_code(code))
        if order is None:
            raise ApprovalNotFound(f"No order with code {code.upper()}; see 'agent orders list'")
        try:
            amount_minor = to_minor(amount_given, order.currency)
        except ValueError as exc:
            raise UsageError(f"AMOUNT {exc}") from None
        in_code = _denied_in_code(store, order, amount_minor, settings)
        facts = refund_facts(
            store, order, amount=amount_minor, reason=reason, today=system_today(), rules=rules
        )
    ruling = rule_for(list(rules), facts)
    checked = [
        {"rule": rule.name, "decision": rule.decision, "unmet": unmet(rule, facts)}
        for rule in rules
    ]
    if json_output:
        decision = "deny" if in_code else ruling.decision
        payload = {
            "decision": decision,
            "rule": None if in_code else ruling.rule,
            "denied_in_code": in_code,
            "rules": checked,
        }
        print_json_lines([payload])
        return
    _print_explained(checked, ruling.rule, ruling.decision, ruling.why, in_code)


def _amount_given(amount: str) -> Decimal:
    """AMOUNT as typed (`5000`, `12.50`), above 0; UsageError otherwise."""
    try:
        amount_given = Decimal(amount.strip().replace(",", ""))
    except ArithmeticError:
        raise UsageError(f"AMOUNT {amount!r} is not an amount: write it as 5000 or 12.50") from None
    if not amount_given.is_finite() or amount_given <= 0:
        raise UsageError(f"AMOUNT {amount} is no refund: give an amount above 0")
    return amount_given


def _denied_in_code(store: OrderStore, order: Order, amount: int, settings: Settings) -> str | None:
    """Why the checks every refund passes first would refuse this one, or None."""
    try:
        check_rules(
            order,
            amount,
            policy=policy_of(settings),
            max_amount=settings.refunds.max_amount,
            today=system_today(),
            refunded=ledger.spent(store, order.code),
        )
    except Denied as exc:
        return str(exc)
    return None


def _print_explained(
    checked: list[dict[str, Any]], rule: str | None, decision: str, why: str, in_code: str | None
) -> None:
    if in_code is not None:
        print(f"decision: denied in code: {in_code} (no rule is asked)")
        return
    for line in checked:
        if rule == line["rule"]:
            print(f"{line['rule']}: applies -> {line['decision']}")
            break
        print(f"{line['rule']}: does not apply ({'; '.join(line['unmet'])})")
    print(f"decision: {decision} ({why})")
    print("(the checks in code passed first: status, window, caps, what is left to refund)")
