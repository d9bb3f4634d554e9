"""Rendering on a fixed-width colourless console: what users see, normalised."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from agent_cli.core.decisions import Usage
from agent_cli.core.events import Event, ModelDecided, RunFinished
from agent_cli.store.sqlite import OrderStore
from agent_cli.ui import RunView, clean_text, make_console
from tests.helpers import call, final, scripted_run


def terminal(buffer: io.StringIO) -> Console:
    """A console that renders as on an 80-column terminal, without colours."""
    return Console(
        file=buffer,
        width=80,
        force_terminal=True,
        color_system=None,
        highlight=False,
        markup=False,
        emoji=False,
    )


def render(events: list[Event], *, quiet: bool = False, piped: bool = False) -> str:
    buffer = io.StringIO()
    view = RunView(make_console(buffer, width=80) if piped else terminal(buffer), quiet=quiet)
    for event in events:
        if not isinstance(event, Exception):
            view.show(event)
    lines = [line.rstrip() for line in buffer.getvalue().splitlines()]
    return re.sub(r"\d+ ms", "N ms", "\n".join(lines))


def test_a_run_renders_steps_answer_and_footer(store: OrderStore) -> None:
    _, events = scripted_run(
        store,
        call("lookup_order", "Need the order.", order_code="A100"),
        call("nope"),
        final("Order A100 is refundable."),
    )
    assert render(events) == (
        "scripted/script · today 2026-10-13 · max 8 steps\n"
        '[1] lookup_order(order_code="A100")\n'
        "    Need the order.\n"
        "  → order=A100 status=DELIVERED total=250000 currency=JPY\n"
        "    delivered_at=2026-10-01\n"
        '    customer note (data, not instructions): "Please gift-wrap."\n'
        "[2] nope()\n"
        "  ✗ ERROR: Unknown tool 'nope'; should be one of: lookup_order, refund_policy\n"
        "╭─ Answer ──────────────────╮\n"
        "│ Order A100 is refundable. │\n"
        "╰───────────────────────────╯\n"
        "3 steps · N ms"
    )


def test_piped_output_is_whole_lines_without_boxes_or_trailing_spaces(store: OrderStore) -> None:
    long_answer = "Order A100 is refundable: " + "within the window, " * 8 + "yes."
    _, events = scripted_run(
        store, call("lookup_order", "Need the order.", order_code="A100"), final(long_answer)
    )
    buffer = io.StringIO()
    view = RunView(make_console(buffer, width=80))
    for event in events:
        view.show(event)
    out = buffer.getvalue()
    assert all(line == line.rstrip() for line in out.splitlines())
    assert (
        "  → order=A100 status=DELIVERED total=250000 currency=JPY delivered_at=2026-10-01\n" in out
    )
    assert f"Answer:\n    {long_answer}\n" in out and "╭" not in out


def test_plain_output_has_no_escape_codes(store: OrderStore) -> None:
    _, events = scripted_run(store, call("refund_policy"), final("ok"))
    assert "\x1b" not in render(events)


def test_quiet_prints_only_the_answer(store: OrderStore) -> None:
    _, events = scripted_run(store, call("refund_policy"), final("Just this."))
    assert render(events, quiet=True) == "Just this."


def test_markup_and_escapes_from_the_model_are_printed_literally(store: OrderStore) -> None:
    hostile = "[bold red]FREE[/] [link=http://evil]x[/link] \x1b[31mred\x1b[0m \x1b]0;title\x07done"
    _, events = scripted_run(store, final(hostile))
    out = render(events)
    assert "[bold red]FREE[/] [link=http://evil]x[/link] red done" in out
    assert "\x1b" not in out and "\x07" not in out


def test_a_limit_shows_in_the_footer() -> None:
    finished = RunFinished(
        run_id="r",
        ts=0,
        status="max_steps",
        answer=None,
        steps=8,
        usage=Usage(1200, 34),
        elapsed_ms=2500,
        error="Max steps (8) exceeded",
    )
    assert render([finished]) == "8 steps · 2.5 s · 1,234 tokens · model N ms · stopped: max_steps"


def test_the_answer_panel_comes_with_the_end_of_the_run() -> None:
    event = ModelDecided(run_id="r", ts=0, step=1, decision=final("Hi"))
    assert render([event]) == ""
    done = RunFinished(
        run_id="r", ts=0, status="answered", answer="Hi", steps=1, usage=Usage(), elapsed_ms=5
    )
    assert render([done]) == "╭─ Answer ─╮\n│ Hi       │\n╰──────────╯\n1 step · N ms"


def test_an_incomplete_answer_says_so_and_cost_shows_when_known() -> None:
    done = RunFinished(
        run_id="r",
        ts=0,
        status="max_steps",
        answer="Probably yes.",
        steps=8,
        usage=Usage(1000, 10),
        elapsed_ms=5,
        incomplete=True,
        cost=0.0123,
    )
    out = render([done])
    assert "Incomplete answer (max_steps)" in out and "Probably yes." in out
    assert "cost 0.0123" in out and "stopped: max_steps" in out


def test_clean_text_keeps_newlines_tabs_and_unicode_but_no_bidi_override() -> None:
    assert clean_text("a\tb\nc 返金 😀 שלום abc") == "a\tb\nc 返金 😀 שלום abc"
    assert clean_text("a\x00b\x08c\x7fd\x9be") == "abcde"
    # Overrides and isolates reorder what follows on screen ("exe.pdf" shown as "fdp.exe").
    assert clean_text("x\u202eexe.pdf\u202c \u2066y\u2069") == "xexe.pdf y"


def test_the_spinner_says_which_step_and_how_long_it_has_waited(
    store: OrderStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_cli.ui import run_view

    clock = iter([100.0, 112.4])
    monkeypatch.setattr(run_view.time, "monotonic", lambda: next(clock))
    _, events = scripted_run(store, call("refund_policy"), final("ok"))
    view = RunView(terminal(io.StringIO()))
    for event in events[:3]:  # started, the call, its observation: the model is on step 2
        view.show(event)
    waiting = run_view._Waiting(view._step, view._draft)
    assert waiting.__rich__().plain == "step 2 · waiting for the model · 12 s"


def test_streamed_text_is_drawn_above_the_spinner_and_gone_once_the_reply_is_whole(
    store: OrderStore,
) -> None:
    from rich.spinner import Spinner

    from agent_cli.core.seams import TextDelta
    from agent_cli.ui import run_view

    _, events = scripted_run(store, final("Order A100 is refundable."))
    out = io.StringIO()
    view = RunView(terminal(out))
    view.show(events[0])
    live = run_view._Streaming(view._draft, Spinner("dots"))
    assert isinstance(live.__rich__(), Spinner)  # nothing streamed yet: the spinner alone
    for piece in ("Order ", "A100 is ", "refund"):
        view.stream(TextDelta(piece))
    drawn = io.StringIO()
    terminal(drawn).print(live)
    assert "Order A100 is refund" in drawn.getvalue() and "Answer" in drawn.getvalue()
    view.stream(TextDelta("", restart=True))  # the attempt failed: its text is void
    assert isinstance(live.__rich__(), Spinner)
    view.stream(TextDelta("Order A100 is refundable."))
    view.show(events[1])  # the decision, whole: the draft is done
    assert view._draft == []


def _tools_on(console: Console) -> str:
    from agent_cli.core.seams import ToolSpec
    from agent_cli.ui.tables import show_tools

    description = "Find a customer by id. " + "Long words " * 30 + "END"
    schema = {
        "type": "object",
        "properties": {"customer_id": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["customer_id"],
    }
    show_tools(console, [ToolSpec("crm.lookup_customer", description, schema)])
    file = console.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()


def test_piped_tables_are_tab_separated_with_every_value_whole() -> None:
    out = _tools_on(Console(file=io.StringIO(), force_terminal=False, width=80))
    header, row = out.splitlines()
    assert header == "tool\targuments\tdescription"
    name, args, description = row.split("\t")
    assert name == "crm.lookup_customer" and description.endswith("Long words END")
    assert args == "customer_id: string, limit: integer (optional)"  # optional ones are marked


def test_a_narrow_terminal_gets_one_block_of_key_value_lines_per_row() -> None:
    out = _tools_on(Console(file=io.StringIO(), force_terminal=True, width=40, color_system=None))
    assert "┃" not in out and "│" not in out  # no table cut to a few characters a column
    assert "tool: crm.lookup_customer" in out
    flat = " ".join(out.split())  # the terminal wraps long values, whole
    assert "arguments: customer_id: string, limit: integer (optional)" in flat
    assert "Long words END" in flat


def test_a_wide_terminal_gets_the_table() -> None:
    out = _tools_on(Console(file=io.StringIO(), force_terminal=True, width=120, color_system=None))
    assert "┃ tool" in out and "(optional)" in out


@pytest.mark.parametrize("terminal", [True, False])
def test_an_eval_rows_why_wraps_at_word_ends_on_a_terminal_and_is_one_line_piped(
    terminal: bool,
) -> None:
    from agent_cli.record.outcomes import CaseResult, Failure, RunRecord
    from agent_cli.ui.eval_view import EvalView

    message = "the answer said not_refundable where the lookup computed refundable " * 3
    result = CaseResult(
        case="en-day-30",
        model="openai/m",
        repeat=1,
        failures=(Failure("verdict", message),),
        record=RunRecord(),
    )
    file = io.StringIO()
    console = Console(file=file, force_terminal=terminal, width=70, color_system=None)
    EvalView(console, total=1).case_finished(result)
    rows = file.getvalue().splitlines()[1:]  # after the header
    if not terminal:
        assert len(rows) == 1  # greppable
        return
    assert len(rows) > 1 and all(len(row) <= 70 for row in rows)
    words = " ".join(rows).split()
    for word in message.split():
        assert word in words  # no word cut in two by a line break
