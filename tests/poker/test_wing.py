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


def test_the_poker_table_services_layer_their_modules() -> None:
    """cards <- tables, operator, hands (the dealer's custody of the cards);
    tables <- seats <- hands, operator <- hands, tables <- configure, tables <- verify.
    Of the table services only ``hands`` reaches into the tournament services (a
    tournament table's hand checks its player, takes the tournament's blinds and
    hands the table back to the tournament's step); the tournament services
    (``games.poker.tournament.services``) stand on the table services, not the other
    way round. No cycle: ``tests/test_architecture.py`` checks the whole tree."""
    services = POKER / "services"
    graph = {
        path.stem: {m.rsplit(".", 1)[-1] for m in imported_modules(path) if m.startswith("games.poker.services.")}
        for path in services.glob("*.py")
        if path.stem != "__init__"
    }
    assert graph == {
        "cards": set(),
        "tables": {"cards"},
        "seats": {"tables"},
        "operator": {"tables", "cards"},
        "configure": {"tables"},
        "hands": {"tables", "seats", "operator", "cards"},
        "verify": {"tables"},
    }
    into_tournaments = {
        path.stem
        for path in services.glob("*.py")
        if any(m.startswith("games.poker.tournament") for m in imported_modules(path))
    }
    assert into_tournaments == {"hands"}
