"""Every tool our code offers a model, one row each: its name and what kind of act it is. A read
shows records; `identify` finds the customer a conversation speaks for; a write changes the store
(the seven desk writes, proposed to the customer first, and the seed's refund); `hand_over`
passes the conversation to a person; `help` reads the help centre. The intent table and the tool
offer name tools by these kinds, and a test holds every tool the runtime registers to a row here
(an MCP server's tools are the server's, not ours)."""

from __future__ import annotations

from typing import Literal

from agent_cli.domain.write_tools import DESK_WRITES, REFUND

Kind = Literal["read", "identify", "write", "hand_over", "help"]

CATALOGUE: dict[str, Kind] = {
    # the seed's: an order by its code, the refund policy, a refund
    "lookup_order": "read",
    "refund_policy": "read",
    REFUND: "write",
    # the desk's: who the customer is, their records, the shop's catalogue
    "find_user_id_by_email": "identify",
    "find_user_id_by_name_zip": "identify",
    "get_user_details": "read",
    "get_order_details": "read",
    "track_order": "read",
    "get_product_details": "read",
    "get_item_details": "read",
    "list_all_product_types": "read",
    "calculate": "read",
    **dict.fromkeys(DESK_WRITES, "write"),
    "transfer_to_human_agents": "hand_over",
    "search_help": "help",
    "get_article": "help",
}


def of_kind(kind: Kind) -> tuple[str, ...]:
    """The tools of one kind, in the catalogue's order."""
    return tuple(name for name, its in CATALOGUE.items() if its == kind)
