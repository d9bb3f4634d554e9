"""The package's shape is a promise (ARCHITECTURE.md): the packages, the direction of their
imports, no import circle, small modules, and framework imports kept at their edges.

Every import counts, whether at the top of a module, inside a function (the lazy ones) or under
TYPE_CHECKING: a lazy import is still an arrow, only a later one.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[2] / "agent_cli"
ROOT_MODULES_AT_MOST = 8  # __init__.py and __main__.py included
# Size by concept (issue 51): past the soft ceiling a module is said (a warning), past the hard
# one it fails; a module is split where its concepts part, not at a line count.
MODULE_LINES_SOFT = 450
MODULE_LINES_AT_MOST = 700

# What each part may import besides itself. "base" is the shared modules at the package root
# (errors, text, dates...), "api" the root's __init__ (the public Python API) and "main"
# __main__; every other part is the package of that name (config/ is the settings).
ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "core": {"base"},
    "domain": {"core", "base"},
    # The settings: the shop's rules name the desk's writes, which the domain holds.
    "config": {"domain", "core", "base"},
    "language": {"config", "domain", "core", "base"},
    "policy": {"language", "config", "domain", "core", "base"},
    "store": {"config", "domain", "core", "base"},
    "record": {"store", "language", "config", "domain", "core", "base"},
    "tools": {"store", "policy", "language", "config", "domain", "core", "base"},
    "providers": {"policy", "language", "config", "domain", "core", "base"},
    "runtime": {
        *("providers", "tools", "record", "store", "policy"),
        *("language", "config", "domain", "core", "base"),
    },
    "evaluation": {
        *("runtime", "providers", "tools", "record", "store", "policy"),
        *("language", "config", "domain", "core", "base"),
    },
    "ui": {"record", "store", "policy", "language", "config", "domain", "core", "base"},
    # The HTTP API (agent serve) over the runtime: no terminal, no Typer, no Rich; HTTP out to
    # the channels through providers/outbound.py.
    "serve": {
        *("runtime", "providers", "record", "store", "policy"),
        *("language", "config", "domain", "core", "base"),
    },
    "commands": {
        *("serve", "evaluation", "runtime", "ui", "providers", "tools"),
        *("record", "store", "policy", "language", "config", "domain", "core", "base"),
    },
    "cli": {"commands", "runtime", "store", "config", "domain", "core", "base"},
    "api": {"runtime", "config", "core", "base"},
    "main": {"cli"},
}

# Third-party packages kept to their edges: the parts (or single modules) that may import them.
FRAMEWORKS = {
    "typer": {"cli"},
    "click": set(),
    "rich": {"ui"},
    "httpx": {"providers"},
    "psycopg": {"store.postgres"},
    "starlette": {"serve"},
    "opentelemetry": {"record.otel", "record.otel_export"},
    "google": {"record.otel_export"},
    "uvicorn": {"commands.serve"},
    "mcp": {"tools.mcp_servers", "tools.mcp_tools", "tools.mcp_limits", "tools.mcp_processes"},
}


def module_name(path: Path, package: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part_of(module: str, package: Path) -> str:
    """The part of the layout `module` (a dotted name below the package) belongs to."""
    parts = module.split(".")
    if len(parts) == 1:
        return "api"
    if len(parts) == 2 and (package / f"{parts[1]}.py").exists():
        return "main" if parts[1] == "__main__" else "base"
    return parts[1]


def imports_of(path: Path, package: Path, modules: set[str]) -> Iterator[str]:
    """Every module of the package that `path` imports, wherever the import stands."""
    top = package.name
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == top)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] != top:
                continue
            for alias in node.names:
                whole = f"{node.module}.{alias.name}"
                yield whole if whole in modules else node.module


def graph(package: Path) -> dict[str, set[str]]:
    """Each module of the package -> the modules of the package it imports."""
    paths = {module_name(p, package): p for p in package.rglob("*.py")}
    return {
        name: set(imports_of(path, package, set(paths))) - {name} for name, path in paths.items()
    }


def wrong_arrows(package: Path) -> list[str]:
    """Each import from one part to another that ALLOWED does not list."""
    found = []
    for module, targets in sorted(graph(package).items()):
        here = part_of(module, package)
        for target in sorted(targets):
            there = part_of(target, package)
            if there != here and there not in ALLOWED[here]:
                found.append(f"{module} ({here}) imports {target} ({there})")
    return found


def circles(package: Path) -> list[list[str]]:
    """The import circles among the package's modules (Tarjan's strongly connected parts)."""
    edges = graph(package)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            part = []
            while (top := stack.pop()) != node:
                part.append(top)
            part.append(node)
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_package_root_holds_at_most_eight_modules() -> None:
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= ROOT_MODULES_AT_MOST, modules


def test_every_import_points_the_allowed_way() -> None:
    assert wrong_arrows(PACKAGE) == []


def test_no_import_circle() -> None:
    assert circles(PACKAGE) == []


def test_the_allowed_directions_have_no_circle_either() -> None:
    order: list[str] = []
    left = dict(ALLOWED)
    while left:
        ready = [part for part, needs in left.items() if needs <= set(order)]
        assert ready, f"ALLOWED has a circle among {sorted(left)}"
        order += ready
        for part in ready:
            del left[part]


def test_every_part_is_named_in_the_table() -> None:
    parts = {part_of(module, PACKAGE) for module in graph(PACKAGE)}
    assert parts == set(ALLOWED)


def test_no_module_is_over_700_lines_and_one_over_450_is_said() -> None:
    for path in PACKAGE.rglob("*.py"):
        lines = len(path.read_text().splitlines())
        assert lines <= MODULE_LINES_AT_MOST, f"{path.relative_to(PACKAGE)} has {lines} lines"
        if lines > MODULE_LINES_SOFT:
            warnings.warn(
                f"{path.relative_to(PACKAGE)} has {lines} lines (over {MODULE_LINES_SOFT}): "
                "does it hold more than one concept?",
                stacklevel=1,
            )


def third_party_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_frameworks_stay_at_their_edges() -> None:
    for path in PACKAGE.rglob("*.py"):
        module = module_name(path, PACKAGE).removeprefix("agent_cli.")
        imported = third_party_imports(path)
        for framework, homes in FRAMEWORKS.items():
            if framework in imported:
                allowed = module.split(".")[0] in homes or module in homes
                assert allowed, f"{module} imports {framework}"


def test_importing_the_core_brings_in_nothing_above_it() -> None:
    core = sorted(module_name(p, PACKAGE) for p in (PACKAGE / "core").glob("*.py"))
    code = (
        f"import sys\nfor name in {core!r}:\n    __import__(name)\n"
        "ours = [m for m in sys.modules if m.startswith('agent_cli.') and m.count('.') > 1]\n"
        "outside = [m for m in ours if not m.startswith('agent_cli.core.')]\n"
        "heavy = [m for m in ('typer', 'rich', 'httpx', 'click', 'psycopg', 'mcp', 'sqlite3')"
        " if m in sys.modules]\n"
        "print(sorted(outside), heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] []"


# The checks above must be able to fail: each is tried on a small package with one fault.


def make_package(tmp_path: Path, files: dict[str, str]) -> Path:
    package = tmp_path / "agent_cli"
    for name, text in {"__init__.py": "", **files}.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in {p.parent for p in package.rglob("*.py")}:
        (folder / "__init__.py").touch()
    return package


def test_an_upward_arrow_is_caught_even_inside_a_function(tmp_path: Path) -> None:
    package = make_package(
        tmp_path,
        {
            "errors.py": "",
            "store/sqlite.py": "from agent_cli.errors import x\n",
            "core/loop.py": "def f():\n    from agent_cli.store.sqlite import OrderStore\n",
        },
    )
    assert wrong_arrows(package) == [
        "agent_cli.core.loop (core) imports agent_cli.store.sqlite (store)"
    ]


@pytest.mark.parametrize("form", ["from agent_cli.core import b", "import agent_cli.core.b"])
def test_a_circle_is_caught(tmp_path: Path, form: str) -> None:
    package = make_package(
        tmp_path,
        {
            "core/a.py": f"if TYPE_CHECKING:\n    {form}\n",
            "core/b.py": "from agent_cli.core.c import x\n",
            "core/c.py": "from agent_cli.core.a import y\n",
        },
    )
    assert circles(package) == [["agent_cli.core.a", "agent_cli.core.b", "agent_cli.core.c"]]


def test_architecture_md_names_every_package_and_module() -> None:
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text()
    modules = text.split("## Modules", 1)[1].split("\n## ", 1)[0]
    rows = set(
        re.findall(r"^\| `([\w/.]+)`", modules, re.MULTILINE)
    )  # a row for a whole folder too
    named = set(re.findall(r"`([\w/.]+)`", modules))
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        folder = f"{relative.parent}/"
        if folder != "./" and folder not in text:
            missing.append(folder)
        if path.name == "__init__.py" and folder != "./":
            continue  # a package's docstring; the package is named
        if str(relative) not in named and folder not in rows:
            missing.append(str(relative))
    assert sorted(set(missing)) == []


# Records built from a row in their SELECT's order, and records with a few leading fields every
# call gives (the rest keyword-only by default): the only positional ones of seven fields or more.
POSITIONAL_RECORDS = {
    "Approval",
    "OrderChange",
    "Ticket",
    "Table",
    "Tool",
    "Order",
    "Plan",
    "ToolSpec",
    "Step",
    "ModelCall",
    "_Attempt",
    "_Server",
}
MANY_FIELDS = 7


def _positional_records(tree: ast.Module) -> Iterator[tuple[str, int]]:
    """Each dataclass of MANY_FIELDS init fields or more a call may fill by position."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            named = ast.unparse(call.func if call else decorator)
            keywords = {k.arg for k in call.keywords} if call else set()
            if named != "dataclass" or keywords & {"kw_only", "init"}:
                continue
            fields = [
                s
                for s in node.body
                if isinstance(s, ast.AnnAssign)
                and "ClassVar" not in ast.unparse(s.annotation)
                and "init=False" not in ast.unparse(s.value or ast.Constant(None))
            ]
            if len(fields) >= MANY_FIELDS:
                yield node.name, len(fields)


