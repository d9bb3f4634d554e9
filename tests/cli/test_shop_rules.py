"""One shop, one set of rules (issue 52, point 5): a team pushes its [policy], [refunds] and
instructions to its PostgreSQL (`agent config push`), every process on that store decides money
by them, and a machine's own config may only tighten them. SQLite on one machine keeps its
config file as the shop's rules."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.config import Settings
from agent_cli.config.shop import combined_instructions, pushed_body, read_body, tightened
from agent_cli.errors import ConfigError
from agent_cli.store.samples import SAMPLE_SHOP

runner = CliRunner()

SHOP = """
[policy]
refund_window_days = 30
refundable_statuses = ["DELIVERED", "SHIPPING"]

[refunds]
enabled = true
max_amount = { JPY = 50000, USD = 500 }
max_per_run = 2
queue_hours = 48

[[refunds.rules]]
name = "small"
decision = "auto"
below = { JPY = 5000 }
"""


def settings(text: str) -> Settings:
    return Settings.model_validate(tomllib.loads(text))


def shop(text: str = SHOP, instructions: str = "Be kind.") -> Any:
    return read_body(pushed_body(settings(text), instructions), 7)


# The merge, pure


def test_a_key_the_local_file_leaves_out_takes_the_shops_value() -> None:
    merged = tightened(settings(""), shop(), 7)
    assert merged.refunds.enabled is True  # the local default (off) is no choice of the file's
    assert merged.refunds.max_amount == {"JPY": 50000.0, "USD": 500.0}
    assert merged.policy.refund_window_days == 30
    assert [rule.name for rule in merged.refunds.rules] == ["small"]


@pytest.mark.parametrize(
    ("local", "key", "expected"),
    [
        ("[policy]\nrefund_window_days = 14", "policy.refund_window_days", 14),
        ("[policy]\nrefund_window_days = 90", "policy.refund_window_days", 30),  # not looser
        ("[policy]\nreturn_window_days = 10", "policy.return_window_days", 10),
        # None: the refund window's, as the shop has it (30 days)
        ("[policy]\nreturn_window_days = 99", "policy.return_window_days", None),
        (
            '[policy]\nrefundable_statuses = ["DELIVERED", "CANCELLED"]',
            "policy.refundable_statuses",
            ("DELIVERED",),
        ),
        ("[refunds]\nenabled = false", "refunds.enabled", False),
        ("[refunds]\nmax_per_run = 1", "refunds.max_per_run", 1),
        ("[refunds]\nmax_per_run = 9", "refunds.max_per_run", 2),
        ("[refunds]\nmax_per_session = 3", "refunds.max_per_session", 3),
        # a file that names no window keeps the shop's (its own default of 30 is no choice)
        ("[refunds]\nmax_per_run = 1", "policy.return_window_days", None),
        ("[refunds]\nqueue_hours = 0", "refunds.queue_hours", 0),
        ("[refunds]\nqueue_hours = 500", "refunds.queue_hours", 48),
        ("[refunds]\nmax_amount = 20000", "refunds.max_amount", {"JPY": 20000.0, "USD": 500.0}),
        (
            "[refunds]\nmax_amount = { JPY = 90000, EUR = 10 }",
            "refunds.max_amount",
            {"JPY": 50000.0},  # only a currency both allow
        ),
    ],
)
def test_a_local_key_counts_only_where_it_is_stricter(local: str, key: str, expected: Any) -> None:
    merged = tightened(settings(local), shop(), 7)
    section, name = key.split(".")
    assert getattr(getattr(merged, section), name) == expected


def test_a_flat_shop_cap_and_a_local_table_keep_the_tables_currencies() -> None:
    flat = shop(SHOP.replace("max_amount = { JPY = 50000, USD = 500 }", "max_amount = 30000"))
    merged = tightened(settings("[refunds]\nmax_amount = { JPY = 90000, USD = 100 }"), flat, 7)
    assert merged.refunds.max_amount == {"JPY": 30000.0, "USD": 100.0}
    both = tightened(settings("[refunds]\nmax_amount = 10000"), flat, 7)
    assert both.refunds.max_amount == 10000


def test_a_local_deny_rule_comes_before_the_shops_rules() -> None:
    local = '[[refunds.rules]]\nname = "no-vip"\ndecision = "deny"\ncustomers = ["Sato Aoi"]\n'
    merged = tightened(settings(local), shop(), 7)
    assert [rule.name for rule in merged.refunds.rules] == ["no-vip", "small"]


@pytest.mark.parametrize("decision", ["auto", "ask", "queue"])
def test_a_local_rule_that_could_loosen_the_shops_is_refused(decision: str) -> None:
    below = "\nbelow = { JPY = 100 }" if decision == "auto" else ""
    local = f'[[refunds.rules]]\nname = "mine"\ndecision = "{decision}"{below}\n'
    with pytest.raises(ConfigError, match=r"'mine' .* \(version 7\): a local rule may only deny"):
        tightened(settings(local), shop(), 7)


@pytest.mark.parametrize(
    ("local", "where"),
    [
        ('[policy]\nrefundable_statuses = ["CANCELLED"]', "refundable_statuses"),
        ("[refunds]\nmax_amount = { EUR = 10 }", "max_amount"),
    ],
)
def test_a_local_config_that_leaves_nothing_is_a_clear_error(local: str, where: str) -> None:
    with pytest.raises(ConfigError, match=rf"version 7\) together leave {where} with nothing"):
        tightened(settings(local), shop(), 7)


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"policy": "x", "refunds": {}},
        {"policy": {"refund_window_days": "thirty"}, "refunds": {}},
        {"policy": {}, "refunds": {"rules": [{"name": "x", "decision": "pay"}]}},
        {"policy": {}, "refunds": {}, "instructions": 3},
    ],
)
def test_a_pushed_version_that_cannot_be_read_says_to_push_again(body: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match=r"\(version 4\) .*agent config push"):
        read_body(body, 4)


def test_the_shops_instructions_come_first_and_local_ones_are_added() -> None:
    assert combined_instructions("Shop.", "Mine.") == "Shop.\n\nMine."
    assert combined_instructions("", " Mine. ") == "Mine."
    assert shop()[2] == "Be kind."


# On a real PostgreSQL, through the CLI


@pytest.fixture
def team(pg_server: Any, tmp_path: Path) -> dict[str, str]:
    """A team's store with the sample orders, and the environment a machine's CLI runs with."""
    from agent_cli.store.postgres import PostgresStore

    url = pg_server.database()
    PostgresStore.connect(url, seed=SAMPLE_SHOP).close()
    return {"AGENT_DB_URL": url, "AGENT_CONFIG": str(tmp_path / "mine.toml")}


def machine(env: dict[str, str], text: str) -> dict[str, str]:
    Path(env["AGENT_CONFIG"]).write_text(text, encoding="utf-8")
    return env


def ask(env: dict[str, str], question: str) -> Any:
    return runner.invoke(app, ["ask", "--dry-run", "--today", "2026-10-13", question], env=env)


def test_push_needs_a_teams_store(tmp_path: Path) -> None:
    result = runner.invoke(app, ["config", "push"])
    assert result.exit_code == 2
    assert "needs a team's store: set [store] url" in result.stderr
    assert runner.invoke(app, ["config", "shop"]).exit_code == 2


def test_a_push_is_a_new_version_and_the_same_push_writes_nothing(team: dict[str, str]) -> None:
    env = machine(team, SHOP)
    assert "No shop's rules were pushed" in runner.invoke(app, ["config", "shop"], env=env).stdout
    first = runner.invoke(app, ["config", "push", "--json"], env=env)
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout) == {"version": 1, "pushed": True}
    again = runner.invoke(app, ["config", "push"], env=env)
    assert again.stdout.startswith("Unchanged: the store holds these rules already, as version 1")
    machine(team, SHOP.replace("refund_window_days = 30", "refund_window_days = 20"))
    second = runner.invoke(app, ["config", "push", "--json"], env=env)
    assert json.loads(second.stdout) == {"version": 2, "pushed": True}
    result = runner.invoke(app, ["config", "shop", "--json"], env=env)
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert (shown["version"], shown["versions"]) == (2, 2)
    assert shown["in_force"]["policy"]["refund_window_days"] == 20
    assert shown["pushed_by"] not in ("", "None") and shown["pushed_at"].startswith("20")


def test_every_machine_decides_by_the_pushed_rules_and_may_only_tighten(
    team: dict[str, str],
) -> None:
    """The lead pushes a 5-day window; a teammate whose file says 60 days still refuses A100
    (delivered 10 days before), one whose file says nothing does too, and the window a file
    tightens to is the one used."""
    question = "Is order A100 refundable?"
    assert "Order A100 is refundable" in ask(machine(team, ""), question).stdout  # 30 days
    pushed = runner.invoke(
        app, ["config", "push"], env=machine(team, "[policy]\nrefund_window_days = 5\n")
    )
    assert pushed.exit_code == 0, pushed.output
    for local in ("", "[policy]\nrefund_window_days = 60\n"):
        answer = ask(machine(team, local), question)
        assert answer.exit_code == 0, answer.output
        assert "outside the 5-day window" in answer.stdout
    tighter = ask(machine(team, "[policy]\nrefund_window_days = 3\n"), question)
    assert "outside the 3-day window" in tighter.stdout


def test_a_local_rule_that_would_loosen_stops_the_run_before_anything(
    team: dict[str, str],
) -> None:
    assert runner.invoke(app, ["config", "push"], env=machine(team, SHOP)).exit_code == 0
    mine = '[[refunds.rules]]\nname = "mine"\ndecision = "queue"\n'
    result = ask(machine(team, mine), "Is order A100 refundable?")
    assert result.exit_code == 2
    assert "'mine' is in this machine's config" in result.stderr
    assert "Traceback" not in result.output


def test_a_damaged_version_in_the_store_stops_runs_with_what_to_do(
    team: dict[str, str],
) -> None:
    import psycopg

    assert runner.invoke(app, ["config", "push"], env=machine(team, SHOP)).exit_code == 0
    with psycopg.connect(team["AGENT_DB_URL"], autocommit=True) as db:
        db.execute("UPDATE shop_rules SET body = '{\"policy\": 3}'")
    result = ask(team, "Is order A100 refundable?")
    assert result.exit_code == 2
    assert "the shop's rules in the store (version 1) cannot be read" in result.stderr
    assert "agent config push" in result.stderr


def test_the_file_the_rules_were_pushed_from_runs_under_them_unchanged() -> None:
    merged = tightened(settings(SHOP), shop(), 7)
    assert merged.policy == settings(SHOP).policy
    assert merged.refunds == settings(SHOP).refunds


def test_a_refund_by_hand_is_capped_by_the_pushed_rules_too(team: dict[str, str]) -> None:
    """`agent tools call issue_refund` moves money: the shop's cap holds there as in a run."""
    lead = "[refunds]\nenabled = true\nmax_amount = 1000\n"
    assert runner.invoke(app, ["config", "push"], env=machine(team, lead)).exit_code == 0
    args = '{"order_code": "A100", "amount": 1500, "reason": "late delivery"}'
    mine = machine(team, "[refunds]\nenabled = true\nmax_amount = 50000\n")
    result = runner.invoke(app, ["tools", "call", "issue_refund", args], env=mine)
    assert result.exit_code != 0
    assert "above the cap of 1,000 JPY" in result.output


