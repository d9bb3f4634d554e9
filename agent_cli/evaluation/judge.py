"""Judging a run against a case: the verdict its answer states for each order (read as
`verdicts.py` reads it), and the rest. A verdict must also be backed by the run: a successful
lookup of that order, NOT_FOUND for not_found.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from agent_cli.core.events import Event
from agent_cli.core.tool_outcomes import Changed, NotFound, Proposed
from agent_cli.evaluation import intents, matching
from agent_cli.evaluation.cases import EvalCase, OrderAfter
from agent_cli.evaluation.heard import heard_problems
from agent_cli.policy.verdicts import RefundVerdict, stated_verdicts
from agent_cli.record.outcomes import Failure, RunRecord, ToolRun


def record_of(events: Iterable[Event]) -> RunRecord:
    record = RunRecord()
    for event in events:
        record.add(event)
    return record


def judge(
    case: EvalCase, run: RunRecord, after: Mapping[str, Mapping[str, object] | None] | None = None
) -> tuple[Failure, ...]:
    """Every way the run falls short of the case; empty when it passes. `after`: the case's
    `orders_after` orders as the store holds them once the run is over."""
    if case.desk.heard is not None:  # words the desk was not written for: what it did with them
        return tuple(Failure("heard", p) for p in heard_problems(case.desk.heard, run))
    failures = list(_status(case, run))
    if run.status in ("answered", "handed_over") and run.answer is not None:
        failures += _verdicts(case, run)
        failures += _matches(case, run.answer)
        failures += _cited(case, "\n".join(run.to_customer) or run.answer)
    failures += _desk(case, run, after or {})
    failures += _facts(case, run.to_customer)
    failures += _unconfirmed(run.tools)
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


def _facts(case: EvalCase, to_customer: list[str]) -> list[Failure]:
    """τ²-bench's rule for what the agent had to say: each fact, case-insensitive with commas
    removed, inside something the agent said to the customer (a question or an answer)."""
    heard = [_plain(text) for text in to_customer]
    return [
        Failure("facts", f"the agent never said {fact!r}")
        for fact in case.facts
        if not any(_plain(fact) in text for text in heard)
    ]


def _plain(text: str) -> str:
    return text.lower().replace(",", "")


def _unconfirmed(tools: list[ToolRun]) -> list[Failure]:
    """A write committed that was not first proposed to the customer, the same call with the
    same arguments (the tools refuse it; this is the judge seeing for itself)."""
    proposed: set[str] = set()
    failures = []
    for tool in tools:
        key = f"{tool.tool} {sorted(tool.args.items())!r}"
        if isinstance(tool.outcome, Proposed):
            proposed.add(key)
        elif isinstance(tool.outcome, Changed) and key not in proposed:
            failures.append(Failure("consent", f"{tool.tool} was made without being proposed"))
    return failures


def _cited(case: EvalCase, text: str) -> list[Failure]:
    """Each article the case names, cited somewhere in what the agent said (a conversation
    cites it in the turn that answers the help question)."""
    return [
        Failure("cited", f"the answer does not cite [{article}]")
        for article in case.desk.cited
        if f"[{article}]" not in text
    ]


def _desk(
    case: EvalCase, run: RunRecord, after: Mapping[str, Mapping[str, object] | None]
) -> list[Failure]:
    """The desk's expectations: the intent, the writes committed, a ticket, the orders after."""
    desk, failures = case.desk, []
    if desk.intent is not None and (problem := intents.intent_problem(desk.intent, run.tools)):
        failures.append(Failure("intent", problem))
    if desk.writes is not None and (made := intents.committed(run.tools)) != list(desk.writes):
        failures.append(
            Failure("writes", f"committed {_listed(made)}; expected {_listed(desk.writes)}")
        )
    if desk.handover is not None and intents.ticket_opened(run.tools) != desk.handover:
        found = "no ticket was opened" if desk.handover else "a ticket was opened"
        failures.append(Failure("handover", f"{found}; expected the opposite"))
    for code, expected in desk.orders_after:
        failures += _order_after(code, expected, after.get(code))
    return failures


def _order_after(
    code: str, expected: OrderAfter, actual: Mapping[str, object] | None
) -> list[Failure]:
    if actual is None:
        return [Failure("orders_after", f"{code}: no such order in the store after the run")]
    return [
        Failure("orders_after", f"{code}: {field} is {actual.get(field)!r}, expected {want!r}")
        for field, want in expected.model_dump(exclude_none=True).items()
        if actual.get(field) != want
    ]


def _listed(names: Iterable[str]) -> str:
    return "[" + ", ".join(names) + "]"


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
    if case.desk.handover:
        expected = "handed_over"  # answered, with a ticket opened
    if run.status == expected:
        return []
    detail = f": {run.error}" if run.error else ""
    return [Failure("status", f"the run ended {run.status}, expected {expected}{detail}")]


def _verdicts(case: EvalCase, run: RunRecord) -> list[Failure]:
    assert run.answer is not None
    stated = stated_verdicts(run.answer)
    failures: list[Failure] = []
    for code, expected in case.verdicts:
        stated_verdict = stated.get(code)
        if stated_verdict is None:
            failures.append(Failure("no_verdict", f"the answer states no verdict on {code}"))
        elif stated_verdict != expected:
            failures.append(
                Failure("verdict", f"{code}: said {stated_verdict}, expected {expected}")
            )
        elif not _backed(code, stated_verdict, run.tools):
            failures.append(
                Failure(
                    "unsupported", f"{code}: {stated_verdict} with no lookup of {code} in the run"
                )
            )
    return failures


def _backed(code: str, verdict: RefundVerdict, tools: list[ToolRun]) -> bool:
    lookups = [
        tool
        for tool in tools
        if tool.tool == "lookup_order"
        and not tool.is_error
        and str(tool.args.get("order_code", "")).upper() == code
    ]
    found = [tool for tool in lookups if not isinstance(tool.outcome, NotFound)]
    return bool(found) if verdict != "not_found" else len(lookups) > len(found)