def test_a_record_of_many_fields_is_built_by_keyword() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}: {name} ({count} fields)"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, count in _positional_records(ast.parse(path.read_text()))
        if name not in POSITIONAL_RECORDS
    ]
    assert found == [], "make these kw_only=True (or say why not): " + ", ".join(found)


def test_a_positional_record_of_many_fields_is_caught() -> None:
    tree = ast.parse(
        "@dataclass(frozen=True)\nclass Wide:\n" + "".join(f"    f{i}: int\n" for i in range(7))
    )
    assert list(_positional_records(tree)) == [("Wide", 7)]
    narrow = ast.parse(
        "@dataclass\nclass Narrow:\n" + "".join(f"    f{i}: int\n" for i in range(6))
    )
    keyword = ast.parse(
        "@dataclass(kw_only=True)\nclass K:\n" + "".join(f"    f{i}: int\n" for i in range(9))
    )
    assert list(_positional_records(narrow)) == list(_positional_records(keyword)) == []


def test_every_command_group_in_cli_has_its_body_of_the_same_name_in_commands() -> None:
    """cli/ mirrors commands/ (issue 51): `cli/ask.py` parses, `commands/ask.py` does; the
    CLI's own helpers are named with a leading underscore."""
    groups = {p.stem for p in (PACKAGE / "cli").glob("*.py") if not p.stem.startswith("_")}
    bodies = {p.stem for p in (PACKAGE / "commands").glob("*.py")}
    assert groups, "no command group in cli/"
    assert sorted(groups - bodies) == []


