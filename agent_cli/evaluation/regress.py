"""A recorded run as a regression test: its decisions replayed against today's tools and store.

The model is not asked: the run's recorded decisions are fed back as a script, its recorded
replies answer its questions, and it runs as of its recorded date. Every tool observation is
compared with the recording, in order. `issue_refund` is never re-run (it moves money): it runs
dry, and its observation is not compared.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import date
from pathlib import Path
from typing import Any

from agent_cli.config import Settings
from agent_cli.core.budget import RefundCounter
from agent_cli.core.events import Event, ModelDecided, RunFinished, RunStarted, ToolObserved
from agent_cli.errors import AgentError, Interrupted, UsageError
from agent_cli.providers.scripted import ScriptedModel
from agent_cli.record.outcomes import CheckResult, Difference, RecordedRun
from agent_cli.record.replay import load_runs
from agent_cli.runtime.answerers import refuse
from agent_cli.runtime.assemble import Runtime, build_tools, limits_for
from agent_cli.runtime.drive import drive
from agent_cli.runtime.stores import LazyStore
from agent_cli.store.order_files import OrderRecord
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools.orders import AsOf

NOT_COMPARED = frozenset({"issue_refund"})


def recorded_runs(
    path: Path, *, warn: Callable[[str], None], run_id: str | None = None
) -> list[RecordedRun]:
    return [
        run
        for events in load_runs(path, warn=warn, run_id=run_id)
        if (run := _recorded(path, events)) is not None
    ]


def _recorded(path: Path, events: list[Event]) -> RecordedRun | None:
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    if started is None:
        return None  # a fragment of a run (its start was cut off): nothing to replay
    finished = next((e for e in events if isinstance(e, RunFinished)), None)
    return RecordedRun(
        source=path,
        run_id=started.run_id,
        goal=started.goal,
        today=date.fromisoformat(started.today),
        decisions=tuple(e.decision for e in events if isinstance(e, ModelDecided)),
        observations=tuple(e for e in events if isinstance(e, ToolObserved)),
        status=finished.status if finished else "unfinished",
        case_orders=None
        if started.case_orders is None
        else tuple(OrderRecord.model_validate(o).to_order() for o in started.case_orders),
    )


def check_run(run: RecordedRun, settings: Settings) -> CheckResult:
    """Replay one run's decisions against today's tools and the configured store."""
    if not run.decisions:
        return CheckResult(run, 0, problem="the run has no decisions to replay")
    seen: list[ToolObserved] = []
    status: list[str] = []

    def keep(event: Event) -> None:
        if isinstance(event, ToolObserved):
            seen.append(event)
        elif isinstance(event, RunFinished):
            status.append(event.status)

    replies = run.replies
    with ExitStack() as stack:
        store = _store_of(run, settings)
        stack.callback(store.close)
        counter = RefundCounter()
        as_of = AsOf()
        tools = build_tools(settings, store.get, counter, dry_run=True, as_of=as_of)
        model = ScriptedModel(run.decisions, name=f"replay of {run.run_id[:8]}")
        limits = limits_for(settings, model.model)
        runtime = Runtime(settings, model, tools, limits, run.today, counter, as_of=as_of)
        try:
            drive(
                runtime.events(run.goal),
                [keep],
                respond=lambda q: next(replies, None),
                approve=refuse,
            )
        except Interrupted:
            raise
        except AgentError:
            pass  # the ending is compared below, through the observations it left
    differences = compare(run.observations, tuple(seen))
    mcp = tuple(dict.fromkeys(o.tool for o in run.observations if is_mcp_tool(o.tool)))
    compared = sum(1 for o in run.observations if o.tool not in NOT_COMPARED) - sum(
        1 for o in run.observations if is_mcp_tool(o.tool)
    )
    ending = status[0] if status else "error"
    return CheckResult(run, compared, differences, ending, not_replayed=mcp)


def is_mcp_tool(name: str) -> bool:
    """An MCP server's tool (`NAME.tool`; ours have no dot): a replay starts no server, so its
    calls are not made again and their observations are not compared."""
    return "." in name


def _store_of(run: RecordedRun, settings: Settings) -> LazyStore:
    """The store the run used: an eval case's throwaway samples and orders, rebuilt as they
    were; else the configured order database."""
    if run.case_orders is None:
        return LazyStore(settings)
    return LazyStore(settings, opened=OrderStore.in_memory(run.case_orders))


def compare(
    recorded: tuple[ToolObserved, ...], now: tuple[ToolObserved, ...]
) -> tuple[Difference, ...]:
    """Observations that differ, matched in order; refunds are not compared."""
    differences = []
    for number in range(max(len(recorded), len(now))):
        old = recorded[number] if number < len(recorded) else None
        new = now[number] if number < len(now) else None
        call = old or new
        assert call is not None
        if call.tool in NOT_COMPARED or is_mcp_tool(call.tool):
            continue
        if old is None or new is None or _key(old) != _key(new):
            differences.append(
                Difference(
                    number + 1,
                    call.tool,
                    dict(call.args),
                    old.observation if old else None,
                    new.observation if new else None,
                )
            )
    return tuple(differences)


def _key(observed: ToolObserved) -> tuple[str, str, str]:
    args = json.dumps(observed.args, sort_keys=True, ensure_ascii=False)
    return observed.tool, args, observed.observation


def check_traces(
    paths: list[Path], settings: Settings, *, warn: Callable[[str], None], run_id: str | None = None
) -> Iterator[CheckResult]:
    """Every recorded run in `paths`, checked in order."""
    for path in paths:
        for run in recorded_runs(path, warn=warn, run_id=run_id):
            yield check_run(run, settings)


def traces_in(directory: Path) -> list[Path]:
    """The trace files under `directory` (recursively), in name order."""
    if not directory.is_dir():
        raise UsageError(f"--replay {directory}: no such directory of traces")
    paths = sorted(directory.rglob("*.jsonl"))
    if not paths:
        raise UsageError(f"--replay {directory}: no *.jsonl traces in it (see --record)")
    return paths


def check_json(result: CheckResult) -> dict[str, Any]:
    return {
        "event": "replay_check",
        "trace": str(result.run.source),
        "run_id": result.run.run_id,
        "goal": result.run.goal,
        "matches": result.matches,
        "compared": result.compared,
        "recorded_status": result.run.status,
        "status": result.status,
        "problem": result.problem,
        "not_replayed": list(result.not_replayed),
        "differences": [
            {
                "number": d.number,
                "tool": d.tool,
                "args": d.args,
                "recorded": d.recorded,
                "now": d.now,
            }
            for d in result.differences
        ],
    }
