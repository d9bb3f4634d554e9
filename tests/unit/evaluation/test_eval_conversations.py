"""Eval conversations (issue 42): a customer's messages one at a time, the agent answering each
in one session; scored on the store the conversation leaves (against the case's reference
writes replayed on a copy), the facts said, only confirmed writes, the turn limit. The built-in
conversations pass offline on every trial, and each fails when the playbook is broken in the
way it is about."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.config import load_settings
from agent_cli.core.tool_outcomes import Changed, Proposed, render
from agent_cli.errors import CaseFileError
from agent_cli.evaluation import end_state, intents
from agent_cli.evaluation.cases import ReferenceWrite, builtin_cases, load_cases, parse_cases
from agent_cli.evaluation.judge import judge
from agent_cli.providers.playbook import desk as playbook_desk
from agent_cli.providers.playbook import model as playbook
from agent_cli.providers.playbook import parts as playbook_intents
from agent_cli.providers.playbook import reading as playbook_reading
from agent_cli.providers.playbook import typos as playbook_typos
from agent_cli.providers.playbook import who as playbook_who
from agent_cli.providers.playbook import writes as playbook_writes
from agent_cli.record.outcomes import RunRecord, ToolRun
from agent_cli.store.samples import SAMPLE_DAY
from agent_cli.store.sqlite import OrderStore

runner = CliRunner()

CANCEL = """
[[cases]]
id = "cancel"
turns = ["Please cancel my order B200", "kaito.yamamoto@example.com", "yes"]
approve = true
reference = [
  { tool = "cancel_pending_order", args = { order_id = "B200", reason = "no longer needed" } },
]
"""


def run_file(path: Path, *extra: str) -> list[dict[str, Any]]:
    result = runner.invoke(app, ["eval", "run", str(path), "--dry-run", "--json", *extra])
    records = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return [r for r in records if r["event"] in ("case", "summary")]


def run_cases(tmp_path: Path, text: str, *extra: str) -> list[dict[str, Any]]:
    path = tmp_path / "cases.toml"
    path.write_text(text, encoding="utf-8")
    return [r for r in run_file(path, *extra) if r["event"] == "case"]


def failures(case: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["kind"], f["message"]) for f in case["failures"]]


# -- the end state ------------------------------------------------------------------------------


def test_a_conversation_passes_when_it_leaves_the_reference_state(tmp_path: Path) -> None:
    (case,) = run_cases(tmp_path, CANCEL)
    assert case["passed"], case["failures"]


def test_the_end_state_fails_naming_each_differing_record(tmp_path: Path) -> None:
    (case,) = run_cases(
        tmp_path,
        CANCEL.replace('"kaito.yamamoto@example.com", "yes"', '"kaito.yamamoto@example.com", "no"'),
    )
    ((kind, message),) = failures(case)
    assert kind == "end_state"
    assert "orders B200: status is 'PENDING', expected 'CANCELLED'" in message
    assert "orders B200: cancel_reason is None, expected 'no longer needed'" in message
    # the refund the cancel makes, to the cent, as a missing payment record
    assert (
        'payments B200/1: missing; the reference makes {"kind": "refund", "amount": 5400' in message
    )


def test_a_change_the_reference_does_not_make_fails(tmp_path: Path) -> None:
    (case,) = run_cases(
        tmp_path,
        re.sub(r"reference = \[.*?\]\n", "reference = []\n", CANCEL, flags=re.S),
    )
    ((kind, message),) = failures(case)
    assert kind == "end_state"
    assert "orders B200: status is 'CANCELLED', expected 'PENDING'" in message
    assert "payments B200/1: a record the reference does not make" in message


def test_money_is_compared_to_the_cent(tmp_path: Path) -> None:
    """The same change with another reason: only the reason differs, and is named alone."""
    (case,) = run_cases(
        tmp_path, CANCEL.replace('reason = "no longer needed"', 'reason = "ordered by mistake"')
    )
    assert failures(case) == [
        (
            "end_state",
            "orders B200: cancel_reason is 'no longer needed', expected 'ordered by mistake'",
        )
    ]


def test_a_reference_write_the_tools_refuse_makes_the_case_flawed(tmp_path: Path) -> None:
    text = CANCEL.replace('order_id = "B200"', 'order_id = "A100"')  # delivered: cannot cancel
    (case,) = run_cases(tmp_path, text)
    assert case["passed"] is None  # neither a pass nor the agent's failure
    (flaw,) = case["flaws"]
    assert flaw.startswith("reference step 1: cancel_pending_order is refused: ERROR: order A100")


def test_an_unknown_tool_in_the_reference_is_reported(tmp_path: Path) -> None:
    text = CANCEL.replace('tool = "cancel_pending_order"', 'tool = "refund_everything"')
    (case,) = run_cases(tmp_path, text)
    assert case["passed"] is False  # a tool that does not exist: the case file's mistake
    assert ("reference", "reference step 1 (refund_everything): ERROR: Unknown tool") in [
        (kind, message.split(" 'refund_everything'")[0]) for kind, message in failures(case)
    ]


# -- facts, consent, the turn limit, a hand-over -----------------------------------------------


def test_facts_follow_tau2s_rule_case_and_commas_ignored(tmp_path: Path) -> None:
    said = CANCEL + 'facts = ["5400 jpy", "CREDIT_CARD_1007"]\n'
    (case,) = run_cases(tmp_path, said)
    assert case["passed"], case["failures"]
    unsaid = CANCEL + 'facts = ["5,500 JPY"]\n'
    (case,) = run_cases(tmp_path, unsaid)
    assert failures(case) == [("facts", "the agent never said '5,500 JPY'")]


def test_facts_count_what_the_agent_asked_too() -> None:
    (case,) = parse_cases(
        '[[cases]]\nquestion = "q"\nfacts = ["which order"]\n', "t", json_file=False
    )
    asked = RunRecord(status="answered", answer="done", to_customer=["Which order is it?", "done"])
    assert judge(case, asked) == ()
    assert [
        f.kind
        for f in judge(case, RunRecord(status="answered", answer="done", to_customer=["done"]))
    ] == ["facts"]


def test_a_write_made_without_its_proposal_fails_consent() -> None:
    (case,) = parse_cases('[[cases]]\nquestion = "q"\nreference = []\n', "t", json_file=False)
    args = {"order_id": "B200", "reason": "no longer needed"}
    change = Changed(change_id=1, tool="cancel_pending_order", summary="cancel B200", order="B200")
    made = ToolRun("cancel_pending_order", args, render(change), False, change)
    offer = Proposed("cancel_pending_order", "cancel B200", "B200")
    proposed = ToolRun("cancel_pending_order", args, render(offer), False, offer)
    bare = RunRecord(status="answered", answer="Done", tools=[made])
    assert [(f.kind, f.message) for f in judge(case, bare)] == [
        ("consent", "cancel_pending_order was made without being proposed")
    ]
    assert judge(case, RunRecord(status="answered", answer="Done", tools=[proposed, made])) == ()
    other = ToolRun(
        "cancel_pending_order", {**args, "reason": "ordered by mistake"}, "PROPOSED x", False
    )
    assert [
        f.kind
        for f in judge(case, RunRecord(status="answered", answer="Done", tools=[other, made]))
    ] == ["consent"]


def test_a_customer_who_never_stops_hits_the_turn_limit(tmp_path: Path) -> None:
    chatty = """
