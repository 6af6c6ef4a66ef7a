"""Where the button goes (pure).

First hand: every seated player draws a card and the highest card takes the
button; equal ranks are broken by suit, Spades > Hearts > Diamonds > Clubs
(seed 001). Then the button moves one seat left each hand by the "button
always moves" rule: it goes to the next seat clockwise (higher seat number,
wrapping round) whose player is dealt into the next hand, and the two
players after it post the blinds. We chose this over the dead-button rule
because players here are dealt in or not per hand (sit-out, disconnection,
joining) and a dead button would need empty or sitting-out seats to carry a
button or a dead small blind; the moving button never does, every hand has
exactly one small and one big blind, and the rule is the one online rooms
commonly use. Its known cost: a player who joins just after the blinds may
play a few hands before posting a big blind, and one who sits out across
the blinds skips them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from games.poker.engine.errors import InvalidCards, InvalidHandSetup

RANKS = "23456789TJQKA"
SUIT_ORDER = "cdhs"  # clubs < diamonds < hearts < spades


def card_order(card: str) -> tuple[int, int]:
    """Draw order of a card: rank first, then Spades > Hearts > Diamonds > Clubs."""
    if len(card) != 2 or card[0] not in RANKS or card[1] not in SUIT_ORDER:
        raise InvalidCards(f"not a card: {card!r}", card=card)
    return RANKS.index(card[0]), SUIT_ORDER.index(card[1])


def draw_for_button(draws: Mapping[int, str]) -> int:
    """The seat whose drawn card is highest (the draws must be distinct)."""
    if len(draws) < 2:
        raise InvalidHandSetup("the draw needs at least two players", code="poker_player_count")
    if len(set(draws.values())) != len(draws):
        raise InvalidCards("each player draws a different card")
    return max(draws, key=lambda seat: card_order(draws[seat]))


def deal_draw(seats: Sequence[int], deck: Sequence[str]) -> dict[int, str]:
    """One card from the top of a shuffled deck to each seat, in seat order."""
    return {seat: deck[k] for k, seat in enumerate(sorted(seats))}


def next_button(current: int, dealt_in: Sequence[int]) -> int:
    """The button for the next hand: the first seat after ``current``
    (clockwise, wrapping) among the seats dealt in to that hand."""
    if len(dealt_in) < 2:
        raise InvalidHandSetup("a hand needs at least two players", code="poker_player_count")
    seats = sorted(dealt_in)
    return next((seat for seat in seats if seat > current), seats[0])
