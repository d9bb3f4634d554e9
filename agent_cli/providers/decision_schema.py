"""JSON mode's decision schema for one step, for servers that constrain their output to it.

A local server (llama.cpp, llama-cpp-python, vLLM, Ollama) turns the schema into a grammar, so
every reply it writes is a valid decision. The schema is one branch per tool still worth calling
(its name fixed, its `args` that tool's own schema), a question for the customer, and a final
answer. What cannot help is not offered: a tool that takes no arguments once it has answered,
and every tool once the model repeats a call it has already made (a small model stuck on one
call then can only answer). At a step limit only the final answer is left.

An argument named `order_code` is narrowed to the order codes the customer named (the question,
the chat's earlier turns, replies to clarifying questions): a small model otherwise copies the
example from the tool's description, or invents a code. The lookup is narrowed to those this run
has not looked up yet, and not offered once every one is; any other tool taking a code (a
refund) to all of them, as it comes after the lookup. A tool taking one is not offered while the
customer has named no order (ask them instead).
A clarifying question is offered only while the customer has named no order: asking which order
cannot help once they have.

The answer is offered once there is something to answer from: not before the first observation
when no order is named, and not while a named order is still to be looked up. After lookups it
must open with what they computed (`Order A100 (250,000 JPY) is refundable: delivered 12 days
ago; window 30 days.`, in Japanese for a Japanese question), then the model's own words: the
verdict is code's, not the model's, and grounding would refuse any other.

Tools mode has no schema for the reply, but the same rule forces the call: while an answer waits
for a named order's lookup, `_forced_lookup` is the one tool the server must call (OpenAI's named
`tool_choice`, Anthropic's `{"type": "tool"}`), its `order_code` narrowed to the codes still to
look up, so a server that turns the call into a grammar (llama.cpp, vLLM) writes one of them.
Once the customer has named orders, the tools taking a code are narrowed as in JSON mode.
And when the customer named no order, no tool has run and the last reply was unusable,
`ask_user` is the call the server must make (`_forced_question`): SmolLM2, asked in Japanese
with no order code, otherwise rambles to its output limit on every repair and the run fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, get_args

from agent_cli.core.decisions import ASK_USER_TOOL, ClaimKind, Step
from agent_cli.core.seams import ModelRequest, ToolSpec
from agent_cli.core.tool_outcomes import (
    Changed,
    Proposed,
    Queued,
    Read,
    Refunded,
    Replied,
    Simulated,
    Transferred,
)
from agent_cli.domain.intents import CATALOG
from agent_cli.policy.consent import explicit_yes
from agent_cli.policy.grounding import LOOKUP_TOOL, computed_verdicts
from agent_cli.policy.language import speaks_japanese
from agent_cli.policy.verdicts import find_order_codes, opening, read_amount
from agent_cli.providers.prompts import ASK_USER_SPEC, grammar_schema

ORDER_CODE = "order_code"  # the argument of the order tools
_READING = {LOOKUP_TOOL, "refund_policy", ASK_USER_TOOL}  # tools that change nothing
_REST = '[^"\\\\\\n]*'  # the model's own words after the opening, on one line

_QUESTION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"enum": ["ask_user"]},
        "question": {"type": "string", "minLength": 1},
    },
    "required": ["type", "question"],
    "additionalProperties": False,
}
_CLAIMED: dict[str, Any] = {  # what the answer says was done, as data (optional)
    "type": "array",
    "maxItems": 20,
    "items": {
        "type": "object",
        "properties": {
            "kind": {"enum": list(get_args(ClaimKind))},
            "order": {"type": "string", "minLength": 1, "maxLength": 32},
        },
        "required": ["kind"],
        "additionalProperties": False,
    },
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
_FINAL_CLAIMING: dict[str, Any] = {
    **_FINAL,
    "properties": {**_FINAL["properties"], "claims": _CLAIMED},
}


def step_schema(request: ModelRequest) -> dict[str, Any]:
    """The decisions this step may take, as one JSON schema (an object, whichever branch)."""
    final = _final_branch(request)
    if request.final:
        return final
    named = _named_codes(request)
    codes = _codes_to_look_up(request, named)
    tools = _step_tools(request, codes, named)
    branches = [_call_branch(spec) for spec in tools]
    if codes is None:  # a question helps only while no order is named
        branches.append(_QUESTION)
    if not _answer_waits(request, codes, tools):
        branches.append(final)
    return {"type": "object", "anyOf": branches}


def step_tools(request: ModelRequest) -> tuple[ToolSpec, ...]:
    """The tools this step may call, as JSON mode's schema offers them and its prompt lists
    them: the lookup alone while a named order waits for it (as tools mode forces it), else
    the useful ones; at a step limit, the run's (no call is offered, the prompt stays)."""
    if request.final:
        return request.tools
    named = _named_codes(request)
    return _step_tools(request, _codes_to_look_up(request, named), named)


def _step_tools(
    request: ModelRequest, codes: list[str] | None, named: list[str]
) -> tuple[ToolSpec, ...]:
    forced = _forced_lookup(request, codes, named)
    return (forced,) if forced is not None else useful_tools(request, codes, named)


