"""Words the desk was not written for, as built-in cases (issue 49, point 8): held-out lines of
the intent corpus (language/intent_corpus.py; never trained on), the first `PER_INTENT` of each
intent in each language in the corpus's order, each a case (`heard-en-cancel-1`) whose question
is the customer's message and whose expectation is its intent.

A case is judged on what the run did with the message, not on its ending (a question for the
email the desk needs is right): it worked towards the intent (a tool of its row, the
customer's identification, a question back; for a refund's status, the help centre on refund
times too) and on nothing else: no tool of another intent
that acts, no refund verdict unless eligibility was asked, a hand-over or the help centre when
those were asked, and no desk tool at all for a greeting or anything else. A run that ran out
of steps or errors fails. Their pass rate is reported apart from the written cases'
(`MODEL · heard`), held to `--min-heard`."""

from __future__ import annotations

from collections.abc import Iterable

from agent_cli.core.decisions import ASK_USER_TOOL
from agent_cli.domain.intents import ACTING, BY_NAME, IDENTIFY, INTENT_TOOLS, NAMES, Intent
from agent_cli.evaluation.cases import DeskExpectations, EvalCase
from agent_cli.language import intent_corpus
from agent_cli.policy.verdicts import stated_verdicts
from agent_cli.record.outcomes import RunRecord
from agent_cli.store.samples import SAMPLE_DAY

PREFIX = "heard-"
SUFFIX = " · heard"  # the summary row of a model's heard cases
PER_INTENT = 4
_ENDED_WELL = ("answered", "handed_over", "needs_input")
_FIRST_MOVES = (*IDENTIFY, ASK_USER_TOOL)  # who the customer is, or a question back
_LOOKUP = "lookup_order"  # any message naming an order may look it up first


def heard_cases() -> tuple[EvalCase, ...]:
    """The held-out lines as cases, `PER_INTENT` per intent and language."""
    taken: dict[tuple[str, str], int] = {}
    cases = []
    for example in intent_corpus.builtin():
        key = (example.language, example.intent)
        if not example.held_out or taken.get(key, 0) >= PER_INTENT:
            continue
        taken[key] = taken.get(key, 0) + 1
        number = taken[key]
        case_id = f"{PREFIX}{example.language}-{example.intent.replace('_', '-')}-{number}"
        desk = DeskExpectations(heard=example.intent)
        cases.append(EvalCase(id=case_id, question=example.text, today=SAMPLE_DAY, desk=desk))
    return tuple(cases)


def is_heard(case_id: str) -> bool:
    return case_id.startswith(PREFIX)


def heard_problems(intent: Intent, run: RunRecord) -> list[str]:
    """Why the run did not take the message as `intent` asks; empty when it did."""
    if run.status not in _ENDED_WELL:
        return [f"the run ended {run.status}" + (f": {run.error}" if run.error else "")]
    called = [tool.tool for tool in run.tools]
    problems = [f"it worked on {other}" for other in _others(intent, called)]
    if intent != "refund" and run.answer is not None and _verdict(run.answer):
        problems.append("it gave a refund verdict nobody asked for")
    problems += _missing(intent, called, run)
    return problems


def _others(intent: Intent, called: Iterable[str]) -> list[str]:
    """The other intents that act whose own tools the run called."""
    names = set(called)
    return [
        other
        for other in NAMES
        if other != intent and other in ACTING and names & INTENT_TOOLS.get(other, frozenset())
    ]


def _verdict(answer: str) -> bool:
    return any(verdict is not None for verdict in stated_verdicts(answer).values())


def _missing(intent: Intent, called: list[str], run: RunRecord) -> list[str]:
    """What taking the message as `intent` needed that the run did not do."""
    row = BY_NAME[intent]
    if intent in ("greeting", "follow_up", "other"):
        desk = [name for name in called if name != _LOOKUP]
        return [f"it called {', '.join(desk)} for a message that asks for nothing"] if desk else []
    if intent in ("help", "handover"):
        needed = row.shows if intent == "handover" else row.shows | {"search_help"}
        fine = needed | (set(_FIRST_MOVES) if intent == "handover" else set())
        return [] if set(called) & fine else [f"it never called {', '.join(sorted(needed))}"]
    toward = set(row.uses) | row.shows | set(_FIRST_MOVES) | {_LOOKUP}
    if intent == "refund_status":  # no order named: the help centre on refund times, then which
        toward.add("search_help")
    if set(called) & toward or run.status == "needs_input":
        return []
    return [f"it did nothing towards {intent} (none of {', '.join(sorted(row.shows))})"]


def with_heard(cases: tuple[EvalCase, ...]) -> tuple[EvalCase, ...]:
    """The written cases, then the heard ones (ids never clash: `heard-` is ours)."""
    return (*cases, *heard_cases())
