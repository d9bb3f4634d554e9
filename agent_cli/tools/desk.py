"""The desk's read tools, with τ²-bench retail's names and arguments, and `track_order`.

Each returns a compact record the model can read (`key=value` facts; text that came from a
customer or a file quoted as JSON, so no name or option can pass for a fact), or raises a
ToolFailure the registry turns into `ERROR: ...`.

Identity is a rule in code (desk.md, rule 1): in a customer conversation the customer-scoped
tools (`get_user_details`, `get_order_details`, `track_order`) refuse until this conversation
found its customer with `find_user_id_by_email` or `find_user_id_by_name_zip`, and refuse another
customer's records after that. An operator running a tool by hand is staff (`staff=True`). The
seed's `lookup_order` stays the one lookup by code alone (status, total, dates, the verdict).
"""

from __future__ import annotations

import ast
import json
import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal, DivisionByZero, InvalidOperation
from typing import Any

from pydantic import Field

from agent_cli.core.seams import ApprovalNeeded, Observation
from agent_cli.core.tool_outcomes import Read
from agent_cli.domain.currencies import major
from agent_cli.domain.intents import IDENTIFY  # what the others come after
from agent_cli.domain.orders import Order
from agent_cli.domain.records import Customer, Variant
from agent_cli.store import record_reads
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools import NoArgs, Tool, ToolArgs, ToolFailure, records
from agent_cli.tools.identity import CustomerSession

Result = str | Observation | ApprovalNeeded
_PRODUCT_IDS = ("get_order_details", "get_user_details", "list_all_product_types")
_ID = r"^[A-Za-z0-9_.-]{1,64}$"
_ORDER_ID = r"^#?[A-Za-z0-9]{1,16}$"


class EmailArgs(ToolArgs):
    email: str = Field(min_length=3, max_length=254, pattern=r"^[^@\s]+@[^@\s]+$")


class NameZipArgs(ToolArgs):
    first_name: str = Field(min_length=1, max_length=100)
    last_name: str = Field(min_length=1, max_length=100)
    zip: str = Field(min_length=1, max_length=16, pattern=r"^[A-Za-z0-9 -]+$")


class UserArgs(ToolArgs):
    user_id: str = Field(pattern=_ID, description="e.g. sara_doe_496")


class OrderArgs(ToolArgs):
    order_id: str = Field(pattern=_ORDER_ID, description="e.g. #W0000000 or A100")


class ProductArgs(ToolArgs):
    product_id: str = Field(pattern=_ID, description="a product id, not an item id")


class ItemArgs(ToolArgs):
    item_id: str = Field(pattern=_ID, description="an item (variant) id, not a product id")


class CalculateArgs(ToolArgs):
    expression: str = Field(
        min_length=1, max_length=200, pattern=r"^[0-9+\-*/(). ]+$", description="e.g. 2 + 2"
    )


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


_TOKEN = re.compile(r"[A-Za-z0-9#_.@:+-]+")


def _id(value: str) -> str:
    """An id, a status or a code as the record shows it: bare when it is one plain token (as
    every value written by an import or a write is), else quoted like a name, so a value that
    came into the store another way cannot forge a line or a field of the record."""
    return value if _TOKEN.fullmatch(value) else _quoted(value)


def _ids(values: Iterable[str]) -> str:
    return ", ".join(_id(v) for v in values)


def _options(options: dict[str, str]) -> str:
    return ", ".join(f"{_quoted(k)}={_quoted(v)}" for k, v in options.items()) or "none"


def _customer_record(c: Customer, orders: list[str]) -> str:
    methods = []
    for m in c.payment_methods:
        if m.source == "credit_card":
            methods.append(f"{_id(m.id)} ({_id(str(m.brand))} card ending {_id(str(m.last_four))})")
        elif m.source == "gift_card":
            methods.append(
                f"{_id(m.id)} (gift card, balance {major(m.balance or 0, m.currency)} {m.currency})"
            )
        else:
            methods.append(f"{_id(m.id)} (paypal)")
    return (
        f"user_id={_id(c.id)} name={_quoted(c.name)} email={_quoted(c.email)}\n"
        f"address: {_quoted(str(c.address))}\n"
        f"payment_methods: {'; '.join(methods) or 'none'}\n"
        f"orders: {_ids(orders) or 'none'}"
    )


