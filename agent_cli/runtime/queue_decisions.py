"""One queued item decided by a person, whoever asks (`agent approvals approve|deny`, `agent
serve`'s staff routes): approved (every rule checked again as the store is now, then committed)
or denied, in one transaction; then told in the conversation that queued it."""

from __future__ import annotations

from agent_cli.config import Settings
from agent_cli.dates import system_today
from agent_cli.runtime.assemble import policy_of
from agent_cli.runtime.followups import tell_decision
from agent_cli.store import approval_queue
from agent_cli.store.approval_items import Approval
from agent_cli.store.approval_queue import Decided, Recheck
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools.refunds import recheck_queued


def recheck_for(settings: Settings) -> Recheck:
    """The rules an approval checks again, as the settings say them today."""
    return recheck_queued(policy_of(settings), settings.refunds.max_amount, system_today)


def decide_item(
    store: OrderStore,
    item: int,
    *,
    approve: bool,
    by: str,
    reason: str | None,
    recheck: Recheck,
) -> Decided | None:
    """The item decided (None: no such item), and its conversation told when it changed."""
    if approve:
        decided = approval_queue.approve(store, item, by=by, recheck=recheck)
    else:
        decided = approval_queue.deny(store, item, by=by, reason=reason or "no reason given")
    if decided is not None and decided.changed and isinstance(decided.item, Approval):
        tell_decision(store, decided.item)
    return decided
