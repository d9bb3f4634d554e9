"""What deciding the approval queue costs. Prints figures; asserts nothing.

    python benchmarks/approvals.py [--items 1000]

Makes a fresh order database (in a temporary directory) with N recent DELIVERED orders and one
queued refund for each, then times `agent approvals approve 1 2 ... N` as one command (a
process, start-up included): the whole, and per item. Each item is its own transaction (read
the item and the order, check every rule, insert the refund, close the item), so one refused
item never holds up the others.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from agent_cli.domain.orders import Order
from agent_cli.store import approval_queue
from agent_cli.store.sqlite import OrderStore


def fill(path: Path, items: int) -> None:
    delivered = date.today() - timedelta(days=5)
    orders = [
        Order(f"Q{n}", "DELIVERED", 10_000, delivered, customer=f"C{n}") for n in range(items)
    ]
    store = OrderStore.open(path, seed=orders)
    try:
        for order in orders:
            proposal = approval_queue.RefundProposal(
                order=order,
                amount=1000,
                reason="damaged",
                run_id="run",
                question="refund?",
                proposed_by="bench",
                expires_in=timedelta(hours=72),
            )
            approval_queue.queue(store, proposal)
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "orders.db"
        fill(db, args.items)
        config = Path(folder) / "c.toml"
        config.write_text("[refunds]\nenabled = true\n")
        argv = [sys.executable, "-m", "agent_cli", "approvals", "approve"]
        argv += [str(n) for n in range(1, args.items + 1)] + ["--config", str(config)]
        env = {**os.environ, "AGENT_DB": str(db), "HOME": folder}
        began = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
        took = time.perf_counter() - began
        approved = done.stdout.count(": approved:")
        print(f"approve {args.items} items in one command: {took:.2f} s, exit {done.returncode}")
        print(
            f"  {approved} approved, {took / args.items * 1000:.2f} ms per item (start-up included)"
        )


if __name__ == "__main__":
    main()
