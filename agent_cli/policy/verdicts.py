"""The verdict an answer states for each order it names, read from English or Japanese text.

The answer is split into clauses (at sentence ends, `;`, "but", "however", "whereas", "一方");
for each order, the clauses that name it are read for the first wording that matches, in this
order of precedence:

- undecided: "cannot tell", "unable to determine", "判断できません" (no verdict at all)
- not_found: "not found", "no order", "does not exist", "見つかりません", "存在しません"
- not_refundable: "not refundable", "cannot be refunded", "not eligible", "返金できません"
- refundable: "refundable", "can be refunded", "eligible for a refund", "返金可能", "返金できます"

When the answer names a single order, a clause that names none counts too ("Order A100 was
delivered 12 days ago. It is refundable."). Used by the grounding check (an answer may not
contradict its own lookups) and by `agent eval`'s judge.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date
from decimal import Decimal
from typing import Literal

from agent_cli.language.intent_model import EMAIL
from agent_cli.policy.language import language_of

RefundVerdict = Literal["refundable", "not_refundable", "not_found"]

# ASCII word boundaries: "注文A100は" has one before A; `_` is a word character, so fold turns
# it into a space first ("_A100_" is Markdown emphasis). Faster than lookarounds.
CODE = re.compile(r"\b[A-Za-z]{1,3}[0-9]{2,9}\b", re.ASCII)


def find_order_codes(text: str) -> list[str]:
    """Order codes in `text`, upper-cased, in order of first mention (full-width folded),
    none read from an email address."""
    folded = fold(text)  # τ²-bench's emails hold code-like parts: `sofia.li9874@...`
    unmailed = EMAIL.sub(" ", folded) if "@" in folded else folded
    return list(dict.fromkeys(match.upper() for match in CODE.findall(unmailed)))


def fold(text: str) -> str:
    folded = text if text.isascii() else unicodedata.normalize("NFKC", text)
    return folded.replace("_", " ")


_CLAUSE_END = re.compile(
    r"(?<=[.!?])\s+|(?<=[。！？])|\n+|;|；|\bbut\b|\bhowever\b|\bwhereas\b|一方",
    re.IGNORECASE,
)
_WORDINGS: tuple[tuple[RefundVerdict | None, re.Pattern[str]], ...] = (
    (
        None,
        re.compile(
            r"cannot tell|can't tell|unable to (?:tell|determine)|cannot determine|not sure"
            r"|判断できません|判断できない",
            re.IGNORECASE,
        ),
    ),
    (
        "not_found",
        re.compile(
            r"not found|no order (?:with|named|called)|no such order|does not exist"
            r"|doesn't exist|could not find|couldn't find|cannot find|can't find"
            r"|見つかりません|見つかりませんでした|存在しません",
            re.IGNORECASE,
        ),
    ),
    (
        "not_refundable",
        re.compile(
            r"not refundable|non-refundable|isn't refundable|not eligible|isn't eligible"
            r"|cannot be refunded|can't be refunded|can not be refunded|not be refunded"
            r"|no refund is possible|返金できません|返金不可|返金対象外|返金はできません"
            r"|返金することはできません|返金の対象外",
            re.IGNORECASE,
        ),
    ),
    (
        "refundable",
        re.compile(
            r"refundable|can be refunded|eligible for a refund|qualifies for a refund"
            r"|返金可能|返金できます|返金の対象です|返金を受けられます",
            re.IGNORECASE,
        ),
    ),
)


def stated_verdicts(answer: str) -> dict[str, RefundVerdict | None]:
    """The verdict the answer states for each order code it names (None: named, but no verdict
    or explicitly undecided)."""
    clauses = [c for c in _CLAUSE_END.split(unicodedata.normalize("NFKC", answer)) if c.strip()]
    codes = find_order_codes(answer)
    verdicts: dict[str, RefundVerdict | None] = {}
    for code in codes:
        naming = [c for c in clauses if code in find_order_codes(c)]
        if len(codes) == 1:  # the rest of the answer can only be about this order
            naming += [c for c in clauses if not find_order_codes(c)]
        verdicts[code] = next((verdict for found, verdict in map(_wording, naming) if found), None)
    return verdicts


def _wording(clause: str) -> tuple[bool, RefundVerdict | None]:
    """(True, verdict) for the first wording that matches (verdict None: undecided)."""
    for verdict, pattern in _WORDINGS:
        if pattern.search(clause):
            return True, verdict
    return False, None


# What `lookup_order` computes, in its own line: written and read here only, so the tool and the
# grounding check cannot drift apart.
_COMPUTED = re.compile(r"^refundable_now=(yes|no|unknown) as_of=\S+ \((.*)\)$", re.MULTILINE)
COMPUTED: dict[str, RefundVerdict | None] = {  # a lookup's computed verdict, as an answer states it
    "yes": "refundable",
    "no": "not_refundable",
    "unknown": None,
}


def computed_line(verdict: Literal["yes", "no", "unknown"], as_of: date, why: str) -> str:
    """`refundable_now=yes|no|unknown as_of=DATE (why)`."""
    return f"refundable_now={verdict} as_of={as_of.isoformat()} ({why})"


def read_computed(observation: str) -> tuple[RefundVerdict | None, str] | None:
    """The verdict a lookup's computed line states (None: unknown) and why; None without one."""
    found = _COMPUTED.search(observation)
    if found is None:
        return None
    return COMPUTED[found.group(1)], found.group(2)


