"""An order's history under `agent orders show`: where it ships, its items, every payment and
refund in order, a return or exchange requested, and each change the desk made (who, when)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from agent_cli.domain.currencies import money
from agent_cli.domain.orders import Order
from agent_cli.domain.records import OrderChange
from agent_cli.ui.console import clean_text


def show_history(console: Console, order: Order, changes: Sequence[OrderChange]) -> None:
    currency = order.currency
    lines: list[tuple[str, str]] = []
    if order.address is not None:
        lines.append(("ships to", str(order.address)))
    lines += [("item", f"{i.item_id} {i.name} {money(i.price, currency)}") for i in order.items]
    lines += [
        (p.kind, f"{money(p.amount, currency)} via {p.payment_method_id}"
         + (f" ({p.paid_at})" if p.paid_at else ""))
        for p in order.payments
    ]  # fmt: skip
    if order.cancel_reason:
        lines.append(("cancelled", order.cancel_reason))
    if (r := order.returned) is not None:
        lines.append(("return", f"{', '.join(r.items)} -> {r.payment_method_id}"))
    if (e := order.exchange) is not None:
        lines.append((
            "exchange",
            f"{', '.join(e.items)} -> {', '.join(e.new_items)}, difference "
            f"{money(e.price_difference, currency)} via {e.payment_method_id}",
        ))  # fmt: skip
    lines += [(f"change #{c.id}", f"{c.made_at} by {c.made_by}: {c.summary}") for c in changes]
    for name, value in lines:
        console.print(Text(f"{name:<10}", style="dim").append(clean_text(value)))
