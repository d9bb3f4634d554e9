"""Identity holds across the whole conversation (issue 48, point 5), on both backends: a new
customer forgets the last one, a lookup shows an identified customer only their orders, a
did-you-mean names no one else's orders, a failed identification tells no email apart, and
guessing is bounded."""

from __future__ import annotations

from typing import Any

import pytest

from agent_cli.core.seams import Observation
from agent_cli.core.tool_outcomes import NotFound
from agent_cli.policy.consent import heard
from agent_cli.store.sqlite import OrderStore
from agent_cli.tools import ToolRegistry
from agent_cli.tools.desk import desk_tools
from agent_cli.tools.identity import MAX_FAILED_IDENTIFICATIONS, CustomerSession
from agent_cli.tools.orders import RefundPolicy, order_tools

HARUKI = "haruki.sato@example.com"  # A100 and A106 are his; A101 is Aoi Suzuki's


@pytest.fixture
def store(either_store: OrderStore) -> OrderStore:
    return either_store


def tools_for(store: OrderStore, session: CustomerSession) -> ToolRegistry:
    return ToolRegistry(
        [
            *order_tools(lambda: store, RefundPolicy(), session=session),
            *desk_tools(lambda: store, session),
        ]
    )


def call(tools: ToolRegistry, name: str, **args: Any) -> Observation:
    observed = tools.invoke(name, args)
    assert isinstance(observed, Observation)
    return observed


def test_before_identification_a_lookup_works_but_suggests_no_real_code(store: OrderStore) -> None:
    tools = tools_for(store, CustomerSession())
    assert "status=DELIVERED" in call(tools, "lookup_order", order_code="A100").text  # the seed's
    typo = call(tools, "lookup_order", order_code="A10O")
    assert typo.outcome == NotFound("A10O") and "A100" not in typo.text


def test_an_identified_customer_looks_up_only_their_own_orders(store: OrderStore) -> None:
    tools = tools_for(store, CustomerSession())
    assert call(tools, "find_user_id_by_email", email=HARUKI).text == "haruki_sato_1001"
    assert "status=DELIVERED" in call(tools, "lookup_order", order_code="A106").text
    others = call(tools, "lookup_order", order_code="A101")  # Aoi Suzuki's
    missing = call(tools, "lookup_order", order_code="A109")  # no such order
    for refused, code in ((others, "A101"), (missing, "A109")):
        assert isinstance(refused.outcome, NotFound) and refused.outcome.theirs
        assert refused.text.startswith(
            f"NOT_FOUND: the identified customer has no order with code {code}"
        )
        assert "status=" not in refused.text and "total=" not in refused.text
    assert set(others.outcome.nearest) <= {"A100", "A106"}  # type: ignore[union-attr]
    assert set(missing.outcome.nearest) <= {"A100", "A106"}  # type: ignore[union-attr]
    typo = call(tools, "lookup_order", order_code="A10O")
    assert typo.outcome == NotFound("A10O", ("A100",), True)  # their own order, suggested


def test_staff_keep_the_did_you_mean_for_every_order(store: OrderStore) -> None:
    tools = tools_for(store, CustomerSession(staff=True))
    assert call(tools, "lookup_order", order_code="A10O").outcome == NotFound("A10O", ("A100",))
    assert "status=" in call(tools, "lookup_order", order_code="A101").text


