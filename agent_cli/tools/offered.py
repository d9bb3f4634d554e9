"""Which tools a question needs: the seed's three always, the desk's when the customer speaks
of what they are for. Every tool's schema costs its bytes in every request of a run (and a
small model's attention): "Is order A100 refundable?" is sent the seed's tools only, as before
the desk (benchmarks/providers.py keeps its first request under 1,000 bytes), and "Where is my
order A101?" the desk's reads as well. Deterministic, in English and Japanese; a chat turn
counts the turns before it, so "and where is it?" after an order keeps the desk's tools."""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent_cli.store.desk_changes import WRITE_TOOLS
from agent_cli.tools.help_center import HELP

SEED = ("lookup_order", "refund_policy", "issue_refund")
CUSTOMER = (
    "find_user_id_by_email",
    "find_user_id_by_name_zip",
    "get_user_details",
    "get_order_details",
    "track_order",
    "transfer_to_human_agents",
)
CATALOG = ("get_product_details", "get_item_details", "list_all_product_types", "calculate")
WRITES = WRITE_TOOLS  # the desk's seven writes (store/desk_changes.py)
DESK = (*CUSTOMER, *CATALOG, *WRITES, *HELP)

_CUSTOMER_WORDS = re.compile(
    r"(?i)\b(?:where|track(?:ing)?|arriv\w*|ship\w*|when will|"
    r"cancel\w*|chang\w*|modif\w*|address|return\w*|exchang\w*|swap\w*|e-?mail|account|"
    r"my orders|order number|payment|paid|gift card|paypal|credit card|zip|"
    r"human|person|agent|someone|charged|complain\w*)\b|@|#W\d|"
    r"配送|届|追跡|いつ|どこ|キャンセル|変更|住所|返品|交換|メール|支払|ギフト|担当者|人と|二重|苦情"
)
_CATALOG_WORDS = re.compile(
    r"(?i)\b(?:products?|items?|sizes?|colou?rs?|variants?|stock|available|price|cost|"
    r"exchang\w*|swap\w*|chang\w*|calculat\w*)\b|在庫|サイズ|色|価格|値段|交換"
)


_WRITE_WORDS = re.compile(
    r"(?i)\b(?:cancel\w*|chang\w*|modif\w*|address|return\w*|exchang\w*|swap\w*|"
    r"payment|pay with|gift card|paypal|credit card|moved?|wrong size)\b|"
    r"キャンセル|変更|住所|返品|交換|支払|ギフト|引っ越"
)


_HELP_WORDS = re.compile(
    r"(?i)\b(?:how long|how many days|shipping|deliver\w*|warranty|guarantee|polic\w+|"
    r"opened|returns?|refunds? (?:take|arrive|go|method)\w*|when will (?:my|the) refund|"
    r"payment methods?|pay with|gift cards?|contact|hours|person|human|someone)\b|"
    r"配送|送料|届|何日|保証|返品|返金(?:は|の)?(?:いつ|方法|時期)|支払|ギフト|担当者|営業|開封"
)


def needed_tools(texts: Iterable[str], names: Iterable[str]) -> tuple[str, ...]:
    """The tools of `names` to offer for a conversation whose customer wrote `texts`: the seed's
    and every tool not the desk's (an MCP server's), the desk's customer tools when a text
    speaks of tracking, changes, returns, accounts or a person, its catalogue tools when one
    speaks of products, sizes, colours or prices, and its writes (with both) when one asks
    for a change: a cancel, an address, a payment, items swapped, returned or exchanged."""
    said = "\n".join(texts)
    wanted = {name for name in names if name not in DESK}
    if _CUSTOMER_WORDS.search(said):
        wanted.update(CUSTOMER)
    if _CATALOG_WORDS.search(said):
        wanted.update(CATALOG)
        wanted.update(CUSTOMER)  # a product is asked about for an order: who, and which
    if _HELP_WORDS.search(said):
        wanted.update(HELP)
    if _WRITE_WORDS.search(said):
        wanted.update((*CUSTOMER, *CATALOG, *WRITES))  # a change names items and prices
    return tuple(name for name in names if name in wanted)
