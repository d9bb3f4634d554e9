"""What eval cases and replay checks produce, and the UI renders: case results with their
failures and run records, per-model summaries, replay checks with their differences.

These types sit below both `evaluation/` (which makes them) and `ui/` (which draws them), so
neither imports the other."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Literal

from agent_cli.core.decisions import ASK_USER_TOOL, Decision, Usage
from agent_cli.core.events import Event, QuestionAsked, RunFinished, RunStarted, ToolObserved
from agent_cli.core.tool_outcomes import OPAQUE, Outcome, Replied
from agent_cli.domain.orders import Order

FailureKind = Literal[
    "verdict",  # the answer states another verdict
    "no_verdict",  # the answer states none for an expected order
    "unsupported",  # a verdict with no lookup behind it
    "answer",  # an answer_matches pattern found nothing
    "must_call",
    "must_not_call",
    "steps",  # more steps than the case allows
    "status",  # the run did not end as expected (an error, a limit, a question)
    "error",  # the case itself crashed
    "intent",  # the run worked on another intent, or on more than one
    "writes",  # the writes committed are not the ones expected
    "handover",  # a ticket opened when none should be, or none when one should
    "cited",  # the answer does not cite an article it should
    "orders_after",  # an order holds something else after the run
    "end_state",  # the store differs from the one the case's reference writes leave
    "reference",  # the case's own reference writes cannot be made (a mistake in the case)
    "facts",  # the agent never said a fact the case wants said
    "consent",  # a write committed with no yes from the customer after its proposal
    "customer",  # the simulated customer's model failed: the conversation did not happen
    "heard",  # a held-out customer message taken as another intent (evaluation/heard.py)
]


@dataclass(frozen=True, slots=True)
class Failure:
    kind: FailureKind
    message: str


@dataclass(frozen=True, slots=True)
class ToolRun:
    tool: str
    args: dict[str, Any]
    observation: str
    is_error: bool
    outcome: Outcome = OPAQUE  # what the call did (an old trace's: Opaque)


@dataclass(slots=True, kw_only=True)
class RunRecord:
    """What a judge needs from one run's events (live or read back from a trace), or from a
    conversation's runs one after another: its tools, what it said and what it cost add up;
    its status and answer are the last run's."""

    run_id: str | None = None
    provider: str = ""
    model: str = ""
    status: str = "error"
    answer: str | None = None
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
    elapsed_ms: float = 0.0
    error: str | None = None
    tools: list[ToolRun] = field(default_factory=list)
    to_customer: list[str] = field(default_factory=list)  # to the customer: questions, then answers
    runs: int = 0  # a conversation's turns (runs) so far

    def add(self, event: Event) -> None:
        match event:
            case RunStarted():
                self.run_id = self.run_id or event.run_id  # a conversation's first run names it
                self.provider, self.model = event.provider, event.model
            case ToolObserved():
                self.tools.append(
                    ToolRun(
                        event.tool,
                        dict(event.args),
                        event.observation,
                        event.is_error,
                        event.outcome,
                    )
                )
            case QuestionAsked():
                self.to_customer.append(event.question)
            case RunFinished():
                self._finished(event)
            case _:
                pass

    def _finished(self, event: RunFinished) -> None:
        first = self.runs == 0
        self.runs += 1
        self.status, self.answer, self.error = event.status, event.answer, event.error
        if event.answer is not None:
            self.to_customer.append(event.answer)
        self.steps = event.steps if first else self.steps + event.steps
        self.usage = event.usage if first else self.usage + event.usage
        self.elapsed_ms = event.elapsed_ms if first else self.elapsed_ms + event.elapsed_ms
        if first or self.cost is None or event.cost is None:
            self.cost = event.cost if first else None  # unknown once any run's is
        else:
            self.cost += event.cost


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseResult:
    case: str
    model: str
    repeat: int  # 1-based, of --repeat
    failures: tuple[Failure, ...]
    record: RunRecord
    trace: Path | None = None
    question: str = ""
    today: date | None = None  # the case's own day, when it sets one
    customer_usage: Usage = field(default_factory=Usage)  # a simulated customer's model's
    # The case's own flaws (a gold write the rules refuse): neither passed nor failed.
    flaws: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return not self.failures and not self.flaws

    @property
    def flawed(self) -> bool:
        return bool(self.flaws)

    @property
    def run_id(self) -> str | None:
        return self.record.run_id


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSummary:
    model: str
    cases: int  # results, repeats included
    passed: int
    p50_ms: float
    p95_ms: float
    tokens_per_case: float
    cost_per_case: float | None  # None unless every case has a cost
    failures: dict[str, int]  # by kind
    pass_hat: tuple[float, ...] = ()  # pass^1 .. pass^k over the trials (see summary.pass_hat)
    case_passes: dict[str, tuple[int, int]] = field(default_factory=dict)  # case: (passed, trials)
    tokens: int = 0  # over every case
    cost: float | None = None  # over every case; None unless every case has a cost
    wall_ms: float = 0.0  # the cases' own times added up (workers run them side by side)
    flawed: int = 0  # results of flawed cases: counted in `cases`, in neither pass nor fail

    @property
    def scored(self) -> int:
        """The results judged: the flawed cases' are neither a pass nor a failure."""
        return self.cases - self.flawed

    @property
    def accuracy(self) -> float:
        return self.passed / self.scored if self.scored else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "event": "summary",
            "model": self.model,
            "cases": self.cases,
            "passed": self.passed,
            "flawed": self.flawed,
            "accuracy": round(self.accuracy, 4),
            "p50_ms": round(self.p50_ms, 1),
            "p95_ms": round(self.p95_ms, 1),
            "tokens_per_case": round(self.tokens_per_case, 1),
            "cost_per_case": self.cost_per_case,
            "failures": self.failures,
            "pass_hat_k": {str(k): round(v, 4) for k, v in enumerate(self.pass_hat, start=1)},
            "case_passes": {case: list(passes) for case, passes in self.case_passes.items()},
            "tokens": self.tokens,
            "cost": None if self.cost is None else round(self.cost, 6),
            "wall_ms": round(self.wall_ms, 1),
        }


