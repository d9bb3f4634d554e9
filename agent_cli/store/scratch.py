"""Scratch stores on a PostgreSQL server (`agent eval run --store-url`): each case and trial gets a
schema of its own (`agent_eval_<random>`), made, seeded and migrated for it, and dropped with
everything in it when the case ends, so no run sees another's writes and nothing is left behind.
The team's own tables (in `public`, or wherever the URL's user keeps them) are never touched."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from agent_cli.domain.orders import Order
from agent_cli.errors import UsageError
from agent_cli.store.sqlite import OrderStore, Seed

PREFIX = "agent_eval_"


@contextmanager
def scratch_store(url: str, seed: Seed, orders: Iterable[Order] = ()) -> Iterator[OrderStore]:
    """A store in a new schema on the server at `url`, holding `seed` then `orders`; the
    schema is dropped when the block ends, however it ends."""

    try:
        from agent_cli.store.postgres import PostgresStore, scratch_schema  # noqa: PLC0415
    except ImportError:
        raise UsageError(
            "--store-url names a PostgreSQL server, and psycopg is not installed: "
            "pip install 'agent-cli[postgres]'"
        ) from None
    name = PREFIX + uuid.uuid4().hex[:16]  # letters and digits: safe as an identifier
    scratch_schema(url, name)
    try:
        store = PostgresStore.connect(url, seed=seed, schema=name)
        try:
            if orders := list(orders):
                store.import_orders(orders)
            yield store
        finally:
            store.close()
    finally:
        scratch_schema(url, name, drop=True)
