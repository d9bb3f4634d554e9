"""--script files: replay in order, fail loudly past the end, reject bad files clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.core.decisions import FinalAnswer
from agent_cli.core.seams import ModelRequest
from agent_cli.errors import ScriptExhausted, ScriptFileError
from agent_cli.providers.scripted import ScriptedModel, load_script
from tests.helpers import TODAY, call, final

REQUEST = ModelRequest(goal="q", today=TODAY, tools=(), history=(), deadline=1e9)


def test_replays_in_order_then_fails_loudly() -> None:
    model = ScriptedModel([call("refund_policy"), final("done")], name="s.json")
    assert model.decide(REQUEST).decisions == (call("refund_policy"),)
    assert model.decide(REQUEST).decisions == (FinalAnswer(answer="done"),)
    with pytest.raises(ScriptExhausted, match=r"The script s.json ran out after 2 decisions"):
        model.decide(REQUEST)


def test_load_script(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            [
                {
                    "type": "tool",
                    "tool": "lookup_order",
                    "args": {"order_code": "A100"},
                    "thought": "t",
                },
                {"type": "final", "answer": "ok"},
            ]
        )
    )
    model = load_script(path)
    assert model.model == "s.json"
    assert model.decide(REQUEST).decisions == (call("lookup_order", "t", order_code="A100"),)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[{"type": "final"', "is not valid JSON: Expecting"),
        ('{"type": "final", "answer": "x"}', "expected a JSON array of decisions"),
        ("[]", "holds no decisions"),
        (
            '[{"type": "final", "answer": "x"}, {"type": "tool"}]',
            "decision 2: tool: Field required",
        ),
        ('[{"type": "shout"}]', "decision 1: decision: Input tag 'shout'"),
    ],
)
def test_bad_script_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(content)
    with pytest.raises(ScriptFileError) as caught:
        load_script(path)
    assert message in str(caught.value)
    assert caught.value.exit_code == 2


def test_missing_script_file(tmp_path: Path) -> None:
    with pytest.raises(ScriptFileError, match=r"Cannot read script .*No such file"):
        load_script(tmp_path / "missing.json")


def test_script_that_is_not_text(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(b"\xff\xfe[")
    with pytest.raises(ScriptFileError, match="not UTF-8"):
        load_script(path)