def is_japanese(text: str) -> bool:
    """Whether the customer wrote in Japanese (policy/language.py: Chinese is not)."""
    return language_of(text) == "ja"


# The amount on a lookup's first line (`order=A100 status=DELIVERED total=250000 currency=JPY`).
_AMOUNT = re.compile(r"^order=\S+ status=\S+ total=(\d+(?:\.\d+)?) currency=([A-Z]{3})\b")


def read_amount(observation: str, japanese: bool) -> str | None:
    """A lookup's total, written for a person (`250,000 JPY`, in Japanese `250,000円`); None
    without one."""
    found = _AMOUNT.match(observation)
    if found is None:
        return None
    total, currency = f"{Decimal(found.group(1)):,}", found.group(2)
    return f"{total}円" if japanese and currency == "JPY" else f"{total} {currency}"


_OPENINGS: dict[bool, dict[RefundVerdict, str]] = {  # by whether the question is Japanese
    False: {
        "refundable": "Order {code}{amount} is refundable: {why}.",
        "not_refundable": "Order {code}{amount} is not refundable: {why}.",
        "not_found": "Order {code} was not found.",
    },
    True: {
        "refundable": "注文{code}{amount}は返金可能です。",
        "not_refundable": "注文{code}{amount}は返金できません。",
        "not_found": "注文{code}は見つかりません。",
    },
}


def opening(code: str, verdict: RefundVerdict, why: str, amount: str | None, japanese: bool) -> str:
    """One sentence stating a computed verdict, worded so `stated_verdicts` reads it back."""
    shown = "" if amount is None else f"({amount})" if japanese else f" ({amount})"
    return _OPENINGS[japanese][verdict].format(code=code, amount=shown, why=why)


# What people mistype in an order code: a letter for a digit that looks like it (A10O, A1OO,
# AI00), a hyphen, the letters left out (order 100).
_LOOKS_LIKE = str.maketrans({"O": "0", "I": "1", "L": "1"})
_CODE_LIKE = re.compile(
    r"\b[A-Za-z]{1,3}-?[0-9OoIlL]{2,9}\b|(?i:order|注文)\s*(?:number|no\.?|#|番号)?\s*[0-9]{2,9}",
    re.ASCII,
)


def _key(code: str) -> str:
    text = re.sub(r"[^A-Z0-9]", "", fold(code).upper())
    head = re.match(r"[A-Z]{0,3}", text)
    letters = head.group(0) if head else ""
    return letters + text[len(letters) :].translate(_LOOKS_LIKE)


def _digits(code: str) -> str:
    return re.sub(r"\D", "", _key(code))


def suspect_codes(text: str) -> list[str]:
    """What looks like a mistyped order code in `text` (none that is one already), as written."""
    exact = set(find_order_codes(text))
    found = []
    for match in _CODE_LIKE.finditer(fold(text)):
        written = match.group(0).strip()
        real = written.upper() not in exact and not find_order_codes(written)
        if real and re.search(r"[0-9]", written):  # "Hello" is no code: a digit is needed
            found.append(written)
    return list(dict.fromkeys(found))


def nearest_codes(written: str, known: list[str], limit: int = 3) -> list[str]:
    """The real codes `written` most likely meant: the same once look-alike letters are read as
    digits and separators dropped, else one character off, else the same digits; best first."""
    key, digits = _key(written), _digits(written)
    if not digits:
        return []
    ranked: list[tuple[int, str]] = []
    for code in sorted(known):
        other = _key(code)
        if other == key:
            ranked.append((0, code))
        elif _one_off(key, other):
            ranked.append((1, code))
        elif key == digits and _digits(code) == digits:  # "order 100": the digits alone
            ranked.append((2, code))
    best = min((rank for rank, _ in ranked), default=0)  # only the likeliest kind of slip
    return [code for rank, code in ranked if rank == best][:limit]


def _one_off(a: str, b: str) -> bool:
    """One character changed, added or removed."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))
