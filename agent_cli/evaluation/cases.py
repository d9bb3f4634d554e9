"""Eval cases: a question, the orders it runs against, and what a correct run does.

A case file is TOML (`[[cases]]` tables) or JSON (`{"cases": [...]}` or a bare array). Every
case is validated before anything runs; the first bad one is reported by id and number with the
field at fault, as a CaseFileError (exit 2).
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from agent_cli.domain.orders import ORDER_CODE_PATTERN, Order
from agent_cli.domain.records import DeskData
from agent_cli.domain.write_tools import DeskWrite
from agent_cli.errors import CaseFileError, OrderFileError
from agent_cli.evaluation.customer import Persona
from agent_cli.evaluation.intents import Intent
from agent_cli.policy.verdicts import RefundVerdict
from agent_cli.store.formats.order_files import OrderRecord
from agent_cli.store.formats.tau2 import parse_tau2, read_tau2
from agent_cli.store.help_articles import ARTICLE_ID
from agent_cli.text import read_text_file
from agent_cli.validation_text import describe_fields_error

VERDICTS: tuple[RefundVerdict, ...] = ("refundable", "not_refundable", "not_found")
NEEDS_INPUT = "needs_input"
# What a case may judge a run on; a case states at least one (a gate with none passes anything).
CRITERIA = (
    "verdict",
    "answer_matches",
    "must_call",
    "must_not_call",
    "intent",
    "writes",
    "handover",
    "cited",
    "orders_after",
    "reference",
    "facts",
)
MAX_CASES = 10_000
MAX_TURNS = 50  # the customer's messages in one conversation, the opening included
MAX_FILE_BYTES = 10 * 2**20
_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"  # also a file name under --record


class OrderAfter(BaseModel):
    """What an order must hold in the case's store once the run is over (each field given is
    compared; the rest is not)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    status: str | None = None
    items: list[str] | None = None  # the item ids, in order, duplicates kept
    zip: str | None = None  # of the address it ships to
    cancel_reason: str | None = None
    returned: list[str] | None = None  # the item ids of its return request
    exchanged: list[str] | None = None  # the item ids of its exchange request (the old ones)


Message = Annotated[str, StringConstraints(min_length=1, max_length=4000)]


class ReferenceWrite(BaseModel):
    """One write of a case's reference: what a correct conversation leaves behind is what
    these calls, made through the same tools on a copy of the starting store, leave."""

    model_config = ConfigDict(extra="forbid")

    tool: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    args: dict[str, Any] = Field(default_factory=dict)


class CustomerRecord(BaseModel):
    """A customer to simulate (`--customer-model` plays them): τ²'s user scenario."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    instructions: Annotated[str, StringConstraints(min_length=1, max_length=8000)]
    known: Annotated[str, StringConstraints(max_length=4000)] = ""
    unknown: Annotated[str, StringConstraints(max_length=4000)] = ""


class _CaseRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    id: Annotated[str, StringConstraints(pattern=_ID)] | None = None
    question: Message | None = None
    turns: list[Message] = Field(default_factory=list, max_length=MAX_TURNS)
    customer: CustomerRecord | None = None
    max_turns: int = Field(default=20, ge=1, le=MAX_TURNS)
    store: Literal["sample"] | Annotated[str, StringConstraints(min_length=1)] | dict[str, Any] = (
        "sample"
    )
    reference: list[ReferenceWrite] | None = Field(default=None, max_length=50)
    facts: list[Annotated[str, StringConstraints(min_length=1, max_length=400)]] = Field(
        default_factory=list, max_length=50
    )
    today: date | None = None
    orders: list[OrderRecord] = Field(default_factory=list, max_length=1000)
    verdict: dict[str, RefundVerdict] | Literal["needs_input"] | None = None  # checked by _codes
    answer_matches: list[str] = Field(default_factory=list, max_length=50)
    must_call: list[Annotated[str, StringConstraints(min_length=1)]] = Field(default_factory=list)
    must_not_call: list[Annotated[str, StringConstraints(min_length=1)]] = Field(
        default_factory=list
    )
    max_steps: int | None = Field(default=None, ge=1, le=100)
    replies: list[Annotated[str, StringConstraints(min_length=1)]] = Field(default_factory=list)
    intent: Intent | None = None
    writes: list[DeskWrite] | None = Field(default=None, max_length=20)
    handover: bool | None = None
    cited: list[Annotated[str, StringConstraints(pattern=ARTICLE_ID)]] = Field(
        default_factory=list, max_length=20
    )
    orders_after: dict[str, OrderAfter] = Field(default_factory=dict, max_length=50)
    approve: bool = False

    @field_validator("orders_after")
    @classmethod
    def _after_codes(cls, value: dict[str, OrderAfter]) -> dict[str, OrderAfter]:
        for code in value:
            if not re.fullmatch(ORDER_CODE_PATTERN, code):
                raise ValueError(f"{code!r} is not an order code (letters and digits)")
        return {code.upper(): after for code, after in value.items()}

    @field_validator("verdict", mode="before")
    @classmethod
    def _codes(cls, value: object) -> object:
        """One clear message instead of pydantic's, which names both arms of the union."""
        if value is None or value == NEEDS_INPUT:
            return value
        if not isinstance(value, dict):
            raise ValueError('expected a table of order code = verdict, or "needs_input"')
        verdicts: dict[str, str] = {}
        for code, verdict in value.items():
            if not re.fullmatch(ORDER_CODE_PATTERN, code):
                raise ValueError(f"{code!r} is not an order code (letters and digits)")
            if verdict not in VERDICTS:
                raise ValueError(f"{code}: {verdict!r} is not a verdict; use {', '.join(VERDICTS)}")
            verdicts[code.upper()] = verdict
        return verdicts

    @field_validator("answer_matches")
    @classmethod
    def _patterns(cls, patterns: list[str]) -> list[str]:
        for number, pattern in enumerate(patterns):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"item {number}: not a valid regular expression: {exc}") from None
        return patterns