def test_refunds_the_shop_turned_off_stay_off_whatever_a_file_says() -> None:
    off = shop(SHOP.replace("enabled = true", "enabled = false"))
    assert tightened(settings("[refunds]\nenabled = true"), off, 7).refunds.enabled is False


def test_approving_a_queued_refund_rechecks_it_against_the_pushed_cap(
    team: dict[str, str],
) -> None:
    """Queued under a machine's 50,000 cap, approved after the lead pushed a 1,000 one: the
    approval rechecks by the shop's rules and pays nothing."""
    from dataclasses import replace
    from datetime import date, timedelta

    from agent_cli.store.postgres import PostgresStore

    store = PostgresStore.connect(team["AGENT_DB_URL"])  # refunds are judged on the system date
    order = store.get("A100")
    assert order is not None
    store.import_orders([replace(order, delivered_at=date.today() - timedelta(days=5))])
    store.close()
    mine = machine(team, "[refunds]\nenabled = true\nmax_amount = 50000\n")
    args = '{"order_code": "A100", "amount": 1500, "reason": "late delivery"}'
    queued = runner.invoke(app, ["tools", "call", "issue_refund", args], env=mine)
    assert "queued" in queued.output.lower(), queued.output
    lead = "[refunds]\nenabled = true\nmax_amount = 1000\n"
    assert runner.invoke(app, ["config", "push"], env=machine(team, lead)).exit_code == 0
    approved = runner.invoke(
        app, ["approvals", "approve", "1"], env=machine(team, "[refunds]\nenabled = true\n")
    )
    assert approved.exit_code != 0, approved.output
    assert "above the cap of 1,000 JPY" in approved.output
    shown = runner.invoke(app, ["orders", "show", "A100", "--json"], env=team)
    assert json.loads(shown.stdout)["refunds"] == []