def spelt_write_lists(package: Path) -> list[str]:
    """Modules outside domain/write_tools.py with a literal list (tuple, list, set, Literal) of
    three or more of the desk's writes: the list spelt again, which a new write would miss."""
    from agent_cli.domain.write_tools import DESK_WRITES

    home = package / "domain" / "write_tools.py"
    found = []
    for path in sorted(package.rglob("*.py")):
        if path == home:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            elements = getattr(node, "elts", None)  # Literal["a", "b"]'s too: its slice's
            names = {e.value for e in elements or () if isinstance(e, ast.Constant)}
            if len(names & set(DESK_WRITES)) >= 3:
                found.append(f"{path.relative_to(package)}:{node.lineno}")
    return found


def test_the_desk_writes_are_listed_in_one_place() -> None:
    assert spelt_write_lists(PACKAGE) == []


def test_a_write_list_spelt_again_is_caught(tmp_path: Path) -> None:
    package = tmp_path / "agent_cli"
    (package / "domain").mkdir(parents=True)
    (package / "domain" / "write_tools.py").write_text('W = ("cancel_pending_order",)\n')
    (package / "offer.py").write_text(
        'WRITES = {"cancel_pending_order", "modify_user_address", "modify_pending_order_items"}\n'
        'Kind = Literal["cancel_pending_order", "modify_user_address", '
        '"return_delivered_order_items"]\n'
        'TWO = ("cancel_pending_order", "modify_user_address")\n'
    )
    assert spelt_write_lists(package) == ["offer.py:1", "offer.py:2"]


def narrative_names(package: Path) -> list[str]:
    """Identifiers named for the act of saying (`said`, `said_so`, `agent_said`...) instead of
    what they hold: the customer's messages, a reply, a sentence, a payload."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            name = getattr(node, "id", None) or getattr(node, "arg", None)
            if isinstance(node, ast.Attribute):
                name = node.attr
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = node.name
            if isinstance(name, str) and "said" in name.split("_"):
                found.append(f"{path.relative_to(package)}:{node.lineno} {name}")
    return found


def test_no_name_says_said_instead_of_what_it_holds(tmp_path: Path) -> None:
    assert narrative_names(PACKAGE) == []
    (tmp_path / "m.py").write_text("def f(said):\n    agent_said = said\n    return agent_said\n")
    assert len(narrative_names(tmp_path)) == 4  # the argument and each use