def _order_record(o: Order, refunded: int) -> str:
    order, currency = o, o.currency

    def amount(minor: int) -> str:
        return major(minor, currency, grouped=False)

    placed = o.placed_at.isoformat() if o.placed_at else "unknown"
    delivered = order.delivered_at.isoformat() if order.delivered_at else "none"
    lines = [
        f"order_id={_id(order.code)} user_id={_id(o.customer_id or 'none')} "
        f"status={_id(order.status)} "
        f"total={amount(order.total)} currency={currency} placed_at={placed} "
        f"delivered_at={delivered}"
    ]
    if refunded:
        lines[0] += f" refunded={amount(refunded)} left={amount(max(order.total - refunded, 0))}"
    if o.address is not None:
        lines.append(f"ship_to: {_quoted(str(o.address))}")
    lines.append(f"items ({len(o.items)}):")
    lines += [
        f"- item_id={_id(i.item_id)} product_id={_id(i.product_id)} name={_quoted(i.name)} "
        f"price={amount(i.price)} options: {_options(i.options)}"
        for i in o.items
    ]
    paid = [f"{p.kind} {amount(p.amount)} via {_id(p.payment_method_id)}" for p in o.payments]
    lines.append(f"payments: {'; '.join(paid) or 'none'}")
    if o.shipments:
        shipped = [f"tracking {_ids(s.tracking_ids) or 'none'}" for s in o.shipments]
        lines.append(f"shipments: {'; '.join(shipped)}")
    if o.cancel_reason:
        lines.append(f"cancel_reason={_quoted(o.cancel_reason)}")
    if o.exchange is not None:
        e = o.exchange
        lines.append(
            f"exchange requested: {_ids(e.items)} -> {_ids(e.new_items)}, "
            f"difference {amount(e.price_difference)} via {_id(e.payment_method_id)}"
        )
    if o.returned is not None:
        lines.append(
            f"return requested: {_ids(o.returned.items)}, refund to "
            f"{_id(o.returned.payment_method_id)}"
        )
    return "\n".join(lines)


def _variant_record(v: Variant, product_id: str | None = None) -> str:
    owner = f" product_id={_id(product_id)}" if product_id else ""
    return (
        f"item_id={_id(v.item_id)}{owner} available={'yes' if v.available else 'no'} "
        f"price={major(v.price, v.currency, grouped=False)} currency={v.currency} "
        f"options: {_options(v.options)}"
    )


def _unshipped(o: Order) -> str:
    """An order with no shipment on record: not shipped, cancelled, or delivered (an order
    delivered before shipments were kept has its delivery date only)."""
    delivered = o.delivered_at
    if o.status == "CANCELLED":
        return "cancelled: it will not ship"
    if delivered is not None:
        return f"delivered_at={delivered.isoformat()}: no carrier or tracking number on record"
    if o.status.startswith("PENDING"):
        return "not shipped yet: no carrier or tracking number"
    return "no carrier or tracking number on record"


def _tracking_record(o: Order) -> str:
    head = f"order_id={_id(o.code)} status={_id(o.status)}"
    if not o.shipments:
        return f"{head}\n{_unshipped(o)}"
    lines = [head]
    for s in o.shipments:
        eta = s.estimated_delivery.isoformat() if s.estimated_delivery else "unknown"
        lines.append(
            f"carrier={_quoted(s.carrier) if s.carrier else 'none'} "
            f"tracking={','.join(map(_id, s.tracking_ids))} estimated_delivery={eta}"
        )
        lines += [
            f"- {e.happened_at} {_quoted(e.place)}: {_quoted(e.description)}"
            for e in s.events[-5:]  # the last events: a long journey is not a dump
        ]
    return "\n".join(lines)


