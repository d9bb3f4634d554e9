"""`agent tools call NAME [JSON]`: an operator runs one tool by hand, as staff, through the
same validation and, for a write, the same approval path; every call in the run log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from agent_cli.cli import app
from tests.helpers import delivered_recently

runner = CliRunner()


def call(*argv: str, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(app, ["tools", "call", *argv], env=env or {})


def test_a_read_prints_the_record_without_identifying_anyone() -> None:
    result = call("get_order_details", '{"order_id": "A101"}')
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("order_id=A101 user_id=aoi_suzuki_1002 status=SHIPPING")
    assert result.stderr == ""
    as_json = call("track_order", '{"order_id": "A101"}', "--json", "--yes")  # --yes: no change
    payload = json.loads(as_json.stdout)
    assert as_json.exit_code == 0 and payload["tool"] == "track_order"
    assert payload["args"] == {"order_id": "A101"} and "Yamato Transport" in payload["observation"]
    assert call("list_all_product_types").exit_code == 0  # no arguments at all


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["get_order_detail", "{}"],
            "no tool 'get_order_detail' (did you mean 'get_order_details'?)",
        ),
        (["get_order_details", '{"order_id": 5}'], "invalid arguments for get_order_details"),
        (["get_order_details", "{}"], "order_id: Field required"),
        (["get_order_details", '{"order_id": "A1", "x": 1}'], "x: Extra inputs"),
        (["get_order_details", "[1]"], "must be a JSON object"),
        (["get_order_details", "{bad"], "are not JSON"),
        (["calculate", '{"expression": "2 ** 3 ; 1"}'], "invalid arguments for calculate"),
    ],
)
def test_bad_input_is_a_usage_error_before_anything_runs(argv: list[str], said: str) -> None:
    result = call(*argv)
    assert result.exit_code == 2 and said in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1
    logged = runner.invoke(app, ["logs", "list", "--kind", "tool"])
    assert "agent tools call" not in logged.stdout  # nothing ran, nothing logged


def test_a_refusal_is_exit_1_with_the_observation() -> None:
    result = call("get_order_details", '{"order_id": "Z9"}', "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "tool": "get_order_details",
        "args": {"order_id": "Z9"},
        "error": "ERROR: no order Z9; check the order id (e.g. #W0000000)",
    }


def _refunds_on(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "c.toml"
    config.write_text("[refunds]\nenabled = true\nmax_amount = 50000\nqueue_hours = 48\n")
    return {"AGENT_CONFIG": str(config)}


REFUND = '{"order_code": "A100", "amount": 1000, "reason": "late delivery"}'


def test_a_write_with_yes_is_approved_by_the_operator_and_logged(tmp_path: Path) -> None:
    delivered_recently("A100", days=3)
    env = _refunds_on(tmp_path)
    result = call("issue_refund", REFUND, "--yes", "--as", "lead", env=env)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("REFUNDED: refund #2 of 1,000 JPY on order A100")
    logged = runner.invoke(app, ["logs", "show", "--json"], env=env)
    events = [json.loads(line) for line in logged.stdout.splitlines()]
    decided = next(e for e in events if e["event"] == "approval_decided")
    assert decided["approved"] and decided["by"] == "operator"
    assert decided["reason"] == "approved by lead (--yes)"
    again = call("issue_refund", REFUND, "--yes", env=env)  # the same refund: never twice
    assert again.exit_code == 1 and "already issued" in again.stdout


def test_a_write_with_nobody_at_a_terminal_waits_in_the_queue(tmp_path: Path) -> None:
    delivered_recently("A100", days=3)
    env = _refunds_on(tmp_path)
    result = call("issue_refund", REFUND, "--json", env=env)
    assert result.exit_code == 5, result.output
    payload = json.loads(result.stdout)
    assert payload["queued"] == 1 and payload["observation"].startswith("QUEUED:")
    assert "agent approvals approve 1" in result.stderr
    listed = runner.invoke(app, ["approvals", "list", "--json"], env=env)
    assert json.loads(listed.stdout.splitlines()[0])["order_code"] == "A100"


def test_a_write_the_rules_refuse_is_refused_even_with_yes(tmp_path: Path) -> None:
    env = _refunds_on(tmp_path)
    too_much = '{"order_code": "A100", "amount": 60000, "reason": "late delivery"}'
    result = call("issue_refund", too_much, "--yes", env=env)
    assert result.exit_code == 1 and "above the cap of 50,000 JPY" in result.stdout


def test_every_call_is_in_the_run_log() -> None:
    call("get_item_details", '{"item_id": "1002002"}')
    logged = runner.invoke(app, ["logs", "list", "--kind", "tool"]).stdout
    assert 'agent tools call get_item_details {"item_id": "1002002"}' in logged
    assert runner.invoke(app, ["tools", "list", "--json"]).exit_code == 0


def test_a_ticket_opened_by_hand_names_its_run() -> None:
    result = call("transfer_to_human_agents", '{"summary": "Called in: wants a person."}')
    assert result.exit_code == 0, result.output  # done: the operator opened it
    ticket = json.loads(runner.invoke(app, ["tickets", "show", "1", "--json"]).stdout)
    logged = runner.invoke(app, ["logs", "list", "--kind", "tool", "--json"]).stdout
    (run,) = [json.loads(line) for line in logged.splitlines()]
    assert ticket["run_id"] == run["run_id"] and ticket["question"] == run["question"]
    assert ticket["question"].startswith("agent tools call transfer_to_human_agents")


DESK_WRITES = [
    ("cancel_pending_order", {"order_id": "B200", "reason": "no longer needed"}, "cancel B200"),
    (
        "modify_pending_order_address",
        {"order_id": "B200", "address1": "1-1 Umeda", "address2": "", "city": "Osaka",
         "state": "Osaka", "country": "Japan", "zip": "530-0001"},
        "ship B200 to 1-1 Umeda",
    ),
    (
        "modify_pending_order_items",
        {"order_id": "B200", "item_ids": ["1002002"], "new_item_ids": ["1002001"],
         "payment_method_id": "credit_card_1007"},
        "change Ceramic Mug 1002002",
    ),
    (
        "modify_user_address",
        {"user_id": "aoi_suzuki_1002", "address1": "3-3 Sakae", "address2": "", "city": "Nagoya",
         "state": "Aichi", "country": "Japan", "zip": "460-0008"},
        "change aoi_suzuki_1002's default address",
    ),
    (
        "return_delivered_order_items",
        {"order_id": "A103", "item_ids": ["1005001"], "payment_method_id": "credit_card_1004"},
        "return 1 item of A103",
    ),
    (
        "exchange_delivered_order_items",
        {"order_id": "A105", "item_ids": ["1008001"], "new_item_ids": ["1008002"],
         "payment_method_id": "gift_card_1006"},
        "exchange T-Shirt 1008001",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "args", "change"), DESK_WRITES, ids=[w[0] for w in DESK_WRITES])
def test_yes_is_the_operator_s_consent_and_approval_for_any_desk_write(
    tool: str, args: dict[str, object], change: str
) -> None:
    if tool in ("return_delivered_order_items", "exchange_delivered_order_items"):
        delivered_recently(str(args["order_id"]), days=3)  # inside the window: the shop's rule
    result = call(tool, json.dumps(args), "--yes", "--as", "lead")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"CHANGED: change #1: {change}")
    shown = call("get_order_details", json.dumps({"order_id": args.get("order_id", "A101")}))
    assert shown.exit_code == 0
    again = call(tool, json.dumps(args), "--yes")  # done once: the rules refuse it now
    assert again.exit_code == 1 and "nothing was changed" in again.stdout, again.output


def test_a_desk_write_with_nobody_to_approve_waits_in_the_queue_and_changes_nothing() -> None:
    args = json.dumps({"order_id": "B200", "reason": "no longer needed"})
    result = call("cancel_pending_order", args)
    assert result.exit_code == 5, result.output
    assert result.stdout.startswith("QUEUED: cancel B200 (1 item; reason: no longer needed)")
    assert "1 action(s) await approval (#1)" in result.stderr
    shown = call("get_order_details", '{"order_id": "B200"}')
    assert "status=PENDING" in shown.stdout
    listed = runner.invoke(app, ["approvals", "list"])
    _, row = listed.stdout.splitlines()
    assert row.split("\t")[:5] == [
        "#1",
        "pending",
        "B200",
        "5,400 JPY",
        "cancel B200 (1 item; reason: no longer needed): refund 5,400 JPY to credit_card_1007 "
        "in 5-7 business days",
    ]


def test_orders_show_tells_an_order_s_history_after_a_change() -> None:
    args = json.dumps({"order_id": "B200", "reason": "ordered by mistake"})
    assert call("cancel_pending_order", args, "--yes", "--as", "lead").exit_code == 0
    shown = runner.invoke(app, ["orders", "show", "B200"])
    lines = shown.stdout.splitlines()
    assert "payment   5,400 JPY via credit_card_1007" in lines[-4]
    assert lines[-3].startswith("refund    5,400 JPY via credit_card_1007 (")
    assert lines[-2] == "cancelled ordered by mistake"
    assert lines[-1].startswith("change #1 ") and " by lead: cancel B200 (1 item" in lines[-1]
    payload = json.loads(runner.invoke(app, ["orders", "show", "B200", "--json"]).stdout)
    (change,) = payload["changes"]
    assert change["tool"] == "cancel_pending_order" and change["made_by"] == "lead"


def test_a_refund_is_in_the_order_s_payment_history_too(tmp_path: Path) -> None:
    delivered_recently("A100", days=3)
    env = _refunds_on(tmp_path)
    assert call("issue_refund", REFUND, "--yes", env=env).exit_code == 0
    shown = call("get_order_details", '{"order_id": "A100"}', env=env)
    assert "payments: payment 250000 via credit_card_1001; refund 1000 via credit_card_1001" in (
        shown.stdout
    )
    assert "refunded=1000 left=249000" in shown.stdout


def test_terminal_escapes_in_the_store_s_data_never_reach_a_pipe_raw() -> None:
    """A customer's name holding an 8-bit CSI (which JSON quoting leaves as it is) and a
    right-to-left override, printed by `agent tools call` to a pipe: shown without them;
    --json keeps them as escaped data."""
    import os
    import sqlite3

    aoi = '{"user_id": "aoi_suzuki_1002"}'
    call("get_user_details", aoi)  # the sample store, made
    db = sqlite3.connect(os.environ["AGENT_DB"])
    with db:
        db.execute(
            "UPDATE customers SET first_name = ? WHERE id = 'aoi_suzuki_1002'",
            ("Aoi\x9b31mRED\u202eevil",),
        )
    db.close()
    shown = call("get_user_details", aoi)
    assert shown.exit_code == 0, shown.stderr
    assert 'name="Aoi31mREDevil Suzuki"' in shown.stdout  # the controls gone, the words kept
    as_json = call("get_user_details", aoi, "--json")
    assert not any(c in as_json.stdout for c in ("\x9b", "\u202e"))
    assert "Aoi\x9b31mRED\u202eevil" in json.loads(as_json.stdout)["observation"]


def test_a_read_in_json_gives_its_record_field_by_field_and_its_text_beside() -> None:
    """`| jq .user_id` works: the record's fields are JSON fields, as the text shows them."""
    shown = json.loads(call("get_order_details", '{"order_id": "A106"}', "--json").stdout)
    text = shown["observation"]
    assert shown["user_id"] == "haruki_sato_1001" and f"user_id={shown['user_id']}" in text
    assert (shown["order_id"], shown["status"], shown["currency"]) == ("A106", "DELIVERED", "JPY")
    assert f"total={shown['total']}" in text and shown["refunded"] > 0  # A106: partly refunded
    assert [i["item_id"] for i in shown["items"]] == [
        line.split()[1].removeprefix("item_id=") for line in text.splitlines() if line[:2] == "- "
    ]
    assert shown["address"]["city"] in text and shown["payments"][0]["kind"] == "payment"
    user = json.loads(call("get_user_details", '{"user_id": "haruki_sato_1001"}', "--json").stdout)
    assert user["email"] == "haruki.sato@example.com" and "A106" in user["orders"]
    assert user["payment_methods"][0]["id"] in user["observation"]
    looked = json.loads(call("lookup_order", '{"order_code": "A100"}', "--json").stdout)
    assert (looked["order"], looked["note"], looked["refunded"]) == ("A100", "Please gift-wrap.", 0)


