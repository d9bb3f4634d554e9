"""`agent eval` on screen: a row per case as it finishes (under a progress bar on a terminal),
then the models side by side when there are several, then a summary per model."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from agent_cli.record.outcomes import CaseResult, CheckResult, ModelSummary
from agent_cli.ui.console import clean_text
from agent_cli.ui.tables import escaped, print_rows

_CASE, _MODEL = 26, 22
_HEADER = (
    f"{'':2}{'case':{_CASE}} {'model':{_MODEL}} {'steps':>5} {'tokens':>7} {'latency':>9} "
    f"{'cost':>7}  why"
)


class EvalView:
    """Streams results as they come; a progress bar only when the console is a terminal."""

    def __init__(self, console: Console, total: int) -> None:
        self._console = console
        self._progress: Progress | None = None
        if console.is_terminal:
            self._progress = Progress(
                TextColumn("eval"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self._task = self._progress.add_task("cases", total=total)
        self._header_shown = False

    def __enter__(self) -> EvalView:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def case_finished(self, result: CaseResult) -> None:
        if not self._header_shown:
            self._console.print(Text(_HEADER, style="bold"), soft_wrap=True)
            self._header_shown = True
        # Piped: one line a case, greppable. On a terminal, Rich wraps a long "why" at word
        # ends (left to the terminal, a line breaks in the middle of a word).
        self._console.print(_row(result), soft_wrap=not self._console.is_terminal)
        if self._progress is not None:
            self._progress.advance(self._task)

    def finished(
        self, results: Sequence[CaseResult], summaries: Sequence[ModelSummary], *, partial: bool
    ) -> None:
        if len(summaries) > 1:
            side_by_side(self._console, results, [s.model for s in summaries])
        show_summary(self._console, summaries, partial=partial)


def _row(result: CaseResult) -> Text:
    record = result.record
    mark = Text("✓ ", style="green") if result.passed else Text("✗ ", style="red")
    if result.flawed:  # the case's own flaw: no mark for or against the agent
        mark = Text("⚠ ", style="yellow")
    name = result.case + (f" #{result.repeat}" if result.repeat > 1 else "")
    cost = f"{record.cost:.4f}" if record.cost is not None else "-"
    line = Text.assemble(
        mark,
        f"{_cut(name, _CASE):{_CASE}} {_cut(result.model, _MODEL):{_MODEL}} {record.steps:>5} "
        f"{record.usage.total:>7,} {_ms(record.elapsed_ms):>9} {cost:>7}  ",
    )
    style = "yellow" if result.flawed else "red" if not result.passed else "dim"
    line.append(clean_text(why(result)), style=style)
    return line


def why(result: CaseResult) -> str:
    """The failures in one line, pointing at the case's trace when it was recorded."""
    if result.passed:
        return "passed"
    notes = [f"the case is flawed: {flaw}" for flaw in result.flaws]
    text = "; ".join(notes + [failure.message for failure in result.failures])
    if result.trace is not None:
        text += f" (trace: {result.trace})"
    return text


def side_by_side(console: Console, results: Sequence[CaseResult], models: Sequence[str]) -> None:
    """A row per case, a column per model. On a terminal a failure's reason is cut to fit;
    piped, every value is whole (tab-separated, like the other tables)."""
    table = Table(title="models side by side")
    _title_when_piped(console, table)
    table.add_column("case", no_wrap=True)
    for model in models:
        table.add_column(model, overflow="fold")
    cut = 40 if console.is_terminal else None
    cells: dict[tuple[str, str], list[CaseResult]] = {}
    cases: list[str] = []
    for result in results:
        if result.case not in cases:
            cases.append(result.case)
        cells.setdefault((result.case, result.model), []).append(result)
    rows = [
        [Text(case)] + [_matrix_cell(cells.get((case, model), []), cut) for model in models]
        for case in cases
    ]
    print_rows(console, table, rows)


def _matrix_cell(runs: Sequence[CaseResult], cut: int | None) -> Text:
    passed = sum(1 for run in runs if run.passed)
    if not runs:
        return Text("-", style="dim")
    if all(run.flawed for run in runs):
        return Text("⚠ flawed case", "yellow")
    if passed == len(runs):
        return Text("✓" if len(runs) == 1 else f"✓ {passed}/{len(runs)}", "green")
    first = next(run for run in runs if not run.passed)
    label = "✗" if len(runs) == 1 else f"✗ {passed}/{len(runs)}"
    first_problem = (
        first.failures[0].message if first.failures else f"flawed case: {first.flaws[0]}"
    )
    message = clean_text(first_problem)
    return Text(f"{label} {message if cut is None else _cut(message, cut)}", "red")


