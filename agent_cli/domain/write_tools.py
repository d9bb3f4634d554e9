"""The desk's writes by name, said once: the seven the desk proposes to a customer and makes after
their yes (domain/writes/ plans them), and the seed's refund, which the approval
decides alone. The shop's rules (config/rules.py) name them, the tool offer opens them, the
grounding check, the eval judge, the run log and the approval queue tell a write from a read by
these lists."""

from __future__ import annotations

from typing import Literal, get_args

DeskWrite = Literal[
    "cancel_pending_order",
    "modify_pending_order_address",
    "modify_pending_order_payment",
    "modify_pending_order_items",
    "modify_user_address",
    "return_delivered_order_items",
    "exchange_delivered_order_items",
]
DESK_WRITES: tuple[DeskWrite, ...] = get_args(DeskWrite)  # proposed, then made after a yes
REFUND = "issue_refund"  # the seed's write: no proposal, the approval decides
RuleTool = Literal["issue_refund", DeskWrite]  # what a shop's rule may decide
WRITES: frozenset[str] = frozenset((*DESK_WRITES, REFUND))  # every tool that changes the store
MOVES_NO_MONEY: frozenset[DeskWrite] = frozenset(
    {"modify_pending_order_address", "modify_user_address"}
)
