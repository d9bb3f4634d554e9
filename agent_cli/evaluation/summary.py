"""Per-model figures from case results: accuracy, latency percentiles, tokens, cost, failures."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

from agent_cli.evaluation.heard import SUFFIX, is_heard
from agent_cli.record.outcomes import CaseResult, ModelSummary


def summarize(results: Iterable[CaseResult], models: Iterable[str]) -> list[ModelSummary]:
    """One summary per model, in the order given (a model with no results has zeros); a model's
    heard cases (evaluation/heard.py: held-out customer messages) in a row of their own after
    it, `MODEL · heard`, so the written cases' figure stays theirs."""
    by_model: dict[str, list[CaseResult]] = {}
    for model in models:
        by_model[model] = []
    heard: dict[str, list[CaseResult]] = {}
    for result in results:
        rows = heard.setdefault(result.model, []) if is_heard(result.case) else None
        (rows if rows is not None else by_model.setdefault(result.model, [])).append(result)
    summaries = []
    for model, rows in by_model.items():
        summaries.append(_summary(model, rows))
        if heard.get(model):
            summaries.append(_summary(model + SUFFIX, heard[model]))
    return summaries


def pass_hat_k(trials: int, passed: int, k: int) -> float:
    """τ²-bench's pass^k of one case: the chance that k trials drawn from its `trials` (of
    which `passed` passed) all pass, C(passed, k) / C(trials, k)."""
    return math.comb(passed, k) / math.comb(trials, k)


def pass_hat(case_passes: dict[str, tuple[int, int]]) -> tuple[float, ...]:
    """pass^1 .. pass^k over cases, k the fewest trials any case had: the mean over cases of
    each case's pass^k. pass^1 is the mean pass rate; pass^k falls as consistency does."""
    if not case_passes:
        return ()
    k_max = min(trials for _, trials in case_passes.values())
    return tuple(
        sum(pass_hat_k(trials, passed, k) for passed, trials in case_passes.values())
        / len(case_passes)
        for k in range(1, k_max + 1)
    )


def _case_passes(rows: list[CaseResult]) -> dict[str, tuple[int, int]]:
    counts: dict[str, tuple[int, int]] = {}
    for row in rows:
        if row.flawed:
            continue  # a flawed case is no measure of the agent
        passed, trials = counts.get(row.case, (0, 0))
        counts[row.case] = (passed + row.passed, trials + 1)
    return counts


def _summary(model: str, rows: list[CaseResult]) -> ModelSummary:
    latencies = sorted(row.record.elapsed_ms for row in rows)
    costs = [row.record.cost for row in rows]
    known = [c for c in costs if c is not None]
    total = sum(known) if rows and len(known) == len(costs) else None
    tokens = sum(row.record.usage.total for row in rows)
    kinds = Counter(failure.kind for row in rows for failure in row.failures)
    return ModelSummary(
        model=model,
        cases=len(rows),
        passed=sum(1 for row in rows if row.passed),
        p50_ms=percentile(latencies, 50),
        p95_ms=percentile(latencies, 95),
        tokens_per_case=tokens / len(rows) if rows else 0.0,
        cost_per_case=None if total is None else total / len(rows),
        failures=dict(sorted(kinds.items())),
        pass_hat=pass_hat(passes := _case_passes(rows)),
        case_passes=passes,
        tokens=tokens,
        cost=total,
        wall_ms=sum(latencies),
        flawed=sum(1 for row in rows if row.flawed),
    )


def percentile(ordered: list[float], pct: float) -> float:
    """The nearest-rank percentile of an ascending list (0 for an empty one)."""
    if not ordered:
        return 0.0
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def result_json(result: CaseResult) -> dict[str, Any]:
    record = result.record
    return {
        "event": "case",
        "case": result.case,
        "model": result.model,
        "repeat": result.repeat,
        "passed": None if result.flawed else result.passed,  # a flawed case: neither
        "failures": [{"kind": f.kind, "message": f.message} for f in result.failures],
        "flaws": list(result.flaws),
        "status": record.status,
        "answer": record.answer,
        "steps": record.steps,
        "usage": {
            "input_tokens": record.usage.input_tokens,
            "output_tokens": record.usage.output_tokens,
        },
        "latency_ms": round(record.elapsed_ms, 1),
        "cost": record.cost,
        "trace": str(result.trace) if result.trace else None,
        "run_id": result.run_id,  # a conversation's first run
        "runs": record.runs,  # a conversation's turns, each a run in the log
        "customer_tokens": result.customer_usage.total,  # a simulated customer's model's
    }