# One log for the team: every machine's runs in the team's store


def test_every_machines_runs_are_in_the_teams_log(team: dict[str, str], tmp_path: Path) -> None:
    """Two machines (their own homes and log paths) on one store: each one's `agent logs` lists
    both machines' runs, searches them, shows their traces, and the report counts them."""
    machine(team, "")
    lead = {**team, "AGENT_LOG": str(tmp_path / "lead.db")}
    mate = {**team, "AGENT_LOG": str(tmp_path / "mate.db")}
    for env, question in ((lead, "Is order A100 refundable?"), (mate, "Is order A101 refundable?")):
        asked = runner.invoke(app, ["ask", "--today", "2026-10-13", question], env=env)
        assert asked.exit_code == 0, asked.output
    assert not (tmp_path / "lead.db").exists()  # the team's store holds them, not a file
    listed = runner.invoke(app, ["logs", "list", "--json"], env=lead)
    runs = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [run["question"] for run in runs] == [
        "Is order A101 refundable?",
        "Is order A100 refundable?",
    ]
    found = runner.invoke(app, ["logs", "search", "IS a101", "--json"], env=lead)
    assert [json.loads(line)["question"] for line in found.stdout.splitlines()] == [
        "Is order A101 refundable?"
    ]  # any case, and words of under three letters too
    shown = runner.invoke(app, ["logs", "show", runs[1]["run_id"][:10]], env=mate)
    assert shown.exit_code == 0 and "Order A100 is refundable" in shown.stdout
    report = runner.invoke(app, ["logs", "report", "--json"], env=mate)
    assert report.exit_code == 0, report.output
    assert json.loads(report.stdout.splitlines()[0])["conversations"] == 2
    assert "team's store" in runner.invoke(app, ["logs", "path"], env=mate).stdout


