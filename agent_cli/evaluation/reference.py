"""The reference contender (`agent eval run --provider reference`): it makes a case's reference
writes through the conversation, as any agent must (the customer identified first, each write
proposed, its exact proposal put to the customer, made again only after their yes, through the
shop's approval path), reads the articles the case cites, hands over when the case expects it,
and says the facts. Every sound case passes with it; one that does not is the case file's
mistake (a gold action the tools refuse, a state that cannot be reached, a fact no tool says),
shown before any model is blamed. A case whose customer is simulated is played with a customer
who needs no model (`AgreeingCustomer`): they say why they called and yes to each proposal.

It is judged on what a reference can show: the store left behind, the writes, the facts, the
citations, a hand-over, consent; any of its own calls that fails (an article that is not there,
a gold read of a missing record) is the case's mistake too (`problems`). A case's wording
criteria (verdicts, patterns, the tools a model calls, steps) are about a model's answer and
are not judged for it.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from agent_cli.core.decisions import ASK_USER_TOOL, AskUser, CallTool, Decision, FinalAnswer
from agent_cli.core.seams import ModelReply, ModelRequest
from agent_cli.core.tool_outcomes import Proposed
from agent_cli.domain.intents import IDENTIFY
from agent_cli.domain.write_tools import DESK_WRITES
from agent_cli.evaluation.cases import EvalCase
from agent_cli.record.outcomes import Failure, FailureKind, ToolRun
from agent_cli.store import record_reads
from agent_cli.store.sqlite import OrderStore

LABEL = "reference/gold"
# What it is judged on (the rest is about a model's wording and choices).
_JUDGED: tuple[FailureKind, ...] = ("status", "error", "writes", "handover", "cited")
JUDGED = frozenset(
    (*_JUDGED, "orders_after", "end_state", "reference", "facts", "consent", "customer")
)
HAND_OVER = "transfer_to_human_agents"


class ReferenceModel:
    """One conversation's reference, played as a model: a fresh one per case and trial."""

    provider = "reference"
    model = "gold"

    def __init__(self, case: EvalCase, store: OrderStore) -> None:
        self._todo: deque[CallTool] = deque(_plan(case, store))
        self._answer = _answer(case)
        self._waiting: CallTool | None = None  # a write proposed, its confirmation asked

    def decide(self, request: ModelRequest) -> ModelReply:
        return ModelReply(self._next(request))

    def _next(self, request: ModelRequest) -> Decision:
        last = request.history[-1] if request.history else None
        if last is not None and last.call is not None:
            if last.call.tool == ASK_USER_TOOL and self._waiting is not None:
                # Yes or not, the same call again: after a yes it goes on to the approval;
                # after anything else the tool proposes it afresh, and it is asked again.
                write, self._waiting = self._waiting, None
                return write.model_copy()
            if last.call.tool in DESK_WRITES and isinstance(last.outcome, Proposed):
                self._waiting = last.call
                summary = last.outcome.summary
                return AskUser(question=f"Here is the change, exactly: {summary}. {_ASKED}")
        if self._todo:
            return self._todo.popleft()
        return FinalAnswer(answer=self._answer)


class AgreeingCustomer:
    """Who the reference talks to in a case whose customer is simulated: no model, a customer
    who says why they called (the persona's instructions), and yes to each proposal."""

    def __init__(self, case: EvalCase) -> None:
        self._opening = case.question

    def opening(self) -> str | None:
        return self._opening

    def answer(self, agent_words: str) -> str | None:
        return "yes" if _ASKED in agent_words else None


_ASKED = "Go ahead?"  # what the reference's confirmation asks


def problems(tools: Iterable[ToolRun], case: EvalCase) -> list[Failure]:
    """The reference's own calls that failed, each the case file's mistake (an article that is
    not there, a customer it cannot identify). Its gold steps are judged on the store they
    leave (evaluation/end_state.py): a gold read that fails, or a gold write of what is there
    already, is part of the conversation, as in τ²-bench; a gold write refused is the case's
    flaw, counted apart."""
    gold = {_key(w.tool, w.args) for w in case.reference or ()}
    return [
        Failure("reference", f"the reference's {run.tool} failed: {run.observation}")
        for run in tools
        if run.is_error and run.tool != ASK_USER_TOOL and _key(run.tool, run.args) not in gold
    ]


def _key(tool: str, args: Mapping[str, Any]) -> str:
    return f"{tool} {json.dumps(dict(args), sort_keys=True, default=str)}"


def _plan(case: EvalCase, store: OrderStore) -> list[CallTool]:
    """The calls to make, in order: the customer identified (unless the reference does it),
    the reference's own calls, the cited articles read, a hand-over when one is expected."""
    writes = list(case.reference or ())
    calls = [CallTool(tool=w.tool, args=dict(w.args)) for w in writes]
    if not any(w.tool in IDENTIFY for w in writes) and (email := _email(case, store)):
        calls.insert(0, CallTool(tool="find_user_id_by_email", args={"email": email}))
    calls += [CallTool(tool="get_article", args={"article_id": a}) for a in case.desk.cited]
    if case.desk.handover and not any(w.tool == HAND_OVER for w in writes):
        summary = "The reference hands this conversation over, as the case expects."
        calls.append(CallTool(tool=HAND_OVER, args={"summary": summary}))
    return calls


def _email(case: EvalCase, store: OrderStore) -> str | None:
    """The email of the customer the first write is for (its order's owner, or the user)."""
    for write in case.reference or ():
        owner = write.args.get("user_id")
        if owner is None and isinstance(code := write.args.get("order_id"), str):
            order = record_reads.order_named(store, code)
            owner = order.customer_id if order else None
        if isinstance(owner, str) and (customer := record_reads.customer(store, owner)):
            return customer.email
    return None


def _answer(case: EvalCase) -> str:
    """The facts, each a sentence, and the cited articles; "Done." when there are none."""
    facts_line = " ".join(f"{fact.rstrip('.')}." for fact in case.facts) or "Done."
    return " ".join([facts_line, *(f"[{article}]" for article in case.desk.cited)])
