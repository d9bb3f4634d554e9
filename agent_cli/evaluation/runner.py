"""Running eval cases: each case against a throwaway store, on each model, in parallel workers.

Each worker thread keeps one model per contender (so one HTTP client per worker), and each case
gets its own in-memory SQLite store holding the sample orders and the case's fixtures: the
user's database is never opened. A case that crashes is a failed case; Ctrl-C stops the workers
at their next event and raises Interrupted.
"""

from __future__ import annotations

import re
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from agent_cli.config import Settings
from agent_cli.core.budget import RefundCounter
from agent_cli.core.decisions import ASK_USER_TOOL, Usage
from agent_cli.core.events import ApprovalRequested, Event, RunStarted
from agent_cli.core.seams import ApprovalVerdict, ReasoningModel
from agent_cli.errors import Interrupted, Terminated, UsageError
from agent_cli.evaluation import end_state, intents
from agent_cli.evaluation.cases import EvalCase
from agent_cli.evaluation.conversation import Customer, ScriptedCustomer, converse
from agent_cli.evaluation.customer import SimulatedCustomer, Speaker
from agent_cli.evaluation.judge import judge
from agent_cli.evaluation.reference import JUDGED, AgreeingCustomer, ReferenceModel
from agent_cli.evaluation.reference import problems as reference_problems
from agent_cli.evaluation.spending import EvalBudget
from agent_cli.providers.scripted import ScriptedModel
from agent_cli.record.outcomes import CaseResult, Failure, RunRecord
from agent_cli.record.tracing import TraceWriter, open_trace_file
from agent_cli.runtime.answerers import refuse
from agent_cli.runtime.assemble import Runtime, build_tools, choose_model, limits_for
from agent_cli.runtime.options import RunOptions
from agent_cli.store.formats.order_files import order_record
from agent_cli.store.samples import SAMPLE_DAY, SAMPLE_SHOP
from agent_cli.store.scratch import scratch_store
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools.identity import CustomerSession
from agent_cli.tools.orders import AsOf

REFERENCE_STEPS = 200  # a τ² task's gold actions, each write proposed and confirmed


@dataclass(frozen=True, slots=True, kw_only=True)
class Contender:
    """One model under evaluation: how to build it, and its name in the tables."""

    label: str
    options: RunOptions
    settings: Settings
    instructions: str = ""  # the shop's own (policy/instructions.py)
    base_url: str = ""  # the provider's, for the report; empty offline
    reference: bool = False  # the reference contender: each case's own reference, played
    model: str = ""  # the provider's name for the model (its price's key)


@dataclass(frozen=True, slots=True)
class Job:
    contender: Contender
    case: EvalCase
    repeat: int
    customer: Contender | None = None  # who plays a case's simulated customer


def plan_jobs(
    cases: tuple[EvalCase, ...],
    contenders: tuple[Contender, ...],
    repeat: int,
    customer: Contender | None = None,
) -> list[Job]:
    return [
        Job(contender, case, number, customer)
        for contender in contenders
        for case in cases
        for number in range(1, repeat + 1)
    ]


def check_tools(cases: tuple[EvalCase, ...], contenders: tuple[Contender, ...]) -> None:
    """A case naming a tool no contender offers is a mistake in the case file (exit 2)."""
    for contender in contenders:
        specs = build_tools(
            contender.settings,
            OrderStore.in_memory,
            RefundCounter(),
            dry_run=True,
        ).specs()
        offered = {spec.name for spec in specs} | {ASK_USER_TOOL}
        optional = offered | {"issue_refund"}  # not offered unless refunds are enabled
        for case in cases:
            unknown = [name for name in case.must_call if name not in offered]
            unknown += [name for name in case.must_not_call if name not in optional]
            if unknown:
                raise UsageError(
                    f"case {case.id!r}: no tool named {unknown[0]!r}; tools are "
                    + ", ".join(sorted(offered))
                )