@dataclass(frozen=True, slots=True)
class Difference:
    number: int  # the observation's place in the run, 1-based
    tool: str
    args: dict[str, Any]
    recorded: str | None  # None: the replay made a call the recording did not
    now: str | None  # None: the recording has a call the replay did not make

    def describe(self) -> str:
        call = f"{self.tool} {json.dumps(self.args, ensure_ascii=False)}"
        return f"#{self.number} {call}: recorded {_show(self.recorded)}, now {_show(self.now)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedRun:
    source: Path
    run_id: str
    goal: str
    today: date
    decisions: tuple[Decision, ...]
    observations: tuple[ToolObserved, ...]
    status: str
    case_orders: tuple[Order, ...] | None = None  # an eval case's (RunStarted.case_orders)
    answer: str | None = None  # the run's last word, remembered by the turns after it
    remembered: int = 0  # earlier turns shown to it: it continues a conversation
    max_steps: int | None = None
    grounding: bool = True
    # What a person (or the case) answered each approval asked, in order: approved, by, why,
    # queued.
    approvals: tuple[tuple[bool, str, str, bool], ...] = ()

    @property
    def replies(self) -> Iterator[str]:
        """The customer's words to each question, as they said them (without the desk's
        note; a trace written before replies were kept apart: the whole observation)."""
        return (
            o.outcome.words if isinstance(o.outcome, Replied) else o.observation
            for o in self.observations
            if o.tool == ASK_USER_TOOL
        )


@dataclass(frozen=True, slots=True)
class CheckResult:
    run: RecordedRun
    compared: int
    differences: tuple[Difference, ...] = ()
    status: str = ""  # the replay's ending
    problem: str | None = None  # why the run could not be replayed at all
    not_replayed: tuple[str, ...] = ()  # MCP tools it called: never called again, not compared

    @property
    def matches(self) -> bool:
        return not self.differences and self.problem is None


def _show(observation: str | None) -> str:
    if observation is None:
        return "(no such call)"
    flat = " ".join(observation.split())
    return repr(flat if len(flat) <= 160 else flat[:159] + "…")
