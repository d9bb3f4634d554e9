"""τ²-bench retail data in and out, at its real size. Prints figures; asserts nothing but that
the data came back the same.

    python benchmarks/tau2_import.py [--db PATH_TO_tau2_db.json]

Without --db it writes a file of τ²'s shape and size (500 users, 50 products of 10 variants,
1,000 orders of 1-5 items, one or two payments each), seeded, so the figure is the same on every
machine. It prints the seconds to read and check the file, to write it into a fresh SQLite store
and into a throwaway PostgreSQL (as the tests start one: needs initdb), and to export it back.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_cli.store.bulk_writes import save_desk
from agent_cli.store.formats.tau2 import read_tau2, tau2_json
from agent_cli.store.record_reads import load_desk
from agent_cli.store.sqlite import OrderStore
from tests import postgres

STATUSES = ("pending", "processed", "delivered", "cancelled")


def synthetic(seed: int = 7) -> dict[str, Any]:
    """A db.json of τ²'s shape and size."""
    rng = random.Random(seed)
    products: dict[str, Any] = {}
    for p in range(50):
        pid = str(1_000_000_000 + p)
        variants = {
            str(2_000_000_000 + p * 10 + v): {
                "item_id": str(2_000_000_000 + p * 10 + v),
                "options": {"color": rng.choice(["red", "blue"]), "size": str(v)},
                "available": rng.random() < 0.8,
                "price": round(rng.uniform(10, 900), 2),
            }
            for v in range(10)
        }
        products[pid] = {"name": f"Product {p:02d}", "product_id": pid, "variants": variants}
    address = {
        "address1": "1 Main St",
        "address2": "Suite 1",
        "city": "Austin",
        "country": "USA",
        "state": "TX",
        "zip": "78701",
    }
    users: dict[str, Any] = {}
    for u in range(500):
        uid = f"user_{u}"
        methods = {
            f"credit_card_{u}": {
                "source": "credit_card",
                "id": f"credit_card_{u}",
                "brand": "visa",
                "last_four": f"{u:04d}",
            },
            f"gift_card_{u}": {
                "source": "gift_card",
                "id": f"gift_card_{u}",
                "balance": round(rng.uniform(0, 200), 2),
            },
        }
        users[uid] = {
            "user_id": uid,
            "name": {"first_name": "U", "last_name": str(u)},
            "address": address,
            "email": f"{uid}@example.com",
            "payment_methods": methods,
            "orders": [],
        }
    orders: dict[str, Any] = {}
    for n in range(1000):
        code, uid = f"#W{1_000_000 + n}", f"user_{n % 500}"
        users[uid]["orders"].append(code)
        chosen = [rng.choice(list(products.values())) for _ in range(rng.randint(1, 5))]
        items = []
        for product in chosen:
            variant = rng.choice(list(product["variants"].values()))
            items.append(
                {
                    "name": product["name"],
                    "product_id": product["product_id"],
                    "item_id": variant["item_id"],
                    "price": variant["price"],
                    "options": variant["options"],
                }
            )
        paid = round(sum(i["price"] for i in items), 2)
        status = rng.choice(STATUSES)
        history = [
            {
                "transaction_type": "payment",
                "amount": paid,
                "payment_method_id": f"credit_card_{n % 500}",
            }
        ]
        if status == "cancelled":
            history.append({**history[0], "transaction_type": "refund"})
        orders[code] = {
            "order_id": code,
            "user_id": uid,
            "address": address,
            "items": items,
            "status": status,
            "payment_history": history,
            "fulfillments": []
            if status == "pending"
            else [{"tracking_id": [str(n)], "item_ids": [i["item_id"] for i in items]}],
        }
    return {"products": products, "users": users, "orders": orders}


def timed(what: str, work: Any) -> Any:
    started = time.perf_counter()
    result = work()
    print(f"  {what:<34} {time.perf_counter() - started:6.2f} s")
    return result


def round_trip(store: Any, data: Any, expected: dict[str, Any]) -> None:
    timed("import (one transaction)", lambda: save_desk(store, data, replace=True))
    out = timed("export", lambda: tau2_json(load_desk(store)))
    print(f"  {'the same data back':<34} {out == expected}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, help="τ²-bench's data/tau2/domains/retail/db.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        path = args.db or Path(work) / "db.json"
        if args.db is None:
            path.write_text(json.dumps(synthetic()))
        data = timed("read and check the file", lambda: read_tau2(path))
        expected = json.loads(path.read_text())
        print(
            f"{len(data.customers)} users, {len(data.products)} products, "
            f"{len(data.orders)} orders ({path.stat().st_size / 2**20:.1f} MiB)"
        )
        stores: list[tuple[str, Any]] = [
            ("SQLite", lambda: OrderStore.open(Path(work) / "o.db", seed=()))
        ]
        server = None
        if postgres.find("initdb") is not None:
            server = postgres.Server()
            server.start()
            from agent_cli.store.postgres import PostgresStore

            stores.append(("PostgreSQL", lambda: PostgresStore.connect(server.database())))
        try:
            for name, opened in stores:
                print(name)
                store = opened()
                round_trip(store, data, expected)
                store.close()
        finally:
            if server is not None:
                server.stop()


if __name__ == "__main__":
    main()
