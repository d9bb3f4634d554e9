"""Per-model figures from case results: accuracy, latency percentiles, tokens, cost, failures."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

from agent_cli.record.outcomes import CaseResult, ModelSummary


def summarize(results: Iterable[CaseResult], models: Iterable[str]) -> list[ModelSummary]:
    """One summary per model, in the order given (a model with no results has zeros)."""
    by_model: dict[str, list[CaseResult]] = {model: [] for model in models}
    for result in results:
        by_model.setdefault(result.model, []).append(result)
    return [_summary(model, rows) for model, rows in by_model.items()]


def _summary(model: str, rows: list[CaseResult]) -> ModelSummary:
    latencies = sorted(row.record.elapsed_ms for row in rows)
    costs = [row.record.cost for row in rows]
    kinds = Counter(failure.kind for row in rows for failure in row.failures)
    return ModelSummary(
        model=model,
        cases=len(rows),
        passed=sum(1 for row in rows if row.passed),
        p50_ms=percentile(latencies, 50),
        p95_ms=percentile(latencies, 95),
        tokens_per_case=sum(row.record.usage.total for row in rows) / len(rows) if rows else 0.0,
        cost_per_case=(
            sum(c for c in costs if c is not None) / len(rows)
            if rows and all(c is not None for c in costs)
            else None
        ),
        failures=dict(sorted(kinds.items())),
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
        "passed": result.passed,
        "failures": [{"kind": f.kind, "message": f.message} for f in result.failures],
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
        "run_id": result.run_id,
    }
