"""τ²-bench's own gold writes, ours against its code: each task's writes made through our tools
(an operator's call, consented and approved) on the records τ²'s `tools.py` ran on, the store
exported with `tau2_json` and compared record by record with the state τ²'s code left
(tests/fixtures/tau2-gold.json, made by make_tau2_gold.py from τ²-bench's commit named in it).

Except where τ²'s code is wrong or looser than its policy (docs/desk-writes.md): those cases
are the tests after the gold ones, each showing what τ² does and what we do instead."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from agent_cli.core.seams import ApprovalNeeded, Observation
from agent_cli.store import bulk_writes, record_reads
from agent_cli.store.formats.tau2 import parse_tau2, tau2_json
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools import ToolRegistry
from agent_cli.tools.desk_writes import WriteDesk, write_tools
from agent_cli.tools.identity import CustomerSession

GOLD = json.loads((Path(__file__).parents[1] / "fixtures" / "tau2-gold.json").read_text())
TASKS = {task["id"]: task for task in GOLD["tasks"]}


def _loaded(store: OrderStore, db: dict[str, Any] | None = None) -> OrderStore:
    bulk_writes.save_desk(store, parse_tau2(copy.deepcopy(db or GOLD["db"]), "gold"), replace=True)
    return store


def operator_tools(store: OrderStore) -> ToolRegistry:
    """The write tools as `agent tools call --yes` has them: staff, approving."""
    desk = WriteDesk(
        open_store=lambda: store, session=CustomerSession(staff=True), dry_run=False, by="test"
    )
    return ToolRegistry(write_tools(desk))


def apply(store: OrderStore, name: str, args: dict[str, Any]) -> Observation:
    """One call, approved: the observation the model would read."""
    tools = operator_tools(store)
    result = tools.invoke(name, args, time_left=30)
    return result.commit() if isinstance(result, ApprovalNeeded) else result


def exported(store: OrderStore) -> dict[str, Any]:
    return _cents(tau2_json(record_reads.load_desk(store)))


def _cents(value: Any) -> Any:
    """Money to the cent: τ²'s floats carry binary noise (13.299999999999997)."""
    if isinstance(value, float):
        return round(value, 2)
    if isinstance(value, dict):
        return {k: _cents(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cents(v) for v in value]
    return value


def expected(task: dict[str, Any]) -> dict[str, Any]:
    db = GOLD["db"]
    return _cents(
        {kind: {key: task["changed"][kind].get(key, record) for key, record in db[kind].items()}
         for kind in db}
    )  # fmt: skip


DIFFERENT = {"100"}  # several items in one call: τ²-bench issue #318, tested below
SAME_AS_TAU2 = [t for t in TASKS if "error" not in TASKS[t] and t not in DIFFERENT]


@pytest.mark.parametrize("task_id", SAME_AS_TAU2)
def test_gold_writes_end_in_the_state_tau2_leaves(task_id: str, tmp_path: Path) -> None:
    store = _loaded(OrderStore.open(tmp_path / "gold.db"))
    for action in TASKS[task_id]["actions"]:
        seen = apply(store, action["name"], action["arguments"])
        assert seen.text.startswith("CHANGED: "), seen.text
    assert exported(store) == expected(TASKS[task_id])


def test_gold_writes_on_postgresql_too(either_store: OrderStore) -> None:
    store = _loaded(either_store)
    for task_id in ("16", "40", "44", "111"):  # refunds, a payment change, gift cards, items
        store = _loaded(store)
        for action in TASKS[task_id]["actions"]:
            assert apply(store, action["name"], action["arguments"]).text.startswith("CHANGED:")
        assert exported(store) == expected(TASKS[task_id])


def test_a_write_tau2_refuses_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    task = TASKS["105"]  # a gift card that does not cover the difference
    store = _loaded(OrderStore.open(tmp_path / "gold.db"))
    before = exported(store)
    (action,) = task["actions"]
    seen = apply(store, action["name"], action["arguments"])
    assert seen.is_error and "gift card gift_card_7245904 holds" in seen.text
    assert "choose another payment method" in seen.text and "nothing was changed" in seen.text
    assert exported(store) == before == expected(task)


def test_several_items_changed_at_once_each_get_their_own_price(tmp_path: Path) -> None:
    """τ²-bench issue #318: τ² gives every changed item the last new variant's price and
    options; each gets its own here."""
    task = TASKS["100"]
    store = _loaded(OrderStore.open(tmp_path / "gold.db"))
    items = task["actions"][0]
    assert apply(store, items["name"], items["arguments"]).text.startswith("CHANGED:")
    order = exported(store)["orders"][items["arguments"]["order_id"]]
    products = GOLD["db"]["products"]
    variants = {v: p["variants"][v] for p in products.values() for v in p["variants"]}
    changed = {i["item_id"]: i for i in order["items"]}
    for new in items["arguments"]["new_item_ids"]:
        assert changed[new]["price"] == variants[new]["price"]
        assert changed[new]["options"] == variants[new]["options"]
    theirs = {
        i["item_id"]: i["price"] for i in task["changed"]["orders"][order["order_id"]]["items"]
    }
    first, last = items["arguments"]["new_item_ids"]
    assert theirs[first] == variants[last]["price"] != variants[first]["price"]  # τ²'s bug
    # The payment entry is the true difference, which τ² also computes: only the items differ.
    assert order["payment_history"] == _cents(
        task["changed"]["orders"][order["order_id"]]["payment_history"]
    )


def test_an_order_whose_items_changed_cannot_be_changed_or_cancelled(tmp_path: Path) -> None:
    store = _loaded(OrderStore.open(tmp_path / "gold.db"))
    items = TASKS["44"]["actions"][0]
    order_id = items["arguments"]["order_id"]
    assert apply(store, items["name"], items["arguments"]).text.startswith("CHANGED:")
    after = exported(store)
    address = {"address1": "1 Elm St", "address2": "", "city": "Springfield", "state": "IL",
               "country": "USA", "zip": "62701"}  # fmt: skip
    method = items["arguments"]["payment_method_id"]  # the status is checked first
    for name, args in (
        ("modify_pending_order_address", {"order_id": order_id, **address}),
        ("modify_pending_order_payment", {"order_id": order_id, "payment_method_id": method}),
        ("cancel_pending_order", {"order_id": order_id, "reason": "no longer needed"}),
    ):
        seen = apply(store, name, args)
        assert seen.is_error and "items were changed already" in seen.text, seen.text
    assert exported(store) == after
