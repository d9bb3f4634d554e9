"""A yes confirms one refund (issue 48, point 2, for `issue_refund` as for the seven writes):
in a customer conversation the first call moves nothing and proposes the exact refund; only
the customer's plain yes to that proposal, in their next message, lets the same call go on to
the shop's approval, once, while the order still stands as they were shown it. On both
backends."""

from __future__ import annotations

from typing import Any

from agent_cli.core.decisions import AskUser
from agent_cli.core.events import ApprovalRequested, Event, ToolObserved
from agent_cli.core.seams import ApprovalNeeded, ApprovalVerdict
from agent_cli.core.tool_outcomes import Proposed, Refunded
from agent_cli.policy.consent import heard
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools.identity import CustomerSession
from tests.contract.test_desk_writes import converse as desk_converse
from tests.helpers import call, final
from tests.unit.tools.test_identity import refund_toolbox

FIND = call("find_user_id_by_email", email="haruki.sato@example.com")  # A100's customer
ARGS = {"order_code": "A100", "amount": 1000, "reason": "damaged"}
REFUND = call("issue_refund", **ARGS)
ASK_P1 = AskUser(question="Shall I make change P1, a refund of 1,000 JPY on A100? yes or no")


def converse(
    store: OrderStore,
    decisions: list[Any],
    replies: list[str],
    *,
    meanwhile: Any = None,
    approves: bool = True,
) -> list[Event]:
    """A run whose questions get `replies` in turn and whose approvals are all `approves`;
    `meanwhile(store)` runs after each reply, before the model goes on."""
    verdicts = [ApprovalVerdict(approves, "operator")] * 3
    return desk_converse(
        store, decisions, replies, verdicts, meanwhile=meanwhile, toolbox=refund_toolbox
    )


def refund_outcomes(events: list[Event]) -> list[Any]:
    return [e.outcome for e in events if isinstance(e, ToolObserved) and e.tool == "issue_refund"]


def asked_to_approve(events: list[Event]) -> int:
    return sum(isinstance(e, ApprovalRequested) for e in events)


def test_the_first_call_proposes_and_moves_nothing(either_store: OrderStore) -> None:
    events = converse(either_store, [FIND, REFUND, final("Shall I refund it? (P1)")], [])
    (proposed,) = refund_outcomes(events)
    assert isinstance(proposed, Proposed) and proposed.tool == "issue_refund"
    assert (proposed.proposal, proposed.order, proposed.again) == ("P1", "A100", False)
    assert proposed.summary == "refund 1,000 JPY on order A100"
    assert asked_to_approve(events) == 0  # the shop is not asked before the customer
    assert either_store.refunds("A100") == []


def test_a_yes_to_the_refund_goes_on_to_approval_and_refunds_once(
    either_store: OrderStore,
) -> None:
    second = call("issue_refund", **{**ARGS, "amount": 500})
    decisions = [FIND, REFUND, ASK_P1, REFUND, second, final("Done.")]
    events = converse(either_store, decisions, ["yes"])
    proposed, refunded, again = refund_outcomes(events)
    assert isinstance(proposed, Proposed) and isinstance(refunded, Refunded)
    assert asked_to_approve(events) == 1
    # one yes, one refund: a second refund is put to the customer in its own question
    assert isinstance(again, Proposed) and again.proposal == "P2"
    assert [r.amount for r in either_store.refunds("A100")] == [1000]


def test_a_yes_is_spent_even_when_the_shop_says_no(either_store: OrderStore) -> None:
    """The operator denied the refund the customer agreed to: calling again does not reach the
    operator a second time on the same yes; the customer is asked again."""
    decisions = [FIND, REFUND, ASK_P1, REFUND, REFUND, final("?")]
    events = converse(either_store, decisions, ["yes"], approves=False)
    assert asked_to_approve(events) == 1
    last = refund_outcomes(events)[-1]
    assert isinstance(last, Proposed) and last.proposal == "P2"
    assert either_store.refunds("A100") == []


