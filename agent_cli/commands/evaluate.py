"""The body of `agent eval`, free of Typer: cases -> contenders -> workers -> tables, JSON, HTML."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import datetime
from importlib import resources
from pathlib import Path

from agent_cli.config import Settings
from agent_cli.errors import EvalBelowTarget, Interrupted, ReplayDiffers, UsageError
from agent_cli.evaluation.cases import EvalCase, builtin_cases, load_cases
from agent_cli.evaluation.customer import Speaker
from agent_cli.evaluation.heard import SUFFIX, with_heard
from agent_cli.evaluation.reference import LABEL as REFERENCE_LABEL
from agent_cli.evaluation.regress import check_json, check_traces, traces_in
from agent_cli.evaluation.report import ReportContext, render_report
from agent_cli.evaluation.runner import Contender, Recording, check_tools, plan_jobs, run_jobs
from agent_cli.evaluation.spending import EvalBudget, EvalBudgetExceeded
from agent_cli.evaluation.summary import result_json, summarize
from agent_cli.evaluation.tau2_tasks import load_tau2
from agent_cli.policy.instructions import shop_instructions
from agent_cli.providers.choice import choose_provider
from agent_cli.record.outcomes import CaseResult, ModelSummary
from agent_cli.record.runlog import configured_log_path
from agent_cli.runtime.assemble import choose_model
from agent_cli.runtime.drive import run_recorder, warn
from agent_cli.runtime.options import ProviderOptions, RunOptions
from agent_cli.store.configured import configured_path
from agent_cli.store.formats.tau2 import read_tau2
from agent_cli.store.samples import SAMPLE_DAY
from agent_cli.ui.console import make_console
from agent_cli.ui.eval_view import EvalView, show_cases, show_check, show_check_summary

MAX_CONCURRENCY = 64
REFERENCE = "reference"  # --provider reference: the cases' own references, played
MAX_REPEAT = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalOptions:
    cases: Path | None = None
    builtin: bool = False
    replay: Path | None = None  # a directory of traces to check instead of cases
    models: tuple[str, ...] = ()
    run: RunOptions = field(default_factory=RunOptions)
    concurrency: int | None = None  # default: 4 for HTTP providers, 1 offline
    repeat: int = 1
    json_output: bool = False
    report: Path | None = None
    record: Path | None = None
    min_pass: float = 1.0
    min_heard: float = 0.0  # the built-in heard cases' share to pass (evaluation/heard.py)
    instructions: tuple[Path, ...] = ()  # --instructions, each file side by side
    list_cases: bool = False  # --list: the cases, one per line, nothing run
    customer: ProviderOptions | None = None  # --customer-model: plays simulated customers
    tau2: Path | None = None  # τ²-bench's tasks.json, as cases
    store_file: Path | None = None  # a τ²-format db.json: every case's starting store
    reference: bool = False  # --provider reference: each case's reference played
    max_cost: float | None = None  # --max-cost: the whole eval's budget
    store_url: str | None = None  # --store-url: a PostgreSQL server, a schema per case


def eval_command(options: EvalOptions) -> None:
    """`agent eval`: run every case on every model, show the results as they finish, then the
    summary; EvalBelowTarget (exit 3) when a model passes fewer than --min-pass of its cases."""
    _check(options)
    if options.run.provider.provider == REFERENCE:  # not a provider of the config: ours
        run = options.run
        plain = replace(run, provider=replace(run.provider, provider=None), dry_run=True)
        options = replace(options, run=plain, reference=True)
    if options.replay is not None:
        paths = traces_in(options.replay)
        check_replays(paths, settings=options.run.settings(), json_output=options.json_output)
        return
    cases = _cases(options)
    if options.list_cases:
        show_cases(make_console(), [(case.id, case.kind, case.question) for case in cases])
        return
    contenders = tuple(_contenders(options))
    _check_prices(options, contenders)
    cases = _judgeable(cases, contenders)
    check_tools(cases, contenders)
    customer = _customer_player(options, cases)
    _prepare_outputs(options)
    jobs = plan_jobs(cases, contenders, options.repeat, customer)
    order = {(j.contender.label, j.case.id, j.repeat): n for n, j in enumerate(jobs)}
    results: list[CaseResult] = []
    output = _Output(options.json_output, len(jobs))
    labels = [c.label for c in contenders]

    def finished(result: CaseResult) -> None:
        results.append(result)
        output.case(result)

    settings = options.run.settings()
    recorder = run_recorder(
        settings, kind="eval", session_id=uuid.uuid4().hex, dry_run=options.run.dry_run
    )
    with output, ExitStack() as stack:
        if recorder is not None:
            stack.callback(recorder.close)
        try:
            run_jobs(
                jobs,
                concurrency=options.concurrency or _default_concurrency(contenders),
                on_result=finished,
                recording=Recording(
                    record_dir=options.record,
                    log=recorder,
                    budget=None if options.max_cost is None else EvalBudget(options.max_cost),
                    store_url=options.store_url,
                ),
            )
        except (Interrupted, EvalBudgetExceeded):
            output.close(_sorted(results, order), summarize(results, labels), partial=True)
            raise
        ordered = _sorted(results, order)
        summaries = summarize(ordered, labels)
        output.close(ordered, summaries, partial=False)
    if options.report is not None:
        context = ReportContext(
            source="built-in cases" if options.builtin else str(options.cases or options.tau2),
            base_urls={c.label: c.base_url for c in contenders},
            ran_at=datetime.now().astimezone(),
            sample_day=SAMPLE_DAY,
            directory=options.report.parent,
        )
        write_page(options.report, render_report(ordered, summaries, context))
    _check_target(summaries, options.min_pass, options.min_heard)


def check_replays(
    paths: list[Path], *, settings: Settings, json_output: bool, run_id: str | None = None
) -> None:
    """Replay every recorded run in `paths` against today's tools and store; ReplayDiffers
    (exit 3) when any observation differs."""
    console = make_console()
    checked = differing = 0

    for result in check_traces(paths, settings, warn=warn, run_id=run_id):
        checked += 1
        differing += 0 if result.matches or result.problem else 1
        if json_output:
            print(
                json.dumps(check_json(result), ensure_ascii=False, separators=(",", ":")),
                flush=True,
            )
        else:
            show_check(console, result)
    if not json_output:
        show_check_summary(console, checked, differing)
    if differing:
        raise ReplayDiffers(
            f"{differing} of {checked} replayed runs observe something else today; "
            "see the differences above"
        )


def _check(options: EvalOptions) -> None:
    sources = [options.builtin, options.cases, options.replay, options.tau2]
    if sum(source not in (None, False) for source in sources) != 1:
        raise UsageError(
            "Give one of: a case file or --builtin (agent eval run), TASKS (agent eval tau2), or "
            "DIR (agent eval replay); see 'agent eval --help'"
        )
    if options.store_url is not None:
        _check_server(options.store_url)
    if options.tau2 is not None and _tau2_files(options)[1] is None:
        raise UsageError(
            "--tau2 needs --store-file: τ²-bench's db.json the tasks run on (--tau2 retail "
            "runs the retail tasks shipped with agent-cli on their own db.json)"
        )
    if options.concurrency is not None and not 1 <= options.concurrency <= MAX_CONCURRENCY:
        raise UsageError(f"--concurrency must be 1-{MAX_CONCURRENCY}")
    if not 1 <= options.repeat <= MAX_REPEAT:
        raise UsageError(f"--trials must be 1-{MAX_REPEAT}")
    if not 0.0 <= options.min_pass <= 1.0:
        raise UsageError("--min-pass is a fraction of cases, 0-1 (e.g. 0.9)")
    if not 0.0 <= options.min_heard <= 1.0:
        raise UsageError("--min-heard is a fraction of cases, 0-1 (e.g. 0.9)")
    offline = options.run.dry_run or options.run.script is not None
    if options.models and offline:
        raise UsageError("--model picks provider models; it does not go with --dry-run or --script")
    if len(set(options.models)) != len(options.models):
        raise UsageError("--model names a model twice; give each once")


def _check_server(url: str) -> None:
    """--store-url before any case: psycopg installed, and the server takes a scratch schema."""
    from agent_cli.store.scratch import scratch_store

    with scratch_store(url, ()):
        pass


TAU2_RETAIL = "retail"  # `--tau2 retail`: τ²-bench's retail tasks and db.json, shipped


def _tau2_files(options: EvalOptions) -> tuple[Path | None, Path | None]:
    """The τ² tasks and store files: as given, or the shipped retail ones for `--tau2 retail`
    (a file named `retail` in the working directory is read as a file)."""
    tasks, store = options.tau2, options.store_file
    if tasks is not None and str(tasks) == TAU2_RETAIL and not tasks.exists():
        shipped = Path(str(resources.files("agent_cli.evaluation") / "tau2_retail"))
        return shipped / "tasks.json", store or shipped / "db.json"
    return tasks, store


def _cases(options: EvalOptions) -> tuple[EvalCase, ...]:
    """The cases asked for; with --store-file, each starts from that store (read once)."""
    tasks_file, store_file = _tau2_files(options)
    shop = read_tau2(store_file) if store_file is not None else None
    if tasks_file is not None:
        assert shop is not None
        tasks = load_tau2(tasks_file, shop)
        for skipped in tasks.skipped:
            warn(f"τ²-bench {skipped}: skipped")
        if not tasks.cases:
            raise UsageError(f"{options.tau2}: every task was skipped; nothing to run")
        return tasks.cases
    cases = with_heard(builtin_cases()) if options.builtin else load_cases(options.cases)  # type: ignore[arg-type]
    return cases if shop is None else tuple(replace(case, start=shop) for case in cases)


def _contenders(options: EvalOptions) -> list[Contender]:
    """One per --model (or the configured model) and --instructions file (or the configured
    instructions), each checked as `agent ask` would: bad settings, unreadable instructions and
    a missing key fail here, before any case runs."""
    if options.reference:
        return [_reference(options)]
    contenders = []
    for model in options.models or (None,):
        provider = replace(options.run.provider, model=model or options.run.provider.model)
        run = replace(options.run, provider=provider, quiet=True)
        settings = run.settings()
        with ExitStack() as stack:
            built = choose_model(run, settings, stack)
            label = f"{built.provider}/{built.model}"
        offline = built.provider == "offline"
        base_url = "" if offline else choose_provider(settings, os.environ).base_url
        for path in options.instructions or (None,):
            text = shop_instructions(settings, path).text
            named = f"{label} + {path.name}" if len(options.instructions) > 1 and path else label
            contenders.append(
                Contender(
                    label=named,
                    options=run,
                    settings=settings,
                    instructions=text,
                    base_url=base_url,
                    model=built.model,
                )
            )
    return contenders


def _check_prices(options: EvalOptions, contenders: tuple[Contender, ...]) -> None:
    """--max-cost counts money: each model over HTTP needs its price ([prices."MODEL"])."""
    if options.max_cost is None:
        return
    if not options.max_cost > 0:
        raise UsageError("--max-cost must be above 0 (the eval's budget, in the prices' unit)")
    for contender in contenders:
        if contender.reference or _offline(contender):
            continue
        model = contender.model
        if model not in contender.settings.prices:
            raise UsageError(
                f'--max-cost needs a price for model {model!r}: add [prices."{model}"] with '
                "input and output (per million tokens) to the config"
            )


def _reference(options: EvalOptions) -> Contender:
    """`--provider reference`: each case's reference played through its conversation."""
    if options.models:
        raise UsageError("--provider reference plays each case's own reference: drop --model")
    run = replace(options.run, provider=replace(options.run.provider, provider=None), dry_run=True)
    return Contender(label=REFERENCE_LABEL, options=run, settings=run.settings(), reference=True)