def test_a_failed_identification_reads_the_same_whether_or_not_the_email_exists(
    store: OrderStore,
) -> None:
    tools = tools_for(store, CustomerSession())
    assert call(tools, "find_user_id_by_email", email=HARUKI).text == "haruki_sato_1001"
    another = call(tools, "find_user_id_by_email", email="aoi.suzuki@example.com")
    nobody = call(tools, "find_user_id_by_email", email="no.one@example.com")
    assert another.is_error and another.text == nobody.text
    assert nobody.text.startswith("ERROR: no customer with that email; ask the customer")
    assert nobody.text.endswith(
        "(this conversation's customer is identified already; a desk "
        "serves one customer per conversation)"
    )
    first = call(tools_for(store, CustomerSession()), "find_user_id_by_email", email="x@y.example")
    assert "identified already" not in first.text  # said only once someone is
    zipped = call(
        tools, "find_user_id_by_name_zip", first_name="Aoi", last_name="Suzuki", zip="530-0001"
    )
    none = call(tools, "find_user_id_by_name_zip", first_name="No", last_name="One", zip="150-0001")
    assert zipped.is_error and zipped.text == none.text
    assert "status=" in call(tools, "get_order_details", order_id="A100").text  # still Haruki's


def test_identification_is_bounded_per_conversation_then_a_person_takes_over(
    store: OrderStore,
) -> None:
    session = CustomerSession()
    tools = tools_for(store, session)
    for n in range(MAX_FAILED_IDENTIFICATIONS):
        assert (
            "no customer with that email"
            in call(tools, "find_user_id_by_email", email=f"x{n}@example.com").text
        )
    stopped = call(tools, "find_user_id_by_email", email=HARUKI)  # right, but too late
    assert stopped.is_error and "transfer_to_human_agents" in stopped.text
    assert session.customer_id is None
    by_name = call(
        tools, "find_user_id_by_name_zip", first_name="Haruki", last_name="Sato", zip="1"
    )
    assert by_name.is_error and "transfer_to_human_agents" in by_name.text
    session.forget()  # a new customer starts afresh
    assert call(tools, "find_user_id_by_email", email=HARUKI).text == "haruki_sato_1001"


def test_a_success_does_not_count_against_the_bound(store: OrderStore) -> None:
    session = CustomerSession()
    tools = tools_for(store, session)
    for _ in range(MAX_FAILED_IDENTIFICATIONS + 2):
        assert call(tools, "find_user_id_by_email", email=HARUKI).text == "haruki_sato_1001"


def test_forgetting_clears_the_customer_the_order_and_every_proposal() -> None:
    session = CustomerSession(customer_id="haruki_sato_1001", order="A100", failed=3)
    session.consent.propose("cancel_pending_order A100", "d", "cancel A100")
    heard(session.consent, "Change P1?", "yes")
    session.consent.propose("modify_pending_order_payment A100", "e", "pay A100 by card")
    session.forget()
    assert (session.customer_id, session.order, session.failed) == (None, None, 0)
    assert session.consent.pending is None and session.consent.given is None


def _reset_session(tmp_path: Any, between: str) -> list[str]:
    """Two customers in one `agent chat`, `between` them: the first identifies as Aoi Suzuki
    and asks for a cancel; the second asks for Aoi's records and says yes."""
    import json

    from typer.testing import CliRunner

    from agent_cli.cli import app

    script = tmp_path / "s.json"
    aoi = {"user_id": "aoi_suzuki_1002"}
    script.write_text(
        json.dumps(
            [
                {
                    "type": "tool",
                    "tool": "find_user_id_by_email",
                    "args": {"email": "aoi.suzuki@example.com"},
                },
                {"type": "final", "answer": "Found you."},
                {"type": "tool", "tool": "get_user_details", "args": aoi},
                {"type": "tool", "tool": "track_order", "args": {"order_id": "A101"}},
                {"type": "final", "answer": "Order A101 could not be checked yet."},
            ]
        )
    )
    trace = tmp_path / "t.jsonl"
    result = CliRunner().invoke(
        app,
        ["chat", "--script", str(script), "--trace", str(trace)],
        input=f"I am Aoi\n{between}Show me Aoi's account\n",
    )
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    return [e["observation"] for e in events if e["event"] == "observation"]


def test_reset_forgets_the_identified_customer_for_the_next_one(tmp_path: Any) -> None:
    found, account, tracking = _reset_session(tmp_path, "/reset\n")
    assert found == "aoi_suzuki_1002"
    assert account.startswith("ERROR: the customer is not identified yet"), account
    assert tracking.startswith("ERROR: the customer is not identified yet"), tracking


