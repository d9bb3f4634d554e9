"""A row of the run log read back with every field checked: a value of the wrong type is shown
blank and named, never an internal error."""

from __future__ import annotations

from typing import Any

import pytest

from agent_cli.record.runlog import LoggedRun, logged_run

GOOD: dict[str, Any] = {
    "run_id": "3f2a",
    "session_id": None,
    "kind": "ask",
    "started_at": "2026-10-13T09:00:00+00:00",
    "question": "Is A100 refundable?",
    "provider": "offline",
    "model": "playbook",
    "status": "answered",
    "answer": "Yes.",
    "steps": 3,
    "input_tokens": 10,
    "output_tokens": 5,
    "cost": 0.01,
    "elapsed_ms": 4.5,
}


def read(**changes: Any) -> LoggedRun:
    return logged_run(tuple({**GOOD, **changes}.values()))


def test_a_good_row_is_read_as_it_is() -> None:
    assert read() == LoggedRun(**GOOD)
    assert read(session_id="s1", answer=None, cost=None, elapsed_ms=3).unreadable is None
    zero = read(steps=0, input_tokens=0)
    assert zero.tokens == 5 and zero.unreadable is None


@pytest.mark.parametrize(
    ("changes", "blank", "said"),
    [
        ({"run_id": 5}, {"run_id": "?"}, "run_id '5'"),
        ({"status": None}, {"status": "?"}, "status 'None'"),
        ({"question": b"q"}, {"question": "?"}, "question \"b'q'\""),
        ({"steps": "x"}, {"steps": 0}, "steps 'x'"),
        ({"steps": -3}, {"steps": 0}, "steps '-3'"),
        ({"input_tokens": True}, {"input_tokens": 0}, "input_tokens 'True'"),
        ({"output_tokens": 1.5}, {"output_tokens": 0}, "output_tokens '1.5'"),
        ({"session_id": 7}, {"session_id": None}, "session_id '7'"),
        ({"answer": 7}, {"answer": None}, "answer '7'"),
        ({"cost": "c"}, {"cost": None}, "cost 'c'"),
        ({"elapsed_ms": False}, {"elapsed_ms": None}, "elapsed_ms 'False'"),
    ],
)
def test_a_field_of_the_wrong_type_is_blanked_and_named(
    changes: dict[str, Any], blank: dict[str, Any], said: str
) -> None:
    run = read(**changes)
    for name, value in {**GOOD, **blank}.items():
        assert getattr(run, name) == value, name
    assert run.unreadable == f"not what the log holds: {said}"


def test_every_bad_field_is_named_and_long_values_are_cut() -> None:
    run = read(steps="x" * 50, cost="c")
    assert run.unreadable == f"not what the log holds: steps {'x' * 20!r}, cost 'c'"
    assert (run.steps, run.cost) == (0, None)