class Models:
    """One model per contender per worker thread; closed together at the end."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._stacks: list[ExitStack] = []
        self._lock = threading.Lock()

    def get(self, contender: Contender) -> ReasoningModel:
        cache: dict[str, ReasoningModel] = self._local.__dict__.setdefault("models", {})
        model = cache.get(contender.label)
        if model is None:
            stack = ExitStack()
            with self._lock:
                self._stacks.append(stack)
            quiet = replace(contender.options, quiet=True)
            model = cache[contender.label] = choose_model(quiet, contender.settings, stack)
        return model.fresh() if isinstance(model, ScriptedModel) else model

    def close(self) -> None:
        with self._lock:
            stacks, self._stacks = self._stacks, []
        for stack in stacks:
            stack.close()


def run_jobs(
    jobs: list[Job],
    *,
    concurrency: int,
    on_result: Callable[[CaseResult], None],
    recording: Recording | None = None,
) -> None:
    """Run every job, handing each result to `on_result` (in this thread) as it finishes; each
    run's events also go where `recording` says (the run log, a trace file a run).
    Ctrl-C (or SIGTERM) stops the workers at their next event; the results that finished are
    handed over, then Interrupted is raised."""
    recording = recording or Recording()
    models = Models()
    try:
        if concurrency <= 1:
            for job in jobs:
                on_result(run_job(job, models, recording))
        else:
            _in_parallel(
                jobs,
                concurrency=concurrency,
                on_result=on_result,
                models=models,
                recording=recording,
            )
    except KeyboardInterrupt as stop:
        raise Interrupted(terminated=isinstance(stop, Terminated)) from None
    finally:
        models.close()


def _in_parallel(
    jobs: list[Job],
    *,
    concurrency: int,
    on_result: Callable[[CaseResult], None],
    models: Models,
    recording: Recording,
) -> None:
    handed: set[Future[CaseResult]] = set()
    with ThreadPoolExecutor(concurrency, thread_name_prefix="eval") as pool:
        futures = [pool.submit(run_job, job, models, recording) for job in jobs]
        try:
            for future in as_completed(futures):
                handed.add(future)
                on_result(future.result())
        except BaseException:
            recording.cancel.set()  # the workers stop at their next event
            pool.shutdown(wait=True, cancel_futures=True)
            for future in futures:  # cases that did finish still count
                finished = future.done() and not future.cancelled()
                if future not in handed and finished and future.exception() is None:
                    on_result(future.result())
            raise


class Replays:
    """Each case's reference replayed once per eval (per contender's settings: the shop's
    rules may deny a write), however many trials judge against it."""

    def __init__(self) -> None:
        self._done: dict[tuple[int, int], tuple[EvalCase, Settings, end_state.Replayed]] = {}
        self._lock = threading.Lock()

    def of(self, case: EvalCase, settings: Settings, url: str | None) -> end_state.Replayed:
        assert case.reference is not None
        key = (id(case), id(settings))  # the objects are kept below: their ids stay theirs
        with self._lock:
            found = self._done.get(key)
        if found is not None:
            return found[2]
        with _fresh_store(case, url) as copy:
            replayed = end_state.replay(settings, copy, case.reference, case.today or SAMPLE_DAY)
        with self._lock:
            self._done[key] = (case, settings, replayed)
        return replayed


@dataclass(frozen=True, slots=True, kw_only=True)
class Recording:
    """Where the runs of an eval go besides their results, and the signal to stop them."""

    record_dir: Path | None = None  # --record: a trace file a run
    log: Callable[[Event], None] | None = None  # the run log
    cancel: threading.Event = field(default_factory=threading.Event)
    budget: EvalBudget | None = None  # --max-cost: the eval's, shared by every case
    store_url: str | None = None  # --store-url: each case's store a schema on that server
    references: Replays = field(default_factory=Replays)


def run_job(job: Job, models: Models, recording: Recording) -> CaseResult:
    """One case on one model; any failure but an interruption becomes a failed result."""
    case, contender = job.case, job.contender
    budget = recording.budget
    if budget is not None and budget.exhausted.is_set():
        raise budget.error()  # spent: no case starts
    record = RunRecord(provider="", model=contender.label)
    trace = _trace_path(recording.record_dir, job) if recording.record_dir else None
    started = time.perf_counter()
    try:
        with ExitStack() as stack:
            store = stack.enter_context(_fresh_store(case, recording.store_url))
            model = ReferenceModel(case, store) if contender.reference else models.get(contender)
            if budget is not None:
                model = budget.guard(model, limits_for(contender.settings, model.model).price)
            runtime = _runtime(job, model, store)
            sinks: list[Callable[[Event], None]] = [record.add, _stop_when(recording.cancel)]
            if recording.log is not None:
                sinks.insert(0, recording.log)
            if trace is not None:
                trace.parent.mkdir(parents=True, exist_ok=True)
                sinks.insert(0, TraceWriter(stack.enter_context(open_trace_file(trace))).write)
            customer = _customer(job, models)
            sinks = [_with_case_orders(sink, case) for sink in sinks]
            over = _drive(runtime, store, case, customer, sinks)
            after = intents.order_state(store, [code for code, _ in case.desk.orders_after])
            expected = None
            if case.reference is not None:
                expected = recording.references.of(case, contender.settings, recording.store_url)
            ended = _ended(case, store, expected, over=over)
            if isinstance(customer, SimulatedCustomer) and customer.failed:
                # no conversation to judge the agent on: the customer's model is at fault
                failed = (Failure("customer", customer.failed),)
                return _result(job, failed, record, trace, customer)
    except Interrupted:
        raise
    except Exception as exc:  # the case crashed: a failed case, and the others go on
        record.status, record.error = "error", f"{type(exc).__name__}: {exc}"
        record.elapsed_ms = record.elapsed_ms or (time.perf_counter() - started) * 1000
        return _result(job, (Failure("error", record.error),), record, trace)
    failures = (*judge(case, record, after), *ended)
    if contender.reference:  # judged on what a reference can show, not on a model's wording
        failures = tuple(failure for failure in failures if failure.kind in JUDGED)
        failures += tuple(reference_problems(record.tools, case))
    flaws = expected.flaws if expected is not None else ()  # the case's, not the agent's
    return _result(job, failures, record, trace, customer, flaws=flaws)


@contextmanager
def _fresh_store(case: EvalCase, url: str | None) -> Iterator[OrderStore]:
    """A fresh copy of the case's starting store (each trial its own: no run sees another's
    writes): the sample shop or the case's own, then its orders; in memory, or with
    `--store-url` in a schema of its own on that PostgreSQL server, dropped afterwards."""
    if url is not None:
        with scratch_store(url, case.start or SAMPLE_SHOP, case.orders) as scratch:
            yield scratch
        return
    store = OrderStore.in_memory(case.orders, shop=case.start)
    try:
        yield store
    finally:
        store.close()


def _ended(
    case: EvalCase, store: OrderStore, expected: end_state.Replayed | None, *, over: bool
) -> list[Failure]:
    """What the conversation's end and the store it leaves say: the turn limit reached, and
    the store against the one the case's reference writes leave (`expected`)."""
    failures = []
    if over:
        failures.append(
            Failure("status", f"the conversation reached its limit of {case.max_turns} turns")
        )
    if expected is not None:
        failures += [Failure("reference", problem) for problem in expected.problems]
        if found := end_state.differences(end_state.snapshot(store), expected.state):
            failures.append(Failure("end_state", end_state.summary(found)))
    return failures


