"""A serving process on a team's PostgreSQL reuses its connections (runtime/stores.py's
StorePool): opening one costs a few milliseconds and a message opened five or six. Only an idle,
whole connection is kept; one an error left in a transaction is closed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agent_cli.config import Settings
from agent_cli.runtime.stores import LazyStore, StorePool, opened_store, use_pool
from agent_cli.store.samples import SAMPLE_SHOP


@pytest.fixture
def url(pg_server: Any) -> str:
    from agent_cli.store.postgres import PostgresStore

    made: str = pg_server.database()
    PostgresStore.connect(made, seed=SAMPLE_SHOP).close()
    return made


@pytest.fixture
def pool(url: str) -> Iterator[StorePool]:
    made = StorePool(url, keep=2)
    use_pool(made)
    yield made
    use_pool(None)
    made.close()


def team(url: str) -> Settings:
    return Settings.model_validate({"store": {"url": url}})


def test_a_connection_given_back_is_the_next_one_taken(pool: StorePool, url: str) -> None:
    with opened_store(team(url)) as first:
        assert first.get("A100") is not None
    with opened_store(team(url)) as again:
        assert again is first
    lazy = LazyStore(team(url))
    assert lazy.get() is first
    lazy.close()
    with opened_store(team(url)) as third:
        assert third is first


def test_a_connection_an_error_left_behind_is_closed_not_kept(pool: StorePool, url: str) -> None:
    with pytest.raises(RuntimeError), opened_store(team(url)) as broken:
        raise RuntimeError("a request failed halfway")
    with opened_store(team(url)) as fresh:
        assert fresh is not broken
        assert fresh.query("SELECT 1") == [(1,)]
    in_transaction = pool.take()
    in_transaction._pg.execute("BEGIN")  # type: ignore[attr-defined]
    pool.give(in_transaction)
    assert pool.take() is not in_transaction


def test_the_pool_keeps_a_few_and_closes_the_rest_and_all_at_its_end(
    pool: StorePool, url: str
) -> None:
    taken = [pool.take() for _ in range(3)]
    for store in taken:
        pool.give(store)
    assert taken[2]._pg.closed  # type: ignore[attr-defined]  # keep=2
    pool.close()
    assert all(store._pg.closed for store in taken)  # type: ignore[attr-defined]
    late = StorePool(url)
    late.close()
    given = pool.take()
    pool.give(given)  # after the end: closed, never kept
    assert given._pg.closed  # type: ignore[attr-defined]


def test_another_store_is_never_handed_a_pooled_connection(pool: StorePool, tmp_path: Any) -> None:
    from agent_cli.store.sqlite import OrderStore

    OrderStore.open(tmp_path / "own.db", seed=SAMPLE_SHOP).close()
    sqlite = Settings.model_validate({"store": {"path": str(tmp_path / "own.db")}})
    with opened_store(sqlite) as own:
        assert own.where.endswith("own.db")
    assert not own.reusable()