def _forced_lookup(
    request: ModelRequest, codes: list[str] | None, named: list[str]
) -> ToolSpec | None:
    """The lookup tool, narrowed, when this step must look up a named order: the customer named
    one not yet looked up (`codes`), and no repeated call has stopped the offers (see the
    module's docstring)."""
    if request.final:
        return None
    tools = useful_tools(request, codes, named)
    if not codes or not _answer_waits(request, codes, tools):
        return None
    return next((spec for spec in tools if spec.name == LOOKUP_TOOL), None)


def tools_offered(request: ModelRequest, *, force: bool) -> tuple[tuple[ToolSpec, ...], str | None]:
    """Tools mode's tools for this step, and the one the server must call (None: the model
    chooses); with `force` off (a server that refused a named choice), never one. The lookup
    the server must call is sent alone: no other can be chosen, and each costs its bytes of
    prompt on the first step of most runs. A forced `ask_user` is not: sent alone, SmolLM2
    wrote its question to the output limit (`benchmarks/local_model.py`).
    As in JSON mode, once the customer has named orders the tools taking a code are narrowed
    (see the module's docstring) and `ask_user` is not offered: nothing is missing to ask for.
    Only while the customer has named no order is every tool offered as it is: the model may
    read a code in a form that `find_order_codes` misses."""
    named = _named_codes(request)
    codes = _codes_to_look_up(request, named)
    ready = ready_tools(request)
    specs = (*ready, ASK_USER_SPEC)
    if codes is not None:  # never no tools: a history of calls may need them (Anthropic does)
        specs = _fitted(ready, codes, named) or specs
    forced = _forced_lookup(request, codes, named) if force else None
    if forced is not None:
        return (forced,), forced.name
    return specs, _forced_question(request, codes) if force else None


def _forced_question(request: ModelRequest, codes: list[str] | None) -> str | None:
    """`ask_user`, when the customer named no order, no tool has run, and the model's last
    reply was unusable (a small model rambles to its output limit): it could neither act nor
    answer, and asking the customer is what can help. Never on a first reply: a policy
    question needs no order."""
    if codes is not None or request.final or not request.history:
        return None
    return None if _observed(request) else ASK_USER_TOOL


def _answer_waits(
    request: ModelRequest, codes: list[str] | None, tools: tuple[ToolSpec, ...]
) -> bool:
    """An answer is not offered yet: nothing has been observed and no order named (call a tool
    or ask), or an order the customer named is still to be looked up and a lookup is offered."""
    if codes is None:  # an unusable reply observed nothing: it does not open the answer
        return not _observed(request) and bool(tools)
    return bool(codes) and any(spec.name == LOOKUP_TOOL for spec in tools)


def ready_tools(request: ModelRequest) -> tuple[ToolSpec, ...]:
    """The run's tools whose prerequisites have answered (`ToolSpec.after`): an order's details
    once the customer is identified, an article once searched; a write once an order of a
    status it applies to was read (`statuses`); the identification until it found the customer
    (`until`). In a chat's later turns every tool is ready: what an earlier turn found (who the
    customer is) is not in this history."""
    if request.conversation:
        return request.tools
    answered = {s.call.tool for s in request.history if s.call is not None and not s.is_error}
    statuses = {
        s.outcome.status.upper()
        for s in request.history
        if isinstance(s.outcome, Read) and s.outcome.status and not s.is_error
    }
    waiting = waiting_write(request.history)
    return tuple(
        t
        for t in request.tools
        if (not t.after or answered.intersection(t.after))
        and (not t.statuses or statuses.intersection(t.statuses))
        and not answered.intersection(t.until)
        and not (waiting and t.name != waiting and (t.kind == "write" or t.name in CATALOG))
    )


def waiting_write(history: tuple[Step, ...]) -> str | None:
    """The write the conversation is about: the last step that was not a question proposed it
    (or made, queued or simulated it after the yes), and the customer has answered nothing but
    yes since. Until then, the other writes and the catalogue are not offered (they cost their
    bytes and a small model's attention); a no, a refusal or any other call ends it, and all
    is offered again."""
    for step in reversed(history):
        if step.call is None:
            continue
        if step.call.tool == ASK_USER_TOOL:
            reply = step.outcome.words if isinstance(step.outcome, Replied) else step.observation
            if not explicit_yes(reply):
                return None
            continue
        about = isinstance(step.outcome, Proposed | Changed | Queued | Simulated)
        return step.call.tool if about else None
    return None


def _observed(request: ModelRequest) -> bool:
    """A tool has run (or the customer answered) in this run; unusable replies observe nothing."""
    return any(step.call is not None for step in request.history)


def claims_offered(request: ModelRequest) -> bool:
    """Whether a final answer may list what it says was done as data (`claims`): once this run
    has proposed, made or queued a change or a refund, or handed over; before, there is nothing
    it could list (and the seed's requests stay as they were)."""
    acted = (Proposed, Changed, Queued, Refunded, Simulated, Transferred)
    return any(isinstance(step.outcome, acted) for step in request.history)


