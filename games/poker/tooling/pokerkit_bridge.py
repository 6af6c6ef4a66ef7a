"""Drive ``pokerkit`` (a test/benchmark dependency) with our engine's stakes.

Player ``i`` in pokerkit is our position ``i`` (left of the button first,
the button last; heads-up position 0 is the big blind), which is also PHH's
``p{i+1}``. pokerkit's rake hook is called once per pot; ``SeedRake`` makes
it rake the whole pot the way ``RakeRule`` does so that rake can be
compared, not only stacks.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Sequence
from typing import Any

from pokerkit import (
    Automation,
    BetCollection,
    Card,
    FixedLimitTexasHoldem,
    NoLimitTexasHoldem,
    State,
)
from pokerkit.games import PotLimitPokerMixin, TexasHoldemMixin, UnfixedLimitHoldem

from games.poker.engine.hand import antes_are_contributions
from games.poker.engine.rules import HandConfig, RakeRule, Variant, allocate_rake


class PotLimitTexasHoldem(PotLimitPokerMixin, TexasHoldemMixin, UnfixedLimitHoldem):
    """pokerkit has no pot-limit hold'em class (nor a PHH code); its parts do."""


AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.CHIPS_PUSHING,
    Automation.CHIPS_PULLING,
)
FULL_AUTOMATIONS = (
    *AUTOMATIONS,
    Automation.HAND_KILLING,
    Automation.CARD_BURNING,
    Automation.HOLE_DEALING,
    Automation.BOARD_DEALING,
    Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
)


class SeedRake:
    """A pokerkit rake hook taking ``RakeRule`` of the whole pot, split over
    the pots like our engine. pokerkit calls the hook once per pot each time
    it lists the pots (main pot first), and only with the amount; the pot's
    index is read from the length of the list pokerkit's generator is
    building. When everyone folded, pokerkit leaves the winner's last bet out
    of the pot; the matched part of it is added back to find the pot a house
    rakes."""

    def __init__(self, rule: RakeRule, natural_pots: list[int] | None = None) -> None:
        self.rule = rule
        self.pots: list[int] = []
        self.total = 0
        # The pots before pokerkit killed the losing hands (killing merges
        # neighbouring pots left with the same eligible players).
        self.natural_pots = natural_pots if natural_pots is not None else []

    def __call__(self, amount: int, state: State) -> tuple[int, int]:
        if state.street_index is not None:
            return 0, amount
        index = len(sys._getframe(1).f_locals["pots"])
        state.rake = _no_rake
        try:
            pots = [pot.amount for pot in state.pots]
        finally:
            state.rake = self
        total = sum(pots)
        if sum(state.statuses) == 1:
            total += _matched_bet(state, state.statuses.index(True))
        flop_seen = len(state.board_cards) >= 3  # one entry per dealt board card
        rake = min(self.rule.amount(total, flop_seen=flop_seen), sum(pots))
        self.pots, self.total = pots, total
        raked = min(_allocation(rake, pots, self.natural_pots)[index], amount)
        return raked, amount - raked


def _allocation(rake: int, pots: list[int], natural: list[int]) -> list[int]:
    if sum(natural) != sum(pots) or len(natural) <= len(pots):
        return list(allocate_rake(rake, pots))
    shares = allocate_rake(rake, natural)
    merged: list[int] = []
    k = 0
    for amount in pots:
        taken = 0
        while amount > 0 and k < len(natural):
            amount -= natural[k]
            taken += shares[k]
            k += 1
        merged.append(taken)
    return merged


def taken(state: State) -> int:
    """The rake pokerkit took in a finished hand."""
    return sum(pot.raked_amount for pot in state._pots or ())


def _no_rake(amount: int, state: State) -> tuple[int, int]:
    return 0, amount


def _matched_bet(state: State, winner: int) -> int:
    bet = state.bets[winner]
    if bet <= 0:
        return 0
    for operation in reversed(state.operations):
        if isinstance(operation, BetCollection):
            return min(bet, max(operation.bets))
    return 0


def create_state(
    config: HandConfig,
    stacks: Sequence[int],
    *,
    rake: Any = None,
    automations: tuple[Automation, ...] = AUTOMATIONS,
) -> State:
    """A pokerkit state for our stakes. Antes count as contributions when
    every player owes the same one (pokerkit's ``ante_trimming_status``
    true); a big-blind or button ante is dead money in the main pot (false):
    ``hand.antes_are_contributions``."""
    n = len(stacks)
    trimming = antes_are_contributions(config, n)
    antes: Any = config.antes if config.antes else config.ante
    blinds = config.blinds_or_straddles
    kwargs: dict[str, Any] = {} if rake is None else {"rake": rake}
    game: Any
    if config.variant is Variant.FIXED_LIMIT:
        game = FixedLimitTexasHoldem(
            automations, trimming, antes, blinds, config.street_min_bet(0), config.street_min_bet(2), **kwargs
        )
    elif config.variant is Variant.POT_LIMIT:
        game = PotLimitTexasHoldem(automations, trimming, antes, blinds, config.street_min_bet(0), **kwargs)
    else:
        game = NoLimitTexasHoldem(automations, trimming, antes, blinds, config.street_min_bet(0), **kwargs)
    state: State = game(tuple(stacks), n)
    return state


def use_deck(state: State, deck: Sequence[str]) -> None:
    """Make pokerkit deal from our shuffled deck (same order, same burns)."""
    state.deck_cards = deque(Card.parse("".join(deck)))


def deal_hole(state: State, cards_by_position: Sequence[Sequence[str]]) -> None:
    """One card at a time round the table from player 0, twice."""
    for round_ in range(2):
        for i, cards in enumerate(cards_by_position):
            state.deal_hole(cards[round_], i)
