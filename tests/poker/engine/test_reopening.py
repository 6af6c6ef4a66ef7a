"""The reopening rule for short all-ins (RULES.md: "a short all-in raise does
not reopen betting", which protects only players who have already acted on a
wager this round) and pokerkit's own rule, which PHH files are played under
(issue #23). Each scripted hand also runs through pokerkit in
``test_differential.py``."""

from __future__ import annotations

import pytest

from games.poker.engine import errors
from games.poker.engine.hand import Phase
from games.poker.engine.rules import HandConfig, Reopening, Variant
from games.poker.tooling.differential import SCRIPTED_HANDS, play_scripted

from .helpers import Hand


def four_handed(stacks: tuple[int, int, int, int], reopening: Reopening = Reopening.ACTED) -> Hand:
    cfg = HandConfig(variant=Variant.NO_LIMIT, blinds_or_straddles=(1, 2), reopening=reopening)
    h = Hand(cfg, dict(enumerate(stacks, start=1)), button=4)
    h.deal({1: "2c3d", 2: "4h6s", 3: "8d9c", 4: "TdJd"})
    return h


def limped_to_the_flop(stacks: tuple[int, int, int, int]) -> Hand:
    h = four_handed(stacks)
    h.act(3, "call")
    h.act(4, "call")
    h.act(1, "call")
    h.act(2, "check")
    h.board("KsQs7h")
    return h


def test_issue_23_hand_a_player_who_only_checked_may_raise_a_short_all_in_bet() -> None:
    h = limped_to_the_flop((600, 600, 600, 3))
    for seat in (1, 2, 3):
        h.act(seat, "check")
    h.act(4, "all_in")  # a bet of 1, below the minimum bet of 2
    assert h.s.max_bet == 1
    h.act(1, "call")
    legal = h.legal()
    assert (legal.seat, legal.can_raise, legal.min_to, legal.max_to) == (2, True, 3, 598)
    h.act(2, "raise", 590)  # refused before issue #23 (poker_betting_not_reopened)
    assert h.s.max_bet == 590
    legal = h.legal()
    assert (legal.seat, legal.can_raise) == (3, True)


def test_short_all_in_bet_after_a_check_then_the_caller_may_re_raise_a_full_raise() -> None:
    h = limped_to_the_flop((300, 3, 300, 300))
    h.act(1, "check")
    h.act(2, "all_in")  # bets 1
    h.act(3, "call")
    h.act(4, "call")
    h.act(1, "raise", 3)  # the checker: every option
    legal = h.legal()
    assert (legal.seat, legal.can_raise) == (3, True)  # a full raise reopens for the caller


def test_short_all_in_raise_after_a_call_the_caller_may_only_call_or_fold() -> None:
    h = limped_to_the_flop((300, 300, 17, 300))
    h.act(1, "bet", 10)
    h.act(2, "call")
    h.act(3, "all_in")  # to 15: 5 more, short of a full raise of 10
    legal = h.legal()
    assert (legal.seat, legal.can_raise) == (4, True)  # yet to act: every option
    h.act(4, "call")
    for seat in (1, 2):  # the bettor, then the caller
        legal = h.legal()
        assert (legal.seat, legal.can_raise, legal.refusal) == (seat, False, errors.BettingNotReopened)
        before = h.s
        with pytest.raises(errors.BettingNotReopened) as refused:
            h.act(seat, "raise", 40)
        assert refused.value.code == "poker_betting_not_reopened"
        assert h.s == before  # nothing changed
        h.act(seat, "call")
    assert h.s.phase is Phase.BOARD


def test_short_all_ins_adding_up_to_a_full_raise_reopen_for_the_bettor_and_the_caller() -> None:
    cfg = HandConfig(variant=Variant.NO_LIMIT, blinds_or_straddles=(1, 2))
    h = Hand(cfg, {1: 300, 2: 300, 3: 17, 4: 22, 5: 300}, button=5)
    h.deal({1: "2c3d", 2: "4h6s", 3: "8d9c", 4: "TdJd", 5: "AsAh"})
    for seat, action in ((3, "call"), (4, "call"), (5, "call"), (1, "call"), (2, "check")):
        h.act(seat, action)
    h.board("KsQs7h")
    h.act(1, "bet", 10)
    h.act(2, "call")
    h.act(3, "all_in")  # 15: short
    h.act(4, "all_in")  # 20: short, but 10 more than the bettor and the caller acted on
    h.act(5, "call")
    legal = h.legal()
    assert (legal.seat, legal.can_raise, legal.min_to) == (1, True, 30)
    h.act(1, "raise", 30)
    legal = h.legal()
    assert (legal.seat, legal.can_raise) == (2, True)


def short_all_in_raise_over_a_limper(reopening: Reopening) -> Hand:
    h = four_handed((300, 300, 300, 3), reopening)
    h.act(3, "call")  # the limper
    h.act(4, "all_in")  # to 3
    h.act(1, "call")
    h.act(2, "call")
    return h


def test_preflop_short_all_in_raise_over_a_limper_our_rule_and_pokerkits() -> None:
    # Ours: the limper acted on the big blind's wager; a raise of 1 is short.
    legal = short_all_in_raise_over_a_limper(Reopening.ACTED).legal()
    assert (legal.seat, legal.can_raise, legal.refusal) == (3, False, errors.BettingNotReopened)
    # pokerkit's rule (PHH): the round's first raise is a full one whatever its size.
    legal = short_all_in_raise_over_a_limper(Reopening.POKERKIT).legal()
    assert (legal.seat, legal.can_raise, legal.min_to) == (3, True, 5)


@pytest.mark.parametrize(
    ("script", "reopening"),
    [(s, r) for s in SCRIPTED_HANDS for r in s.rules],
    ids=[f"{r.value}: {s.name}" for s in SCRIPTED_HANDS for r in s.rules],
)
def test_scripted_short_all_in_hands(script: object, reopening: Reopening) -> None:
    from games.poker.tooling.differential import Scripted

    assert isinstance(script, Scripted)
    final = play_scripted(script, reopening)
    assert final.phase is Phase.COMPLETE
    assert sum(final.stacks) == sum(script.stacks)