def _judgeable(
    cases: tuple[EvalCase, ...], contenders: tuple[Contender, ...]
) -> tuple[EvalCase, ...]:
    """The reference contender runs the cases that have a reference; the others are skipped."""
    if not any(c.reference for c in contenders):
        return cases
    kept = tuple(case for case in cases if case.reference is not None)
    if len(kept) < len(cases):
        warn(f"{len(cases) - len(kept)} case(s) have no reference writes: skipped")
    if not kept:
        raise UsageError("--provider reference: no case has reference writes to play")
    return kept


def _customer_player(options: EvalOptions, cases: tuple[EvalCase, ...]) -> Contender | None:
    """Who plays the simulated customers: --customer-model on its provider (the agent's unless
    --customer-provider says another) and server; checked before any case runs."""
    simulated = [case.id for case in cases if case.customer is not None]
    if options.reference:
        return None  # the reference's customer agrees, and needs no model
    if options.customer is None:
        if simulated:
            raise UsageError(
                f"{len(simulated)} case(s) have a simulated customer ({simulated[0]!r}): give "
                "--customer-model MODEL to play them"
            )
        return None
    agent = options.run.provider
    same = options.customer.provider is None
    provider = replace(
        agent,
        provider=agent.provider if same else options.customer.provider,
        model=options.customer.model,
        base_url=options.customer.base_url or (agent.base_url if same else None),
        stream=False,
    )
    run = replace(options.run, provider=provider, dry_run=False, script=None, quiet=True)
    settings = run.settings()
    with ExitStack() as stack:
        offline = choose_provider(settings, os.environ).kind == "offline"
        built = None if offline else choose_model(run, settings, stack)
        if not isinstance(built, Speaker):
            raise UsageError(
                "--customer-model: the simulated customer needs a model served over HTTP (a "
                "provider with its key, or --customer-base-url); the offline playbook cannot "
                "play one"
            )
        label = f"customer {built.provider}/{built.model}"
    return Contender(label=label, options=run, settings=settings)