def _result(
    job: Job,
    failures: tuple[Failure, ...],
    record: RunRecord,
    trace: Path | None,
    customer: Customer | None = None,
    *,
    flaws: tuple[str, ...] = (),
) -> CaseResult:
    case = job.case
    spoke = customer.usage if isinstance(customer, SimulatedCustomer) else Usage()
    return CaseResult(
        case=case.id,
        model=job.contender.label,
        repeat=job.repeat,
        failures=failures,
        record=record,
        trace=trace,
        question=case.question,
        today=case.today,
        customer_usage=spoke,
        flaws=flaws,
    )


def _runtime(job: Job, model: ReasoningModel, store: OrderStore) -> Runtime:
    case, settings = job.case, job.contender.settings
    today = case.today or SAMPLE_DAY  # the day the eval store's samples are dated for
    counter = RefundCounter()
    as_of = AsOf()
    identity = CustomerSession()  # a case is one customer conversation
    # The store is the case's own throwaway copy: writes, tickets and refunds land there and
    # are judged there (--dry-run picks the offline model; it cannot make a case's writes vanish).
    tools = build_tools(
        settings,
        lambda: store,
        counter,
        dry_run=False,
        as_of=as_of,
        identity=identity,
        desk_clock=lambda: today,  # the store's samples are dated for the case's day
    )
    limits = limits_for(settings, model.model)
    if case.max_steps is not None:
        limits = replace(limits, max_steps=case.max_steps)
    if job.contender.reference:  # its answer is the case's facts, verbatim; its steps many
        limits = replace(limits, max_steps=REFERENCE_STEPS, grounding=False)
    instructions = job.contender.instructions
    return Runtime(
        settings=settings,
        model=model,
        tools=tools,
        limits=limits,
        today=today,
        refunds=counter,
        mcp=None,
        as_of=as_of,
        instructions=instructions,
        identity=identity,
    )


