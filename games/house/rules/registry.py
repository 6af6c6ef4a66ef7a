"""The house-banked games: the one place every other layer asks about a game by its code.

The built-in games register themselves here on import (``uth``, ``casino_holdem``,
``xtreme``, in that order: it is the order of the model's choices and the API's
enum). ``register``/``unregister`` (and the ``registered`` context manager) let a
game be added at run time, e.g. by a test.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType

from games.house.rules.casino_holdem import CASINO_HOLDEM
from games.house.rules.definitions import GameDefinition, UnknownGame
from games.house.rules.paytables import PayTable, UnknownPayTable
from games.house.rules.uth import UTH
from games.house.rules.xtreme import XTREME

_REGISTRY: dict[str, GameDefinition] = {}
# A read-only live view: it shows games registered later too.
GAMES: Mapping[str, GameDefinition] = MappingProxyType(_REGISTRY)


def register(definition: GameDefinition) -> GameDefinition:
    """Add ``definition``; ``ValueError`` if its code is taken."""
    if definition.code in _REGISTRY:
        raise ValueError(f"game {definition.code!r} is registered already")
    _REGISTRY[definition.code] = definition
    return definition


def unregister(code: str) -> None:
    """Remove the game ``code``; ``UnknownGame`` if there is none."""
    game(code)
    del _REGISTRY[code]


@contextmanager
def registered(definition: GameDefinition) -> Iterator[GameDefinition]:
    """``definition`` is registered inside the ``with`` block, and only there."""
    register(definition)
    try:
        yield definition
    finally:
        unregister(definition.code)


def game(code: str) -> GameDefinition:
    """The game ``code``; ``UnknownGame`` (404) if none."""
    try:
        return _REGISTRY[code]
    except KeyError:
        raise UnknownGame(f"unknown game {code!r}", game=code, known=sorted(_REGISTRY)) from None


def games() -> tuple[GameDefinition, ...]:
    """Every registered game, in registration order."""
    return tuple(_REGISTRY.values())


def game_choices() -> list[tuple[str, str]]:
    """``(code, title)`` of every registered game: the models' ``game`` choices.

    The models pass this function itself (Django's callable choices), so the
    migration state names the function, not the list, and a game added to the
    registry needs no migration."""
    return [(definition.code, definition.title) for definition in _REGISTRY.values()]


def pay_table(game_code: str, wager: str, number: int = 1) -> PayTable:
    """Pay table ``number`` of ``wager`` in ``game_code``; ``UnknownPayTable`` if none (unknown game included)."""
    definition = _REGISTRY.get(game_code)
    if definition is None:
        message = f"no pay table {number} for {game_code} {wager}"
        raise UnknownPayTable(message, game=game_code, wager=wager, available=[])
    return definition.pay_table(wager, number)


def table_numbers(game_code: str, wager: str) -> list[int]:
    """The numbers of ``wager``'s pay tables in ``game_code`` ([] when none)."""
    definition = _REGISTRY.get(game_code)
    return definition.table_numbers(wager) if definition is not None else []


for _definition in (UTH, CASINO_HOLDEM, XTREME):
    register(_definition)