@dataclass(frozen=True, slots=True)
class DeskExpectations:
    """What a desk answer must be besides its verdicts (issue 41): the intent it worked on, the
    writes committed (None: not judged; empty: none), a ticket opened or not, the articles it
    cites, and the orders after the run."""

    intent: Intent | None = None
    writes: tuple[str, ...] | None = None
    handover: bool | None = None
    cited: tuple[str, ...] = ()
    orders_after: tuple[tuple[str, OrderAfter], ...] = ()
    heard: Intent | None = None  # a held-out corpus line's intent (evaluation/heard.py)


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalCase:
    """One validated case; `verdicts` maps order codes to the verdict the answer must give."""

    id: str
    question: str
    today: date | None = None
    orders: tuple[Order, ...] = ()
    verdicts: tuple[tuple[str, RefundVerdict], ...] = ()
    needs_input: bool = False  # the run must end asking a question nobody answers
    answer_matches: tuple[re.Pattern[str], ...] = ()
    must_call: tuple[str, ...] = ()
    must_not_call: tuple[str, ...] = ()
    max_steps: int | None = None
    replies: tuple[str, ...] = ()  # answers to the model's clarifying questions, in order
    desk: DeskExpectations = DeskExpectations()
    approve: bool = False  # approvals are given (as by the operator), not denied
    # A conversation: the customer's messages after the opening `question`, each answering the
    # agent's question or starting the next turn, until they run out, a hand-over or max_turns.
    turns: tuple[str, ...] = ()
    conversation: bool = False
    max_turns: int = 20
    start: DeskData | None = None  # the starting store's desk data; None: the sample shop
    reference: tuple[ReferenceWrite, ...] | None = None  # None: the end state is not judged
    facts: tuple[str, ...] = ()  # what the agent must have said (τ²'s communicate_info)
    customer: Persona | None = None  # a customer to simulate instead of the turns

    @property
    def kind(self) -> Literal["question", "conversation"]:
        return "conversation" if self.conversation else "question"


def load_cases(path: Path) -> tuple[EvalCase, ...]:
    """Read and validate a .toml or .json case file; CaseFileError names what is wrong. A
    case's `store` file is read relative to the case file."""
    return parse_cases(
        _read(path), str(path), json_file=path.suffix.lower() == ".json", base=path.parent
    )


BUILTIN_FILES = ("builtin.toml", "conversations.toml")  # questions, then conversations


def builtin_cases() -> tuple[EvalCase, ...]:
    """The public case set shipped with agent-cli (`agent eval run --builtin`): the questions,
    then the desk's conversations."""
    cases: list[EvalCase] = []
    for name in BUILTIN_FILES:
        text = resources.files("agent_cli.evaluation").joinpath(name).read_text("utf-8")
        cases += parse_cases(text, f"builtin cases ({name})", json_file=False)
    if len({case.id for case in cases}) != len(cases):  # pragma: no cover - a packaging mistake
        raise CaseFileError("builtin cases: an id is used twice across the built-in files")
    return tuple(cases)


def parse_cases(
    text: str, where: str, *, json_file: bool, base: Path | None = None
) -> tuple[EvalCase, ...]:
    raw = _decode(text, where, json_file=json_file)
    cases: list[EvalCase] = []
    seen: dict[str, int] = {}
    stores = _Stores(base)
    for number, item in enumerate(raw, start=1):
        case = _case(item, where, number, stores)
        if case.id in seen:
            raise CaseFileError(
                f"{where}: case {number}: id {case.id!r} is already used by case {seen[case.id]}"
            )
        seen[case.id] = number
        cases.append(case)
    if not cases:
        raise CaseFileError(f"{where}: no cases; add [[cases]] tables with a question each")
    return tuple(cases)


def _read(path: Path) -> str:
    if path.suffix.lower() not in (".toml", ".json"):
        raise CaseFileError(f"{path}: unsupported case file; use a .toml or .json file")
    return read_text_file(path, max_bytes=MAX_FILE_BYTES, error=CaseFileError)


