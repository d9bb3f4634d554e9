"""Eval cases on the team's backend (issue 42, point 3): `agent eval --store-url URL` runs each
case and trial in a PostgreSQL schema of its own, made and dropped for it, so concurrent runs
never see each other's writes and nothing is left behind. Against a real server the tests start
(tests/postgres.py); skipped, saying so, where PostgreSQL is not installed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_cli.cli import app
from agent_cli.store.samples import SAMPLE_SHOP
from agent_cli.store.scratch import PREFIX, scratch_store
from tests.unit.evaluation.test_eval_conversations import CANCEL

runner = CliRunner()
FIXTURES = Path(__file__).parents[1] / "fixtures"


def schemas(url: str) -> list[str]:
    import psycopg

    with psycopg.connect(url) as db:
        rows = db.execute(
            "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE %s",
            (PREFIX + "%",),
        ).fetchall()
    return [row[0] for row in rows]


@pytest.fixture
def url(pg_server: Any) -> str:
    found: str = pg_server.database()
    return found


def cases(result: Any) -> list[dict[str, Any]]:
    assert result.exit_code == 0, result.stdout + result.stderr
    return [json.loads(x) for x in result.stdout.splitlines() if '"case"' in x]


def test_concurrent_trials_each_in_their_own_schema(url: str, tmp_path: Path) -> None:
    path = tmp_path / "cases.toml"
    path.write_text(CANCEL, encoding="utf-8")
    argv = ["eval", "run", str(path), "--dry-run", "--json", "--store-url", url]
    done = cases(runner.invoke(app, [*argv, "--trials", "4", "--concurrency", "2"]))
    # each trial cancels B200 in its own schema: in a shared one, all but one would be refused
    assert [case["passed"] for case in done] == [True] * 4
    assert schemas(url) == []  # every scratch schema dropped


def test_a_tau2_store_on_postgres_with_the_reference(url: str, tmp_path: Path) -> None:
    db = tmp_path / "db.json"
    db.write_text(json.dumps(json.loads((FIXTURES / "tau2-gold.json").read_text())["db"]))
    argv = ["eval", "tau2", str(FIXTURES / "tau2-tasks.json"), "--store-file", str(db)]
    argv += ["--provider", "reference", "--json", "--store-url", url]
    assert all(case["passed"] for case in cases(runner.invoke(app, argv)))
    assert schemas(url) == []


def test_a_scratch_schema_is_dropped_even_when_the_case_fails(url: str) -> None:
    with pytest.raises(RuntimeError), scratch_store(url, SAMPLE_SHOP) as store:
        assert store.get("B200") is not None  # the sample shop, seeded in the schema
        assert schemas(url) != []
        raise RuntimeError("the case crashed")
    assert schemas(url) == []


def test_an_unreachable_server_stops_before_any_case(tmp_path: Path) -> None:
    path = tmp_path / "cases.toml"
    path.write_text(CANCEL, encoding="utf-8")
    bad = "postgresql://nobody@127.0.0.1:1/none"
    result = runner.invoke(app, ["eval", "run", str(path), "--dry-run", "--store-url", bad])
    assert result.exit_code != 0
    assert "--store-url postgresql://nobody@127.0.0.1:1/none: cannot make a schema" in result.stderr
    assert "Traceback" not in result.stderr
