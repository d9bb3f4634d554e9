"""Which tools a real model is offered (issue 49, point 4): by the conversation's phase, not by
its words, asked again at every step so a reply can widen it; the narrow profile, for small
local models, within the tools of what the words may mean (the intent model, recall first)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from agent_cli.core.decisions import CallTool, FinalAnswer, Step
from agent_cli.core.loop import run
from agent_cli.core.seams import ModelReply, ModelRequest, Observation, ToolSpec
from agent_cli.core.tool_outcomes import Read
from agent_cli.providers.decision_schema import ready_tools
from agent_cli.tools import NoArgs, Tool, ToolRegistry
from agent_cli.tools.offered import ALWAYS, DESK, SEED, narrowed, offer
from tests.helpers import collect

NAMES = (*SEED, "crm.lookup", *DESK)


def test_the_phase_profile_offers_every_tool_whatever_the_words() -> None:
    for said in (["Is order A100 refundable?"], ["zzz"], ["I'd rather not go through with B200"]):
        assert offer(NAMES, "phase", said)() == NAMES


def test_the_narrow_profile_keeps_what_the_words_may_mean_and_the_floor() -> None:
    offered = narrowed(NAMES, ["Please cancel B200"])
    assert {"cancel_pending_order", "get_order_details", "crm.lookup"} <= set(offered)
    assert set(ALWAYS) <= set(offered)  # the seed's, identification and a hand-over
    assert "return_delivered_order_items" not in offered
    assert "modify_user_address" not in offered


def test_the_narrow_profile_reads_words_no_list_foresaw() -> None:
    offered = narrowed(NAMES, ["I'd rather not go through with order B200 after all"])
    assert "cancel_pending_order" in offered


def test_the_narrow_profile_offers_everything_when_it_cannot_read_the_words() -> None:
    assert narrowed(NAMES, ["A100"]) == NAMES
    assert narrowed(NAMES, []) == NAMES


def test_a_reply_widens_the_narrow_offer_at_the_next_step() -> None:
    said = ["Please cancel B200"]
    asked = offer(NAMES, "narrow", said)
    assert "return_delivered_order_items" not in asked()
    said.append("Actually I want to return the mug from A100 instead")
    assert "return_delivered_order_items" in asked()


def _tool(name: str) -> Tool[NoArgs]:
    return Tool(name, f"{name} things", NoArgs, lambda args: "ok")


def test_the_registry_asks_the_offer_at_every_call() -> None:
    shown = ["a"]
    tools = ToolRegistry([_tool("a"), _tool("b")]).offering(lambda: shown)
    assert [s.name for s in tools.specs()] == ["a"]
    shown.append("b")
    assert [s.name for s in tools.specs()] == ["a", "b"]
    assert tools.invoke("b", {}).text == "ok"  # offered or not, a call is the tool's to judge


class _Recording:
    provider, model = "test", "recording"

    def __init__(self) -> None:
        self.offered: list[list[str]] = []

    def decide(self, request: ModelRequest) -> ModelReply:
        self.offered.append([spec.name for spec in request.tools])
        if len(self.offered) == 1:
            return ModelReply(CallTool(tool="a"))
        return ModelReply(FinalAnswer(answer="done"))


class _Growing:
    """A toolbox that offers more once its first tool ran."""

    def __init__(self) -> None:
        self.ran = False

    def specs(self) -> tuple[ToolSpec, ...]:
        names = ("a", "b") if self.ran else ("a",)
        return tuple(ToolSpec(name, name, {"type": "object"}) for name in names)

    def invoke(self, name: str, args: Mapping[str, Any], *, time_left: float) -> Observation:
        self.ran = True
        return Observation("ok")


def test_the_loop_asks_the_toolbox_for_its_offer_at_every_step() -> None:
    model = _Recording()
    collect(run("q", model, _Growing(), today=date(2026, 10, 13)))
    assert model.offered == [["a"], ["a", "b"]]


def _spec(name: str, **gates: Any) -> ToolSpec:
    return ToolSpec(name, name, {"type": "object"}, **gates)


def _read(step: int, tool: str, status: str) -> Step:
    return Step(step, CallTool(tool=tool), "x", False, outcome=Read(order="B200", status=status))


def test_a_write_is_ready_once_an_order_of_its_status_was_read() -> None:
    specs = (
        _spec("cancel", statuses=("PENDING",)),
        _spec("return", statuses=("DELIVERED",)),
        _spec("find", until=("find",)),
        _spec("details", after=("find",)),
    )
    start = ModelRequest(goal="q", today=date(2026, 10, 13), tools=specs, history=(), deadline=1e9)
    assert [s.name for s in ready_tools(start)] == ["find"]
    found = Step(1, CallTool(tool="find"), "user_1", False)
    history = (found, _read(2, "details", "pending"))
    later = ModelRequest(
        goal="q", today=date(2026, 10, 13), tools=specs, history=history, deadline=1e9
    )
    assert [s.name for s in ready_tools(later)] == ["cancel", "details"]
    failed = (Step(1, CallTool(tool="find"), "ERROR: nobody", True),)
    again = ModelRequest(
        goal="q", today=date(2026, 10, 13), tools=specs, history=failed, deadline=1e9
    )
    assert [s.name for s in ready_tools(again)] == ["find"]  # not found: asked again


def _proposed(step: int, tool: str) -> Step:
    from agent_cli.core.tool_outcomes import Proposed

    return Step(step, CallTool(tool=tool), "x", False, outcome=Proposed(tool, "swap it"))


def _asked(step: int, reply: str) -> Step:
    from agent_cli.core.tool_outcomes import Replied

    return Step(step, CallTool(tool="ask_user"), reply, False, outcome=Replied(reply))


def test_while_a_proposal_waits_for_its_yes_only_that_write_is_offered() -> None:
    from agent_cli.providers.decision_schema import waiting_write

    specs = (
        _spec("exchange", kind="write"),
        _spec("return", kind="write"),
        _spec("get_product_details"),
        _spec("get_order_details"),
    )
    proposed = (_proposed(1, "exchange"),)
    later = ModelRequest(
        goal="q", today=date(2026, 10, 13), tools=specs, history=proposed, deadline=1e9
    )
    assert waiting_write(proposed) == "exchange"
    assert [s.name for s in ready_tools(later)] == ["exchange", "get_order_details"]
    yes = (*proposed, _asked(2, "yes"))
    assert waiting_write(yes) == "exchange"
    no = (*proposed, _asked(2, "no, the blue one instead"))
    assert waiting_write(no) is None  # a no: everything is offered again
    again = ModelRequest(goal="q", today=date(2026, 10, 13), tools=specs, history=no, deadline=1e9)
    assert len(ready_tools(again)) == 4
    read_after = (*proposed, _read(2, "get_order_details", "delivered"))
    assert waiting_write(read_after) is None
    from agent_cli.core.tool_outcomes import Changed, Failed

    made = Step(
        3,
        CallTool(tool="exchange"),
        "x",
        False,
        outcome=Changed(change_id=1, tool="exchange", summary="s"),
    )
    assert waiting_write((*yes, made)) == "exchange"  # made: the answer is about it alone
    refused = Step(3, CallTool(tool="exchange"), "x", True, outcome=Failed("gone"))
    assert waiting_write((*yes, refused)) is None  # refused: another way may be needed
