"""The limits of a run and the bookkeeping that enforces them, kept out of what the model sees."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agent_cli.decisions import Usage
from agent_cli.errors import RepairBudgetExceeded, RunTimedOut, TokenBudgetExceeded
from agent_cli.events import RunFinished, RunStatus


@dataclass(frozen=True, slots=True)
class Limits:
    """Circuit breakers for one run."""

    max_steps: int = 8
    timeout_s: float = 120.0
    max_repairs: int = 2  # unusable replies and rejected calls the model may correct
    max_tokens: int | None = None  # input + output tokens over the whole run


@dataclass(slots=True)
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

    @property
    def deadline(self) -> float:
        return self.started + self.limits.timeout_s

    def check_deadline(self) -> None:
        if self.clock() > self.deadline:
            raise RunTimedOut(self.limits.timeout_s)

    def check_budget(self) -> None:
        """Stop before a request that would exceed the token budget: the next prompt holds at
        least the previous prompt and its reply, so that is the estimate."""
        budget = self.limits.max_tokens
        if budget is not None and self.usage.total + self.last_usage.total > budget:
            raise TokenBudgetExceeded(budget, self.usage.total)

    def count_repair(self, problem: str) -> None:
        self.repairs += 1
        if self.repairs > self.limits.max_repairs:
            raise RepairBudgetExceeded(self.repairs, problem)

    def finish(
        self, status: RunStatus, *, answer: str | None = None, error: str | None = None
    ) -> RunFinished:
        return RunFinished(
            run_id=self.run_id,
            ts=self.wall(),
            status=status,
            answer=answer,
            steps=self.steps,
            usage=self.usage,
            elapsed_ms=(self.clock() - self.started) * 1000,
            error=error,
        )