def test_a_product_an_item_and_a_shipment_in_json() -> None:
    product = json.loads(call("get_product_details", '{"product_id": "P-MUG"}', "--json").stdout)
    assert product["name"] == "Ceramic Mug" and product["variants"]
    first = product["variants"][0]
    item = json.loads(
        call("get_item_details", json.dumps({"item_id": first["item_id"]}), "--json").stdout
    )
    assert item["product_id"] == "P-MUG" and item["price"] == first["price"]
    assert isinstance(item["available"], bool)
    tracked = json.loads(call("track_order", '{"order_id": "A101"}', "--json").stdout)
    assert tracked["order_id"] == "A101" and tracked["shipments"][0]["tracking_ids"]
    assert tracked["shipments"][0]["carrier"] in tracked["observation"]


def test_a_record_in_json_is_never_written_to_the_trace(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    assert call("get_order_details", '{"order_id": "A100"}', "--trace", str(trace)).exit_code == 0
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    (observed,) = [e for e in events if e["event"] == "observation"]
    assert "record" not in observed and "user_id=haruki_sato_1001" in observed["observation"]


def as_json(tool: str, args: dict[str, object], *flags: str) -> dict[str, object]:
    result = call(tool, json.dumps(args), "--json", *flags)
    assert result.exit_code == 0, result.stdout + result.stderr
    payload: dict[str, object] = json.loads(result.stdout)
    return payload


BESIDE = {"tool", "args", "observation"}


def test_each_record_has_the_fields_the_docs_name_and_no_others() -> None:
    order = as_json("get_order_details", {"order_id": "A106"})
    assert set(order) - BESIDE == {
        "order_id", "user_id", "status", "total", "currency", "placed_at", "delivered_at",
        "address", "items", "payments", "refunded", "cancel_reason", "exchange_request",
        "return_request",
    }  # fmt: skip
    assert f"placed_at={order['placed_at']}" in str(order["observation"])
    assert f"delivered_at={order['delivered_at']}" in str(order["observation"])
    assert order["refunded"] == 20_000 and order["cancel_reason"] is None
    assert (order["exchange_request"], order["return_request"]) == (None, None)
    items, payments = order["items"], order["payments"]
    assert isinstance(items, list) and isinstance(payments, list)
    assert set(items[0]) == {"item_id", "product_id", "name", "price", "options"}
    assert set(payments[0]) == {"kind", "amount", "payment_method_id", "paid_at"}
    assert [p["kind"] for p in payments] == ["payment", "refund"] and payments[1][
        "amount"
    ] == 20_000
    assert payments[0]["paid_at"] and payments[0]["amount"] == order["total"]
    address = order["address"]
    assert isinstance(address, dict) and set(address) == {
        "address1", "address2", "city", "state", "country", "zip"
    }  # fmt: skip
    tracked = as_json("track_order", {"order_id": "A101"})
    assert set(tracked) - BESIDE == {"order_id", "status", "delivered_at", "shipments"}
    (shipment,) = tracked["shipments"]  # type: ignore[misc]
    assert set(shipment) == {"carrier", "tracking_ids", "item_ids", "estimated_delivery", "events"}
    assert shipment["item_ids"] == ["1003001"] and shipment["estimated_delivery"]
    assert f"estimated_delivery={shipment['estimated_delivery']}" in str(tracked["observation"])
    assert [set(e) for e in shipment["events"]] == [{"happened_at", "place", "description"}] * 3
    assert shipment["events"][-1]["place"] == "Shibuya depot"


def test_a_customer_record_keeps_a_gift_cards_balance_and_a_cards_brand() -> None:
    user = as_json("get_user_details", {"user_id": "mei_watanabe_1006"})
    assert set(user) - BESIDE == {
        "user_id", "first_name", "last_name", "email", "address", "payment_methods", "orders"
    }  # fmt: skip
    assert (user["first_name"], user["last_name"]) == ("Mei", "Watanabe")
    gift, card = user["payment_methods"]  # type: ignore[misc]
    assert gift == {
        "id": "gift_card_1006", "source": "gift_card", "brand": None, "last_four": None,
        "balance": 3_000, "currency": "JPY",
    }  # fmt: skip
    assert (card["source"], card["brand"], card["last_four"]) == ("credit_card", "visa", "7007")
    assert (card["balance"], card["currency"]) == (None, None)
    assert isinstance(user["address"], dict) and user["address"]["city"] == "Shimogyo-ku"


def test_a_product_and_an_item_record() -> None:
    product = as_json("get_product_details", {"product_id": "P-WATCH"})
    assert set(product) - BESIDE == {"product_id", "name", "variants"}
    assert product["product_id"] == "P-WATCH"
    (variant,) = product["variants"]  # type: ignore[misc]
    assert variant == {
        "item_id": "1006001", "available": variant["available"], "price": 60_000,
        "currency": "JPY", "options": {"band": "leather"},
    }  # fmt: skip
    item = as_json("get_item_details", {"item_id": "1006001"})
    assert set(item) - BESIDE == {
        "item_id",
        "product_id",
        "available",
        "price",
        "currency",
        "options",
    }


def test_a_lookup_record_and_what_code_computed_of_it() -> None:
    from datetime import date

    from agent_cli.domain.orders import Order
    from agent_cli.tools.records import lookup_data

    order = Order("C300", "DELIVERED", 12_900, date(2026, 9, 28), "USD", "Alex Morgan")
    shown = lookup_data(order, 900, "yes", "within 30 days")
    assert shown == {
        "order": "C300", "status": "DELIVERED", "total": 129, "currency": "USD",
        "delivered_at": "2026-09-28", "refunded": 9, "note": None, "refundable": "yes",
        "why": "within 30 days",
    }  # fmt: skip
    assert "refundable" not in lookup_data(order, 0, None, "")
    looked = as_json("lookup_order", {"order_code": "A100"})
    assert (looked["status"], looked["currency"], looked["total"]) == ("DELIVERED", "JPY", 250_000)
    assert f"delivered_at={looked['delivered_at']}" in str(looked["observation"])
    policy = as_json("refund_policy", {})
    assert policy["refund_window_days"] == 30 and policy["refundable_statuses"] == ["DELIVERED"]


def test_a_return_and_an_exchange_requested_are_in_the_order_record() -> None:
    delivered_recently("A103", days=3)  # inside the window: the shop's rule
    delivered_recently("A105", days=3)
    returned = {
        "order_id": "A103",
        "item_ids": ["1005001"],
        "payment_method_id": "credit_card_1004",
    }
    assert call("return_delivered_order_items", json.dumps(returned), "--yes").exit_code == 0
    order = as_json("get_order_details", {"order_id": "A103"})
    assert order["return_request"] == {
        "items": ["1005001"],
        "payment_method_id": "credit_card_1004",
    }
    swap = {"order_id": "A105", "item_ids": ["1008001"], "new_item_ids": ["1008002"],
            "payment_method_id": "gift_card_1006"}  # fmt: skip
    assert call("exchange_delivered_order_items", json.dumps(swap), "--yes").exit_code == 0
    order = as_json("get_order_details", {"order_id": "A105"})
    request = order["exchange_request"]
    assert isinstance(request, dict) and set(request) == {
        "items", "new_items", "payment_method_id", "price_difference"
    }  # fmt: skip
    assert (request["items"], request["new_items"]) == (["1008001"], ["1008002"])
    assert request["payment_method_id"] == "gift_card_1006"
    assert f"difference {request['price_difference']}" in str(order["observation"])
