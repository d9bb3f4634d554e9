"""A model that replays a fixed list of decisions: for tests, demos and `--script FILE`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from agent_cli.core.decisions import Decision, DecisionError, parse_decisions
from agent_cli.core.seams import ModelReply, ModelRequest
from agent_cli.errors import ScriptExhausted, ScriptFileError
from agent_cli.files import FileRefused, read_file_bytes

MAX_SCRIPT_BYTES = 10 * 1024 * 1024


class ScriptedModel:
    """Returns its decisions in order and fails loudly when asked for one more."""

    provider = "scripted"

    def __init__(self, decisions: Sequence[Decision], *, name: str = "script") -> None:
        self._decisions = tuple(decisions)
        self._next = 0
        self.model = name
        self.requests: list[ModelRequest] = []  # what it was shown, for tests and debugging

    def fresh(self) -> ScriptedModel:
        """The same script from its first decision, for another run."""
        return ScriptedModel(self._decisions, name=self.model)

    def decide(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        if self._next >= len(self._decisions):
            raise ScriptExhausted(
                f"The script {self.model} ran out after {len(self._decisions)} decisions "
                'without a final answer; end it with {"type": "final", "answer": "..."}'
            )
        decision = self._decisions[self._next]
        self._next += 1
        return ModelReply(decision)


def load_script(path: Path) -> ScriptedModel:
    """Read a JSON array of decisions in wire form; ScriptFileError names any problem."""
    try:
        payload = json.loads(read_file_bytes(path, MAX_SCRIPT_BYTES).decode("utf-8"))
    except FileRefused as exc:
        raise ScriptFileError(f"Script {path} {exc}") from None
    except OSError as exc:
        raise ScriptFileError(f"Cannot read script {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ScriptFileError(f"Script {path} is not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ScriptFileError(
            f"Script {path} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:  # json recurses once per level of nesting
        raise ScriptFileError(f"Script {path} is nested too deeply to read") from None
    try:
        decisions = parse_decisions(payload)
    except DecisionError as exc:
        raise ScriptFileError(f"Script {path}: {exc}") from None
    if not decisions:
        raise ScriptFileError(f"Script {path} holds no decisions; add at least a final answer")
    return ScriptedModel(decisions, name=path.name)
