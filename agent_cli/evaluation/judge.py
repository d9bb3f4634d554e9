"""Judging a run against a case: the verdict its answer states for each order (read as
`verdicts.py` reads it), and the rest. A verdict must also be backed by the run: a successful
lookup of that order, NOT_FOUND for not_found.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_cli.core.events import Event
from agent_cli.evaluation import matching
from agent_cli.evaluation.cases import EvalCase
from agent_cli.policy.verdicts import Verdict, stated_verdicts
from agent_cli.record.outcomes import Failure, RunRecord, ToolRun


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
        failures += _matches(case, run.answer)
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


def _matches(case: EvalCase, answer: str) -> list[Failure]:
    """A failure for each pattern the answer does not match, or that took too long to try."""
    failures = []
    for pattern in case.answer_matches:
        found = matching.search(pattern.pattern, answer)
        if found is None:
            failures.append(
                Failure(
                    "answer",
                    f"matching /{pattern.pattern}/ took over {matching.SEARCH_TIMEOUT_S:g} s "
                    "(catastrophic backtracking); simplify the pattern",
                )
            )
        elif not found:
            failures.append(Failure("answer", f"the answer does not match /{pattern.pattern}/"))
    return failures


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