[[cases]]
id = "chatty"
turns = [
  "How long does shipping take to Osaka?", "And to Hokkaido?", "And to Kyushu?", "And to Tokyo?"
]
max_turns = 3
reference = []
"""
    (case,) = run_cases(tmp_path, chatty)
    assert ("status", "the conversation reached its limit of 3 turns") in failures(case)
    (case,) = run_cases(tmp_path, chatty.replace("max_turns = 3", "max_turns = 4"))
    assert case["passed"], case["failures"]


def test_a_hand_over_ends_the_conversation(tmp_path: Path) -> None:
    text = """
[[cases]]
id = "double"
turns = ["I was charged twice for A100", "haruki.sato@example.com", "Please cancel B200 too"]
handover = true
reference = []
"""
    (case,) = run_cases(tmp_path, text, "--record", str(tmp_path / "rec"))
    assert case["passed"], case["failures"]
    trace = (tmp_path / "rec" / "offline-playbook" / "double.jsonl").read_text("utf-8")
    goals = [json.loads(line).get("goal") for line in trace.splitlines() if '"run_started"' in line]
    assert goals == ["I was charged twice for A100"]  # the last message is never sent


def test_each_trial_starts_from_a_fresh_store(tmp_path: Path) -> None:
    cases = run_cases(tmp_path, CANCEL, "--trials", "3")
    assert [case["passed"] for case in cases] == [True, True, True]
    # side by side too: a shared store would find B200 cancelled already in every trial but one
    together = run_cases(tmp_path, CANCEL, "--trials", "6", "--concurrency", "3")
    assert [case["passed"] for case in together] == [True] * 6


# -- the starting store ------------------------------------------------------------------------

ANN_ADDRESS = {
    "address1": "1 Main St",
    "address2": "",
    "city": "Austin",
    "state": "TX",
    "country": "USA",
    "zip": "78701",
}
SMALL_SHOP = {
    "users": {
        "ann_lee_1": {
            "user_id": "ann_lee_1",
            "name": {"first_name": "Ann", "last_name": "Lee"},
            "address": ANN_ADDRESS,
            "email": "ann@example.com",
            "payment_methods": {
                "credit_card_1": {
                    "source": "credit_card",
                    "id": "credit_card_1",
                    "brand": "visa",
                    "last_four": "1111",
                },
                "gift_card_1": {"source": "gift_card", "id": "gift_card_1", "balance": 100.0},
            },
            "orders": ["#W0000001"],
        }
    },
    "products": {
        "P1": {
            "name": "Lamp",
            "product_id": "P1",
            "variants": {
                "111": {
                    "item_id": "111",
                    "options": {"color": "red"},
                    "available": True,
                    "price": 25.5,
                }
            },
        }
    },
    "orders": {
        "#W0000001": {
            "order_id": "#W0000001",
            "user_id": "ann_lee_1",
            "address": ANN_ADDRESS,
            "items": [
                {
                    "name": "Lamp",
                    "product_id": "P1",
                    "item_id": "111",
                    "price": 25.5,
                    "options": {"color": "red"},
                }
            ],
            "fulfillments": [],
            "status": "pending",
            "payment_history": [
                {
                    "transaction_type": "payment",
                    "amount": 25.5,
                    "payment_method_id": "credit_card_1",
                }
            ],
        }
    },
}

GIFT_CARD = (
    '[[cases]]\nid = "gift"\napprove = true\n'
    'turns = ["I\'d like to pay for order #W0000001 with my gift card instead. ann@example.com",'
    ' "yes"]\n'
    'reference = [{ tool = "modify_pending_order_payment", '
    'args = { order_id = "#W0000001", payment_method_id = "gift_card_1" } }]\n'
)


def test_a_case_can_start_from_a_tau2_file(tmp_path: Path) -> None:
    (tmp_path / "shop.json").write_text(json.dumps(SMALL_SHOP), encoding="utf-8")
    (case,) = run_cases(tmp_path, GIFT_CARD + 'store = "shop.json"\n')
    assert case["passed"], case["failures"]
    # the sample shop has no such order: the same case is flawed there
    (case,) = run_cases(tmp_path, GIFT_CARD)
    assert case["passed"] is None and "is refused" in case["flaws"][0]


def test_a_case_can_give_its_rows(tmp_path: Path) -> None:
    (case,) = run_cases(tmp_path, GIFT_CARD + "store = " + _toml(SMALL_SHOP) + "\n")
    assert case["passed"], case["failures"]


def _toml(value: Any) -> str:
    """A value as an inline TOML table (the test's shop has no keys TOML cannot spell bare)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def test_a_missing_store_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "cases.toml"
    path.write_text(GIFT_CARD + 'store = "nowhere.json"\n', encoding="utf-8")
    with pytest.raises(CaseFileError, match=r"case 1 \('gift'\): store: .*nowhere.json"):
        load_cases(path)
    result = runner.invoke(app, ["eval", "run", str(path), "--dry-run"])
    assert result.exit_code == 2
    assert "nowhere.json" in result.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'question = "q"\nturns = ["a"]\nreference = []',
            "give the customer's messages as turns alone",
        ),
        (
            'replies = ["yes"]\nturns = ["a"]\nreference = []',
            "give the customer's messages as turns alone",
        ),
        ("reference = []", "no question; give question"),
        ("turns = []\nreference = []", "no question; give question"),
        ('turns = ["a"]\nmax_turns = 0\nreference = []', "max_turns"),
        ('turns = ["a"]\nreference = [{ tool = "x", argz = {} }]', "reference"),
        ('turns = ["a"]', "no criteria"),
    ],
)
def test_malformed_conversations_are_named(text: str, message: str) -> None:
    with pytest.raises(CaseFileError, match=message):
        parse_cases(f"[[cases]]\n{text}\n", "t", json_file=False)


