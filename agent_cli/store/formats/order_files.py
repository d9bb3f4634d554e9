"""Reading orders from CSV or JSON files for `agent orders import`.

Every record is validated before anything is written; the first bad one is reported with its
line (CSV) or item number (JSON) and the reason, and nothing is imported.
"""

from __future__ import annotations

import csv
import json
import re
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
)

from agent_cli.core.decisions import describe_validation_error
from agent_cli.domain.currencies import major_number, to_minor
from agent_cli.domain.orders import ORDER_CODE_PATTERN, ORDER_ID_PATTERN, Order
from agent_cli.errors import OrderFileError, UsageError
from agent_cli.text import plain_note, plain_value, read_text_file

COLUMNS = ("code", "status", "total", "delivered_at", "currency", "customer", "note")
REQUIRED_COLUMNS = ("code", "status", "total")
MAX_FILE_BYTES = 50 * 1024 * 1024


class OrderRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    code: Annotated[str, StringConstraints(pattern=ORDER_CODE_PATTERN)]
    status: Literal["PENDING", "SHIPPING", "DELIVERED", "CANCELLED", "REFUNDED"]
    total: Decimal = Field(ge=0, le=10**12, allow_inf_nan=False)  # major units: 129.99 USD
    delivered_at: date | None = None
    currency: Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")] = "JPY"
    customer: (
        Annotated[str, StringConstraints(max_length=200), AfterValidator(plain_value)] | None
    ) = None
    note: Annotated[str, StringConstraints(max_length=2_000), AfterValidator(plain_note)] | None = (
        None
    )

    def to_order(self) -> Order:
        if self.status == "DELIVERED" and self.delivered_at is None:
            raise ValueError("delivered_at: required when status is DELIVERED")
        try:
            total = to_minor(self.total, self.currency)
        except ValueError as exc:
            raise ValueError(f"total: {exc}") from None
        return Order(
            self.code.upper(),
            self.status,
            total,
            self.delivered_at,
            self.currency,
            self.customer or None,
            self.note or None,
        )


def order_record(order: Order) -> dict[str, Any]:
    """An order as an `OrderRecord` reads it (a trace keeps an eval case's orders so)."""
    delivered = order.delivered_at.isoformat() if order.delivered_at else None
    return {
        "code": order.code,
        "status": order.status,
        "total": major_number(order.total, order.currency),
        "delivered_at": delivered,
        "currency": order.currency,
        "customer": order.customer,
        "note": order.note,
    }


def normalise_code(code: str) -> str:
    """An order code typed by a user, checked and upper-cased; UsageError if it cannot be one."""
    if not re.fullmatch(ORDER_ID_PATTERN, code):
        shown = code if len(code) <= 20 else code[:20] + "..."
        raise UsageError(
            f"{shown!r} is not an order code; codes are letters and digits, e.g. A100 "
            "(or τ²-bench's #W2611340)"
        )
    return code.upper()


def read_orders(path: Path) -> list[Order]:
    """Parse and validate a .csv or .json orders file; raise OrderFileError naming the problem."""
    text = read_text_file(path, max_bytes=MAX_FILE_BYTES, error=OrderFileError)
    if path.suffix.lower() == ".json":
        records = _json_records(path, text)
    elif path.suffix.lower() == ".csv":
        records = _csv_records(path, text)
    else:
        raise OrderFileError(f"{path}: unsupported file type; use a .csv or .json file")
    orders: list[Order] = []
    seen: dict[str, str] = {}
    for where, raw in records:
        order = _validate(path, where, raw)
        if order.code in seen:
            raise OrderFileError(
                f"{path}: {where}: order {order.code} already appears at {seen[order.code]}"
            )
        seen[order.code] = where
        orders.append(order)
    if not orders:
        raise OrderFileError(f"{path}: no orders found")
    return orders


def _json_records(path: Path, text: str) -> list[tuple[str, Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OrderFileError(f"{path}: line {exc.lineno}: not valid JSON: {exc.msg}") from None
    except RecursionError:  # json recurses once per level of nesting
        raise OrderFileError(f"{path}: nested too deeply to read") from None
    if not isinstance(data, list):
        raise OrderFileError(f"{path}: expected a JSON array of order objects")
    return [(f"item {number}", item) for number, item in enumerate(data, start=1)]


def _csv_records(path: Path, text: str) -> list[tuple[str, Any]]:
    reader = csv.DictReader(text.splitlines(keepends=True), strict=True)
    header = [name.strip() for name in reader.fieldnames or []]
    unknown = [name for name in header if name not in COLUMNS]
    missing = [name for name in REQUIRED_COLUMNS if name not in header]
    if unknown or missing:
        problems = [f"unknown column {name!r}" for name in unknown]
        problems += [f"missing column {name!r}" for name in missing]
        raise OrderFileError(
            f"{path}: line 1: {'; '.join(problems)}; columns are {', '.join(COLUMNS)}"
        )
    reader.fieldnames = header
    records: list[tuple[str, Any]] = []
    try:
        for row in reader:
            if None in row or None in row.values():
                raise OrderFileError(
                    f"{path}: line {reader.line_num}: expected {len(header)} fields"
                )
            records.append((f"line {reader.line_num}", {k: v for k, v in row.items() if v != ""}))
    except csv.Error as exc:
        raise OrderFileError(f"{path}: line {reader.line_num}: {exc}") from None
    return records


def _validate(path: Path, where: str, raw: Any) -> Order:
    try:
        return OrderRecord.model_validate(raw).to_order()
    except ValidationError as exc:
        raise OrderFileError(f"{path}: {where}: {describe_validation_error(exc)}") from None
    except ValueError as exc:
        raise OrderFileError(f"{path}: {where}: {exc}") from None
