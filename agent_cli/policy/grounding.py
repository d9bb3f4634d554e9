"""The grounding check: a support answer may only state facts about orders this run looked up.

A model can answer "order A100 is not refundable" without calling a tool at all. Before a final
answer is accepted, every order code it names must have a successful `lookup_order` in this
run's history, unless each sentence naming that code says it could not be checked ("I could not
check order A100: ..."). Nor may it contradict what those lookups computed: an answer calling
an order refundable whose lookup says `refundable_now=no` (or NOT_FOUND) is wrong whatever the
model's reasoning. And an answer after a lookup must name the order: a bare "Yes." says nothing
a customer can act on. An answer that fails is fed back to the model as a repair.

Order codes in text are letters then digits (`A100`, `ab12`, full-width folded); the tool itself
accepts any ASCII letters and digits, but free text needs a narrower pattern, or every word
would be a code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from agent_cli.core.decisions import StatedClaim, Step
from agent_cli.core.tool_outcomes import NotFound, Opaque, Read
from agent_cli.domain.write_tools import DESK_WRITES
from agent_cli.policy import claims
from agent_cli.policy.verdicts import (
    CODE,
    COMPUTED,
    RefundVerdict,
    find_order_codes,
    fold,
    read_computed,
    stated_verdicts,
)

LOOKUP_TOOL = "lookup_order"
MAX_CODES_NAMED = 10

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])|\n+")
_UNCHECKED = re.compile(
    r"could not|couldn't|cannot|can't|unable|not able|was not looked up"
    r"|確認できません|確認できませんでした|判断できません",
    re.IGNORECASE,
)


# The tools that read one order, and the argument naming it: the seed's lookup by code, the
# desk's reads of an identified customer's order and its writes to one (a refused call is an
# error: no grounds).
ORDER_READS: dict[str, str] = {
    LOOKUP_TOOL: "order_code",
    "get_order_details": "order_id",
    "track_order": "order_id",
    # the desk's writes read the order they propose (or make) a change to
    **dict.fromkeys((w for w in DESK_WRITES if w != "modify_user_address"), "order_id"),
}


def looked_up(history: tuple[Step, ...]) -> set[str]:
    """The order codes with a successful read in `history` (NOT_FOUND is a success), as the
    text names them (τ²'s `#W2611340` as `W2611340`)."""
    return {
        fold(str(step.call.args.get(argument, ""))).upper().lstrip("#")
        for step in history
        if step.call is not None
        and (argument := ORDER_READS.get(step.call.tool)) is not None
        and not step.is_error
    }


# What is not prose for a customer: a JSON object (or its HTML-escaped form), a tool call
# written out as text, markup escaped for HTML. SmolLM2-135M in tools mode answered
# `A:\n{&#34;order_code&#34;: &#34;A100&#34}`, and it was shown to the customer as the answer.
_NOT_PROSE = re.compile(
    r"\{\s*(?:\"|&#34;|&quot;|\\\")[^\"&\\]{1,80}(?:\"|&#34;|&quot;|\\\")\s*:"  # {"key":
    r"|&(?:#\d{2,5}|#x[0-9a-fA-F]{2,4}|quot|lt|gt|amp|apos);"  # escaped markup
    r"|\b[a-z][a-z0-9_]*\(\s*[a-z_][a-z0-9_]*\s*=",  # lookup_order(order_code=
)


def not_prose(answer: str) -> str | None:
    """Why an answer is not prose a customer can read, or None."""
    if _NOT_PROSE.search(answer) is None:
        return None
    return (
        "the answer is not written for the customer (it holds JSON, a tool call written as "
        "text, or escaped markup); call the tool if one is needed, else answer in plain "
        "sentences"
    )


_ISO_DATE = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-])")
_JA_DATE = re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})日")
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_AMOUNT = re.compile(
    rf"(?:[$¥￥]\s?({_NUMBER}))|(?:({_NUMBER})\s?(?:JPY|USD|EUR|GBP|yen|dollars?|円))",
    re.IGNORECASE,
)
_ANY_NUMBER = re.compile(_NUMBER)


def unfounded_figures(answer: str, sources: str) -> str | None:
    """A date or an amount the answer states that `sources` (the run's observations, the
    question, today's date) never gave; the first one, or None. A model must not make one up
    (SmolLM2-135M told a customer "Refunds are available for 2027-09-28")."""
    folded = fold(answer)
    dates = {"-".join(m.groups()) for m in _ISO_DATE.finditer(folded)}
    dates |= {f"{y}-{int(m):02d}-{int(d):02d}" for y, m, d in _JA_DATE.findall(folded)}
    known_dates = {"-".join(m.groups()) for m in _ISO_DATE.finditer(sources)}
    if missing := sorted(dates - known_dates):
        return (
            f"the answer states the date {missing[0]}, which no tool result, the question or "
            "today gives"
        )
    known = {_decimal(n) for n in _ANY_NUMBER.findall(sources)}
    for found in _AMOUNT.finditer(folded):
        amount = found.group(1) or found.group(2)
        if _decimal(amount) not in known:
            return (
                f"the answer states the amount {found.group(0).strip()}, which no tool result or "
                "the question gives"
            )
    return None


def _decimal(number: str) -> Decimal:
    return Decimal(number.replace(",", ""))