def test_reference_and_writes_may_claim_nothing_changes() -> None:
    (case,) = parse_cases('[[cases]]\nturns = ["hi"]\nreference = []\n', "t", json_file=False)
    assert case.reference == () and case.kind == "conversation"


# -- the built-in conversations ----------------------------------------------------------------


def conversations() -> list[str]:
    return [case.id for case in builtin_cases() if case.kind == "conversation"]


def test_there_are_thirty_built_in_conversations_over_every_intent(tmp_path: Path) -> None:
    assert len(conversations()) >= 30
    path = tmp_path / "c.toml"
    path.write_text(_conversation_file(), encoding="utf-8")
    result = runner.invoke(
        app, ["eval", "run", str(path), "--dry-run", "--record", str(tmp_path / "r")]
    )
    assert result.exit_code == 0, result.stdout
    worked: set[str] = set()
    for trace in (tmp_path / "r").rglob("*.jsonl"):
        tools = [
            ToolRun(e["tool"], e["args"], e["observation"], e["is_error"])
            for e in map(json.loads, trace.read_text("utf-8").splitlines())
            if e["event"] == "observation"
        ]
        worked |= intents.intents_of(tools)
    assert worked == set(intents.INTENT_TOOLS)


def test_the_playbook_passes_every_built_in_conversation_on_every_trial(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(_conversation_file(), encoding="utf-8")
    (summary,) = [r for r in run_file(path, "--trials", "4") if r["event"] == "summary"]
    assert summary["pass_hat_k"] == {"1": 1.0, "2": 1.0, "3": 1.0, "4": 1.0}
    assert summary["cases"] == 4 * len(conversations())


def test_list_says_which_cases_are_conversations() -> None:
    result = runner.invoke(app, ["eval", "list", "--builtin"])
    kinds = dict(line.split("\t")[:2] for line in result.stdout.splitlines())
    assert kinds["conv-cancel"] == "conversation"
    assert kinds["desk-cancel-en"] == "question"
    assert sum(kind == "conversation" for kind in kinds.values()) == len(conversations())


def _conversation_file() -> str:
    return resources.files("agent_cli.evaluation").joinpath("conversations.toml").read_text("utf-8")


def _never(*args: object, **kwargs: object) -> bool:
    return False


def _no_question(next_action: Callable[..., Any]) -> Callable[..., Any]:
    def without(codes: list[str], replies: list[str], *rest: Any) -> Any:
        return None if not codes else next_action(codes, replies, *rest)

    return without


# Each way of breaking the playbook, and the conversations about it: each must then fail.
BREAKAGES: dict[str, tuple[Callable[[pytest.MonkeyPatch], None], set[str]]] = {
    "any reply is a yes": (
        lambda mp: mp.setattr(playbook_writes, "explicit_yes", lambda text: True),
        {"conv-cancel-says-no", "conv-cancel-unclear-then-no"},
    ),
    "words that may decline are not asked again": (
        lambda mp: mp.setattr(playbook_writes, "ambiguous", _never),
        {"conv-cancel-ja-unclear", "conv-cancel-unclear-then-no"},
    ),
    "no reply is a yes": (
        lambda mp: mp.setattr(playbook_writes, "explicit_yes", _never),
        {
            "conv-cancel",
            "conv-cancel-by-mistake",
            "conv-cancel-ja",
            "conv-cancel-ja-unclear",
            "conv-cancel-asks-again",
            "conv-cancel-which-order",
            "conv-address",
            "conv-address-of-the-account",
            "conv-items",
            "conv-return",
            "conv-return-ja",
            "conv-return-which-items",
            "conv-exchange",
            "conv-exchange-ja",
            "conv-cancel-then-refund-timing",
            "conv-cancel-not-approved",
        },
    ),
    "the reason is not read": (
        lambda mp: mp.setattr(playbook_writes, "_MISTAKE", playbook_writes.re.compile("(?!)")),
        {"conv-cancel-by-mistake"},
    ),
    "the address is not read": (
        lambda mp: mp.setattr(playbook_writes, "parsed_address", lambda text: None),
        {"conv-address", "conv-address-of-the-account"},
    ),
    "no item is read": (
        lambda mp: mp.setattr(
            playbook_writes,
            "named_items",
            lambda texts, order: ([], playbook_reading.named_items(texts, order)[1]),
        ),
        {
            "conv-return",
            "conv-return-ja",
            "conv-return-which-items",
            "conv-exchange",
            "conv-exchange-ja",
            "conv-items",
            "conv-items-unavailable",
        },
    ),
    "no variant is read": (
        lambda mp: mp.setattr(playbook_writes, "variant", lambda *args: None),
        {"conv-items", "conv-items-unavailable", "conv-exchange", "conv-exchange-ja"},
    ),
    "the payment kind is not read": (
        lambda mp: mp.setattr(playbook_writes, "_METHODS", ()),
        {"conv-payment-same-method"},
    ),
    "a refusal's rule is not said": (
        lambda mp: mp.setattr(playbook_writes, "_rule", lambda error, tools: "it cannot be done"),
        {
            "conv-cancel-delivered",
            "conv-cancel-another-customers",
            "conv-return-not-delivered",
            "conv-items-unavailable",
            "conv-handover-after-refusal",
            "conv-payment-same-method",
            "conv-status-delivered-then-not-theirs",
        },
    ),
    "an approval's outcome is not said": (
        lambda mp: mp.setattr(
            playbook_writes, "ENGLISH", replace(playbook_writes.ENGLISH, denied="Done: {what}.")
        ),
        {"conv-cancel-not-approved"},
    ),
    "who the customer is is not asked": (
        lambda mp: [
            mp.setattr(
                module, "identify", lambda request, made, texts, words: "kaito_yamamoto_1007"
            )
            for module in (playbook_who, playbook_writes, playbook_desk)
        ],
        {
            "conv-status-asks-email",
            "conv-status-ja",
            "conv-cancel",
            "conv-return",
            "conv-exchange",
            "conv-orders-name-zip",
            "conv-address-of-the-account",
        },
    ),
    "no orders are listed": (
        lambda mp: mp.setattr(playbook_who, "orders_of", lambda *args: None),
        {"conv-orders-name-zip"},  # conv-orders-then-track's second turn tracks all the same
    ),
    "no tracking is read": (
        lambda mp: mp.setattr(  # the tracking record never read: every order "not shipped"
            playbook_desk,
            "_where",
            lambda code, step, words: words.not_shipped.format(code=code, status="?"),
        ),
        {
            "conv-status-asks-email",
            "conv-status-ja",
            "conv-status-then-help",
            "conv-orders-then-track",
        },
    ),
    "no refund status": (
        lambda mp: mp.setattr(playbook_desk, "refund_status", lambda *args: None),
        {
            "conv-refund-status-which-order",
            "conv-refund-then-refund-status",
            "conv-refund-status-of-it",
            "conv-help-ja",
        },
    ),
    "no hand-over": (
        lambda mp: mp.setattr(playbook_desk, "hand_over", lambda *args: None),
        {"conv-handover-double-charge", "conv-handover-after-refusal"},
    ),
    "no help centre": (
        lambda mp: mp.setattr(playbook, "_help", lambda request, made: None),
        {"conv-status-then-help", "conv-help-ja", "conv-cancel-then-refund-timing"},
    ),
    "every turn refers back": (
        lambda mp: mp.setattr(playbook_intents, "refers_back", lambda goal, earlier: True),
        {"conv-status-then-help", "conv-cancel-then-refund-timing"},
    ),
    "no turn refers back": (
        lambda mp: mp.setattr(playbook_intents, "refers_back", _never),
        {"conv-refund-status-of-it"},
    ),
    "no order code is asked for": (
        lambda mp: [
            mp.setattr(playbook, "_next_action", _no_question(playbook._next_action)),
            mp.setattr(playbook, "ABOUT_AN_ORDER", frozenset()),
            mp.setattr(playbook_desk, "ENGLISH", replace(playbook_desk.ENGLISH, which_refund="")),
        ],
        # conv-cancel-which-order's scripted turns give the code whatever is asked (the
        # question itself is pinned in tests/unit/providers/test_playbook_turn.py)
        {"conv-refund-status-which-order"},
    ),
    "no typo is caught": (
        lambda mp: mp.setattr(playbook_typos, "suspect_codes", lambda goal: []),
        {"conv-typo"},
    ),
    "answers in English only": (
        lambda mp: mp.setattr(playbook, "speaks_japanese", _never),
        {"conv-status-ja", "conv-cancel-ja", "conv-return-ja", "conv-exchange-ja", "conv-help-ja"},
    ),
    "the refund window is misread": (
        lambda mp: mp.setattr(
            playbook,
            "_judge",
            lambda code, fields, policy, today: playbook._Fact(
                code, "expired", fields, policy=policy
            ),
        ),
        {
            "conv-refund-no-code",
            "conv-refund-then-refund-status",
            "conv-refund-status-of-it",
            "conv-typo",
        },
    ),
}


def test_every_built_in_conversation_is_about_a_way_to_break_the_playbook() -> None:
    about = set().union(*(cases for _, cases in BREAKAGES.values()))
    assert set(conversations()) - about == set()


@pytest.mark.parametrize("name", list(BREAKAGES))
def test_a_broken_playbook_fails_the_conversations_about_it(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    breaks, about = BREAKAGES[name]
    path = tmp_path / "c.toml"
    path.write_text(_conversation_file(), encoding="utf-8")
    breaks(monkeypatch)
    failed = {r["case"] for r in run_file(path) if r["event"] == "case" and not r["passed"]}
    assert about - failed == set(), f"passed though broken: {sorted(about - failed)}"


# -- the end state's parts -----------------------------------------------------------------------


def test_the_seeds_refunds_are_compared_as_each_orders_nth() -> None:
    store = OrderStore.in_memory()
    before = end_state.snapshot(store)
    assert before["refunds"] == {("A106", 1): {"amount": 20_000, "reason": "lid cracked"}}
    store.record_refund("A106", 1_500, "scratched", key="key-1")
    after = end_state.snapshot(store)
    assert after["refunds"][("A106", 2)] == {"amount": 1_500, "reason": "scratched"}
    assert end_state.differences(after, before) == [  # the order's payment history too
        'payments A106/2: a record the reference does not make ({"kind": "refund", "amount": '
        '1500, "payment_method_id": "credit_card_1001"})',
        'refunds A106/2: a record the reference does not make ({"amount": 1500, "reason": '
        '"scratched"})',
    ]


def test_differences_name_missing_and_extra_records_and_are_cut_in_a_summary() -> None:
    state = end_state.snapshot(OrderStore.in_memory())
    orders = len(state["orders"])
    missing = end_state.differences({}, state)
    assert sum(line.startswith("orders ") and ": missing;" in line for line in missing) == orders
    extra = end_state.differences(state, {})
    assert all("a record the reference does not make" in line for line in extra)
    assert end_state.differences(state, state) == []
    lines = [f"d{n}" for n in range(10)]
    assert end_state.summary(lines) == "; ".join(lines[:8]) + "; and 2 more"
    assert end_state.summary(lines[:8]) == "; ".join(lines[:8])


def test_a_reference_write_the_shops_rules_deny_is_the_cases_flaw(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[[refunds.rules]]\nname = "no-cancels"\ndecision = "deny"\n'
        'tools = ["cancel_pending_order"]\n',
        encoding="utf-8",
    )
    settings = load_settings(config)
    write = ReferenceWrite(
        tool="cancel_pending_order", args={"order_id": "B200", "reason": "no longer needed"}
    )
    replayed = end_state.replay(settings, OrderStore.in_memory(), [write], SAMPLE_DAY)
    (flaw,) = replayed.flaws
    assert replayed.problems == ()
    assert flaw.startswith("reference step 1: cancel_pending_order is refused: DENIED: by the shop")
    assert replayed.state["orders"][("B200",)]["status"] == "PENDING"  # nothing was written


def test_every_differing_field_of_every_record_is_named() -> None:
    state = end_state.snapshot(OrderStore.in_memory())
    changed = {table: dict(rows) for table, rows in state.items()}
    changed["orders"] = dict(state["orders"])
    for code in ("A100", "B200"):
        changed["orders"][(code,)] = {**state["orders"][(code,)], "status": "X", "zip": "0"}
    found = end_state.differences(changed, state)
    assert len(found) == 4
    assert {line.split(":")[0] for line in found} == {"orders A100", "orders B200"}