def _decode(text: str, where: str, *, json_file: bool) -> list[Any]:
    try:
        data: Any = json.loads(text) if json_file else tomllib.loads(text)
    except json.JSONDecodeError as exc:
        raise CaseFileError(f"{where}: line {exc.lineno}: not valid JSON: {exc.msg}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CaseFileError(f"{where}: not valid TOML: {exc}") from None
    except RecursionError:  # the parsers recurse once per level of nesting
        raise CaseFileError(f"{where}: nested too deeply to read; no case needs that") from None
    if isinstance(data, dict):
        if unknown := sorted(set(data) - {"cases"}):
            raise CaseFileError(f"{where}: unknown top-level key {unknown[0]!r}; expected cases")
        data = data.get("cases", [])
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise CaseFileError(f"{where}: expected a list of case tables under 'cases'")
    if len(data) > MAX_CASES:
        raise CaseFileError(f"{where}: {len(data):,} cases; the limit is {MAX_CASES:,}")
    return data


class _Stores:
    """The starting stores a case file names, each file read once however many cases use it."""

    def __init__(self, base: Path | None) -> None:
        self._base = base
        self._read: dict[Path, DeskData] = {}

    def start(self, store: str | dict[str, Any]) -> DeskData | None:
        if store == "sample":
            return None
        if isinstance(store, dict):
            return parse_tau2(store, "store")  # rows given in the case, in τ²'s shape
        if self._base is None:
            raise ValueError("a store file needs a case file to be read relative to")
        path = (self._base / store).resolve()
        if path not in self._read:
            self._read[path] = read_tau2(path)
        return self._read[path]


def _case(item: dict[str, Any], where: str, number: int, stores: _Stores) -> EvalCase:
    name = f"case {number}" + (f" ({item['id']!r})" if isinstance(item.get("id"), str) else "")
    try:
        record = _CaseRecord.model_validate(item)
        orders = tuple(order.to_order() for order in record.orders)
    except ValidationError as exc:
        raise CaseFileError(f"{where}: {name}: {describe_fields_error(exc, _CaseRecord)}") from None
    except ValueError as exc:  # an order record's own rule (delivered_at for DELIVERED)
        raise CaseFileError(f"{where}: {name}: orders: {exc}") from None
    opening, turns = _messages(record, f"{where}: {name}")
    try:
        start = stores.start(record.store)
    except (OrderFileError, ValueError) as exc:
        raise CaseFileError(f"{where}: {name}: store: {exc}") from None
    if not any(_states(record, field) for field in CRITERIA):
        raise CaseFileError(
            f"{where}: {name}: no criteria, so any answer would pass; say what a correct run "
            f"does: {', '.join(CRITERIA)}"
        )
    verdict = record.verdict
    return EvalCase(
        id=record.id or f"case-{number}",
        question=opening,
        today=record.today,
        orders=orders,
        verdicts=tuple(verdict.items()) if isinstance(verdict, dict) else (),
        needs_input=verdict == NEEDS_INPUT,
        answer_matches=tuple(re.compile(p) for p in record.answer_matches),
        must_call=tuple(record.must_call),
        must_not_call=tuple(record.must_not_call),
        max_steps=record.max_steps,
        replies=tuple(record.replies),
        desk=DeskExpectations(
            record.intent,
            None if record.writes is None else tuple(record.writes),
            record.handover,
            tuple(record.cited),
            tuple(record.orders_after.items()),
        ),
        approve=record.approve,
        turns=turns,
        conversation=bool(record.turns) or record.customer is not None,
        max_turns=record.max_turns,
        start=start,
        reference=None if record.reference is None else tuple(record.reference),
        facts=tuple(record.facts),
        customer=None if record.customer is None else Persona(**record.customer.model_dump()),
    )


def _states(record: _CaseRecord, field: str) -> bool:
    """Whether the case judges by `field`: given, and not empty, except for the writes and the
    reference, where none (`[]`) is a claim: nothing is written, nothing changes."""
    value = getattr(record, field)
    return value is not None and (field in ("writes", "reference") or value not in ([], {}))


def _messages(record: _CaseRecord, name: str) -> tuple[str, tuple[str, ...]]:
    """The opening message and the customer's turns after it: `question` (with `replies` to
    the agent's questions), or a conversation's `turns`, the first of them the opening."""
    if record.customer is not None:
        if record.question is not None or record.replies or record.turns:
            raise CaseFileError(
                f"{name}: a simulated customer speaks for themselves; drop question, replies "
                "and turns (or the customer)"
            )
        return " ".join(record.customer.instructions.split()), ()
    if record.turns:
        if record.question is not None or record.replies:
            raise CaseFileError(
                f"{name}: give the customer's messages as turns alone (the first is the "
                "opening); question and replies are for a one-question case"
            )
        return record.turns[0], tuple(record.turns[1:])
    if record.question is None:
        raise CaseFileError(f'{name}: no question; give question = "..." or turns = [...]')
    return record.question, ()
