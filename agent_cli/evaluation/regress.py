"""A recorded run as a regression test: its decisions replayed against today's tools and store.

The model is not asked: the run's recorded decisions are fed back as a script, its recorded
replies answer its questions, the recorded approvals answer its approvals, and it runs as of its
recorded date. A conversation is replayed whole: the runs of one trace that continue one
another (each shown the turns before it) share one customer, one store and the consent given in
them, as they did. Every tool observation is compared with the recording, in order.

An eval case's run (`eval --record`) replays on a fresh copy of the case's store, its writes
made there as they were. Any other run replays against the configured store without writing:
its writes and refunds run dry, and `issue_refund`'s observation is not compared.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any, Literal

from agent_cli.config import Settings
from agent_cli.core.budget import RefundCounter
from agent_cli.core.events import (
    ApprovalDecided,
    ApprovalRequested,
    Event,
    ModelDecided,
    RunFinished,
    RunStarted,
    ToolObserved,
)
from agent_cli.core.seams import ApprovalVerdict, Exchange
from agent_cli.errors import AgentError, Interrupted, UsageError
from agent_cli.providers.scripted import ScriptedModel
from agent_cli.record.outcomes import CheckResult, Difference, RecordedRun
from agent_cli.record.replay import load_runs
from agent_cli.runtime.answerers import refuse
from agent_cli.runtime.assemble import Runtime, build_tools, limits_for
from agent_cli.runtime.drive import drive
from agent_cli.runtime.memory import Memory
from agent_cli.runtime.stores import LazyStore
from agent_cli.store.formats.order_files import OrderRecord
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools.identity import CustomerSession
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
    asked = [e.step for e in events if isinstance(e, ApprovalRequested)]
    answered = [e for e in events if isinstance(e, ApprovalDecided) and e.step in asked]
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
        answer=finished.answer if finished else None,
        remembered=started.remembered_turns,
        max_steps=started.max_steps,
        grounding=started.grounding,
        approvals=tuple((e.approved, e.by, e.reason, e.queued is not None) for e in answered),
    )


def check_run(run: RecordedRun, settings: Settings) -> CheckResult:
    """Replay one run on its own (a conversation's first turn, or a one-question run)."""
    return check_conversation((run,), settings)[0]


def conversations(runs: list[RecordedRun]) -> list[tuple[RecordedRun, ...]]:
    """One trace's runs, each conversation together: a run shown earlier turns continues the
    run before it (a chat's next message; an eval case's next turn)."""
    groups: list[list[RecordedRun]] = []
    for run in runs:
        if run.remembered and groups:
            groups[-1].append(run)
        else:
            groups.append([run])
    return [tuple(group) for group in groups]


def check_conversation(runs: tuple[RecordedRun, ...], settings: Settings) -> list[CheckResult]:
    """Replay a conversation's runs in order, on one store and with one customer, each shown
    the turns before it as they were."""
    chat = settings.chat
    memory = Memory(chat.memory_turns, chat.memory_chars)
    results = []
    with ExitStack() as stack:
        store = _store_of(runs[0], settings)
        stack.callback(store.close)
        replayer = _Replayer(settings, store, runs[0])
        for run in runs:
            results.append(replayer.check(run, memory.recent()))
            if run.answer is not None:
                memory.add(run.goal, run.answer, tuple(run.replies))
    return results


class _Replayer:
    """One conversation's tools, customer and store, as the recording had them: an eval
    case's writes made on its own copy of its store; any other run's made dry."""

    def __init__(self, settings: Settings, store: LazyStore, first: RecordedRun) -> None:
        self.settings = settings
        self.counter = RefundCounter()
        self.as_of = AsOf()
        self.identity = CustomerSession()
        case = first.case_orders is not None
        self.tools = build_tools(
            settings,
            store.get,
            self.counter,
            dry_run=not case,  # the configured store is never written by a replay
            as_of=self.as_of,
            identity=self.identity,
            desk_clock=(lambda: first.today) if case else None,
        )

    def check(self, run: RecordedRun, memory: tuple[Exchange, ...]) -> CheckResult:
        if not run.decisions:
            return CheckResult(run, 0, problem="the run has no decisions to replay")
        seen: list[ToolObserved] = []
        status: list[str] = []

        def keep(event: Event) -> None:
            if isinstance(event, ToolObserved):
                seen.append(event)
            elif isinstance(event, RunFinished):
                status.append(event.status)

        replies, approvals = run.replies, iter(run.approvals)
        try:
            drive(
                self._runtime(run).events(run.goal, memory),
                [keep],
                respond=lambda q: next(replies, None),
                approve=lambda asked: _as_recorded(next(approvals, None), asked),
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

    def _runtime(self, run: RecordedRun) -> Runtime:
        model = ScriptedModel(run.decisions, name=f"replay of {run.run_id[:8]}")
        limits = limits_for(self.settings, model.model)
        limits = replace(
            limits, max_steps=run.max_steps or limits.max_steps, grounding=run.grounding
        )
        return Runtime(
            settings=self.settings,
            model=model,
            tools=self.tools,
            limits=limits,
            today=run.today,
            refunds=self.counter,
            as_of=self.as_of,
            identity=self.identity,
        )


def _as_recorded(
    recorded: tuple[bool, str, str, bool] | None, asked: ApprovalRequested
) -> ApprovalVerdict:
    """The approval as it was given; one the recording never gave is refused."""
    if recorded is None:
        return refuse(asked)
    approved, by, reason, queued = recorded
    who: Literal["operator", "rule", "policy"] = (
        by if by in ("operator", "rule", "policy") else "operator"  # type: ignore[assignment]
    )
    return ApprovalVerdict(approved, who, reason, queue=queued)


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
        for conversation in conversations(recorded_runs(path, warn=warn, run_id=run_id)):
            yield from check_conversation(conversation, settings)


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