def show_summary(
    console: Console, summaries: Sequence[ModelSummary], *, partial: bool = False
) -> None:
    """A row per model; piped, tab-separated lines with every value whole."""
    title = "summary (interrupted: the cases that finished)" if partial else "summary"
    table = Table(title=title, caption="latency p50/p95; tokens and cost per case")
    _title_when_piped(console, table)
    table.add_column("model", no_wrap=True)
    for name in ("passed", "flawed", "p50/p95", "tokens", "cost"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("failures", overflow="fold", min_width=8)
    rows = []
    for s in summaries:
        failures = ", ".join(f"{kind} {n}" for kind, n in s.failures.items()) or "-"
        rows.append(
            [
                Text(s.model, style="bold"),
                Text(
                    f"{s.passed}/{s.scored} {s.accuracy:.1%}",
                    style="green" if s.accuracy == 1 else "red",
                ),
                Text(str(s.flawed) if s.flawed else "-", style="yellow" if s.flawed else ""),
                Text(f"{_ms(s.p50_ms).removesuffix(' ms')}/{_ms(s.p95_ms)}"),
                Text(f"{s.tokens_per_case:,.0f}", justify="right"),
                Text(
                    f"{s.cost_per_case:.4f}" if s.cost_per_case is not None else "-",
                    justify="right",
                ),
                Text(failures),
            ]
        )
    print_rows(console, table, rows)
    for s in summaries:
        if len(s.pass_hat) > 1:  # several trials: how consistently (τ²-bench's pass^k)
            rates = "  ".join(f"pass^{k} {v:.1%}" for k, v in enumerate(s.pass_hat, start=1))
            console.print(f"{s.model}  {rates}", soft_wrap=True, highlight=False)


def _title_when_piped(console: Console, table: Table) -> None:
    """Piped, a table is bare tab-separated lines: its title goes on a line before them."""
    if not console.is_terminal:
        console.print()
        console.print(str(table.title), soft_wrap=True)


def _ms(value: float) -> str:
    return f"{value:,.0f} ms" if value >= 10 else f"{value:.1f} ms"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def show_check(console: Console, result: CheckResult) -> None:
    """One replayed run: a line, then each difference on its own line."""
    run = result.run
    head = f"run {run.run_id[:8]} ({_cut(clean_text(run.goal), 50)}) in {run.source}"
    if result.problem is not None:
        console.print(
            Text(f"- {head}: not replayed: {result.problem}", style="dim"), soft_wrap=True
        )
        return
    skipped = ""
    if result.not_replayed:  # a replay starts no MCP server
        skipped = f" (MCP calls are not replayed: {', '.join(result.not_replayed)})"
    if result.matches:
        console.print(
            Text.assemble(
                ("✓ ", "green"), f"{head}: {result.compared} observations match{skipped}"
            ),
            soft_wrap=True,
        )
        return
    ending = (
        "" if result.status == run.status else f"; ended {result.status}, recorded {run.status}"
    )
    console.print(
        Text.assemble(
            ("✗ ", "red"),
            f"{head}: {len(result.differences)} of {result.compared} observations differ"
            f"{ending}{skipped}",
        ),
        soft_wrap=True,
    )
    for difference in result.differences:
        console.print(Text(f"    {clean_text(difference.describe())}", style="red"), soft_wrap=True)


def show_check_summary(console: Console, checked: int, differing: int) -> None:
    style = "green" if not differing else "red"
    runs = "1 run" if checked == 1 else f"{checked} runs"
    console.print(Text(f"{runs} replayed, {differing} with differences", style=style))


def show_cases(console: Console, cases: Sequence[tuple[str, str, str]]) -> None:
    """`agent eval list`: a case per line, tab-separated: its id, its kind, its question (on
    one line, cleaned of terminal control characters)."""
    out = console.file  # raw lines: Rich would expand the tabs into spaces
    for case_id, kind, question in cases:
        question_line = " ".join(clean_text(question).split())
        out.write(f"{escaped(case_id)}\t{kind}\t{escaped(question_line)}\n")
    out.flush()
