"""A yes confirms one change (issue 48, point 2), tried as a careless or hostile model would,
on both backends: each way the outside review made a yes commit more than it was asked, and
each way a proposal is withdrawn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.core.decisions import AskUser
from agent_cli.core.events import ApprovalRequested, Event, ToolObserved
from agent_cli.core.seams import ApprovalVerdict
from agent_cli.core.tool_outcomes import Changed, Proposed
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools.identity import CustomerSession
from tests.contract.test_desk_writes import CANCEL, FIND, TODAY_ARGS, snapshot, staff_call
from tests.contract.test_desk_writes import converse as desk_converse
from tests.helpers import call, final

MOVE = call("modify_pending_order_address", order_id="B200", **TODAY_ARGS)
YES = ApprovalVerdict(True, "operator")


def converse(
    store: OrderStore,
    decisions: list[Any],
    replies: list[str],
    meanwhile: Any = None,
    session: CustomerSession | None = None,
) -> list[Event]:
    """A run whose questions get `replies` in turn and whose approvals are all yes."""
    return desk_converse(store, decisions, replies, [YES] * 3, meanwhile=meanwhile, session=session)


def outcomes(events: list[Event]) -> list[Any]:
    return [e.outcome for e in events if isinstance(e, ToolObserved)]


def nothing_committed(events: list[Event]) -> bool:
    return not any(isinstance(e, ApprovalRequested) for e in events) and not any(
        isinstance(o, Changed) for o in outcomes(events)
    )


def test_one_yes_commits_one_change_and_never_a_change_not_put_to_the_customer(
    either_store: OrderStore,
) -> None:
    before = snapshot(either_store)
    ask = AskUser(question="Change P1: cancel B200? (yes or no)")  # about the cancel only
    decisions = [FIND, CANCEL, MOVE, ask, MOVE, CANCEL, final("?")]
    events = converse(either_store, decisions, ["yes"])
    assert nothing_committed(events)  # the address change was never asked about; P1 withdrawn
    assert [type(o).__name__ for o in outcomes(events)[4:]] == ["Proposed", "Proposed"]
    assert snapshot(either_store) == before


def test_a_yes_to_another_question_commits_nothing(either_store: OrderStore) -> None:
    before = snapshot(either_store)
    ask = AskUser(question="Shall I add a note for the courier to ring twice?")
    events = converse(either_store, [FIND, CANCEL, ask, CANCEL, final("?")], ["yes"])
    assert nothing_committed(events)
    assert "withdrawn" in [e for e in events if isinstance(e, ToolObserved)][2].observation
    assert snapshot(either_store) == before


def test_the_change_quoted_in_the_question_carries_it(either_store: OrderStore) -> None:
    first = converse(either_store, [FIND, CANCEL, final("?")], [])
    (proposed,) = [o for o in outcomes(first) if isinstance(o, Proposed)]
    ask = AskUser(question=f"Here is the change: {proposed.summary}. Shall I?")
    events = converse(either_store, [FIND, CANCEL, ask, CANCEL, final("Done.")], ["はい"])
    assert isinstance(outcomes(events)[-1], Changed)


def test_a_yes_is_to_the_change_as_shown_not_to_the_call(either_store: OrderStore) -> None:
    """The store moved between the yes and the call: the change is put again, in its new form."""
    before_yes = AskUser(question="Change P1: cancel B200?")

    def meanwhile(store: OrderStore) -> None:  # at another desk, once the customer said yes
        staff_call(store, "modify_pending_order_address", order_id="B200", **TODAY_ARGS)

    decisions = [FIND, CANCEL, before_yes, CANCEL, final("?")]
    events = converse(either_store, decisions, ["yes"], meanwhile)
    again = outcomes(events)[-1]
    assert isinstance(again, Proposed) and again.again and again.proposal == "P2"
    assert nothing_committed(events)


@pytest.mark.parametrize("unclear", ["大丈夫です", "いいです", "fine", "ok I guess"])
def test_words_that_may_decline_are_asked_again_never_a_yes(
    either_store: OrderStore, unclear: str
) -> None:
    before = snapshot(either_store)
    ask = AskUser(question="Change P1: cancel B200?")
    events = converse(either_store, [FIND, CANCEL, ask, CANCEL, final("?")], [unclear])
    said = [e for e in events if isinstance(e, ToolObserved)][2].observation
    assert "Ask again in plain words" in said and "P1" in said
    assert nothing_committed(events) and snapshot(either_store) == before


def test_an_unclear_answer_then_a_plain_yes_goes_on(either_store: OrderStore) -> None:
    ask = AskUser(question="Change P1: cancel B200?")
    again = AskUser(question="To be sure, change P1: yes or no?")
    decisions = [FIND, CANCEL, ask, again, CANCEL, final("Done.")]
    events = converse(either_store, decisions, ["大丈夫です", "はい"])
    assert isinstance(outcomes(events)[-1], Changed)


def _chat(tmp_path: Path, turns: list[str], script: list[dict[str, Any]]) -> list[Any]:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(script))
    trace = tmp_path / "t.jsonl"
    argv = ["chat", "--script", str(path), "--trace", str(trace)]
    result = CliRunner().invoke(app, argv, input="\n".join(turns) + "\n")
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    return [r for r in records if r["event"] in ("observation", "approval_requested")]


_FIND = {"type": "tool", "tool": "find_user_id_by_email",
         "args": {"email": "kaito.yamamoto@example.com"}}  # fmt: skip
_CANCEL = {"type": "tool", "tool": "cancel_pending_order",
           "args": {"order_id": "B200", "reason": "no longer needed"}}  # fmt: skip


def test_a_later_no_withdraws_an_earlier_yes(tmp_path: Path) -> None:
    script = [
        _FIND,
        _CANCEL,
        {"type": "final", "answer": "Change P1: cancel B200. Shall I?"},
        {"type": "final", "answer": "Noted."},  # the yes, not acted on in its turn
        _CANCEL,  # the next turn said no, and the model cancels anyway
        {"type": "final", "answer": "B200 stays."},
    ]
    seen = _chat(
        tmp_path, ["Cancel B200, kaito.yamamoto@example.com", "yes", "No, do not cancel"], script
    )
    assert [r["outcome"]["kind"] for r in seen] == ["read", "proposed", "proposed"]


def test_a_yes_given_before_reset_is_not_the_next_customers(tmp_path: Path) -> None:
    script = [
        _FIND,
        _CANCEL,
        {"type": "final", "answer": "Change P1: cancel B200. Shall I?"},
        {"type": "final", "answer": "Noted."},
        _FIND,  # the next customer, after /reset
        _CANCEL,
        {"type": "final", "answer": "B200 is as it was."},
    ]
    turns = ["Cancel B200, kaito.yamamoto@example.com", "yes", "/reset", "Hello"]
    seen = _chat(tmp_path, turns, script)
    assert [r["outcome"]["kind"] for r in seen] == ["read", "proposed", "read", "proposed"]


def test_one_yes_is_one_write(either_store: OrderStore) -> None:
    session = CustomerSession()
    ask = AskUser(question="Change P1: ship B200 to 2-1 Chiyoda?")
    events = converse(either_store, [FIND, MOVE, ask, MOVE, final("Done.")], ["yes"], None, session)
    assert isinstance(outcomes(events)[-1], Changed)
    assert session.consent.given is None  # spent: the same call again would be proposed anew
