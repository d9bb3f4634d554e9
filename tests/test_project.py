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
        "heavy = ('pydantic', 'httpx', 'sqlite3', 'agent_cli.loop', 'agent_cli.store');"
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def imports_of(path: Path) -> set[str]:
    import ast

    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_framework_imports_stay_at_their_edges() -> None:
    package = ROOT / "agent_cli"
    allowed = {"typer": {"cli"}, "rich": {"ui"}, "httpx": {"providers"}, "click": set()}
    for path in package.rglob("*.py"):
        where = path.relative_to(package).parts
        for module, homes in allowed.items():
            if module in imports_of(path):
                assert where[0] in homes, f"{'/'.join(where)} imports {module}"


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


def agent_imports_of(path: Path) -> set[str]:
    """The agent_cli modules a file imports, as dotted names below agent_cli."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("agent_cli.")}


def test_the_ui_imports_no_floor_above_it() -> None:
    above = ("agent_cli.evaluation", "agent_cli.cli", "agent_cli.commands", "agent_cli.runtime")
    above += ("agent_cli.chat", "agent_cli.logs", "agent_cli.diagnostics")
    for path in (ROOT / "agent_cli" / "ui").rglob("*.py"):
        upward = {name for name in agent_imports_of(path) if name.startswith(above)}
        assert not upward, f"ui/{path.name} imports {sorted(upward)}"


def test_no_module_is_over_500_lines() -> None:
    for path in (ROOT / "agent_cli").rglob("*.py"):
        lines = len(path.read_text().splitlines())
        assert lines <= 500, f"{path.relative_to(ROOT)} has {lines} lines: split it"
