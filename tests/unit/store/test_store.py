"""The order store: seeding, queries, and all-or-nothing imports (the tests taking `store`
run on SQLite and PostgreSQL alike)."""

from __future__ import annotations

import json
import stat
from datetime import date, timedelta
from pathlib import Path

import pytest

from agent_cli.domain.orders import Order
from agent_cli.errors import OrderFileError, StoreError, UsageError
from agent_cli.store import help_articles
from agent_cli.store.formats.order_files import normalise_code, read_orders
from agent_cli.store.samples import SAMPLE_ORDERS
from agent_cli.store.sqlite import OrderStore


@pytest.fixture
def store(either_store: OrderStore) -> OrderStore:
    """Every test here runs on both backends, SQLite and PostgreSQL (conftest's either_store)."""
    return either_store


def test_first_open_creates_and_seeds_the_database(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "orders.db"
    store = OrderStore.open(path)
    assert path.exists()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # customer names and notes
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700  # the folder made for it, too
    delivered = date.today() - timedelta(days=12)  # sample dates are relative to the first use
    assert store.get("A100") == Order(
        "A100", "DELIVERED", 250_000, delivered, "JPY", "Sato Haruki", "Please gift-wrap."
    )
    a101 = store.get("A101")
    assert a101 is not None and (a101.status, a101.total, a101.delivered_at) == (
        "SHIPPING",
        480_000,
        None,
    )
    assert {o.status for o in store.all()} >= {"CANCELLED", "REFUNDED", "PENDING", "DELIVERED"}
    store.close()


def test_seeding_happens_once(tmp_path: Path) -> None:
    path = tmp_path / "orders.db"
    store = OrderStore.open(path)
    store.import_orders([Order("A100", "REFUNDED", 250_000, date(2026, 10, 1))])
    store.close()
    reopened = OrderStore.open(path)
    a100 = reopened.get("A100")
    assert a100 is not None and a100.status == "REFUNDED"
    assert len(reopened.all()) == len(SAMPLE_ORDERS)
    reopened.close()


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "orders.db"
    path.write_text("this is not sqlite, " * 200)
    with pytest.raises(StoreError, match=r"Cannot open the order database .*set AGENT_DB"):
        OrderStore.open(path)


def test_an_unwritable_location_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="Cannot open the order database"):
        OrderStore.open(blocker / "orders.db")


def test_database_constraints_reject_bad_rows(store: OrderStore) -> None:
    with pytest.raises(Exception, match=r"(?i)check"):  # the status CHECK constraint
        store.import_orders([Order("Z1", "LOST", 1)])
    assert store.get("Z1") is None


def test_csv_import_adds_and_replaces(store: OrderStore, tmp_path: Path) -> None:
    path = tmp_path / "orders.csv"
    path.write_text(
        "code,status,total,delivered_at,currency,customer\n"
        "d400,DELIVERED,1200.50,2026-10-10,USD,Ann Lee\n"
        "A101,DELIVERED,480000,2026-10-05,,\n"
    )
    orders = read_orders(path)
    result = store.import_orders(orders)
    assert (result.added, result.updated) == (1, 1)
    assert store.get("D400") == Order(
        "D400", "DELIVERED", 120_050, date(2026, 10, 10), "USD", "Ann Lee"
    )  # written in dollars, kept in cents
    a101 = store.get("A101")
    assert a101 is not None and a101.delivered_at == date(2026, 10, 5) and a101.currency == "JPY"


