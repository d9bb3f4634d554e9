"""Strings a regular expression matches, spelt out from its parse tree: each alternative,
each optional part present and absent, repeats at their least (a `.*` as nothing and as one
space), classes as a few of their members. Tests use it to check that a fast gate in front of a
pattern lets through every string the pattern matches, without hoping a fuzzer finds them."""

from __future__ import annotations

import itertools
import re
from re import _constants as c  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

LIMIT = 20_000


def spelt(pattern: re.Pattern[str]) -> list[str]:
    """The strings `pattern` matches in full (a bounded spelling of its language), each
    checked with `search`: anchors and word boundaries are kept by dropping what breaks them."""
    found = _sequence(list(_parser.parse(pattern.pattern, pattern.flags)))
    return [text for text in dict.fromkeys(found) if pattern.search(text)]


def _sequence(items: list[tuple[Any, Any]]) -> list[str]:
    texts = [""]
    for op, av in items:
        options = _item(op, av)
        texts = [a + b for a, b in itertools.islice(itertools.product(texts, options), LIMIT)]
    return texts


def _item(op: Any, av: Any) -> list[str]:
    if op is c.LITERAL:
        return [chr(av)]
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
        return [""]
    if op in (c.ANY, c.NOT_LITERAL):
        return [" "]
    if op is c.IN:
        return _members(av)
    if op is c.BRANCH:
        return [text for branch in av[1] for text in _sequence(list(branch))]
    if op is c.SUBPATTERN:
        return _sequence(list(av[3]))
    if op is c.ATOMIC_GROUP:
        return _sequence(list(av))
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
        low, _high, body = av
        once = _sequence(list(body))
        least = [""] if low == 0 else [t * low for t in once]
        return least + (once if low == 0 else [])
    raise AssertionError(f"spelt() does not know {op}")


def _members(av: list[tuple[Any, Any]]) -> list[str]:
    if av and av[0][0] is c.NEGATE:
        return [" "]
    found: list[str] = []
    for op, value in av:
        if op is c.LITERAL:
            found.append(chr(value))
        elif op is c.RANGE:
            found.append(chr(value[0]))
        elif op is c.CATEGORY:
            found.append("5" if value is c.CATEGORY_DIGIT else "x" if value else " ")
    return found[:4]
