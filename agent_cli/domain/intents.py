"""The desk's intents as data: one row per thing a customer asks for, with the tools that serve
it and whether it acts. The playbook, the tool offer's narrow profile, the run log's intent and
the eval judge all read this one table; the intent model (language/intent_model.py) is trained
to name one of its rows, or to say it is unsure (`UNKNOWN`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from agent_cli.domain.tool_catalogue import of_kind

Intent = Literal[
    "refund",  # is it refundable? (the seed's question; a refund asked for)
    "status",  # where is my order, when will it arrive
    "cancel",
    "address",  # where an order ships
    "account_address",  # the customer's default address
    "items",  # items of a pending order changed
    "payment",  # the payment method of a pending order
    "return",
    "exchange",
    "refund_status",  # where is my refund, how much is left
    "orders",  # which orders do I have
    "help",  # a help-centre topic (shipping times, warranty, payment methods...)
    "handover",  # a person, a complaint, a double charge
    "greeting",  # hello, thanks, goodbye
    "follow_up",  # the same again about another order: "and A101?", "B200は"
    "other",  # anything the desk does not do
]
UNKNOWN = "unknown"  # the intent model's answer when no intent is likely enough

IDENTIFY = of_kind("identify")
(HAND_OVER,) = of_kind("hand_over")
HELP_TOOLS = of_kind("help")


@dataclass(frozen=True, slots=True)
class IntentRow:
    """One intent: the tools that serve it (the first ones show it was worked on) and whether
    it changes something (a write or a hand-over)."""

    name: Intent
    shows: frozenset[str]  # a run that called one of these worked on this intent
    uses: tuple[str, ...]  # the tools it needs besides identifying the customer and a hand-over
    acts: bool
    en: str  # what the desk can do, said to a customer ("check whether an order is refundable")
    ja: str


def _row(
    name: Intent, shows: Iterable[str], *, uses: Iterable[str] = (), acts: bool, en: str, ja: str
) -> IntentRow:
    shown = tuple(shows)
    return IntentRow(name, frozenset(shown), tuple(dict.fromkeys((*uses, *shown))), acts, en, ja)


ORDER = "get_order_details"
ACCOUNT = "get_user_details"
CATALOG = ("get_product_details", "get_item_details", "list_all_product_types", "calculate")


TABLE: tuple[IntentRow, ...] = (
    _row(
        "refund",
        ("lookup_order", "refund_policy", "issue_refund"),
        uses=(ORDER,),
        acts=False,
        en="check whether a refund is possible",
        ja="返金できるかどうかの確認",
    ),
    _row(
        "status",
        ("track_order",),
        uses=(ORDER,),
        acts=False,
        en="tell you where an order is and when it arrives",
        ja="ご注文の配送状況とお届け予定のご案内",
    ),
    _row(
        "cancel",
        ("cancel_pending_order",),
        uses=(ORDER,),
        acts=True,
        en="cancel an order that has not shipped",
        ja="発送前のご注文のキャンセル",
    ),
    _row(
        "address",
        ("modify_pending_order_address",),
        uses=(ORDER, ACCOUNT),
        acts=True,
        en="change where an order ships",
        ja="ご注文のお届け先の変更",
    ),
    _row(
        "account_address",
        ("modify_user_address",),
        uses=(ACCOUNT,),
        acts=True,
        en="change the address on your account",
        ja="ご登録住所の変更",
    ),
    _row(
        "items",
        ("modify_pending_order_items",),
        uses=(ORDER, ACCOUNT, *CATALOG),
        acts=True,
        en="change the items of an order that has not shipped",
        ja="発送前のご注文の商品の変更",
    ),
    _row(
        "payment",
        ("modify_pending_order_payment",),
        uses=(ORDER, ACCOUNT),
        acts=True,
        en="change how an order is paid",
        ja="お支払い方法の変更",
    ),
    _row(
        "return",
        ("return_delivered_order_items",),
        uses=(ORDER, ACCOUNT),
        acts=True,
        en="return items of a delivered order",
        ja="お届け済みの商品の返品",
    ),
    _row(
        "exchange",
        ("exchange_delivered_order_items",),
        uses=(ORDER, ACCOUNT, *CATALOG),
        acts=True,
        en="exchange items of a delivered order",
        ja="お届け済みの商品の交換",
    ),
    _row(
        "refund_status",
        ("lookup_order", "get_order_details"),
        acts=False,
        en="tell you what has been refunded and what is left",
        ja="返金の状況のご案内",
    ),
    _row(
        "orders",
        ("get_user_details",),
        acts=False,
        en="find your orders from your email",
        ja="メールアドレスからご注文を探すこと",
    ),
    _row(
        "help",
        HELP_TOOLS,
        acts=False,
        en="answer questions about shipping, returns, warranty and payment",
        ja="配送・返品・保証・お支払いについてのご質問への回答",
    ),
    _row(
        "handover",
        (HAND_OVER,),
        acts=True,
        en="pass you to a person on our team",
        ja="担当者へのおつなぎ",
    ),
    _row("greeting", (), acts=False, en="", ja=""),  # said to, not done
    _row("follow_up", (), acts=False, en="", ja=""),  # the turn before's intent, carried on
    _row("other", (), acts=False, en="", ja=""),
)
BY_NAME: Mapping[Intent, IntentRow] = {row.name: row for row in TABLE}
NAMES: tuple[Intent, ...] = tuple(row.name for row in TABLE)
INTENT_TOOLS: Mapping[Intent, frozenset[str]] = {row.name: row.shows for row in TABLE if row.shows}
ACTING: frozenset[Intent] = frozenset(row.name for row in TABLE if row.acts)
# What a customer can ask for, in the table's order: the rows with words for a customer.
OFFERS: tuple[IntentRow, ...] = tuple(row for row in TABLE if row.en)


def intents_shown(called: Iterable[str]) -> set[Intent]:
    """Every intent whose tools a run called (a proposal or a refusal counts: it tried)."""
    names = set(called)
    return {intent for intent, tools in INTENT_TOOLS.items() if names & tools}
