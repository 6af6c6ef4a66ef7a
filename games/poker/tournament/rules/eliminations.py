"""Eliminations: finishing places and prizes (issue #23; pure, no Django).

Rules (issue #23 "Eliminations"; the tie's odd chips follow RULES.md's split
pot rule, the only rule the seed and RULES.md give for an indivisible share):

- Players are eliminated in order: a player busted earlier finishes lower.
  With ``n`` players left before a hand, the ``k`` players it busts take
  places ``n - k + 1`` to ``n``.
- Several busted in the same hand are ranked by their stack at the start of
  that hand: the bigger stack finishes higher. (Busts "in the same hand" at
  several tables, as in hand-for-hand play, are one group: the caller decides
  what a group is.)
- Busted players with equal start stacks tie: each is given the best of the
  tied places, and the tied places' prizes are summed and split equally,
  rounded down. The remainder (fewer chips than tied players) goes, all of
  it, to the first tied player in the group's order, which the caller gives
  as seat order starting left of the button: as odd chips of a split pot go
  to the first winner left of the button. So every place's money is paid and
  the prizes still sum to the pool.
- The tournament ends when one player holds every chip: that player is the
  winner, place 1, and takes place 1's prize.

Player keys are strings (the services' registration ids); stacks are
tournament chips, prizes minor units of money.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby

from games.poker.tournament.rules.errors import InvalidFinish
from games.poker.tournament.rules.payouts import Payouts


@dataclass(frozen=True, slots=True)
class Bust:
    """A player busted in a hand, with their stack (tournament chips) at its start."""

    player: str
    start_stack: int


@dataclass(frozen=True, slots=True)
class Finish:
    """A player's result: ``place`` (the best of the tied places), ``tied``
    (how many share it; 1 for none) and ``prize`` (minor units; 0 outside the money)."""

    player: str
    place: int
    tied: int
    prize: int


def _prize(by_place: Sequence[int], place: int) -> int:
    return by_place[place - 1] if 1 <= place <= len(by_place) else 0


def rank_bust(group: Sequence[Bust], players_left: int, by_place: Sequence[int]) -> tuple[Finish, ...]:
    """Places and prizes of the players busted in one hand, ``players_left``
    being the number still in the tournament when the hand began (the busted
    included). ``group`` is in seat order from the button (the tie's order);
    ``by_place[i]`` is place ``i + 1``'s prize. Best place first."""
    if not group:
        raise InvalidFinish("A bust needs at least one player.")
    players = [bust.player for bust in group]
    if len(set(players)) != len(players):
        raise InvalidFinish("A player is busted twice in one hand.", players=players)
    for bust in group:
        stack = bust.start_stack
        if isinstance(stack, bool) or not isinstance(stack, int) or stack <= 0:
            raise InvalidFinish("A busted player started the hand with chips.", player=bust.player, stack=repr(stack))
    if isinstance(players_left, bool) or not isinstance(players_left, int) or players_left <= len(group):
        raise InvalidFinish("Someone must survive the hand.", players_left=players_left, busted=len(group))
    # Stable sort: equal stacks keep the group's (seat) order.
    ordered = sorted(group, key=lambda bust: -bust.start_stack)
    place = players_left - len(group) + 1
    finishes: list[Finish] = []
    for _, tied_iter in groupby(ordered, key=lambda bust: bust.start_stack):
        tied = list(tied_iter)
        share = sum(_prize(by_place, p) for p in range(place, place + len(tied)))
        each, remainder = divmod(share, len(tied))
        for index, bust in enumerate(tied):
            finishes.append(Finish(bust.player, place, len(tied), each + (remainder if index == 0 else 0)))
        place += len(tied)
    return tuple(finishes)


def standings(busts: Iterable[Sequence[Bust]], winner: str, payouts: Payouts | Sequence[int]) -> tuple[Finish, ...]:
    """Every player's place and prize, given the busts in elimination order
    (first busted first, one group per hand) and the winner who holds every
    chip. Best place first; the prizes sum to every paid place's money (the
    whole pool when the field is at least as large as the paid places)."""
    by_place = payouts.by_place if isinstance(payouts, Payouts) else tuple(payouts)
    groups = [tuple(group) for group in busts]
    everyone = [bust.player for group in groups for bust in group] + [winner]
    if len(set(everyone)) != len(everyone):
        raise InvalidFinish("A player finishes twice.", players=everyone)
    players_left = len(everyone)
    if len(by_place) > players_left:
        raise InvalidFinish(
            "More places are paid than players finished: compute the payouts with the entrants.",
            paid_places=len(by_place),
            players=players_left,
        )
    result: list[Finish] = []
    for group in groups:
        result[:0] = rank_bust(group, players_left, by_place)
        players_left -= len(group)
    return (Finish(winner, 1, 1, _prize(by_place, 1)), *result)


def champion(stacks: Mapping[str, int]) -> str | None:
    """The winner once one player holds every chip (the only one with chips),
    else ``None`` while the tournament goes on."""
    holding = [player for player, stack in stacks.items() if stack > 0]
    return holding[0] if len(holding) == 1 else None
