"""`agent orders`: list, show, init and import the order store."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from agent_cli.config import load_settings
from agent_cli.domain.currencies import major_number
from agent_cli.domain.orders import STATUSES, Order
from agent_cli.domain.records import DeskData
from agent_cli.errors import OrderNotFound, UsageError
from agent_cli.runtime.drive import warn
from agent_cli.runtime.options import parse_today
from agent_cli.runtime.stores import opened_store
from agent_cli.store.configured import configured_path
from agent_cli.store.sqlite import OrderStore
from agent_cli.text import print_json_lines
from agent_cli.ui import (
    make_console,
    show_order,
    show_orders,
)
from agent_cli.validation_text import near_miss

DEFAULT_LIST_LIMIT = 50  # on a terminal; a pipe gets every order


def list_orders(
    *,
    json_output: bool,
    config: Path | None,
    limit: int | None = None,
    status: str | None = None,
) -> None:
    """`agent orders list`: on a terminal the first 50 (--limit), else all, or one --status."""
    console = make_console()
    if limit is None and console.is_terminal and not json_output:
        limit = DEFAULT_LIST_LIMIT
    if limit is not None and limit < 1:
        raise UsageError("--limit must be 1 or more")
    if status is not None:
        status = status.upper()
        if status not in STATUSES:
            raise UsageError(
                f"--status {status!r} is not a status{near_miss(status, STATUSES)}; use "
                f"{', '.join(STATUSES)}"
            )
    with opened_store(load_settings(config)) as store:
        orders = store.orders(status=status, limit=limit)
        total = store.count(status=status)
    if json_output:
        print_json_lines(order_json(o) for o in orders)
        return
    show_orders(console, orders)
    if len(orders) < total:
        warn(f"{len(orders)} of {total:,} orders shown; --limit N shows more")


def show_order_command(code: str, *, json_output: bool, config: Path | None) -> None:
    from agent_cli.store.formats.order_files import normalise_code

    code = normalise_code(code)
    from agent_cli.store import approval_queue, record_reads
    from agent_cli.store.approval_items import item_json
    from agent_cli.ui.approvals_view import show_approvals
    from agent_cli.ui.order_history import show_history

    with opened_store(load_settings(config)) as store:
        order = store.get(code)
        refunds = store.refunds(code)
        waiting = approval_queue.listed(store, order=code)
        desk = record_reads.desk_order(store, code) if order is not None else None
        changes = record_reads.changes(store, order=code)
    if order is None:
        raise OrderNotFound(f"No order with code {code}; see 'agent orders list'")
    now = approval_queue.now_utc()
    if json_output:
        payload = {
            **order_json(order),
            "refunds": [dataclasses.asdict(r) for r in refunds],
            "approvals": [item_json(item, now) for item in waiting],
            "changes": [dataclasses.asdict(c) for c in changes],
        }
        print_json_lines([payload])
        return
    console = make_console()
    show_order(console, order, refunds)
    if desk is not None:
        show_history(console, desk, changes)
    if waiting:
        console.print("approval queue (agent approvals show ID):")
        show_approvals(console, waiting, now)


def init_orders(*, sample: bool, config: Path | None, today: str | None = None) -> None:
    """`agent orders init`: the configured store made ready (a new SQLite file is 0600; a
    PostgreSQL database gets the schema), empty or with the sample shop dated as of `today`
    (default: the system date). A store that holds orders is never changed."""
    from agent_cli.store.samples import sample_shop

    settings = load_settings(config)
    shop = sample_shop(parse_today(today)) if sample else None
    if settings.store.url is not None:
        _init_server(settings.store.url, shop)
        return
    path = configured_path(settings.store.path)
    if path.exists() and shop is not None:
        store = OrderStore.open(path, create=False)
        try:
            _add_samples_if_empty(store, shop, str(path))
        finally:
            store.close()
        return
    if path.exists():
        raise UsageError(
            f"An order database exists already at {path}; nothing was changed. Add orders with "
            "'agent orders import FILE', or remove the file and run 'agent orders init' again"
        )
    store = OrderStore.open(path, seed=shop if shop is not None else ())
    try:
        count = store.count()
    finally:
        store.close()
    print(f"Created the order database {path} ({count} orders)")


def _init_server(url: str, shop: DeskData | None) -> None:
    """The PostgreSQL store: its schema made (by connecting), the samples added when asked
    and it holds no orders."""
    from agent_cli.store.configured import open_configured

    store = open_configured(None, url)
    try:
        if shop is not None:
            _add_samples_if_empty(store, shop, store.where)
            return
        print(f"The order database {store.where} is ready ({store.count()} orders)")
    finally:
        store.close()


def _add_samples_if_empty(store: OrderStore, shop: DeskData, where: str) -> None:
    """`orders init --sample` on a store with no orders fills it: nothing is lost. One that
    holds orders is left alone."""
    from agent_cli.store.bulk_writes import save_desk

    if store.count():
        raise UsageError(
            f"An order database with orders exists already at {where}; nothing was changed. "
            "Add orders with 'agent orders import FILE', or empty it and run "
            "'agent orders init --sample' again"
        )
    save_desk(store, shop)
    print(f"Added {len(shop.orders)} sample orders to the empty order database {where}")


def import_orders(file: Path, *, config: Path | None) -> None:
    from agent_cli.store.formats.order_files import read_orders

    orders = read_orders(file)
    with opened_store(load_settings(config)) as store:
        result = store.import_orders(orders)
    print(
        f"Imported {len(orders)} orders from {file} ({result.added} new, {result.updated} replaced)"
    )


def import_sqlite(source: Path, *, replace: bool, config: Path | None) -> None:
    """`agent orders import --from-sqlite FILE [--replace]`: a SQLite store moved whole into
    the configured (empty, or emptied) store, in one transaction, counted and summed after."""
    from agent_cli.store.copy_store import move_store

    settings = load_settings(config)
    if (
        settings.store.url is None
        and source.resolve() == configured_path(settings.store.path).resolve()
    ):
        raise UsageError(f"{source} is the configured store itself; nothing to move")
    origin = OrderStore.open(source, create=False)
    try:
        with opened_store(settings) as target:
            moved = move_store(origin, target, source=str(source), replace=replace)
            where = target.where
    finally:
        origin.close()
    if moved.replaced:
        print(f"Emptied {where} first (--replace): {_rows(moved.replaced)}")
    print(f"Moved {source} into {where}: {_rows(moved.counts) or 'nothing (it is empty)'}")
    sums = ", ".join(f"{name} {total:,}" for name, total in moved.sums.items())
    print(f"Counted and summed on both sides, all equal (money in minor units: {sums})")


def _rows(counts: dict[str, int]) -> str:
    return ", ".join(f"{name.replace('_', ' ')} {n:,}" for name, n in counts.items() if n)


def order_json(order: Order) -> dict[str, object]:
    return {
        "code": order.code,
        "status": order.status,
        "total": major_number(order.total, order.currency),
        "currency": order.currency,
        "delivered_at": order.delivered_at.isoformat() if order.delivered_at else None,
        "customer": order.customer,
        "note": order.note,
    }