def _final_branch(request: ModelRequest) -> dict[str, Any]:
    """The final answer; after lookups, one that opens with what they computed (see
    `answer_opening`); after an act, with its `claims`."""
    final = _FINAL_CLAIMING if claims_offered(request) else _FINAL
    opening = answer_opening(request)
    if opening is None:
        return final
    answer = {"type": "string", "pattern": f"^{_literal(opening)}{_REST}$"}
    return {**final, "properties": {**final["properties"], "answer": answer}}


def answer_opening(request: ModelRequest) -> str | None:
    """The sentences an answer must open with: for each order looked up, the verdict its lookup
    computed (and the amount, and why), in the customer's language. None when no lookup computed
    one, or when the run did more than read (a refund made since is news the opening would miss).
    """
    if any(step.call is not None and step.call.tool not in _READING for step in request.history):
        return None
    computed = computed_verdicts(request.history)
    if not computed:
        return None
    japanese = speaks_japanese(request)
    amounts = _amounts(request.history, japanese)
    sentences = [
        opening(code, verdict, why, amounts.get(code), japanese)
        for code, (verdict, why) in computed.items()
    ]
    return ("" if japanese else " ").join(sentences)


def _amounts(history: tuple[Step, ...], japanese: bool) -> dict[str, str]:
    found: dict[str, str] = {}
    for step in history:
        if step.call is not None and step.call.tool == LOOKUP_TOOL and not step.is_error:
            amount = read_amount(step.observation, japanese)
            if amount is not None:
                found[str(step.call.args.get(ORDER_CODE, "")).upper()] = amount
    return found


def _literal(text: str) -> str:
    """`text` as a regular expression matching itself, in the subset every server's grammar
    converter reads (llama.cpp's rejects `\\.`, so a dot is `[.]`); a quote or backslash,
    which no opening holds, is dropped rather than risk an unreadable grammar."""
    out = []
    for char in text:
        if char == ".":
            out.append("[.]")
        elif char in "()[]{}|*+?":
            out.append("\\" + char)
        elif char not in '"\\^$' and char.isprintable():
            out.append(char)
    return "".join(out)


def useful_tools(
    request: ModelRequest, codes: list[str] | None, named: list[str]
) -> tuple[ToolSpec, ...]:
    """The tools worth offering at this step, `order_code` narrowed to `codes` (None: the
    customer named no order) or `named` (see the module's docstring)."""
    history = request.history
    if _repeating(history):
        return ()
    answered = {_key(step) for step in history if step.call is not None and not step.is_error}
    unanswered = [
        spec
        for spec in ready_tools(request)
        if not (_takes_nothing(spec) and (spec.name, "{}") in answered)
    ]
    if codes is None:  # no order is named: a code would be a guess
        return tuple(spec for spec in unanswered if ORDER_CODE not in _properties(spec))
    return _fitted(unanswered, codes, named)


def _fitted(specs: Iterable[ToolSpec], codes: list[str], named: list[str]) -> tuple[ToolSpec, ...]:
    """`specs` once the customer has named orders (`named`; `codes`: those not looked up
    yet): the lookup narrowed to `codes`, left out once they are none; any other tool taking
    a code narrowed to `named`; the rest as they are."""
    fitted = []
    for spec in specs:
        if ORDER_CODE not in _properties(spec):
            fitted.append(spec)
        elif spec.name != LOOKUP_TOOL:
            fitted.append(_narrowed(spec, named))
        elif codes:
            fitted.append(_narrowed(spec, codes))
    return tuple(fitted)


def _codes_to_look_up(request: ModelRequest, named: list[str]) -> list[str] | None:
    """The order codes the customer named (`named`) that no call has asked about yet (by the
    seed's `order_code` or the desk's `order_id`, `#W...` as `W...`); None when the customer
    named none (then any code may be right)."""
    if not named:
        return None
    asked = {
        str(step.call.args.get(key, "")).upper().lstrip("#")
        for step in request.history
        if step.call is not None
        for key in (ORDER_CODE, "order_id")
    }
    return [code for code in named if code.lstrip("#") not in asked]


def _named_codes(request: ModelRequest) -> list[str]:
    """The order codes the customer named: in the question, the chat's earlier turns and their
    replies to clarifying questions."""
    texts = [request.goal, *(turn.question for turn in request.conversation)]
    texts += [step.observation for step in request.history if _is_reply(step)]
    return find_order_codes(" ".join(texts))


def _narrowed(spec: ToolSpec, codes: list[str]) -> ToolSpec:
    parameters = dict(spec.parameters)
    parameters["properties"] = {**parameters["properties"], ORDER_CODE: {"enum": codes}}
    return replace(spec, parameters=parameters)


def _is_reply(step: Step) -> bool:
    return step.call is not None and step.call.tool == ASK_USER_TOOL and not step.is_error


def _call_branch(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "type": {"enum": ["tool"]},
            "tool": {"enum": [spec.name]},
            "args": grammar_schema(spec.parameters) or {"type": "object"},
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
    return not _properties(spec)


def _properties(spec: ToolSpec) -> dict[str, Any]:
    properties = spec.parameters.get("properties")
    return properties if isinstance(properties, dict) else {}
