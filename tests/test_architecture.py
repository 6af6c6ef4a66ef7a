"""The layout's rules, checked by reading the source (``ast``), not by importing it.

1. Purity: the pure packages (cards, the house games' rules, round and math, the
   poker engine) import no framework (Django, DRF, Channels, Celery, a database
   driver) and no part of this project that is not itself pure. Every import
   counts, including those inside functions and under ``if TYPE_CHECKING:``, and
   so do the package ``__init__`` modules an import runs on the way.
2. No import cycles between the project's modules, counting every import, those
   inside function bodies too: a cycle hidden in a function is still two modules
   that cannot be read, tested or moved apart. A Celery task and the service that
   schedules it meet through ``games.tables.pacing``'s task paths
   (``"module:attribute"``, imported only when a step is enqueued), so no service
   imports a task module.
3. The ledger imports no game and no compliance module (anywhere, functions
   included): the games register their ``verify_ledger`` checks with it instead,
   and compliance reads the ledger, not the other way round.
4. No module over 800 lines, outside the poker engine's hand and the house games'
   exact math (``LARGE_MODULE_PACKAGES``), and the migrations.
5. ``games.poker.tooling`` (the PokerKit bridge and the differential runner) is
   test and comparison tooling: no production module imports it, only the
   management command that runs it and the tests.
6. The shared table wing (``games.tables``) imports no game family (anywhere,
   functions included): the families register what it needs of them.

The rules work on whatever modules the packages hold: they walk the directories.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Top-level packages of this project (first-party imports).
PROJECT_PACKAGES = ("games", "casino", "ledger", "compliance", "tools", "tests")

#: Packages whose every module is pure domain code. Add a package here when one is written.
PURE_PACKAGES = (
    "games.cards",
    "games.help.content",
    "games.house.rules",
    "games.house.round",
    "games.poker.engine",
    "games.poker.tournament.rules",
    *sorted(
        ".".join(path.relative_to(ROOT).parts) for path in ROOT.glob("games/*/math") if (path / "__init__.py").exists()
    ),
)

#: Single pure modules outside the pure packages that pure code may import.
PURE_MODULES = ("casino.errors", "ledger.canonical", "ledger.currencies", "ledger.errors", "ledger.upcasting")

#: Third-party top-level packages pure code must never import.
FRAMEWORKS = frozenset(
    {
        "django",
        "rest_framework",
        "drf_spectacular",
        "channels",
        "channels_redis",
        "celery",
        "kombu",
        "psycopg",
        "psycopg2",
        "psycopg_pool",
        "redis",
    }
)

#: Packages whose module-level imports must form no cycle.
ACYCLIC_PACKAGES = ("games", "casino", "ledger", "compliance")


@dataclass(frozen=True)
class Import:
    """One imported module: ``target`` is absolute, ``line`` where the import is written."""

    target: str
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def project_modules() -> dict[str, Path]:
    """Every first-party module by its dotted name."""
    modules: dict[str, Path] = {}
    for package in PROJECT_PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if ".venv" not in path.parts:
                modules[module_name(path)] = path
    return modules


def is_project(name: str) -> bool:
    return name.split(".")[0] in PROJECT_PACKAGES


def resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` names (relative imports resolved)."""
    if node.level == 0:
        return node.module or ""
    is_package = project_modules()[module].name == "__init__.py"
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(module: str, nodes: Sequence[ast.stmt] | ast.AST) -> Iterator[Import]:
    """The modules that the import statements among ``nodes`` load.

    ``from package import name`` loads ``package.name`` when that is a module of
    this project, otherwise ``package``.
    """
    walked = ast.walk(nodes) if isinstance(nodes, ast.AST) else nodes
    for node in walked:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            source = resolve(module, node)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                yield Import(submodule if submodule in project_modules() else source, node.lineno)
        elif isinstance(node, ast.Call) and _dynamic_import_target(node):
            yield Import(_dynamic_import_target(node) or "", node.lineno)


def _dynamic_import_target(node: ast.Call) -> str | None:
    """``importlib.import_module("x")`` / ``__import__("x")`` with a literal name."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name in {"import_module", "__import__"} and node.args:
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and not first.value.startswith("."):
            return first.value
    return None


@cache
def tree_of(module: str) -> ast.Module:
    path = project_modules()[module]
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def ancestors(name: str) -> list[str]:
    """The packages whose ``__init__`` runs before ``name``: ``a.b.c`` -> ``a``, ``a.b``."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


# -- 1. purity ------------------------------------------------------------------------------------


def in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def pure_modules() -> set[str]:
    """The modules held to the purity rule: the pure packages' modules, the pure
    single modules, and every package ``__init__`` that importing one of them runs."""
    named = {m for m in project_modules() if any(in_package(m, p) for p in PURE_PACKAGES)} | set(PURE_MODULES)
    return named | {a for m in named for a in ancestors(m)}


