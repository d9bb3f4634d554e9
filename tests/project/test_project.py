"""The project's promises about itself: the Quick start, CI, and lazy imports."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


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


README_LINES_AT_MOST = 400


def test_the_readme_is_a_guide_of_at_most_400_lines() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= README_LINES_AT_MOST
    tour = readme.split("## The first ten minutes", 1)[1].split("\n## ", 1)[0]
    steps = re.findall(r"^### \d\. (.+)$", tour, re.MULTILINE)
    assert len(steps) == 6
    for command in ("agent ask", "agent chat", "agent logs", "agent approvals", "agent eval"):
        assert command in tour
    assert "## Exit codes" in readme and "## Configuration in brief" in readme


def slug(heading: str) -> str:
    """A heading's anchor, as GitHub makes it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.DOTALL)
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE)}


def documents() -> list[Path]:
    return [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_every_link_between_the_documents_reaches_its_page_and_heading() -> None:
    broken = []
    for page in documents():
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            file, _, anchor = target.partition("#")
            linked = (page.parent / file).resolve() if file else page
            if not linked.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and anchor not in anchors(linked):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def test_the_readme_links_every_page_of_the_docs() -> None:
    readme = (ROOT / "README.md").read_text()
    for page in sorted((ROOT / "docs").rglob("*.md")):
        name = page.relative_to(ROOT / "docs").as_posix()
        assert f"(docs/{name})" in readme, name


def test_the_changelog_keeps_a_changelog() -> None:
    text = (ROOT / "docs" / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog\n")
    versions = re.findall(r"^## \[([^\]]+)\]", text, re.MULTILINE)
    assert versions[0] == "Unreleased"
    for section in re.findall(r"^### (.+)$", text, re.MULTILINE):
        assert section in ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.DOTALL)


def test_the_python_examples_that_run_offline_run_as_written(tmp_path: Path) -> None:
    examples = [
        python_blocks(ROOT / "README.md")[0],
        python_blocks(ROOT / "docs" / "python-api.md")[0],
    ]
    env = {**__import__("os").environ, "XDG_DATA_HOME": str(tmp_path)}
    env.pop("AGENT_DB")
    for example in examples:
        out = subprocess.run(
            [sys.executable, "-c", example], capture_output=True, text=True, env=env, check=True
        )
        assert "answered" in out.stdout, out.stdout
        assert out.stderr == ""


def test_every_regression_names_the_modules_it_pins() -> None:
    """A file of tests/regressions/ says which modules its tests pin ("Pins agent_cli/x.py"),
    and each one it names exists: a regression test is read from the code it protects."""
    folder = ROOT / "tests" / "regressions"
    files = sorted(folder.glob("test_*.py"))
    assert files
    for path in files:
        named = re.findall(r"\bPins\b[^\n]*", path.read_text())
        modules = [m for line in named for m in re.findall(r"agent_cli/[\w/]+\.py", line)]
        assert modules, f"{path.name} names no module it pins"
        missing = [m for m in modules if not (ROOT / m).is_file()]
        assert not missing, f"{path.name} pins modules that do not exist: {missing}"
