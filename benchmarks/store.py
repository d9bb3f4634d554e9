"""The order store on SQLite and on PostgreSQL, side by side. Prints figures; asserts nothing.

    python benchmarks/store.py [--seconds 3]

Starts a throwaway PostgreSQL (as the tests do: tests/postgres.py, needs initdb) and a fresh
SQLite file, each with 1,000 delivered orders. For 1, 4 and 16 processes at once it prints
lookups per second and refunds committed per second (each refund on its own order), then has
every process race for one hot order (each asking for all of it) and counts the refunds made:
there must be exactly one. Last, the whole `agent ask --dry-run` process (3 steps) on each
store, and the ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_cli.domain.orders import Order, RefundRefused
from agent_cli.store.configured import open_configured
from agent_cli.store.sqlite import OrderStore
from tests import postgres

ORDERS = 1000


def orders() -> list[Order]:
    delivered = date.today() - timedelta(days=5)
    return [Order(f"B{n}", "DELIVERED", 10_000, delivered) for n in range(ORDERS)]


def open_store(where: tuple[str, str]) -> OrderStore:
    kind, target = where
    return open_configured(Path(target)) if kind == "sqlite" else open_configured(None, target)


def lookups(where: tuple[str, str], seconds: float, number: int) -> int:
    store, done, stop = open_store(where), 0, time.monotonic() + seconds
    while time.monotonic() < stop:
        store.get(f"B{(number * 97 + done) % ORDERS}")
        done += 1
    store.close()
    return done


def refunds(where: tuple[str, str], seconds: float, number: int) -> int:
    store, done, stop = open_store(where), 0, time.monotonic() + seconds
    while time.monotonic() < stop:
        code = f"B{(number * 61 + done) % ORDERS}"
        with contextlib.suppress(RefundRefused):  # an order refunded in full: go on
            store.record_refund(code, 1, "bench", key=f"{number}:{done}:{time.time_ns()}")
        done += 1
    store.close()
    return done


def hot(where: tuple[str, str], number: int) -> bool:
    store = open_store(where)
    try:
        store.record_refund("HOT", 10_000, "all", key=f"hot:{number}")
        return True
    except RefundRefused:
        return False
    finally:
        store.close()


def rate(work: object, where: tuple[str, str], processes: int, seconds: float) -> float:
    with multiprocessing.Pool(processes) as pool:
        counts = pool.starmap(work, [(where, seconds, n) for n in range(processes)])  # type: ignore[arg-type]
    return sum(counts) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    server = postgres.Server()
    server.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            sqlite_path = Path(folder) / "orders.db"
            OrderStore.open(sqlite_path, seed=orders()).close()
            url = server.database()
            from agent_cli.store.postgres import PostgresStore

            PostgresStore.connect(url, seed=orders()).close()
            stores = {"sqlite": ("sqlite", str(sqlite_path)), "postgresql": ("pg", url)}
            for name, where in stores.items():
                for processes in (1, 4, 16):
                    looked = rate(lookups, where, processes, args.seconds)
                    made = rate(refunds, where, processes, args.seconds)
                    store = open_store(where)
                    store.import_orders([Order("HOT", "DELIVERED", 10_000, date.today())])
                    store.close()
                    with multiprocessing.Pool(processes) as pool:
                        won = sum(pool.starmap(hot, [(where, n) for n in range(processes)]))
                    store = open_store(where)
                    hot_refunds = len(store.refunds("HOT"))
                    store.execute("DELETE FROM refunds WHERE order_code = 'HOT'")
                    store.close()
                    print(
                        f"{name:10} {processes:2} processes: {looked:9,.0f} lookups/s  "
                        f"{made:7,.0f} refunds/s  hot order: {hot_refunds} refund ({won} won)"
                    )
            times = {name: ask_time(where, folder) for name, where in stores.items()}
            ratio = times["postgresql"] / times["sqlite"]
            print(
                f"agent ask --dry-run (3 steps, whole process): sqlite {times['sqlite']:.3f} s, "
                f"postgresql {times['postgresql']:.3f} s ({ratio:.2f}x)"
            )
    finally:
        server.stop()


def ask_time(where: tuple[str, str], folder: str, runs: int = 5) -> float:
    env = {**os.environ, "HOME": folder, "AGENT_LOG": str(Path(folder) / "log.db")}
    env.update({"AGENT_DB": where[1]} if where[0] == "sqlite" else {"AGENT_DB_URL": where[1]})
    argv = [sys.executable, "-m", "agent_cli", "ask", "Is order B10 refundable?", "--dry-run", "-q"]
    best = float("inf")
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run(argv, env=env, check=True, capture_output=True)
        best = min(best, time.perf_counter() - began)
    return best


if __name__ == "__main__":
    main()