def impurities(module: str, tree: ast.AST, allowed: set[str]) -> list[str]:
    """Each import in ``module`` (parsed as ``tree``) that loads a framework or a non-pure project module."""
    found = []
    for imported in imports_of(module, tree):
        top = imported.target.split(".")[0]
        if top in FRAMEWORKS:
            found.append(f"{module}:{imported.line} imports {imported.target} (a framework)")
        elif is_project(imported.target):
            loaded = [*ancestors(imported.target), imported.target]
            impure = [name for name in loaded if name in project_modules() and name not in allowed]
            if impure or imported.target not in project_modules():
                found.append(f"{module}:{imported.line} imports {imported.target} (not a pure module)")
    return found


def test_the_pure_packages_exist() -> None:
    """Guards the purity test against checking nothing (a package renamed, a glob gone stale)."""
    modules = project_modules()
    for package in PURE_PACKAGES:
        assert package in modules, f"pure package {package} not found"
        assert any(m.startswith(package + ".") for m in modules), f"pure package {package} holds no module"
    assert "games.house.math" in PURE_PACKAGES
    for module in PURE_MODULES:
        assert module in modules, f"pure module {module} not found"


def test_pure_packages_import_no_framework_and_no_impure_project_module() -> None:
    allowed = pure_modules()
    found = [problem for module in sorted(allowed) for problem in impurities(module, tree_of(module), allowed)]
    assert not found, "pure code imports impure code:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import django.db\n", "django.db (a framework)"),
        ("def f():\n    from rest_framework import status\n", "rest_framework (a framework)"),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import celery\n", "celery (a framework)"),
        ("import importlib\nimportlib.import_module('channels.layers')\n", "channels.layers (a framework)"),
        ("from games.house import services\n", "games.house.services (not a pure module)"),
        ("from games.models import Table\n", "games.models (not a pure module)"),
        ("from ledger.services.batch import settle_batch\n", "ledger.services.batch (not a pure module)"),
        ("from casino import cashier\n", "casino.cashier (not a pure module)"),
    ],
)
def test_the_purity_check_catches(source: str, expected: str) -> None:
    """The checker itself: each offending import, as if written in a pure module, is reported."""
    found = impurities("games.cards.cards", ast.parse(source), pure_modules())
    assert [problem.split(" imports ", 1)[1] for problem in found] == [expected]


# -- 2. no import cycles --------------------------------------------------------------------------


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def module_level_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements that run when the module is imported: not function bodies,
    not ``if TYPE_CHECKING:`` blocks (their ``else`` runs)."""
    for node in body:
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from module_level_statements(node.body)
            yield from module_level_statements(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from module_level_statements(block)
        elif isinstance(node, ast.With | ast.For | ast.While | ast.ClassDef):
            yield from module_level_statements(node.body)
            yield from module_level_statements(getattr(node, "orelse", []))


def every_import(module: str, tree: ast.Module) -> Iterator[Import]:
    """Every module ``module`` (parsed as ``tree``) imports, wherever the import is written
    (at module level, in a function, under ``if TYPE_CHECKING:``)."""
    return imports_of(module, tree)


def module_level_imports(module: str, tree: ast.Module) -> Iterator[Import]:
    """The modules ``module`` (parsed as ``tree``) imports when it is imported."""
    statements = [node for node in module_level_statements(tree.body) if isinstance(node, ast.Import | ast.ImportFrom)]
    return imports_of(module, statements)


def import_graph(
    imports: Callable[[str, ast.Module], Iterator[Import]] = module_level_imports,
) -> dict[str, set[str]]:
    """Module -> the project modules it imports (within ``ACYCLIC_PACKAGES``), as
    ``imports`` reads them: at module level by default."""
    graph: dict[str, set[str]] = {}
    for module in project_modules():
        if not any(in_package(module, p) for p in ACYCLIC_PACKAGES):
            continue
        graph[module] = {
            imported.target
            for imported in imports(module, tree_of(module))
            if imported.target in project_modules()
            and imported.target != module
            and any(in_package(imported.target, p) for p in ACYCLIC_PACKAGES)
        }
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path that returns to its start) per strongly connected component."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def connect(node: str) -> None:  # Tarjan; the graph is a few hundred modules deep at most
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                connect(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return [_a_cycle_in(component, graph) for component in components]


def _a_cycle_in(component: set[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest path from the component's first module back to itself."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(graph[node] & component):
                if successor == start:
                    return [*paths[node], start]
                if successor not in paths:
                    paths[successor] = [*paths[node], successor]
                    following.append(successor)
        frontier = following
    raise AssertionError("a strongly connected component always holds a cycle")


def test_no_import_cycles_between_modules() -> None:
    found = cycles(import_graph(every_import))
    assert not found, "import cycles (imports anywhere):\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_new_packages_are_in_the_graph() -> None:
    """Guards the cycle test against checking nothing: the shared table wing and
    poker's sub-packages are read."""
    graph = import_graph(every_import)
    for package in ("games.tables.pacing", "games.poker.tournament.services.step", "games.poker.realtime.consumers"):
        assert package in graph, package
    assert "games.tables.pacing" in graph["games.poker.tournament.clock"]