def test_json_import(tmp_path: Path) -> None:
    path = tmp_path / "orders.json"
    path.write_text(json.dumps([{"code": "E500", "status": "PENDING", "total": 10}]))
    assert read_orders(path) == [Order("E500", "PENDING", 10)]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "o.csv",
            "code,status,total\nA1,DELIVERED,abc\n",
            "line 2: total: Input should be a valid decimal",
        ),
        (
            "o.csv",
            "code,status,total\nA1,PENDING,1\nA2,LOST,2\n",
            "line 3: status: Input should be",
        ),
        ("o.csv", "code,status\nA1,PENDING\n", "line 1: missing column 'total'"),
        (
            "o.csv",
            "code,status,total,colour\nA1,PENDING,1,red\n",
            "line 1: unknown column 'colour'",
        ),
        ("o.csv", "code,status,total\nA1,PENDING\n", "line 2: expected 3 fields"),
        ("o.csv", "code,status,total\nA1,PENDING,1,extra\n", "line 2: expected 3 fields"),
        (
            "o.csv",
            "code,status,total\n../x,PENDING,1\n",
            "line 2: code: String should match pattern",
        ),
        (
            "o.csv",
            "code,status,total\nA1,DELIVERED,5\n",
            "line 2: delivered_at: required when status is DELIVERED",
        ),
        (
            "o.csv",
            "code,status,total\nA1,PENDING,1\na1,PENDING,1\n",
            "line 3: order A1 already appears at line 2",
        ),
        (
            "o.csv",
            "code,status,total\nA1,PENDING,-5\n",
            "line 2: total: Input should be greater than or equal to 0",
        ),
        ("o.csv", "code,status,total\n", "no orders found"),
        (
            "o.csv",
            "code,status,total,currency\nA1,PENDING,1.005,USD\n",
            "line 2: total: 1.005 has more decimals than USD has (2)",
        ),
        ("o.json", '[{"code": "A1", "status": "PENDING", "total": 1.5}]', "JPY has (0)"),
        ("o.json", '[{"code": "A1", "status": "PENDING"}]', "item 1: total: Field required"),
        ("o.json", '{"code": "A1"}', "expected a JSON array of order objects"),
        ("o.json", "[1,\n 2,", "line 2: not valid JSON"),
        (
            "o.json",
            '[{"code": "A1", "status": "PENDING", "total": 1, "x": 1}]',
            "item 1: x: Extra inputs",
        ),
        ("o.xml", "<orders/>", "unsupported file type; use a .csv or .json file"),
    ],
)
def test_malformed_files_name_the_line_and_the_reason(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(OrderFileError) as caught:
        read_orders(path)
    assert message in str(caught.value)
    assert str(path) in str(caught.value)


def test_a_file_that_is_not_utf8_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "o.csv"
    path.write_bytes(b"code,status,total\nA1,PENDING,\xff\n")
    with pytest.raises(OrderFileError, match="not UTF-8 text"):
        read_orders(path)


def test_a_missing_file_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(OrderFileError, match="cannot read"):
        read_orders(tmp_path / "nope.csv")


def test_a_failed_import_changes_nothing(store: OrderStore) -> None:
    before = store.all()
    good = Order("N1", "PENDING", 1)
    with pytest.raises(Exception, match=r"(?i)check"):
        store.import_orders([good, Order("N2", "BROKEN", 1)])
    assert store.all() == before


def test_normalise_code() -> None:
    assert normalise_code("a100") == "A100"
    with pytest.raises(UsageError, match="is not an order code"):
        normalise_code("../etc/passwd")


def test_throwaway_stores_are_copies_that_share_nothing() -> None:
    """Each in-memory store is a copy of one built template: a write in one is in no other,
    nor in the template later stores are copied from."""
    first, second = OrderStore.in_memory(), OrderStore.in_memory()
    first.import_orders([Order("B200", "CANCELLED", 5_400)])
    assert _status(first, "B200") == "CANCELLED"
    assert _status(second, "B200") == "PENDING"
    assert _status(OrderStore.in_memory(), "B200") == "PENDING"
    assert _status(OrderStore.in_memory([Order("Z900", "PENDING", 100)]), "Z900") == "PENDING"
    assert OrderStore.in_memory().get("Z900") is None
    moved = OrderStore.in_memory(as_of=date(2027, 1, 10))  # another seed, another template
    assert _delivered(moved, "A100") != _delivered(first, "A100")
    assert help_articles.search(moved, "shipping Osaka")  # the full-text index is copied too


def _status(store: OrderStore, code: str) -> str:
    order = store.get(code)
    assert order is not None
    return order.status


def _delivered(store: OrderStore, code: str) -> date | None:
    order = store.get(code)
    assert order is not None
    return order.delivered_at
