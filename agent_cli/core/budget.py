"""The limits of a run and the bookkeeping that enforces them, kept out of what the model sees:
steps, time, tokens, money, repairs, repeated calls, and the size of what the model is sent."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from agent_cli.core.decisions import CallTool, Step, Usage
from agent_cli.core.events import RunFinished, RunStatus
from agent_cli.errors import (
    CostBudgetExceeded,
    NoProgress,
    RepairBudgetExceeded,
    RunTimedOut,
    TokenBudgetExceeded,
)
from agent_cli.text import mask_secrets

REPEATS_BEFORE_ERROR = 3  # the third identical call in a row is not run
LONGEST_CYCLE = 3  # cycles of up to this many different calls (A,B,A,B...) are caught
KEEP_WHOLE_STEPS = 2  # the newest steps are never elided
CHARS_PER_TOKEN = 4  # a rough estimate, good enough to bound a prompt's size
FINDING_CHARS = 500


@dataclass(frozen=True, slots=True)
class Price:
    """What a model costs, per million tokens (in the price table's currency)."""

    input: float
    output: float

    def of(self, usage: Usage) -> float:
        return (usage.input_tokens * self.input + usage.output_tokens * self.output) / 1e6


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Circuit breakers for one run."""

    max_steps: int = 8
    timeout_s: float = 120.0
    max_repairs: int = 2  # unusable replies and rejected calls the model may correct
    max_tokens: int | None = None  # input + output tokens over the whole run
    max_cost: float | None = None  # needs `price`
    price: Price | None = None
    max_observation_chars: int = 2_000
    history_tokens: int = 4_000  # estimated size above which old observations are elided
    answer_at_limit: bool = True  # one tool-less call for the best answer at a step limit
    max_calls_per_reply: int = 8  # calls past it in one reply are answered ERROR, not run
    grounding: bool = True  # a final answer must pass the grounding check (see policy/grounding.py)


@dataclass(slots=True)
class RefundCounter:
    """Refunds committed so far, for the per-run and per-session caps; reset at each run."""

    run: int = 0
    session: int = 0

    def new_run(self) -> None:
        self.run = 0

    def add(self) -> None:
        self.run += 1
        self.session += 1


@dataclass(slots=True, kw_only=True)
class RunState:
    """The mutable bookkeeping of one run, kept out of the history the model sees."""

    run_id: str
    limits: Limits
    clock: Callable[[], float]
    wall: Callable[[], float]
    started: float
    steps: int = 0
    repairs: int = 0
    usage: Usage = field(default_factory=Usage)
    last_usage: Usage = field(default_factory=Usage)
    history: tuple[Step, ...] = ()
    waited_for_person: float = 0.0  # seconds spent on questions and approvals
    queued: list[int] = field(default_factory=list)  # approval queue items this run made
    tickets: list[int] = field(default_factory=list)  # hand-over tickets this run opened
    call_ids: set[str] = field(default_factory=set)  # every call id used in this run
    _recent_calls: list[tuple[str, str]] = field(default_factory=list)  # (tool, args) newest last
    # The estimated size of each step of the history, measured once as it joins: the history only
    # grows at its end, and measuring it all again at every step made a run quadratic.
    _sizes: list[int] = field(default_factory=list)

    @property
    def deadline(self) -> float:
        # Time a person spends answering a question or an approval is not the run's to spend.
        return self.started + self.limits.timeout_s + self.waited_for_person

    def person_answered(self, since: float) -> None:
        """A person's answer came: the wait is not the run's time, and a call made again after
        it is not a loop (a change proposed, a no, proposed again, a yes: the same call thrice)."""
        self.waited_for_person += self.clock() - since
        self._recent_calls.clear()

    def check_deadline(self) -> None:
        if self.clock() > self.deadline:
            raise RunTimedOut(self.limits.timeout_s)

    def check_budgets(self) -> None:
        """Stop before a request that would exceed a budget: the next prompt holds at least the
        previous prompt and its reply, so that is the estimate of what it will cost."""
        limits = self.limits
        next_total = self.usage.total + self.last_usage.total
        if limits.max_tokens is not None and next_total > limits.max_tokens:
            raise TokenBudgetExceeded(limits.max_tokens, self.usage.total)
        if limits.max_cost is not None and limits.price is not None:
            spent = limits.price.of(self.usage)
            if spent + limits.price.of(self.last_usage) > limits.max_cost:
                raise CostBudgetExceeded(limits.max_cost, spent)

    def cost(self) -> float | None:
        return self.limits.price.of(self.usage) if self.limits.price else None

    def count_repair(self, problem: str) -> None:
        self.repairs += 1
        if self.repairs > self.limits.max_repairs:
            raise RepairBudgetExceeded(self.repairs, problem)

    def repeated(self, call: CallTool) -> str | None:
        """Why this call is not to be run, when it repeats what the run just did: the third
        identical call in a row, or a second round of a cycle (A,B,A,B); NoProgress past that.
        A refused call still counts, so going on round the cycle stops the run."""
        recent = self._recent_calls
        recent.append((call.tool, json.dumps(call.args, sort_keys=True, default=str)))
        del recent[: -4 * LONGEST_CYCLE]
        for period in range(1, LONGEST_CYCLE + 1):
            length = _periodic_tail(recent, period)
            allowed = max(REPEATS_BEFORE_ERROR, 2 * period)
            if length < allowed:
                continue
            tools = [tool for tool, _ in recent[-period:]]
            if length > allowed:
                raise NoProgress(tools, length)
            return repeat_message(tools)
        return None

    def cut(self, text: str) -> str:
        """An observation cut to its limit, with a marker saying how much went."""
        limit = self.limits.max_observation_chars
        if len(text) <= limit:
            return text
        return f"{text[:limit]}\n[... {len(text) - limit:,} more characters cut]"

    def visible_history(self) -> tuple[Step, ...]:
        """The history as the model is shown it: while its estimated size is over budget, the
        oldest observations are elided first; the newest steps (and the goal) stay whole."""
        steps = list(self.history)
        budget = self.limits.history_tokens * CHARS_PER_TOKEN
        self._sizes += [_size(step) for step in steps[len(self._sizes) :]]
        size = sum(self._sizes)
        for index, step in enumerate(steps[: max(len(steps) - KEEP_WHOLE_STEPS, 0)]):
            if size <= budget:
                break
            marker = f"[elided to keep the history short: {len(step.observation):,} characters]"
            if len(marker) < len(step.observation):
                size -= len(step.observation) - len(marker)
                steps[index] = replace(step, observation=marker)
        return tuple(steps)

    def findings(self) -> list[dict[str, Any]]:
        """What the run learned: every successful observation, shortened, for the final record."""
        return [
            {
                "step": step.number,
                "tool": step.call.tool,
                "args": step.call.args,
                "observation": step.observation[:FINDING_CHARS],
            }
            for step in self.history
            if step.call is not None and not step.is_error
        ]

    def answered(self) -> RunStatus:
        """How an answered run ended: handed over to a person (a ticket), with an action
        waiting in the approval queue, or simply answered."""
        if self.tickets:
            return "handed_over"
        return "pending_approval" if self.queued else "answered"

    def finish(
        self,
        status: RunStatus,
        *,
        answer: str | None = None,
        error: str | None = None,
        incomplete: bool = False,
    ) -> RunFinished:
        return RunFinished(
            run_id=self.run_id,
            ts=self.wall(),
            status=status,
            answer=answer,
            steps=self.steps,
            usage=self.usage,
            elapsed_ms=(self.clock() - self.started) * 1000,
            # A message may quote a URL with credentials in it (--base-url user:pass@host).
            error=mask_secrets(error) if error else error,
            cost=self.cost(),
            incomplete=incomplete,
            findings=[]
            if status in ("answered", "pending_approval", "handed_over")
            else self.findings(),
        )


def _size(step: Step) -> int:
    call = step.call
    made = (
        len(call.tool) + len(json.dumps(call.args, default=str)) + len(call.thought) if call else 0
    )
    return made + len(step.observation) + len(step.reply or "")


def _periodic_tail(calls: list[tuple[str, str]], period: int) -> int:
    """How many of the newest calls repeat with this period (A,B,A,B,A has 5 for period 2)."""
    if len(calls) < 2 * period:
        return 0
    length = period
    while length < len(calls) and calls[-1 - length] == calls[-1 - length + period]:
        length += 1
    return length


def repeat_message(tools: list[str]) -> str:
    """Why a call is refused as a repeat, and what the model should do instead."""
    if len(tools) == 1:
        what = f"{tools[0]} with the same arguments {REPEATS_BEFORE_ERROR} times in a row"
    else:
        what = f"the same {len(tools)} calls ({', '.join(tools)}) in a cycle, twice"
    return f"repeated call: {what}; use the results you already have, or do something else"
