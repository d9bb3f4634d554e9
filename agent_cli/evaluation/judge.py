"""Judging a run against a case: the verdict its answer states for each order, and the rest.

A verdict is read from the answer text, English or Japanese, clause by clause: the clauses that
name the order (split at sentence ends, `;`, "but", "however", "whereas", "一方"), the first
wording that matches in this order of precedence:

- undecided: "cannot tell", "unable to determine", "判断できません" (no verdict at all)
- not_found: "not found", "no order", "does not exist", "見つかりません", "存在しません"
- not_refundable: "not refundable", "cannot be refunded", "not eligible", "返金できません"
- refundable: "refundable", "can be refunded", "eligible for a refund", "返金可能", "返金できます"

When the answer names a single order, a clause that names none counts too ("Order A100 was
delivered 12 days ago. It is refundable."). A verdict must also be backed by the run: a
successful lookup of that order, NOT_FOUND for not_found.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from agent_cli.evaluation.cases import EvalCase, Verdict
from agent_cli.events import Event
from agent_cli.grounding import find_order_codes
from agent_cli.outcomes import Failure, RunRecord, ToolRun


def record_of(events: Iterable[Event]) -> RunRecord:
    record = RunRecord()
    for event in events:
        record.add(event)
    return record


def judge(case: EvalCase, run: RunRecord) -> tuple[Failure, ...]:
    """Every way the run falls short of the case; empty when it passes."""
    failures = list(_status(case, run))
    if run.status == "answered" and run.answer is not None:
        failures += _verdicts(case, run)
        failures += [
            Failure("answer", f"the answer does not match /{pattern.pattern}/")
            for pattern in case.answer_matches
            if not pattern.search(run.answer)
        ]
    called = {tool.tool for tool in run.tools}
    failures += [
        Failure("must_call", f"{name} was never called")
        for name in case.must_call
        if name not in called
    ]
    failures += [
        Failure("must_not_call", f"{name} was called")
        for name in case.must_not_call
        if name in called
    ]
    if case.max_steps is not None and run.steps > case.max_steps:
        failures.append(Failure("steps", f"{run.steps} steps; the case allows {case.max_steps}"))
    return tuple(failures)


def _status(case: EvalCase, run: RunRecord) -> list[Failure]:
    expected = "needs_input" if case.needs_input else "answered"
    if run.status == expected:
        return []
    detail = f": {run.error}" if run.error else ""
    return [Failure("status", f"the run ended {run.status}, expected {expected}{detail}")]


def _verdicts(case: EvalCase, run: RunRecord) -> list[Failure]:
    assert run.answer is not None
    stated = stated_verdicts(run.answer)
    failures: list[Failure] = []
    for code, expected in case.verdicts:
        said = stated.get(code)
        if said is None:
            failures.append(Failure("no_verdict", f"the answer states no verdict on {code}"))
        elif said != expected:
            failures.append(Failure("verdict", f"{code}: said {said}, expected {expected}"))
        elif not _backed(code, said, run.tools):
            failures.append(
                Failure("unsupported", f"{code}: {said} with no lookup of {code} in the run")
            )
    return failures


def _backed(code: str, verdict: Verdict, tools: list[ToolRun]) -> bool:
    lookups = [
        tool
        for tool in tools
        if tool.tool == "lookup_order"
        and not tool.is_error
        and str(tool.args.get("order_code", "")).upper() == code
    ]
    found = [tool for tool in lookups if not tool.observation.startswith("NOT_FOUND")]
    return bool(found) if verdict != "not_found" else len(lookups) > len(found)


_CLAUSE_END = re.compile(
    r"(?<=[.!?])\s+|(?<=[。！？])|\n+|;|；|\bbut\b|\bhowever\b|\bwhereas\b|一方",
    re.IGNORECASE,
)
_WORDINGS: tuple[tuple[Verdict | None, re.Pattern[str]], ...] = (
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


def stated_verdicts(answer: str) -> dict[str, Verdict | None]:
    """The verdict the answer states for each order code it names (None: named, but no verdict
    or explicitly undecided)."""
    clauses = [c for c in _CLAUSE_END.split(unicodedata.normalize("NFKC", answer)) if c.strip()]
    codes = find_order_codes(answer)
    verdicts: dict[str, Verdict | None] = {}
    for code in codes:
        naming = [c for c in clauses if code in find_order_codes(c)]
        if len(codes) == 1:  # the rest of the answer can only be about this order
            naming += [c for c in clauses if not find_order_codes(c)]
        verdicts[code] = next((verdict for found, verdict in map(_wording, naming) if found), None)
    return verdicts


def _wording(clause: str) -> tuple[bool, Verdict | None]:
    """(True, verdict) for the first wording that matches (verdict None: undecided)."""
    for verdict, pattern in _WORDINGS:
        if pattern.search(clause):
            return True, verdict
    return False, None
