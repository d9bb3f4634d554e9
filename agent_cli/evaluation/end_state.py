"""Scoring a case on the store it leaves behind, as τ²-bench does: the case's reference writes
are made through the same tools on a copy of the starting store, and the two stores are then
compared record by record (money as the store keeps it: integer minor units, to the cent).
Any difference is a failure naming the record: a row the run changed that the reference did
not, one it did not change that the reference did, or a field that differs.

The history of changes (`order_changes`), tickets and the approval queue are records of what
happened, not the shop's state: a case judges them with `writes` and `handover`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from agent_cli.config import Settings
from agent_cli.core.budget import RefundCounter
from agent_cli.core.seams import ApprovalNeeded, Observation
from agent_cli.core.tool_outcomes import Denied, Failed, Outcome, acted
from agent_cli.domain.write_tools import WRITES
from agent_cli.evaluation.cases import ReferenceWrite
from agent_cli.runtime.assemble import build_tools
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools.identity import CustomerSession

# Each table compared: its key columns, then the columns that must match. Write times
# (a payment's paid_at, a refund's created_at) are left out: they are when, not what.
TABLES: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "orders": (
        ("code",),
        (
            "status",
            "total",
            "currency",
            "delivered_at",
            "customer_id",
            "address1",
            "address2",
            "city",
            "state",
            "country",
            "zip",
            "cancel_reason",
            "exchange_request",
            "return_request",
        ),
    ),
    "order_items": (
        ("order_code", "position"),
        ("item_id", "product_id", "price", "options"),
    ),
    "payments": (
        ("order_code", "position"),
        ("kind", "amount", "payment_method_id"),
    ),
    "customers": (
        ("id",),
        ("address1", "address2", "city", "state", "country", "zip"),
    ),
    "payment_methods": (("customer_id", "id"), ("source", "balance", "currency")),
    "variants": (("product_id", "id"), ("available", "price")),
    "refunds": (("order_code", "n"), ("amount", "reason")),
}
_ACTING = WRITES | {"transfer_to_human_agents"}  # the writes, and a hand-over
MAX_SHOWN = 8  # differing records named in one failure; the rest are counted

Row = dict[str, object]
Snapshot = dict[str, dict[tuple[object, ...], Row]]


def snapshot(store: OrderStore) -> Snapshot:
    """The shop's state: every compared table's rows by key."""
    return {table: _rows(store, table, *columns) for table, columns in TABLES.items()}


def _rows(
    store: OrderStore, table: str, key: tuple[str, ...], values: tuple[str, ...]
) -> dict[tuple[object, ...], Row]:
    if table == "refunds":  # ids are the store's own: the n-th refund of an order instead
        found = store.query(
            "SELECT order_code, amount, reason FROM refunds ORDER BY order_code, id"
        )
        counted: dict[str, int] = {}
        rows: dict[tuple[object, ...], Row] = {}
        for code, amount, reason in found:
            counted[code] = counted.get(code, 0) + 1
            rows[(code, counted[code])] = {"amount": amount, "reason": reason}
        return rows
    columns = (*key, *values)
    found = store.query(f"SELECT {', '.join(columns)} FROM {table}")
    return {
        tuple(row[: len(key)]): dict(zip(values, row[len(key) :], strict=True)) for row in found
    }


def differences(actual: Snapshot, expected: Snapshot) -> list[str]:
    """Each record that differs, in words (`orders B200: status is 'PENDING', expected
    'CANCELLED'`); empty when the stores hold the same."""
    found: list[str] = []
    for table in TABLES:
        have, want = actual.get(table, {}), expected.get(table, {})
        for key in sorted(have.keys() | want.keys(), key=repr):
            name = f"{table} {'/'.join(str(part) for part in key)}"
            if key not in want:
                found.append(f"{name}: a record the reference does not make ({_shown(have[key])})")
            elif key not in have:
                found.append(f"{name}: missing; the reference makes {_shown(want[key])}")
            elif fields := [f for f in want[key] if have[key].get(f) != want[key][f]]:
                found += [
                    f"{name}: {f} is {have[key].get(f)!r}, expected {want[key][f]!r}"
                    for f in fields
                ]
    return found


def summary(found: Sequence[str]) -> str:
    """The differences for one failure's message: the first few, and how many more."""
    shown = "; ".join(found[:MAX_SHOWN])
    more = len(found) - MAX_SHOWN
    return shown + (f"; and {more} more" if more > 0 else "")


def _shown(row: Row) -> str:
    return json.dumps(row, ensure_ascii=False, default=str)


@dataclass(frozen=True, slots=True)
class Replayed:
    state: Snapshot
    problems: tuple[str, ...]  # reference steps that did not act as they say: the case's mistake
    # Reference writes the shop's rules refuse (an exchange of a pending order, a gift card
    # short of the difference), as τ²-bench's own tools do: the case is flawed, not passed,
    # and not the agent's failure.
    flaws: tuple[str, ...] = ()


def replay(
    settings: Settings, store: OrderStore, writes: Sequence[ReferenceWrite], today: date
) -> Replayed:
    """Make the reference writes on `store` (a copy of the starting store) through the same
    tools, as staff with the operator's approval, and read the state they leave."""
    staff = CustomerSession(staff=True, operator="reference")
    tools = build_tools(
        settings,
        lambda: store,
        RefundCounter(),
        dry_run=False,
        identity=staff,
        desk_clock=lambda: today,  # the day the case's store is dated for
    )
    problems, flaws = [], []
    for number, write in enumerate(writes, start=1):
        outcome = _made(tools.invoke(write.tool, write.args))
        problem = f"reference step {number} ({write.tool}): {outcome.text}"
        if outcome.rejected:  # no such tool, arguments it refuses: the case file's mistake
            problems.append(problem)
        elif write.tool not in _ACTING or _as_tau2_does(outcome.outcome):
            continue  # a read that fails, a write of what is there: the conversation goes on
        elif outcome.is_error:
            flaws.append(f"reference step {number}: {write.tool} is refused: {outcome.text}")
        elif not acted(outcome.outcome):
            problems.append(problem)
    return Replayed(snapshot(store), tuple(problems), tuple(flaws))


def _as_tau2_does(outcome: Outcome) -> bool:
    """A write τ²-bench's own tools make and that leaves the store as it was (the address
    set to what it is): part of the conversation, as a failing read is."""
    return isinstance(outcome, Failed) and outcome.unchanged


def _made(result: Observation | ApprovalNeeded) -> Observation:
    if not isinstance(result, ApprovalNeeded):
        return result
    if result.decided is not None and not result.decided.approved:
        return Observation.of(Denied(f"by the shop's rules: {result.decided.reason}"))
    return result.commit()