def _offline(contender: Contender) -> bool:
    run = contender.options
    if run.dry_run or run.script is not None:
        return True
    return choose_provider(contender.settings, os.environ).kind == "offline"


def _default_concurrency(contenders: tuple[Contender, ...]) -> int:
    return 1 if all(_offline(c) for c in contenders) else 4


def _prepare_outputs(options: EvalOptions) -> None:
    """Fail on an unusable --report or --record path before the first case, not after."""
    if options.report is not None:
        _check_report_target(options.report, options.run.settings())
    if options.record is not None:
        try:
            options.record.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--record {options.record}: {exc.strerror or exc}") from None


def _sorted(results: list[CaseResult], order: dict[tuple[str, str, int], int]) -> list[CaseResult]:
    return sorted(results, key=lambda r: order.get((r.model, r.case, r.repeat), 0))


def _check_report_target(path: Path, settings: Settings) -> None:
    """A report replaces a file: never through a link, never a FIFO or a device, never the
    order database or the run log."""
    if not path.parent.is_dir():
        raise UsageError(f"--report {path}: no such directory {path.parent}")
    if path.is_symlink():
        raise UsageError(f"--report {path}: a symbolic link; name the file itself")
    if path.exists() and not path.is_file():
        raise UsageError(f"--report {path}: not a regular file (a FIFO, device or directory)")
    protected = {
        "the order database": configured_path(settings.store.path),
        "the run log": configured_log_path(settings.log.path),
    }
    for what, kept in protected.items():
        if path.exists() and kept.exists() and path.samefile(kept):
            raise UsageError(f"--report {path}: that is {what}; choose another file")