def test_a_no_or_a_yes_to_another_question_refunds_nothing(either_store: OrderStore) -> None:
    other = AskUser(question="Would you like a courier note on B200? yes or no")
    for ask, reply in ((ASK_P1, "no, keep it"), (other, "yes"), (ASK_P1, "大丈夫です")):
        events = converse(either_store, [FIND, REFUND, ask, REFUND, final("?")], [reply])
        last = refund_outcomes(events)[-1]
        assert isinstance(last, Proposed), reply
        assert asked_to_approve(events) == 0
    assert either_store.refunds("A100") == []


def test_a_dropped_refund_proposed_again_says_so(either_store: OrderStore) -> None:
    events = converse(either_store, [FIND, REFUND, ASK_P1, REFUND, final("?")], ["no"])
    again = refund_outcomes(events)[-1]
    assert isinstance(again, Proposed) and again.again and again.proposal == "P2"


def test_a_yes_is_to_the_refund_shown_not_to_another_amount(either_store: OrderStore) -> None:
    more = call("issue_refund", **{**ARGS, "amount": 9000})
    events = converse(either_store, [FIND, REFUND, ASK_P1, more, final("?")], ["yes"])
    last = refund_outcomes(events)[-1]
    assert isinstance(last, Proposed) and last.summary == "refund 9,000 JPY on order A100"
    assert not last.again  # another refund, put for the first time
    assert asked_to_approve(events) == 0
    assert either_store.refunds("A100") == []


def test_a_yes_is_to_the_call_shown_not_to_another_reason(either_store: OrderStore) -> None:
    other = call("issue_refund", **{**ARGS, "reason": "changed my mind"})
    events = converse(either_store, [FIND, REFUND, ASK_P1, other, final("?")], ["yes"])
    assert isinstance(refund_outcomes(events)[-1], Proposed)
    assert asked_to_approve(events) == 0


def test_an_order_redated_meanwhile_puts_the_refund_again(either_store: OrderStore) -> None:
    from dataclasses import replace
    from datetime import timedelta

    def meanwhile(store: OrderStore) -> None:  # its delivery corrected at another desk
        order = store.get("A100")
        assert order is not None and order.delivered_at is not None
        store.import_orders([replace(order, delivered_at=order.delivered_at - timedelta(days=1))])

    decisions = [FIND, REFUND, ASK_P1, REFUND, final("?")]
    events = converse(either_store, decisions, ["yes"], meanwhile=meanwhile)
    again = refund_outcomes(events)[-1]
    assert isinstance(again, Proposed) and again.proposal == "P2"
    assert asked_to_approve(events) == 0


def test_money_that_went_back_meanwhile_puts_the_refund_again_saying_so(
    either_store: OrderStore,
) -> None:
    """Between the customer's yes and the call, another path refunded part of the order: the
    yes was to the order as it stood; the refund is proposed again, saying what went back."""

    def meanwhile(store: OrderStore) -> None:
        store.record_refund("A100", 2000, "goodwill, at another desk", key="elsewhere")

    decisions = [FIND, REFUND, ASK_P1, REFUND, final("?")]
    events = converse(either_store, decisions, ["yes"], meanwhile=meanwhile)
    again = refund_outcomes(events)[-1]
    assert isinstance(again, Proposed) and again.proposal == "P2"
    assert again.summary == "refund 1,000 JPY on order A100 (2,000 JPY went back already)"
    assert asked_to_approve(events) == 0
    assert [r.amount for r in either_store.refunds("A100")] == [2000]


def test_a_new_customer_forgets_a_yes(either_store: OrderStore) -> None:
    session = CustomerSession()
    tools = refund_toolbox(either_store, session)
    tools.invoke("find_user_id_by_email", {"email": "haruki.sato@example.com"})
    tools.invoke("issue_refund", ARGS)
    heard(session.consent, ASK_P1.question, "yes")
    session.forget()  # /reset: the next customer
    tools.invoke("find_user_id_by_email", {"email": "haruki.sato@example.com"})
    result = tools.invoke("issue_refund", ARGS)
    assert not isinstance(result, ApprovalNeeded)
    assert isinstance(result.outcome, Proposed)


def test_staff_consents_by_running_the_tool(either_store: OrderStore) -> None:
    tools = refund_toolbox(either_store, CustomerSession(staff=True))
    assert isinstance(tools.invoke("issue_refund", ARGS), ApprovalNeeded)
