"""What the CLI prints as a user reads it or a script pipes it: an incomplete answer never looks
finished, JSON Lines compact as `jq -c` writes them, tables whole at any width and lines (not
boxes) when piped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app

runner = CliRunner()


def test_quiet_at_a_step_limit_never_looks_like_a_finished_answer() -> None:
    argv = ["ask", "Is A100 refundable?", "--dry-run", "--max-steps", "1", "-q"]
    result = runner.invoke(app, [*argv, "--today", "2026-10-13"])
    assert result.exit_code == 3
    assert result.stdout.startswith("Incomplete answer (max_steps): I could not check order A100")
    done = runner.invoke(app, ["ask", "Is A100 refundable?", "--dry-run", "-q"])
    assert done.stdout.startswith("Order A100 is")  # a finished one is the answer alone


@pytest.mark.parametrize(
    "argv",
    [
        ["ask", "Is order A100 refundable?", "--dry-run", "--json"],
        ["tools", "--json"],
        ["orders", "list", "--json"],
        ["config", "show", "--json"],
        ["logs", "list", "--json"],
        ["eval", "run", "--builtin", "--dry-run", "--json"],
    ],
)
def test_json_lines_are_compact_as_jq_c_writes_them(argv: list[str]) -> None:
    runner.invoke(app, ["ask", "Is order A100 refundable?", "-q"])  # a run to list
    lines = runner.invoke(app, argv).stdout.splitlines()
    assert lines
    for line in lines:
        assert line == json.dumps(json.loads(line), ensure_ascii=False, separators=(",", ":"))


def _terminal(width: int) -> Any:
    import io

    from rich.console import Console

    return Console(file=io.StringIO(), force_terminal=True, width=width, color_system=None)


@pytest.mark.parametrize("width", [80, 100, 130, 200])
def test_logs_list_keeps_every_value_whole_at_any_width(width: int) -> None:
    from agent_cli.record.runlog import LoggedRun
    from agent_cli.ui.tables import show_logged_runs

    question = "Is order A100 refundable now that the box arrived with a dent in its corner?"
    run = LoggedRun(
        "f07492fe68a640249ad2080e526294c2",
        None,
        "ask",
        "2026-10-13T09:00:00+00:00",
        question,
        "openai-compatible",
        "qwen2.5-7b-instruct",
        "pending_approval",
        "x",
        3,
        100,
        20,
        None,
        5.0,
    )
    console = _terminal(width)
    show_logged_runs(console, [run])
    shown = console.file.getvalue()
    cells = _cells(shown) if "│" in shown else ["".join(shown.split())]  # a table, or blocks
    for value in (question, "openai-compatible/qwen2.5-7b-instruct", "pending_approval"):
        assert any("".join(value.split()) in "".join(cell.split()) for cell in cells), shown
    assert all(len(line) <= width for line in shown.splitlines())


def _cells(shown: str) -> list[str]:
    """Each column of a table, its folded lines joined."""
    rows = [line.split("│")[1:-1] for line in shown.splitlines() if line.startswith("│")]
    return ["".join(row[i].strip() for row in rows) for i in range(len(rows[0]))]


def test_orders_show_piped_is_lines_not_a_box(tmp_path: Path) -> None:
    import os

    from agent_cli.store.sqlite import OrderStore

    store = OrderStore.open(Path(os.environ["AGENT_DB"]))
    store.record_refund("A100", 1000, "scratched\tlid", key="k")
    store.close()
    out = runner.invoke(app, ["orders", "show", "A100"]).stdout
    assert not set(out) & set("┏┃┡│└━─")
    assert "refund\tamount\treason\trecorded (UTC)" in out
    assert "#2\t1,000 JPY\tscratched\\tlid\t" in out  # refund #1 is the sample A106's
