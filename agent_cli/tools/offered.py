"""Which tools a question needs: the seed's always, and of the desk's those its intents use.
Every tool's schema costs its bytes in every request of a run (and a small model's attention,
and it chooses from the descriptions alone): "Is order A100 refundable?" is sent the seed's
tools only, as before the desk (benchmarks/providers.py keeps its first request under 1,000
bytes); "Please cancel B200" the customer's identification, the order's details, the cancel
and a hand-over, not the other six writes nor the catalogue (a desk question's first request
under 2,500 bytes). Deterministic, in English and Japanese; a chat turn counts the turns before
it, so "and where is it?" after an order keeps what that order needed."""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent_cli.store.desk_changes import WRITE_TOOLS
from agent_cli.tools.desk import IDENTIFY
from agent_cli.tools.help_center import HELP

SEED = ("lookup_order", "refund_policy", "issue_refund")
HAND_OVER = "transfer_to_human_agents"
CUSTOMER = (*IDENTIFY, "get_user_details", "get_order_details", "track_order", HAND_OVER)
CATALOG = ("get_product_details", "get_item_details", "list_all_product_types", "calculate")
WRITES = WRITE_TOOLS  # the desk's seven writes (store/desk_changes.py)
DESK = (*CUSTOMER, *CATALOG, *WRITES, *HELP)

_ORDER = "get_order_details"
_SWAPS = ("get_product_details", "modify_pending_order_items", "exchange_delivered_order_items")
# (what the customer says, the tools it needs); a customer who asks to change something may
# need a person (transfer_to_human_agents) when the rules forbid it.
_NEEDS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (
        re.compile(
            r"(?i)\b(?:where(?:'s| is)|track\w*|arriv\w*|shipped|when will|deliver(?:y|ed)?)\b|"
            r"届|追跡|いつ|どこ|配送状況"
        ),
        (*IDENTIFY, "track_order", _ORDER),
    ),
    (
        re.compile(
            r"(?i)\b(?:order (?:number|code|id)|my orders|account|e-?mail|zip)\b|@|"
            r"注文番号|注文一覧|メール"
        ),
        (*IDENTIFY, "get_user_details", _ORDER),
    ),
    (
        re.compile(r"(?i)\bcancel\w*|キャンセル"),
        (*IDENTIFY, _ORDER, "cancel_pending_order", HAND_OVER),
    ),
    (
        re.compile(
            r"(?i)\b(?:address|moved?|(?:ship|deliver|send) (?:\S+ ){0,3}to)\b|"
            r"住所|届け先|配送先|引っ越"
        ),
        (*IDENTIFY, _ORDER, "get_user_details", "modify_pending_order_address"),
    ),
    (
        re.compile(r"(?i)\b(?:default|account|home|registered) address\b|登録(?:の)?住所"),
        (*IDENTIFY, "get_user_details", "modify_user_address"),
    ),
    (
        re.compile(r"(?i)\b(?:pay\w*|paid|gift card|paypal|credit card|card)\b|支払|ギフト|カード"),
        (*IDENTIFY, _ORDER, "get_user_details", "modify_pending_order_payment", HAND_OVER),
    ),
    (
        re.compile(r"(?i)\b(?:return\w*|send \w+ back)\b|返品"),
        (*IDENTIFY, _ORDER, "return_delivered_order_items", HAND_OVER),
    ),
    (
        re.compile(
            r"(?i)\b(?:exchang\w*|swap\w*|switch\w*|chang\w*|modif\w*|wrong size|"
            r"sizes?|colou?rs?|variants?)\b|交換|変更|サイズ|色"
        ),
        (*IDENTIFY, _ORDER, *_SWAPS, HAND_OVER),
    ),
    (
        re.compile(
            r"(?i)\b(?:products?|items?|stock|available|price|cost|calculat\w*)\b|在庫|価格|値段"
        ),
        CATALOG,
    ),
    (
        re.compile(
            r"(?i)\b(?:human|person|agent|someone|charged|complain\w*)\b|担当者|人と|二重|苦情"
        ),
        (HAND_OVER,),
    ),
    (
        re.compile(
            r"(?i)\b(?:how long|how many days|shipping|deliver\w*|warranty|guarantee|polic\w+|"
            r"opened|returns?|refunds? (?:take|arrive|go|method)\w*|when will (?:my|the) refund|"
            r"payment methods?|pay with|gift cards?|contact|hours|person|human|someone|"
            r"money back)\b|"
            r"配送|送料|何日|保証|返品|返金(?:は|の)?(?:いつ|方法|時期)|支払|ギフト|担当者|営業|開封"
        ),
        HELP,
    ),
)


def needed_tools(texts: Iterable[str], names: Iterable[str]) -> tuple[str, ...]:
    """The tools of `names` to offer for a conversation whose customer wrote `texts`: the seed's
    and every tool not the desk's (an MCP server's), and the desk's tools each intent the texts
    speak of uses (`_NEEDS`): tracking, the customer's orders, a cancel, an address, a payment,
    a return, items swapped or exchanged, products, a person, the help centre."""
    said = "\n".join(texts)
    wanted = {name for name in names if name not in DESK}
    for words, tools in _NEEDS:
        if words.search(said):
            wanted.update(tools)
    return tuple(name for name in names if name in wanted)