def write_page(path: Path, html: str, option: str = "--report") -> None:
    """An HTML page written whole or not at all: a temporary file beside it (mode 0600, like
    the run log it comes from), then renamed over it; a failure names `option`."""
    draft: str | None = None
    try:
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
        ) as handle:
            draft = handle.name
            handle.write(html)
        os.replace(draft, path)
    except OSError as exc:
        if draft is not None:
            with contextlib.suppress(OSError):
                os.unlink(draft)
        raise UsageError(f"{option} {path}: {exc.strerror or exc}") from None


def _check_target(summaries: list[ModelSummary], min_pass: float, min_heard: float) -> None:
    """EvalBelowTarget unless every model's written cases reach --min-pass and its heard
    cases (held-out customer messages, their own row) --min-heard."""
    for option, target, rows in (
        ("--min-pass", min_pass, [s for s in summaries if not s.model.endswith(SUFFIX)]),
        ("--min-heard", min_heard, [s for s in summaries if s.model.endswith(SUFFIX)]),
    ):
        short = [s for s in rows if s.scored and s.accuracy < target]  # all flawed: no measure
        if short:
            worst = min(short, key=lambda s: s.accuracy)
            raise EvalBelowTarget(
                f"{worst.model} passed {worst.passed} of {worst.scored} cases "
                f"({worst.accuracy:.1%}), below {option} {target:.0%}; see the failures above"
            )


class _Output:
    """JSON Lines on stdout, or the live view."""

    def __init__(self, json_output: bool, total: int) -> None:
        self._json = json_output
        self._view = None if json_output else EvalView(make_console(), total)

    def __enter__(self) -> _Output:
        if self._view is not None:
            self._view.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._view is not None:
            self._view.__exit__(None, None, None)

    def case(self, result: CaseResult) -> None:
        if self._view is not None:
            self._view.case_finished(result)
            return
        print(
            json.dumps(result_json(result), ensure_ascii=False, separators=(",", ":")), flush=True
        )

    def close(
        self, results: list[CaseResult], summaries: list[ModelSummary], *, partial: bool
    ) -> None:
        if self._view is not None:
            self._view.__exit__(None, None, None)
            self._view.finished(results, summaries, partial=partial)
            return
        for summary in summaries:
            line = {**summary.as_json(), "partial": partial}
            print(
                json.dumps(line, ensure_ascii=False, separators=(",", ":")),
                file=sys.stdout,
                flush=True,
            )
