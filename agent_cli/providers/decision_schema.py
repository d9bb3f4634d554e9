"""JSON mode's decision schema for one step, for servers that constrain their output to it.

A local server (llama.cpp, llama-cpp-python, vLLM, Ollama) turns the schema into a grammar, so
every reply it writes is a valid decision. The schema is one branch per tool still worth calling
(its name fixed, its `args` that tool's own schema), a question for the customer, and a final
answer. What cannot help is not offered: a tool that takes no arguments once it has answered,
and every tool once the model repeats a call it has already made (a small model stuck on one
call then can only answer). At a step limit only the final answer is left.

An argument named `order_code` is narrowed to the order codes the customer named (the question,
the chat's earlier turns, replies to clarifying questions) that this run has not looked up yet:
a small model otherwise copies the example from the tool's description, or invents a code. When
every named order is looked up, that tool is not offered; when none is named, it is left as is.
A clarifying question is offered only while the customer has named no order: asking which order
cannot help once they have.
"""

from __future__ import annotations

import json
from typing import Any

from agent_cli.decisions import ASK_USER_TOOL, Step
from agent_cli.seams import ModelRequest, ToolSpec
from agent_cli.verdicts import find_order_codes

ORDER_CODE = "order_code"  # the argument of the order tools

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
    codes = _codes_to_look_up(request)
    branches = [_call_branch(spec) for spec in useful_tools(request, codes)]
    if codes is None:  # a question helps only while no order is named
        branches.append(_QUESTION)
    return {"type": "object", "anyOf": [*branches, _FINAL]}


def useful_tools(request: ModelRequest, codes: list[str] | None) -> tuple[ToolSpec, ...]:
    """The tools worth offering at this step, `order_code` narrowed to `codes` (None: the
    customer named no order) (see the module's docstring)."""
    history = request.history
    if _repeating(history):
        return ()
    answered = {_key(step) for step in history if step.call is not None and not step.is_error}
    useful = []
    for spec in request.tools:
        if _takes_nothing(spec) and (spec.name, "{}") in answered:
            continue
        if codes is None or ORDER_CODE not in spec.parameters.get("properties", {}):
            useful.append(spec)
        elif codes:  # else every order the customer named is looked up
            useful.append(_narrowed(spec, codes))
    return tuple(useful)


def _codes_to_look_up(request: ModelRequest) -> list[str] | None:
    """The order codes the customer named and no call has asked about yet; None when the
    customer named none (then any code may be right)."""
    said = [request.goal, *(turn.question for turn in request.conversation)]
    said += [step.observation for step in request.history if _is_reply(step)]
    named = find_order_codes(" ".join(said))
    if not named:
        return None
    asked = {
        str(step.call.args.get(ORDER_CODE, "")).upper()
        for step in request.history
        if step.call is not None
    }
    return [code for code in named if code not in asked]


def _narrowed(spec: ToolSpec, codes: list[str]) -> ToolSpec:
    parameters = dict(spec.parameters)
    parameters["properties"] = {**parameters["properties"], ORDER_CODE: {"enum": codes}}
    return ToolSpec(spec.name, spec.description, parameters)


def _is_reply(step: Step) -> bool:
    return step.call is not None and step.call.tool == ASK_USER_TOOL and not step.is_error


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