def test_the_teams_log_keeps_the_newest_runs_and_their_traces(team: dict[str, str]) -> None:
    import psycopg

    env = machine(team, "[log]\nkeep_runs = 2\n")
    for code in ("A100", "A101", "A102"):
        runner.invoke(app, ["ask", "--today", "2026-10-13", f"Is {code} refundable?"], env=env)
    listed = runner.invoke(app, ["logs", "list", "--json"], env=env)
    assert [json.loads(line)["question"] for line in listed.stdout.splitlines()] == [
        "Is A102 refundable?",
        "Is A101 refundable?",
    ]
    with psycopg.connect(team["AGENT_DB_URL"]) as db:
        assert db.execute("SELECT count(*) FROM traces").fetchone() == (2,)


def test_doctor_names_the_version_in_force_and_a_config_that_would_loosen_it(
    team: dict[str, str],
) -> None:
    def shop_check(env: dict[str, str]) -> dict[str, Any]:
        result = runner.invoke(app, ["doctor", "--json"], env=env)
        lines = [json.loads(line) for line in result.stdout.splitlines()]
        (check,) = [line for line in lines if line["check"] == "shop's rules"]
        return check

    assert shop_check(machine(team, ""))["ok"] is None  # none pushed: a note, not a failure
    assert runner.invoke(app, ["config", "push"], env=machine(team, SHOP)).exit_code == 0
    pushed = shop_check(team)
    assert pushed["ok"] is True and pushed["detail"].startswith("version 1, pushed by ")
    loose = shop_check(machine(team, '[[refunds.rules]]\nname = "mine"\ndecision = "ask"\n'))
    assert loose["ok"] is False and "'mine' is in this machine's config" in loose["detail"]


@pytest.mark.parametrize(
    "body",
    [
        "[" * 100_000 + "]" * 100_000,  # deeper than Python's stack
        '{"policy": ' + "[" * 5_000 + "]" * 5_000 + ', "refunds": {}}',
        '"a string"',
        "not json",
    ],
)
def test_a_damaged_version_of_any_shape_is_one_line_never_a_traceback(
    team: dict[str, str], body: str
) -> None:
    import psycopg

    assert runner.invoke(app, ["config", "push"], env=machine(team, SHOP)).exit_code == 0
    with psycopg.connect(team["AGENT_DB_URL"], autocommit=True) as db:
        db.execute("UPDATE shop_rules SET body = %s", (body,))
    for args in (["ask", "--dry-run", "Is order A100 refundable?"], ["config", "shop"]):
        result = runner.invoke(app, args, env=team)
        assert result.exit_code == 2, result.output
        assert "cannot be read" in result.stderr and "agent config push" in result.stderr
        assert "Traceback" not in result.output


def test_a_shop_window_longer_than_the_default_is_kept_where_the_file_names_none() -> None:
    long = shop(SHOP.replace("refund_window_days = 30", "refund_window_days = 60"))
    merged = tightened(settings("[refunds]\nmax_per_run = 1"), long, 7)
    assert (merged.policy.refund_window_days, merged.policy.return_window_days) == (60, None)


def test_instructions_given_on_the_command_line_join_the_shops(tmp_path: Path) -> None:
    from agent_cli.runtime.shop import applied, in_force
    from agent_cli.store.shop_rules import Pushed

    given = tmp_path / "mine.md"
    given.write_text("Sign as Mia.", encoding="utf-8")
    pushed = Pushed(
        version=3, body=pushed_body(settings(SHOP), "Be kind."), pushed_by="a", pushed_at="b"
    )
    _, said = applied(settings(""), pushed, given)
    assert said == "Be kind.\n\nSign as Mia."
    assert applied(settings(""), None, given)[1] == "Sign as Mia."
    one_machine = in_force(settings(""), lambda: pytest.fail("no store is read on SQLite"), given)
    assert one_machine[1] == "Sign as Mia."
    silent = Pushed(version=3, body=pushed_body(settings(SHOP), ""), pushed_by="a", pushed_at="b")
    assert applied(settings(""), silent)[1] == ""
