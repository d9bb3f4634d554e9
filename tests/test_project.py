"""The project's promises about itself: the Quick start, CI, and lazy imports."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent


def quick_start() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section)


def test_quick_start_is_exactly_two_commands() -> None:
    commands = quick_start()
    assert len(commands) == 2
    assert 'agent ask "Is order A100 refundable?"' in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command() -> None:
    assert quick_start()[1] in (ROOT / ".ci" / "run").read_text()


def test_cli_import_stays_light() -> None:
    code = (
        "import sys, agent_cli.cli;"
        "heavy = ('pydantic', 'httpx', 'sqlite3', 'agent_cli.core.loop', 'agent_cli.store.sqlite');"
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_an_offline_run_never_imports_httpx_or_psycopg(tmp_path: Path) -> None:
    code = (
        "import sys;"
        "from agent_cli.cli import app;"
        "sys.argv = ['agent', 'ask', 'A100?', '--dry-run', '--quiet'];"
        "\ntry:\n    app()\nexcept SystemExit:\n    pass\n"
        "print('httpx' in sys.modules or 'psycopg' in sys.modules, file=sys.stderr)"
    )
    env = {**__import__("os").environ, "XDG_DATA_HOME": str(tmp_path)}  # the default location
    env.pop("AGENT_DB")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stderr.strip().splitlines()[-1] == "False"
    assert "A100" in out.stdout
