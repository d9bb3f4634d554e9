"""JSON mode's decision schema for one step, for servers that constrain their output to it.

A local server (llama.cpp, llama-cpp-python, vLLM, Ollama) turns the schema into a grammar, so
every reply it writes is a valid decision. The schema is one branch per tool still worth calling
(its name fixed, its `args` that tool's own schema), a question for the customer, and a final
answer. What cannot help is not offered: a tool that takes no arguments once it has answered,
and every tool once the model repeats a call it has already made (a small model stuck on one
call then can only answer). At a step limit only the final answer is left.
"""

from __future__ import annotations

import json
from typing import Any

from agent_cli.decisions import Step
from agent_cli.seams import ModelRequest, ToolSpec

_QUESTION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"enum": ["ask_user"]},
        "question": {"type": "string", "minLength": 1},
    },
    "required": ["type", "question"],
    "additionalProperties": False,
}
_FINAL: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"enum": ["final"]},
        "answer": {"type": "string", "minLength": 1},  # a small model will try ""
    },
    "required": ["type", "answer"],
    "additionalProperties": False,
}


def step_schema(request: ModelRequest) -> dict[str, Any]:
    """The decisions this step may take, as one JSON schema (an object, whichever branch)."""
    if request.final:
        return _FINAL
    branches = [_call_branch(spec) for spec in useful_tools(request)]
    return {"type": "object", "anyOf": [*branches, _QUESTION, _FINAL]}


def useful_tools(request: ModelRequest) -> tuple[ToolSpec, ...]:
    """The tools worth offering at this step (see the module's docstring)."""
    history = request.history
    if _repeating(history):
        return ()
    answered = {_key(step) for step in history if step.call is not None and not step.is_error}
    return tuple(
        spec
        for spec in request.tools
        if not (_takes_nothing(spec) and (spec.name, "{}") in answered)
    )


def _call_branch(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "type": {"enum": ["tool"]},
            "tool": {"enum": [spec.name]},
            "args": dict(spec.parameters) or {"type": "object"},
            "thought": {"type": "string"},
        },
        "required": ["type", "tool", "args"],
        "additionalProperties": False,
    }


def _repeating(history: tuple[Step, ...]) -> bool:
    """The newest call repeats an earlier one of the run, tool and arguments alike."""
    calls = [_key(step) for step in history if step.call is not None]
    return len(calls) > 1 and calls[-1] in calls[:-1]


def _key(step: Step) -> tuple[str, str]:
    assert step.call is not None
    return step.call.tool, json.dumps(step.call.args, sort_keys=True, default=str)


def _takes_nothing(spec: ToolSpec) -> bool:
    properties = spec.parameters.get("properties")
    return not properties
