"""One player's hand settled by a game's rules, cards as text (the rules tests of every game)."""

from __future__ import annotations

from collections.abc import Mapping

from games.cards.cards import parse_cards
from games.house.rules.bonus_spin import WheelSegment
from games.house.rules.definitions import GameDefinition, RoundSettlement, settle_round
from games.house.rules.registry import pay_table

# One hand of each category: the player's two cards and the board (a dealer can
# still be dealt two low cards without a clash).
HAND_OF = {
    "royal_flush": ("As Ks", "Qs Js Ts 2d 3c"),
    "straight_flush": ("9h 8h", "7h 6h 5h 2d 2c"),
    "four_of_a_kind": ("9h 9d", "9c 9s 5h 2d 3c"),
    "full_house": ("9h 9d", "9c 5s 5h 2d 3c"),
    "flush": ("Ah 2h", "Kh 9h 5h 7c 8d"),
    "straight": ("Tc Jd", "Qh Kd As 2c 3d"),
    "three_of_a_kind": ("Tc Td", "Th 2d 5s 8c Kd"),
    "two_pair": ("Tc Td", "Kh Kd 5s 8c 3d"),
    "pair": ("Tc Td", "Ah Kd 5s 8c 3d"),
    "high_card": ("Tc 4d", "Kh Ad 5s 8c 3d"),
}


def pay_lines(expected: Mapping[str, int], *, with_category: bool = False) -> list[tuple[str | int, ...]]:
    """Parameters of a pay-table test: ``(player, board[, category], expected)``
    for the example hand of each category in ``expected`` (category -> value)."""
    return [(*HAND_OF[c], *((c,) if with_category else ()), value) for c, value in expected.items()]


def settle_hand(game: GameDefinition, player: str, dealer: str, board: str, decisions: Mapping[str, str],
                tables: Mapping[str, int] | None = None, progressive: Mapping[str, int] | None = None,
                spin: WheelSegment | None = None, **stakes: int) -> RoundSettlement:  # fmt: skip
    """``game``'s settlement with its default pay tables but for ``tables`` (wager ->
    table number), the ``progressive`` awards and the wheel's ``spin`` if any."""
    in_force = game.default_pay_tables()
    for wager, number in (tables or {}).items():
        in_force[wager] = pay_table(game.code, wager, number)
    return settle_round(game, tables=in_force, player=parse_cards(player), dealer=parse_cards(dealer),
                        board=parse_cards(board), stakes=stakes, decisions=decisions, progressive_awards=progressive,
                        wheel_spin=spin)  # fmt: skip


def returned(settlement: RoundSettlement) -> dict[str, tuple[str, int]]:
    """Each wager's outcome and what it returned (stake included), by wager name."""
    return {w.wager: (w.outcome, w.returned) for w in settlement.wagers}