def test_the_cycle_check_finds_a_cycle_and_ignores_function_level_imports() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []

    source = (
        "from typing import TYPE_CHECKING\n"
        "import games.house.store\n"
        "if TYPE_CHECKING:\n    import games.models\n"
        "def f():\n    import games.house.tasks\n"
        "class C:\n    import games.house.api\n"
    )
    imported = module_level_imports("games.house.services.bets", ast.parse(source))
    assert {i.target for i in imported} == {
        "typing",
        "games.house.store",
        "games.house.api",
    }
    everywhere = every_import("games.house.services.bets", ast.parse(source))
    assert {i.target for i in everywhere} == {
        "typing",
        "games.house.store",
        "games.models",
        "games.house.tasks",
        "games.house.api",
    }


# -- 3. the ledger knows no game ------------------------------------------------------------------


def test_the_ledger_imports_no_game() -> None:
    """The ledger is generic: an app with money projections registers its own
    ``verify_ledger`` check (``ledger.services.verify.register_check``), so no
    ledger module imports ``games`` (nor ``compliance``, which reads the ledger), not
    even inside a function."""
    found = [
        f"{module}:{imported.line} imports {imported.target}"
        for module in project_modules()
        if in_package(module, "ledger")
        for imported in imports_of(module, tree_of(module))
        if in_package(imported.target, "games") or in_package(imported.target, "compliance")
    ]
    assert len([m for m in project_modules() if in_package(m, "ledger")]) > 10
    assert not found, "\n".join(sorted(found))


# -- 4. no module over 800 lines ------------------------------------------------------------------

MAX_MODULE_LINES = 800

#: Packages whose modules may be longer: the poker engine's one hand state machine and the house
#: games' exact math (an enumeration kept whole so that it reads as the formula it computes).
LARGE_MODULE_PACKAGES = ("games.poker.engine", "games.house.math")


def test_no_module_is_over_800_lines() -> None:
    found = {
        module: lines
        for module, path in project_modules().items()
        if ".migrations." not in f".{module}."
        and not any(in_package(module, package) for package in LARGE_MODULE_PACKAGES)
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not found, f"modules over {MAX_MODULE_LINES} lines: {found}"


# -- 5. the PokerKit tooling stays out of production ----------------------------------------------

TOOLING = "games.poker.tooling"
#: The modules that may import the tooling: the command that runs the differential test and the
#: poker benchmark, whose bare peer is PokerKit itself.
TOOLING_USERS = ("games.management.commands.poker_differential", "games.benchmarks.poker")


def test_no_production_module_imports_the_pokerkit_tooling() -> None:
    found = {
        f"{module}:{imported.line} imports {imported.target}"
        for module in project_modules()
        if not in_package(module, "tests") and not in_package(module, TOOLING) and module not in TOOLING_USERS
        for imported in imports_of(module, tree_of(module))
        if in_package(imported.target, TOOLING)
    }
    assert any(in_package(m, TOOLING) for m in project_modules() if m != TOOLING), "the tooling package is empty"
    assert not found, "\n".join(sorted(found))


# -- 6. the shared table wing knows no family -----------------------------------------------------


def test_the_shared_table_wing_imports_no_game_family() -> None:
    """``games.tables`` (the table clock, feed, presence, websocket pieces, fairness,
    chat) serves both families and imports neither, not even inside a function:
    the families register their seats, game-numbered rows and staff views with it
    (``games.apps``)."""
    tables = [m for m in project_modules() if in_package(m, "games.tables")]
    found = {
        f"{module}:{imported.line} imports {imported.target}"
        for module in tables
        for imported in imports_of(module, tree_of(module))
        if in_package(imported.target, "games.house") or in_package(imported.target, "games.poker")
    }
    assert len(tables) > 8
    assert not found, "\n".join(sorted(found))


@pytest.mark.parametrize(("family", "other"), [("games.house", "games.poker"), ("games.poker", "games.house")])
def test_neither_game_family_imports_the_other(family: str, other: str) -> None:
    """What both families need is in ``games.tables`` (or ``games.cards``), so each wing
    stands on its own, not even importing the other inside a function."""
    modules = [m for m in project_modules() if in_package(m, family)]
    found = {
        f"{module}:{imported.line} imports {imported.target}"
        for module in modules
        for imported in imports_of(module, tree_of(module))
        if in_package(imported.target, other)
    }
    assert len(modules) > 20
    assert not found, "\n".join(sorted(found))