def _with_case_orders(sink: Callable[[Event], None], case: EvalCase) -> Callable[[Event], None]:
    """`sink`, given the run's start with the case's orders (see RunStarted.case_orders)."""
    orders = tuple(order_record(order) for order in case.orders)

    def sent(event: Event) -> None:
        sink(replace(event, case_orders=orders) if isinstance(event, RunStarted) else event)

    return sent


def _customer(job: Job, models: Models) -> Customer:
    """Who speaks for the customer: the case's own messages, or its persona played by the
    customer model (the command made sure there is one)."""
    case = job.case
    if case.customer is not None and job.contender.reference:
        return AgreeingCustomer(case)
    if case.customer is None:
        return ScriptedCustomer.of(case.question, case.turns if case.conversation else case.replies)
    if job.customer is None:
        raise UsageError(f"case {case.id!r} has a simulated customer: give --customer-model")
    model = models.get(job.customer)
    if not isinstance(model, Speaker):
        raise UsageError("the simulated customer needs a model served over HTTP")
    timeout = job.customer.settings.limits.timeout
    return SimulatedCustomer(model=model, persona=case.customer, timeout_s=timeout)


def _drive(
    runtime: Runtime,
    store: OrderStore,
    case: EvalCase,
    customer: Customer,
    sinks: list[Callable[[Event], None]],
) -> bool:
    """The case's customer and the agent, to the conversation's end; True at the turn limit."""
    return converse(
        runtime,
        store,
        customer,
        sinks,
        approve=_as_operator if case.approve else refuse,  # as the case says; else nobody
        max_turns=case.max_turns,
        turns=case.conversation,
    )


def _as_operator(request: ApprovalRequested) -> ApprovalVerdict:
    """A case with `approve = true`: every approval given, as by the operator at a terminal."""
    return ApprovalVerdict(True, "operator", "the case approves")


def _stop_when(cancel: threading.Event) -> Callable[[Event], None]:
    def check(event: Event) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt  # drive passes it into the loop: the run ends interrupted

    return check


def _trace_path(record_dir: Path, job: Job) -> Path:
    """Where a run's trace goes under --record: a name made from the contender and the case,
    which come from data (a τ² task's id may be `../../x`), so each is a plain file name that
    stays inside `record_dir`."""
    suffix = f".r{job.repeat}" if job.repeat > 1 else ""
    return record_dir / _slug(job.contender.label) / f"{_file_name(job.case.id)}{suffix}.jsonl"


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-.") or "model"


def _file_name(case_id: str) -> str:
    """The case's id as a file name: as it is when it is one, else made one, with a short
    digest of the id so that two ids never meet at one name."""
    name = _slug(case_id)
    if name == case_id and name not in (".", ".."):
        return name
    return f"{name}-{zlib.crc32(case_id.encode('utf-8')):08x}"
