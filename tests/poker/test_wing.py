"""The poker wing stands on its own: what it shares with the house-banked
games (the table clock, the websocket and REST faces) lives at the top of
``games``, not in ``games/house``."""

from __future__ import annotations

import ast
from pathlib import Path

import games.poker

POKER = Path(games.poker.__file__).parent


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_no_poker_module_imports_the_house_wing() -> None:
    modules = sorted(POKER.rglob("*.py"))
    assert len(modules) > 20  # the wing was found
    offenders = {
        str(path.relative_to(POKER)): sorted(m for m in imported_modules(path) if m.startswith("games.house"))
        for path in modules
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def _package_graph(package: Path, prefix: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (anywhere in it, functions included)."""
    return {
        path.stem: {m.rsplit(".", 1)[-1] for m in imported_modules(path) if m.startswith(prefix)}
        for path in package.glob("*.py")
        if path.stem != "__init__"
    }


def test_the_poker_services_package_has_no_import_cycle() -> None:
    """cards <- tables, operator, hands (the dealer's custody of the cards);
    tables <- seats <- hands, operator <- hands, tables <- configure, tables <- verify,
    tables <- tournament_tables <- hands (what a tournament's table does
    differently): no cycle."""
    assert _package_graph(POKER / "services", "games.poker.services.") == {
        "cards": set(),
        "tables": {"cards"},
        "seats": {"tables"},
        "operator": {"tables", "cards"},
        "configure": {"tables"},
        "hands": {"tables", "seats", "operator", "tournament_tables", "cards"},
        "verify": {"tables"},
        "tournament_tables": {"tables"},
    }


def test_the_tournament_services_package_has_no_import_cycle() -> None:
    """core and stream <- start, finish, control; finish <- step (the finish is
    the step's last move); start, step, finish <- registration (registering the
    last player starts a Sit & Go, a late entry is seated, a cancel of a running
    tournament pays out); templates alone: no cycle."""
    assert _package_graph(POKER / "tournament" / "services", "games.poker.tournament.services.") == {
        "core": set(),
        "stream": set(),
        "start": {"core", "stream"},
        "step": {"core", "finish", "stream"},
        "finish": {"core", "stream"},
        "control": {"core", "stream"},
        "registration": {"core", "finish", "start", "step"},
        "templates": set(),
    }


def test_the_table_services_import_no_tournament_service() -> None:
    """The tournament services build on the table services (``games.poker.services``),
    never the other way round, counting imports inside functions: a table service
    that imported one would close an import circle through the two packages'
    ``__init__`` modules (the tournament's table hooks are
    ``games.poker.services.tournament_tables``)."""

    def loaded(path: Path) -> set[str]:  # ``from a.b import c`` may load module ``a.b.c``
        tree = ast.parse(path.read_text(), filename=str(path))
        named = {f"{n.module}.{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        return imported_modules(path) | named

    offenders = {
        path.name: sorted(m for m in loaded(path) if m.startswith("games.poker.tournament.services"))
        for path in (POKER / "services").glob("*.py")
    }
    assert {name: names for name, names in offenders.items() if names} == {}