_OPERATORS: dict[type, Callable[[Decimal, Decimal], Decimal]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def calculate(expression: str) -> str:
    """τ²-bench's `calculate`: +, -, *, /, parentheses, rounded to 2 decimals; evaluated as
    exact decimals by walking the expression (never `eval`), with no power (`**`)."""
    try:
        tree = ast.parse(expression, mode="eval")
        value = _evaluate(tree.body, depth=0)
    except (SyntaxError, ValueError, RecursionError):
        raise ToolFailure(
            f"cannot calculate {_quoted(expression)}: use numbers, + - * / and parentheses"
        ) from None
    except (DivisionByZero, InvalidOperation, ZeroDivisionError):
        raise ToolFailure(f"cannot calculate {_quoted(expression)}: division by zero") from None
    return str(round(float(value), 2))


def _evaluate(node: ast.expr, depth: int) -> Decimal:
    if depth > 50:
        raise ValueError("nested too deeply")
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return Decimal(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand, depth + 1)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _evaluate(node.left, depth + 1), _evaluate(node.right, depth + 1)
        return _OPERATORS[type(node.op)](left, right)
    raise ValueError("not arithmetic")


@dataclass(frozen=True, slots=True)
class _Reads:
    """The read tools' bodies, over one store opener and one conversation."""

    open_store: Callable[[], OrderStore]
    session: CustomerSession

    def find_by_email(self, args: EmailArgs) -> Observation:
        self.session.may_identify()
        found = record_reads.customer_by_email(self.open_store(), args.email)
        user = self.session.identified(
            found,
            "no customer with that email; ask the customer to check it, or for their first "
            "name, last name and zip code (find_user_id_by_name_zip)",
        )
        return Observation(user, record={"user_id": user})

    def find_by_name_zip(self, args: NameZipArgs) -> Observation:
        self.session.may_identify()
        store = self.open_store()
        found = record_reads.customer_by_name_zip(store, args.first_name, args.last_name, args.zip)
        user = self.session.identified(
            found,
            "no customer with that name and zip code; ask the customer to check them, or for "
            "their email (find_user_id_by_email)",
        )
        return Observation(user, record={"user_id": user})

    def user_details(self, args: UserArgs) -> Observation:
        self.session.check(args.user_id, f"user {args.user_id}")
        store = self.open_store()
        customer = record_reads.customer(store, args.user_id)
        if customer is None:
            raise ToolFailure(f"no user {args.user_id}")
        orders = record_reads.customer_orders(store, args.user_id)
        text = _customer_record(customer, orders)
        return Observation(text, record=records.customer_data(customer, orders))

    def desk_order(self, args: OrderArgs) -> tuple[OrderStore, Order]:
        """The order, once the conversation may see it: before identification every order
        is refused alike; after it, an order that does not exist and another customer's read
        the same, so no one learns which orders exist."""
        store = self.open_store()
        found = record_reads.order_named(store, args.order_id)
        self.session.check(found.customer_id if found else None, f"order {args.order_id}")
        if found is None:  # staff only: a customer was refused just above
            raise ToolFailure(f"no order {args.order_id}; check the order id (e.g. #W0000000)")
        self.session.order = found.code
        return store, found

    def order_details(self, args: OrderArgs) -> Observation:
        store, found = self.desk_order(args)
        refunded = store.refunded_total(found.code)
        shown = Read(found.code, found.status, refunded)  # facts an answer may state
        data = records.order_data(found, refunded)
        return Observation(_order_record(found, refunded), outcome=shown, record=data)

    def track(self, args: OrderArgs) -> Observation:
        found = self.desk_order(args)[1]
        shown = Read(found.code, found.status)
        data = records.tracking_data(found)
        return Observation(_tracking_record(found), outcome=shown, record=data)

    def product_details(self, args: ProductArgs) -> Observation:
        product = record_reads.product(self.open_store(), args.product_id)
        if product is None:
            raise ToolFailure(
                f"no product {args.product_id}; list_all_product_types names them (an item id "
                "is not a product id)"
            )
        lines = [f"product_id={_id(product.id)} name={_quoted(product.name)} variants:"]
        text = "\n".join(lines + [f"- {_variant_record(v)}" for v in product.variants])
        return Observation(text, record=records.product_data(product))

    def item_details(self, args: ItemArgs) -> Observation:
        found = record_reads.variant(self.open_store(), args.item_id)
        if found is None:
            raise ToolFailure(f"no item {args.item_id} (a product id is not an item id)")
        text = _variant_record(found[1], found[0])
        return Observation(text, record=records.variant_data(found[1], found[0]))

    def product_types(self, _: NoArgs) -> str:
        return json.dumps(record_reads.product_types(self.open_store()), ensure_ascii=False)


def desk_tools(open_store: Callable[[], OrderStore], session: CustomerSession) -> list[Tool[Any]]:
    """The read tools over the store `open_store()` opens, with identity kept in `session`."""
    return [
        Tool(t.name, t.description, t.args_model, _reporting(t.execute), t.after, until=t.until)
        for t in _tools(_Reads(open_store, session))
    ]


def _reporting(execute: Callable[[Any], Result]) -> Callable[[Any], Result]:
    """A row changed by hand into something unreadable is told as what it is (ERROR: ...),
    not as a tool that failed for no reason."""

    def run(args: Any) -> Result:
        try:
            return execute(args)
        except record_reads.UnreadableRecord as exc:
            raise ToolFailure(f"{exc}; tell the customer it cannot be shown now") from None

    return run


def _tools(reads: _Reads) -> list[Tool[Any]]:
    return [
        Tool(
            "find_user_id_by_email",
            "Identify the customer by the email they give: call it before any account, order "
            "or change tool. Returns their user id.",
            EmailArgs,
            reads.find_by_email,
            until=IDENTIFY,
        ),
        Tool(
            "find_user_id_by_name_zip",
            "Identify the customer by first name, last name and zip code, when they cannot give "
            "their email. Returns their user id.",
            NameZipArgs,
            reads.find_by_name_zip,
            until=IDENTIFY,
        ),
        Tool(
            "get_user_details",
            "The identified customer's account: address, payment method ids, order ids. Use it "
            "to list their orders or to find a payment method.",
            UserArgs,
            reads.user_details,
            after=IDENTIFY,
        ),
        Tool(
            "get_order_details",
            "One of the identified customer's orders: status, items (item ids), payments, where "
            "it ships. Read it before any change to the order.",
            OrderArgs,
            reads.order_details,
            after=IDENTIFY,
        ),
        Tool(
            "track_order",
            "Where one of the identified customer's orders is (where is my order?): carrier, "
            "tracking number, the latest events, the estimated delivery.",
            OrderArgs,
            reads.track,
            after=IDENTIFY,
        ),
        Tool(
            "get_product_details",
            "A product's variants (item ids, options, availability, prices): to find the item id "
            "of the variant the customer wants instead.",
            ProductArgs,
            reads.product_details,
            after=_PRODUCT_IDS,
        ),
        Tool(
            "get_item_details",
            "One item (a product's variant): options, availability, price.",
            ItemArgs,
            reads.item_details,
            after=("get_order_details", "get_product_details"),
        ),
        Tool(
            "list_all_product_types",
            "Every product's name and product id, as JSON: for a product named by its name.",
            NoArgs,
            reads.product_types,
            after=IDENTIFY,  # the catalogue opens with the customer's records (tools/offered.py)
        ),
        Tool(
            "calculate",
            "Arithmetic: numbers, + - * / and parentheses; the result rounded to 2 decimals.",
            CalculateArgs,
            lambda args: calculate(args.expression),
            after=IDENTIFY,
        ),
    ]
