"""τ²-bench retail tasks run unchanged (issue 42, point 4): `agent eval --tau2 tasks.json
--store-file db.json` turns each task into a case (the user scenario the simulated customer,
the gold actions the reference, communicate_info the facts); a task naming a tool we do not
have is reported and skipped; the reference contender (`--provider reference`) passes every
sound task and shows a case file's own mistake; and a task runs end to end with loopback stub
models on both sides.

`tests/fixtures/tau2-tasks.json` holds seven tasks copied unchanged from tau2-bench (commit
a2c0247) `data/tau2/domains/retail/tasks.json`; their records are the `db` of
`tests/fixtures/tau2-gold.json` (a part of τ²'s `db.json`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.errors import CaseFileError
from agent_cli.evaluation.customer import STOP
from agent_cli.evaluation.tau2_tasks import load_tau2
from agent_cli.store.formats.tau2 import read_tau2
from tests.contract.test_providers import KEY
from tests.fakellm import FakeLLM, openai_calls, openai_text

runner = CliRunner()
FIXTURES = Path(__file__).parents[1] / "fixtures"
TASKS = FIXTURES / "tau2-tasks.json"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "db.json"
    gold = json.loads((FIXTURES / "tau2-gold.json").read_text("utf-8"))
    path.write_text(json.dumps(gold["db"]), encoding="utf-8")
    return path


def tasks() -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads(TASKS.read_text("utf-8"))
    return loaded


def test_tasks_become_cases(db: Path) -> None:
    loaded = load_tau2(TASKS, read_tau2(db))
    assert loaded.skipped == ()
    by_id = {case.id: case for case in loaded.cases}
    assert list(by_id) == [f"tau2-{t['id']}" for t in tasks()]
    case = by_id["tau2-40"]
    assert case.kind == "conversation" and case.approve
    assert case.customer is not None
    assert case.customer.instructions.startswith("You want to know how much balance")
    assert case.customer.instructions.endswith("want to get things done quickly.")
    assert case.customer.known.startswith("You are Isabella Lopez")
    assert case.customer.unknown == ""
    assert case.reference is not None
    assert [w.tool for w in case.reference] == [
        "find_user_id_by_email",
        "get_user_details",
        "get_order_details",
        "modify_pending_order_payment",
    ]
    assert case.reference[3].args == {
        "order_id": "#W4923227",
        "payment_method_id": "credit_card_8897086",
    }
    assert case.facts == ("60", "mastercard")
    assert case.start is not None and any(
        c.id == "isabella_lopez_6490" for c in case.start.customers
    )
    assert by_id["tau2-50"].desk.handover is True  # its gold action hands over
    assert by_id["tau2-57"].reference == ()  # nothing may change
    assert by_id["tau2-16"].desk.handover is None


def test_a_task_with_a_tool_we_do_not_have_is_skipped_and_said(db: Path, tmp_path: Path) -> None:
    edited = tasks()
    edited[0]["evaluation_criteria"]["actions"][0]["name"] = "refund_everything"
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(edited), encoding="utf-8")
    loaded = load_tau2(path, read_tau2(db))
    assert loaded.skipped == ("task 16: no tool named 'refund_everything' here",)
    assert len(loaded.cases) == len(edited) - 1
    result = runner.invoke(
        app, ["eval", "tau2", str(path), "--store-file", str(db), "--provider", "reference"]
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "τ²-bench task 16: no tool named 'refund_everything' here: skipped" in result.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{}", "expected τ²-bench's tasks.json: a list of task objects"),
        ("[1]", "expected τ²-bench's tasks.json: a list of task objects"),
        ('[{"id": "9"}]', "task 1 ('9'): user_scenario"),
        ("[", "not valid JSON"),
        ("[]", "no tasks"),
    ],
)
def test_a_malformed_tasks_file_is_named(
    content: str, message: str, db: Path, tmp_path: Path
) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CaseFileError, match=re.escape(message)):
        load_tau2(path, read_tau2(db))
    result = runner.invoke(app, ["eval", "tau2", str(path), "--store-file", str(db)])
    assert result.exit_code == 2


def test_tau2_needs_its_store_and_is_one_source(db: Path) -> None:
    alone = runner.invoke(app, ["eval", "tau2", str(TASKS), "--dry-run"])
    assert alone.exit_code == 2 and "--tau2 needs --store-file" in alone.stderr
    both = runner.invoke(app, ["eval", "--builtin", "--tau2", str(TASKS), "--store-file", str(db)])
    assert both.exit_code == 2 and "Give one of" in both.stderr
    no_customer = runner.invoke(
        app, ["eval", "tau2", str(TASKS), "--store-file", str(db), "--dry-run"]
    )
    assert no_customer.exit_code == 2 and "give --customer-model" in no_customer.stderr


def reference_run(path: Path, db: Path, *extra: str) -> list[dict[str, Any]]:
    argv = ["eval", "tau2", str(path), "--store-file", str(db), "--provider", "reference"]
    result = runner.invoke(app, [*argv, "--json", "--min-pass", "0", *extra])
    assert result.exit_code == 0, result.stdout + result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return [line for line in lines if line["event"] == "case"]


def test_the_reference_contender_passes_every_sound_task(db: Path) -> None:
    cases = reference_run(TASKS, db, "--trials", "2")
    assert {(c["case"], c["passed"]) for c in cases} == {(f"tau2-{t['id']}", True) for t in tasks()}
    assert {c["model"] for c in cases} == {"reference/gold"}


def test_a_gold_write_the_rules_refuse_is_the_tasks_flaw_not_a_pass_nor_a_failure(
    db: Path, tmp_path: Path
) -> None:
    edited = [t for t in tasks() if t["id"] == "40"]
    edited[0]["evaluation_criteria"]["actions"][3]["arguments"]["payment_method_id"] = "gift_card_0"
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(edited), encoding="utf-8")
    (case,) = reference_run(path, db)
    assert case["passed"] is None and case["failures"] == []  # neither
    (flaw,) = case["flaws"]
    assert flaw.startswith("reference step 4: modify_pending_order_payment is refused: ERROR:")
    assert "gift_card_0" in flaw
    argv = ["eval", "tau2", str(path), "--store-file", str(db), "--provider", "reference"]
    shown = runner.invoke(app, argv)
    assert shown.exit_code == 0, shown.stderr  # no case scored, none below the target
    assert "⚠" in shown.stdout and "the case is flawed" in shown.stdout


def test_the_shipped_retail_tasks_pass_with_the_reference_and_two_are_flawed() -> None:
    """τ²'s gold holds failing reads (a wrong email first, then the right one; a typo'd order
    id) and a write of what is there already (an address set to itself): the conversation goes
    on, as in τ². Tasks 64 and 105 hold a write τ²'s own tools refuse too (an exchange of a
    pending order; a gift card short of the difference): flawed, in their own column."""
    result = runner.invoke(app, ["eval", "tau2", "retail", "--provider", "reference", "--json"])
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    (summary,) = [line for line in lines if line["event"] == "summary"]
    cases = [line for line in lines if line["event"] == "case"]
    flawed = sorted(c["case"] for c in cases if c["passed"] is None)
    assert flawed == ["tau2-105", "tau2-64"]
    assert [c["case"] for c in cases if c["passed"] is False] == []
    assert (summary["flawed"], summary["passed"], summary["accuracy"]) == (2, len(cases) - 2, 1.0)
    assert "reference write" not in result.stdout  # a read is never called a write


def test_a_case_citing_an_article_that_is_not_there_fails_with_the_reference(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cases.toml"
    text = (
        '[[cases]]\nid = "c"\nturns = ["How long is shipping?"]\ncited = ["{a}"]\nreference = []\n'
    )
    path.write_text(
        text.format(a="shipping-times")
        + "\n"
        + text.replace('"c"', '"d"').format(a="no-such-article")
    )
    result = runner.invoke(
        app, ["eval", "run", str(path), "--provider", "reference", "--json", "--min-pass", "0"]
    )
    cases = {
        json.loads(x)["case"]: json.loads(x) for x in result.stdout.splitlines() if '"case"' in x
    }
    assert cases["c"]["passed"], cases["c"]["failures"]
    (failure,) = cases["d"]["failures"]
    assert failure["kind"] == "reference"
    assert failure["message"].startswith(
        "the reference's get_article failed: ERROR: no article no-such-article"
    )


def test_the_reference_contender_checks_the_built_in_conversations() -> None:
    result = runner.invoke(app, ["eval", "run", "--builtin", "--provider", "reference", "--json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    cases = [json.loads(line) for line in result.stdout.splitlines() if '"case"' in line]
    assert len(cases) >= 30 and all(c["passed"] for c in cases)
    assert "case(s) have no reference writes: skipped" in result.stderr


def test_a_tau2_task_end_to_end_with_stub_models_on_both_sides(fake_llm: FakeLLM, db: Path) -> None:
    customer = FakeLLM().start()
    try:
        customer.queue(
            openai_text("Hi. Which card did I use for my recent order? I'd like to pay with visa."),
            openai_text("yes"),
            openai_text(STOP),
        )
        order, visa = "#W4923227", "credit_card_8897086"
        change = ("modify_pending_order_payment", {"order_id": order, "payment_method_id": visa})
        fake_llm.queue(
            openai_calls(("find_user_id_by_email", {"email": "isabella.lopez3271@example.com"})),
            openai_calls(("get_order_details", {"order_id": order})),
            openai_calls(change),
            openai_calls(("ask_user", {"question": "Change P1: pay #W4923227 with your visa?"})),
            openai_calls(change),
            openai_text("Done: your order is now paid with your visa, not your mastercard (60)."),
        )
        only = [t for t in tasks() if t["id"] == "40"]
        one = db.parent / "one.json"
        one.write_text(json.dumps(only), encoding="utf-8")
        argv = ["eval", "tau2", str(one), "--store-file", str(db), "--json"]
        argv += ["--provider", "openai", "--base-url", fake_llm.url, "--model", "agent"]
        argv += ["--no-stream", "--no-grounding", "--customer-model", "customer"]
        argv += ["--customer-base-url", customer.url]
        result = runner.invoke(app, argv, env={"OPENAI_API_KEY": KEY})
    finally:
        customer.stop()
    assert result.exit_code == 0, result.stdout + result.stderr
    (case,) = [json.loads(x) for x in result.stdout.splitlines() if '"case"' in x]
    assert case["passed"], case["failures"]
    assert fake_llm.violations == [] and customer.violations == []
    assert len(customer.bodies()) == 3
    first = fake_llm.bodies()[0]["messages"]
    assert first[-1]["content"].startswith("Hi. Which card did I use")


def test_a_persona_and_plain_instructions_are_the_customers(db: Path, tmp_path: Path) -> None:
    base = next(t for t in tasks() if t["id"] == "57")
    worded = {
        **base,
        "id": "p1",
        "user_scenario": {
            "persona": "You are terse.",
            "instructions": {
                "reason_for_call": "Cancel it.",
                "task_instructions": "Be brief.",
                "known_info": "Your email is x@example.com.",
                "unknown_info": "Your zip code.",
            },
        },
    }
    plain = {**base, "id": "p2", "user_scenario": {"persona": None, "instructions": "Ask about A."}}
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([worded, plain]), encoding="utf-8")
    first, second = load_tau2(path, read_tau2(db)).cases
    assert first.customer is not None and second.customer is not None
    assert first.customer.instructions == "You are terse.\n\nCancel it.\n\nBe brief."
    assert (first.customer.known, first.customer.unknown) == (
        "Your email is x@example.com.",
        "Your zip code.",
    )
    assert first.question == "You are terse. Cancel it. Be brief."
    assert (second.customer.instructions, second.customer.known) == ("Ask about A.", "")


def test_a_task_id_that_is_a_path_records_inside_the_record_folder(
    db: Path, tmp_path: Path
) -> None:
    """--record makes file names from the data: a task whose id is `../../x` (or `.`, or two
    ids that would meet at one name) is recorded inside the folder, each run in a file of its
    own, and the recording replays."""
    (task,) = [t for t in tasks() if t["id"] == "40"]
    hostile = [{**task, "id": name} for name in ("../../escaped", "a/b", "a-b", ".", "plain")]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(hostile), encoding="utf-8")
    record = tmp_path / "deep" / "record"
    cases = reference_run(path, db, "--record", str(record))
    assert len(cases) == 5
    written = sorted(p.relative_to(record).as_posix() for p in record.rglob("*.jsonl"))
    assert len(written) == 5 and "reference-gold/tau2-plain.jsonl" in written
    assert all(p.count("/") == 1 and ".." not in p.split("/")[1][:2] for p in written), written
    assert not (tmp_path / "escaped.jsonl").exists() and not list(tmp_path.glob("*.jsonl"))
    replayed = runner.invoke(app, ["eval", "replay", str(record), "--json"])
    checks = [json.loads(line) for line in replayed.stdout.splitlines()]
    assert sum(c["event"] == "replay_check" for c in checks) == 5  # every file read back


def test_the_retail_tasks_ship_with_the_package_and_run_from_a_fresh_install() -> None:
    """`--tau2 retail`: τ²-bench's retail tasks.json and db.json as shipped (the commit and the
    MIT notice beside them), without --store-file."""
    from importlib import resources

    shipped = resources.files("agent_cli.evaluation") / "tau2_retail"
    notice = (shipped / "NOTICE").read_text("utf-8")
    assert "sierra-research/tau2-bench at commit a2c02472" in notice and "MIT License" in notice
    listed = runner.invoke(app, ["eval", "list", "--tau2", "retail"])
    assert listed.exit_code == 0, listed.stderr
    ids = [line.split("\t")[0] for line in listed.stdout.splitlines() if line.startswith("tau2-")]
    assert len(ids) == len(json.loads((shipped / "tasks.json").read_text("utf-8")))
    assert ids[:2] == ["tau2-0", "tau2-1"]
    missing = runner.invoke(app, ["eval", "list", "--tau2", "tasks-of-my-own.json"])
    assert missing.exit_code == 2 and "--tau2 retail runs the retail tasks shipped" in (
        missing.stderr
    )
