"""Hand-over is state: `transfer_to_human_agents` opens a ticket (customer, order, summary, run,
question), the run ends `handed_over` with exit 6, and a person lists, claims and closes it
with `agent tickets`, on both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from agent_cli.cli import app
from agent_cli.domain.tickets import NewTicket
from agent_cli.store import tickets
from agent_cli.store.sqlite import OrderStore

runner = CliRunner()

HANDOVER = [
    {"type": "tool", "tool": "find_user_id_by_email", "args": {"email": "aoi.suzuki@example.com"}},
    {"type": "tool", "tool": "track_order", "args": {"order_id": "A101"}},
    {
        "type": "tool",
        "tool": "transfer_to_human_agents",
        "args": {"summary": "A101 arrived   damaged; the customer asks for a person."},
    },
    {"type": "final", "answer": "A colleague will follow up with you about A101."},
]
QUESTION = "My camera A101 is broken, can I talk to a human?"


def handed_over(tmp_path: Path, *extra: str, env: dict[str, str] | None = None) -> Result:
    script = tmp_path / "handover.json"
    script.write_text(json.dumps(HANDOVER))
    return runner.invoke(app, ["ask", QUESTION, "--script", str(script), *extra], env=env or {})


def agent(*argv: str, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(app, list(argv), env=env or {})


def test_a_hand_over_opens_a_ticket_and_ends_the_run_handed_over(tmp_path: Path) -> None:
    result = handed_over(tmp_path, "--json")
    assert result.exit_code == 6, result.output
    assert "ticket #1 is open" in result.stderr and "agent tickets claim 1" in result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[-1]["event"] == "run_finished" and events[-1]["status"] == "handed_over"
    transferred = [e for e in events if e.get("tool") == "transfer_to_human_agents"]
    assert transferred[-1]["ticket"] == 1
    shown = json.loads(agent("tickets", "show", "1", "--json").stdout)
    assert shown["status"] == "open" and shown["customer_id"] == "aoi_suzuki_1002"
    assert shown["order_code"] == "A101" and shown["question"] == QUESTION
    assert shown["summary"] == "A101 arrived damaged; the customer asks for a person."
    assert shown["run_id"] == events[0]["run_id"]
    logged = agent("logs", "list", "--status", "handed_over").stdout
    assert events[0]["run_id"] in logged


def test_a_dry_run_hand_over_writes_no_ticket_and_claims_none(tmp_path: Path) -> None:
    script = tmp_path / "dry.json"
    honest = {"type": "final", "answer": "In a real run, a colleague would take A101 over."}
    script.write_text(json.dumps([*HANDOVER, honest]))
    argv = ["ask", QUESTION, "--script", str(script), "--dry-run", "--json"]
    result = runner.invoke(app, argv)
    assert result.exit_code == 0, result.output
    assert "DRY RUN: would open a ticket" in result.stdout
    events = [json.loads(line) for line in result.stdout.splitlines()]
    (repair,) = [e["problem"] for e in events if e["event"] == "repair"]
    assert "says a hand-over to a person was made" in repair  # no ticket: no follow-up to claim
    assert events[-1]["status"] == "answered"
    assert agent("tickets", "list", "--status", "all", "--json").stdout == ""


def test_a_person_claims_and_closes_a_ticket_once(tmp_path: Path) -> None:
    handed_over(tmp_path)
    listed = agent("tickets", "list")  # piped: tab-separated, whole
    assert listed.stdout.splitlines()[0].split("\t")[:4] == [
        "ticket",
        "status",
        "customer",
        "order",
    ]
    assert listed.stdout.splitlines()[1].startswith("#1\topen\taoi_suzuki_1002\tA101\t")
    claimed = agent("tickets", "claim", "1", "--as", "lead")
    assert claimed.exit_code == 0 and claimed.stdout == "#1: claimed by lead\n"
    mine = agent("tickets", "list", "--status", "claimed").stdout.splitlines()
    assert len(mine) == 2 and mine[1].startswith("#1\tclaimed\taoi_suzuki_1002\t")
    assert agent("tickets", "list", "--status", "open").stdout.count("\n") == 1  # none open
    again = agent("tickets", "claim", "1", "--as", "other")
    assert again.exit_code == 1 and "claimed already, by lead" in again.stderr
    closed = agent("tickets", "close", "1", "--note", "Called back;\n replaced", "--as", "lead")
    assert closed.exit_code == 0 and closed.stdout == "#1: closed by lead\n"
    twice = agent("tickets", "close", "1")
    assert twice.exit_code == 1 and "closed already, by lead" in twice.stderr
    assert agent("tickets", "list").stdout.count("\n") == 1  # closed: only the header
    everything = agent("tickets", "list", "--status", "all", "--json").stdout
    (ticket,) = [json.loads(line) for line in everything.splitlines()]
    assert ticket["status"] == "closed" and ticket["note"] == "Called back; replaced"
    assert ticket["claimed_by"] == "lead" and ticket["closed_by"] == "lead"


@pytest.mark.parametrize("number", ["0", "7", str(2**63), str(10**30)])
@pytest.mark.parametrize("step", ["show", "claim", "close"])
def test_any_number_a_user_can_type_is_no_such_ticket(step: str, number: str) -> None:
    result = agent("tickets", step, number)
    assert result.exit_code == 1 and f"No ticket #{number}" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_options_are_usage_errors() -> None:
    wrong = agent("tickets", "list", "--status", "opne")
    assert wrong.exit_code == 2 and "(did you mean 'open'?)" in wrong.stderr
    assert agent("tickets", "show", "x").exit_code == 2
    long_note = agent("tickets", "close", "1", "--note", "x" * 2_001)
    assert long_note.exit_code == 2 and "at most 2,000" in long_note.stderr


def test_tickets_on_both_backends(either_store: OrderStore) -> None:
    new = NewTicket("summary here", "the question", "run-1", "aoi_suzuki_1002", "A101")
    first = tickets.open_ticket(either_store, new)
    second = tickets.open_ticket(either_store, NewTicket("two", "q", "run-2"))
    assert (first.id, second.id) == (1, 2) and first.status == "open"
    assert first.opened_at.endswith("+00:00")  # UTC, as `tickets list` heads its column
    assert second.customer_id is None and second.order_code is None
    done = tickets.claim(either_store, 1, by="lead")
    assert done is not None and done.changed and done.ticket.claimed_by == "lead"
    assert tickets.claim(either_store, 1, by="x") == tickets.TicketStep(done.ticket, False)
    closed = tickets.close(either_store, 2, by="lead", note=None)  # open -> closed
    assert closed is not None and closed.changed and closed.ticket.status == "closed"
    assert [t.id for t in tickets.listed(either_store, status="claimed")] == [1]
    assert (
        tickets.get(either_store, 2**63) is None and tickets.claim(either_store, 3, by="x") is None
    )


def test_the_python_api_says_handed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import agent_cli

    script = tmp_path / "handover.json"
    script.write_text(json.dumps(HANDOVER))
    result = agent_cli.ask(QUESTION, script=script)
    assert result.status == "handed_over" and result.ok and result.exit_code == 6


def test_completion_offers_open_tickets_first(tmp_path: Path) -> None:
    from tests.cli.test_cli import _completed

    handed_over(tmp_path)
    handed_over(tmp_path)
    agent("tickets", "close", "1")
    assert _completed("agent tickets claim ") == ["2", "1"]


def test_a_hand_over_summary_holding_controls_is_stored_clean_on_both_backends(
    either_store: OrderStore,
) -> None:
    """The model's summary (and the customer's question) may hold a NUL or an escape, which
    PostgreSQL refuses and a terminal obeys: the ticket keeps the words without them."""
    from agent_cli.tools import ToolRegistry
    from agent_cli.tools.handover import handover_tool
    from agent_cli.tools.identity import CustomerSession

    session = CustomerSession(question="help\x00 me\x1b[2J")
    tools = ToolRegistry([handover_tool(lambda: either_store, session, dry_run=False)])
    summary = {"summary": "broken\x00 cam\x1b]0;x\x07era"}
    observed = tools.invoke("transfer_to_human_agents", summary)
    assert not observed.is_error, observed.text  # type: ignore[union-attr]
    (ticket,) = tickets.listed(either_store, status="open")
    assert (ticket.summary, ticket.question) == ("broken camera", "help me")


def test_a_ticket_of_an_unidentified_customer_shows_what_they_said_about_themselves() -> None:
    """Not identified (the email is no customer's): the person still reads who wrote and about
    which order, marked as their own words, never as a record."""
    import agent_cli

    conversation = agent_cli.Conversation.start(today="2026-10-13")
    turn = conversation.say(
        "Hi, my name is mia tanaka (mia.t@example.net). The parcel for B200 never came and I "
        "want to talk to a real person"
    )
    assert turn.status == "handed_over"
    shown = json.loads(agent("tickets", "show", "1", "--json").stdout)
    assert shown["customer_id"] is None and shown["known_from"] == "their words"
    assert (shown["name"], shown["email"], shown["order"]) == (
        "Mia Tanaka",
        "mia.t@example.net",
        "B200",
    )
    table = agent("tickets", "show", "1").stdout
    assert "not identified; they wrote: Mia Tanaka <mia.t@example.net>" in table
    assert "B200 (as they wrote it)" in table
    later = conversation.say("Also, my phone is 555-0100")  # kept for the person, read again
    assert later.replies == ()
    assert (
        json.loads(agent("tickets", "show", "1", "--json").stdout)["email"] == "mia.t@example.net"
    )