def unfounded_claim(
    answer: str, history: tuple[Step, ...], stated: tuple[StatedClaim, ...] = ()
) -> str | None:
    """An act the answer says was done, in its text (any wording, English or Japanese) or as
    data (JSON mode's `claims`), that neither this run's outcomes nor the store's facts bear
    out (policy/claims.py)."""
    return claims.unfounded_stated(stated, history) or claims.unfounded(answer, history)


_CITED = re.compile(r"\[([a-z0-9]+(?:[-_][a-z0-9]+)*)\]")
_HELP_TOOLS = ("search_help", "get_article")


def _articles(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The articles a help tool's record holds: a search's hits, or the one article read."""
    if "hits" in record:
        return list(record["hits"])
    return [record] if "id" in record else []


def unfounded_citation(answer: str, history: tuple[Step, ...]) -> str | None:
    """A help article cited as [id] that no search_help or get_article of this run returned."""
    retrieved = {
        str(found["id"])
        for step in history
        if step.call is not None and step.call.tool in _HELP_TOOLS and not step.is_error
        for found in _articles(step.record or {})
    }
    if missing := [c for c in dict.fromkeys(_CITED.findall(answer)) if c not in retrieved]:
        return (
            f"the answer cites [{missing[0]}], which no search_help or get_article of this run "
            "returned; cite only the articles the help centre gave, or search it first"
        )
    return None


def ground_answer(
    answer: str,
    history: tuple[Step, ...],
    stated: tuple[StatedClaim, ...] = (),
    *,
    question: str | None = None,
    today: str = "",
) -> str | None:
    """None when the answer is grounded; else the problem, worded for the model to fix. With
    the `question` (and `today`), the dates and amounts it states must come from somewhere;
    `stated`: what the answer says was done, as data (checked as the text is)."""
    problem = not_prose(answer) or unfounded_claim(answer, history, stated)
    if (problem := problem or unfounded_citation(answer, history)) is not None:
        return problem
    if question is not None:
        sources = "\n".join([question, today, *(step.observation for step in history)])
        if (problem := unfounded_figures(answer, fold(sources))) is not None:
            return f"{problem}; state only dates and amounts the tools gave"
    folded = fold(answer)
    codes = CODE.findall(folded)
    if not codes:
        return _unnamed(history, folded)
    known = looked_up(history)
    if all(code.upper() in known for code in codes):  # the common case: no sentence split
        return _contradicted(answer, history)
    return _unchecked(folded, known) or _contradicted(answer, history)


def _unchecked(folded: str, known: set[str]) -> str | None:
    """The orders the answer states facts about without a lookup behind them."""
    named_in: dict[str, list[str]] = {}  # code -> the sentences naming it, found in one pass
    for sentence in _SENTENCE_END.split(folded):
        for code in find_order_codes(sentence):
            named_in.setdefault(code, []).append(sentence)
    unchecked = [
        code
        for code, sentences in named_in.items()
        if code not in known and not all(_UNCHECKED.search(s) for s in sentences)
    ]
    if not unchecked:
        return None
    named = ", ".join(unchecked[:MAX_CODES_NAMED])
    if len(unchecked) > MAX_CODES_NAMED:  # the repair stays short whatever the answer held
        named += f" and {len(unchecked) - MAX_CODES_NAMED} more"
    return (
        f"the answer states facts about order {named}, which this run has not looked up "
        f"successfully; call {LOOKUP_TOOL} for {named} first and answer from its result, "
        "or say that it could not be checked"
    )


def _unnamed(history: tuple[Step, ...], answer: str) -> str | None:
    """A bare "Yes." after a lookup: the customer cannot tell which order it is about. A code
    no order has ("A1OO was not found") names it as the customer wrote it."""
    codes = sorted(looked_up(history))
    if not codes or any(code in answer.upper() for code in codes):
        return None
    return (
        f"the answer does not name the order it is about; say which order ({', '.join(codes)}) "
        "and why, from the lookup"
    )


_SAID = {"refundable": "refundable", "not_refundable": "not refundable", "not_found": "not found"}


def _computed(step: Step) -> tuple[RefundVerdict | None, str] | None:
    """What a lookup computed: its outcome says (a trace from before outcomes: its text)."""
    outcome = step.outcome
    if isinstance(outcome, Read):
        return None if outcome.refundable is None else (COMPUTED[outcome.refundable], outcome.why)
    return read_computed(step.observation) if isinstance(outcome, Opaque) else None


def computed_verdicts(history: tuple[Step, ...]) -> dict[str, tuple[RefundVerdict, str]]:
    """What the newest successful lookup of each order computed: its verdict and why."""
    computed: dict[str, tuple[RefundVerdict, str]] = {}
    for step in history:
        if step.call is None or step.call.tool != LOOKUP_TOOL or step.is_error:
            continue
        code = fold(str(step.call.args.get("order_code", ""))).upper()
        if isinstance(step.outcome, NotFound):
            computed[code] = ("not_found", "no order has that code")
        elif (found := _computed(step)) is not None:
            verdict, why = found
            if verdict is not None:
                computed[code] = (verdict, why)
            else:
                computed.pop(code, None)
    return computed


def _contradicted(answer: str, history: tuple[Step, ...]) -> str | None:
    """An answer whose verdict on an order is not the one its lookup computed."""
    computed = computed_verdicts(history)
    if not computed:
        return None
    for code, stated in stated_verdicts(answer).items():
        if stated is None or code not in computed:
            continue
        found, why = computed[code]
        if stated != found:
            return (
                f"the answer says order {code} is {_SAID[stated]}, but its lookup says it is "
                f"{_SAID[found]} ({why}); answer from the lookup"
            )
    return None
