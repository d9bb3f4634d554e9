"""`agent eval run --max-cost`: one budget for the whole eval, every model request of every case on
every worker. A request is not sent when what was spent plus what it will cost at least (as
the loop estimates a run's own budget: the run's previous request again) would pass the budget;
that run ends `cost_budget`, the others stop at their next event, and the eval ends with the
cases that finished (exit 3)."""

from __future__ import annotations

import threading

from agent_cli.core.budget import Price
from agent_cli.core.decisions import Usage
from agent_cli.core.seams import ModelReply, ModelRequest, ReasoningModel
from agent_cli.errors import CostBudgetExceeded, LimitReached, MalformedReply


class EvalBudgetExceeded(LimitReached):
    status = "cost_budget"

    def __init__(self, budget: float, spent: float) -> None:
        super().__init__(
            f"the eval's cost budget ({budget:.4f}) would be exceeded: {spent:.4f} spent; the "
            "cases that finished are above; raise --max-cost or run fewer cases"
        )


class EvalBudget:
    """What the eval has spent, shared by its workers."""

    def __init__(self, max_cost: float) -> None:
        self.max_cost = max_cost
        self.spent = 0.0
        self.first = 0.0  # what the latest first request of a case cost
        self.exhausted = threading.Event()
        self._lock = threading.Lock()

    def guard(self, model: ReasoningModel, price: Price | None) -> ReasoningModel:
        """`model`, each request checked against the budget first (a model with no price
        costs nothing: the offline playbook, a script)."""
        return model if price is None else _Budgeted(model, self, price)

    def reserve(self, estimate: float | None) -> None:
        """Before a request: stop when what was spent and what it will cost would pass the
        budget (a case's first request: as much as the latest first request of any case)."""
        with self._lock:
            if self.spent + (self.first if estimate is None else estimate) > self.max_cost:
                self.exhausted.set()
                raise CostBudgetExceeded(self.max_cost, self.spent)

    def add(self, cost: float, *, first: bool) -> None:
        with self._lock:
            self.spent += cost
            if first:
                self.first = cost

    def error(self) -> EvalBudgetExceeded:
        return EvalBudgetExceeded(self.max_cost, self.spent)


class _Budgeted:
    """One case's model under the eval's budget (a fresh one per case: its last request is
    the estimate of its next)."""

    def __init__(self, model: ReasoningModel, budget: EvalBudget, price: Price) -> None:
        self._model, self._budget, self._price = model, budget, price
        self.provider, self.model = model.provider, model.model
        self._last: Usage | None = None  # none yet: its first request

    def decide(self, request: ModelRequest) -> ModelReply:
        first = self._last is None
        self._budget.reserve(None if self._last is None else self._price.of(self._last))
        try:
            reply = self._model.decide(request)
        except MalformedReply as exc:  # an unusable reply was paid for too
            used = exc.usage if isinstance(exc.usage, Usage) else Usage()
            self._budget.add(self._price.of(used), first=first)
            self._last = used
            raise
        self._budget.add(self._price.of(reply.usage), first=first)
        self._last = reply.usage
        return reply