def test_without_a_reset_the_same_customer_is_still_identified(tmp_path: Any) -> None:
    _, account, tracking = _reset_session(tmp_path, "")
    assert 'name="Aoi Suzuki"' in account and not tracking.startswith("ERROR")


def refund_toolbox(store: OrderStore, session: CustomerSession) -> ToolRegistry:
    """The desk's tools and issue_refund, for one conversation, on the sample shop's day."""
    from datetime import date

    from agent_cli.core.budget import RefundCounter
    from agent_cli.tools.refunds import RefundDesk, RefundLimits, refund_tool

    limits = RefundLimits(max_amount=500_000, max_per_run=5, max_per_session=5)
    desk = RefundDesk(
        open_store=lambda: store,
        policy=RefundPolicy(),
        limits=limits,
        counter=RefundCounter(),
        dry_run=False,
        clock=lambda: date(2026, 10, 13),
        session=session,
    )
    return ToolRegistry([*tools_for(store, session), refund_tool(desk)])


def test_money_goes_back_only_on_the_identified_customers_own_order(store: OrderStore) -> None:
    from agent_cli.core.seams import ApprovalNeeded

    session = CustomerSession()
    tools = refund_toolbox(store, session)
    args = {"order_code": "A100", "amount": 1000, "reason": "damaged"}
    before = tools.invoke("issue_refund", args)
    assert isinstance(before, Observation) and before.is_error
    assert "not identified yet" in before.text
    call(tools, "find_user_id_by_email", email="aoi.suzuki@example.com")
    another = tools.invoke("issue_refund", args)  # Haruki's order, Aoi identified
    missing = tools.invoke("issue_refund", {**args, "order_code": "A109"})
    assert isinstance(another, Observation) and isinstance(missing, Observation)
    assert "not the identified customer's" in another.text
    assert another.text.replace("A100", "X") == missing.text.replace("A109", "X")
    session.forget()
    call(tools, "find_user_id_by_email", email=HARUKI)
    proposed = tools.invoke("issue_refund", args)  # their own: put to them first
    assert isinstance(proposed, Observation) and not proposed.is_error
    heard(session.consent, "Shall I make change P1? yes or no", "yes")
    assert isinstance(tools.invoke("issue_refund", args), ApprovalNeeded)
    assert store.refunded_total("A100") == 0  # nothing was committed by asking


def test_staff_may_refund_any_order(store: OrderStore) -> None:
    from agent_cli.core.seams import ApprovalNeeded

    tools = refund_toolbox(store, CustomerSession(staff=True))
    args = {"order_code": "A100", "amount": 1000, "reason": "damaged"}
    assert isinstance(tools.invoke("issue_refund", args), ApprovalNeeded)


def test_offline_the_desk_hands_over_once_identification_is_exhausted(tmp_path: Any) -> None:
    """`agent chat`, a customer who gives a wrong email turn after turn: after five the desk
    stops looking and hands the conversation to a person, with a ticket."""
    import json

    from typer.testing import CliRunner

    from agent_cli.cli import app

    turns = [f"Which orders do I have? My email is wrong{n}@example.com" for n in range(6)]
    trace = tmp_path / "t.jsonl"
    result = CliRunner().invoke(app, ["chat", "--trace", str(trace)], input="\n".join(turns))
    assert "passed your question to a person" in result.stdout, result.output
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    failed = [
        r for r in records if r["event"] == "observation" and r["tool"] == "find_user_id_by_email"
    ]
    assert len(failed) == 6 and failed[-1]["outcome"]["hand_over"] is True
    assert not any(r["outcome"].get("hand_over") for r in failed[:-1])
    listed = CliRunner().invoke(app, ["tickets", "list", "--json"])
    assert "Could not identify the customer" in listed.stdout
