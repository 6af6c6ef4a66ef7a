"""The fixed-limit raise cap is a table rule (issue #23): bets and raises a
street, whether the big blind counts as the preflop bet, and whether
heads-up play is uncapped. The default is a bet and three raises."""

from __future__ import annotations

import pytest

from games.poker.engine import errors
from games.poker.engine.rules import POKERKIT_CAP, TABLE_DEFAULT_CAP, HandConfig, RaiseCap, Variant

from .helpers import Hand

FL = Variant.FIXED_LIMIT


def fixed(cap: RaiseCap, seats: int = 3) -> Hand:
    cfg = HandConfig(
        variant=FL,
        blinds_or_straddles=(1, 2),
        raise_cap=cap.bets,
        blind_is_bet=cap.blind_is_bet,
        heads_up_uncapped=cap.heads_up_uncapped,
    )
    h = Hand(cfg, dict.fromkeys(range(1, seats + 1), 200), button=seats)
    h.deal({1: "AsAh", 2: "KsKh", 3: "2c3d", 4: "7s8s"} if seats == 4 else {1: "AsAh", 2: "KsKh", 3: "2c3d"})
    return h


def raises_until_capped(h: Hand, order: tuple[int, ...], step: int, start: int) -> int:
    """Raise round ``order`` until refused; the number of raises made."""
    made, to = 0, start
    while True:
        seat = order[made % len(order)]
        legal = h.legal()
        assert legal.seat == seat
        if not legal.can_raise:
            assert legal.refusal is errors.RaiseCapReached
            before = h.s
            with pytest.raises(errors.RaiseCapReached) as refused:
                h.act(seat, "raise", to + step)
            assert refused.value.code == "poker_raise_cap_reached"
            assert h.s == before
            return made
        to += step
        h.act(seat, "raise", to)
        made += 1


def test_default_is_a_bet_and_three_raises_the_big_blind_the_preflop_bet() -> None:
    assert HandConfig(variant=FL, blinds_or_straddles=(1, 2)).raise_cap == TABLE_DEFAULT_CAP.bets == 4
    h = fixed(TABLE_DEFAULT_CAP)
    assert raises_until_capped(h, (3, 1, 2), 2, 2) == 3  # big blind + three raises
    h.act(3, "call")
    h.act(1, "call")
    h.board("7c8d9h")
    h.act(1, "bet", 2)
    assert raises_until_capped(h, (2, 3, 1), 2, 2) == 3  # bet + three raises


def test_pokerkits_cap_counts_actions_only_a_fifth_bet_preflop() -> None:
    h = fixed(POKERKIT_CAP)
    assert raises_until_capped(h, (3, 1, 2), 2, 2) == 4
    h.act(1, "call")
    h.act(2, "call")
    h.board("7c8d9h")
    h.act(1, "bet", 2)
    assert raises_until_capped(h, (2, 3, 1), 2, 2) == 3  # postflop the same: four bet/raise actions


def test_a_table_cap_of_two_bets() -> None:
    h = fixed(RaiseCap(2))
    assert raises_until_capped(h, (3, 1, 2), 2, 2) == 1


def test_heads_up_uncapped_lifts_the_cap_only_with_two_players_in_the_hand() -> None:
    h = fixed(RaiseCap(4, heads_up_uncapped=True), seats=4)
    h.act(3, "fold")
    assert raises_until_capped(h, (4, 1, 2), 2, 2) == 3  # three players in: capped
    h.act(4, "fold")  # two left: the cap is lifted
    legal = h.legal()
    assert legal.seat == 1
    assert legal.can_raise
    for seat, to in ((1, 10), (2, 12), (1, 14), (2, 16), (1, 18)):
        h.act(seat, "raise", to)
    assert h.s.max_bet == 18


def test_no_cap_at_all() -> None:
    h = fixed(RaiseCap(None))
    for seat, to in ((3, 4), (1, 6), (2, 8), (3, 10), (1, 12), (2, 14)):
        h.act(seat, "raise", to)
    assert h.s.raise_count == 7


@pytest.mark.parametrize("bad", [0, -1, True])
def test_a_cap_below_one_bet_is_refused(bad: int) -> None:
    with pytest.raises(errors.InvalidHandSetup) as refused:
        HandConfig(variant=FL, blinds_or_straddles=(1, 2), raise_cap=bad)
    assert refused.value.code == "poker_invalid_raise_cap"


def test_hands_stored_before_the_setting_replay_under_the_rule_of_their_time() -> None:
    """A ``poker.hand_started`` stored before issue #23 has no
    ``blind_is_bet``, ``heads_up_uncapped`` nor ``reopening``: it reads as
    the table rule then (the big blind the bet, capped heads-up, our
    reopening rule)."""
    from games.poker.engine.events import HandStarted, event_from_dict
    from games.poker.engine.hand import apply
    from games.poker.engine.rules import Reopening

    old = {
        "type": "poker.hand_started", "hand_id": "h0", "variant": "fixed_limit", "button": 2,
        "seats": [[1, "a", 100], [2, "b", 100]], "blinds_or_straddles": [1, 2], "antes": [], "ante": 0,
        "min_bet": None, "small_bet": None, "big_bet": None, "raise_cap": 4, "rake": None,
    }  # fmt: skip
    event = event_from_dict(old)
    assert isinstance(event, HandStarted)
    config = apply(None, event).config
    assert (config.raise_cap, config.blind_is_bet, config.heads_up_uncapped) == (4, True, False)
    assert config.reopening is Reopening.ACTED
    assert event_from_dict(event.to_dict()) == event
