"""The hold'em hand aggregate against seed 001 / RULES.md: positions, betting
rules, side pots, split pots, uncalled bets, rake and refusals."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest

from games.poker.engine import errors
from games.poker.engine.events import (
    AntePosted,
    BlindPosted,
    HandEnded,
    HandMucked,
    HandShown,
    HandStarted,
    PotAwarded,
    RakeTaken,
    UncalledBetReturned,
    event_from_dict,
)
from games.poker.engine.hand import (
    Act,
    Action,
    DealHoleCards,
    Phase,
    SeatSpec,
    StartHand,
    apply,
    compute_pots,
    decide,
    legal_actions,
    next_deal,
    replay,
    step,
)
from games.poker.engine.rules import PotSplit, RakeRule, Variant, seed_rake_rule

from .helpers import Hand, config, short_ante_hand, two_odd_pots

THREE = {1: 200, 2: 200, 3: 200}
HOLES3 = {1: "2c3d", 2: "4h6s", 3: "8d9c"}


def test_three_handed_blinds_and_action_order() -> None:
    h = Hand(config(), THREE, button=3)
    blinds = h.of(BlindPosted)
    assert [(b.seat, b.kind, b.amount) for b in blinds] == [(1, "small", 1), (2, "big", 2)]
    assert h.s.phase is Phase.DEALING
    h.deal(HOLES3)
    assert h.to_act() == 3  # left of the big blind
    h.act(3, "call")
    h.act(1, "call")
    assert h.to_act() == 2  # the big blind's option
    h.act(2, "check")
    assert h.s.phase is Phase.BOARD
    h.board("KsQs7h")
    assert h.to_act() == 1  # first player left of the button


def test_button_wraps_round_the_seat_numbers() -> None:
    h = Hand(config(), {2: 100, 5: 100, 7: 100}, button=7)
    assert [(b.seat, b.kind) for b in h.of(BlindPosted)] == [(2, "small"), (5, "big")]
    h = Hand(config(), {2: 100, 5: 100, 7: 100}, button=2)
    assert [(b.seat, b.kind) for b in h.of(BlindPosted)] == [(5, "small"), (7, "big")]


def test_heads_up_button_posts_small_blind_and_acts_first_preflop_last_after() -> None:
    h = Hand(config(), {1: 100, 2: 100}, button=1)
    assert [(b.seat, b.kind, b.amount) for b in h.of(BlindPosted)] == [(1, "small", 1), (2, "big", 2)]
    h.deal({1: "AsKs", 2: "2c3d"})
    assert h.to_act() == 1
    h.act(1, "call")
    assert h.to_act() == 2
    h.act(2, "check")
    h.board("7h8h9d")
    assert h.to_act() == 2


def test_no_limit_minimum_raise_is_the_last_raise_increment() -> None:
    h = Hand(config(), THREE, button=3)
    h.deal(HOLES3)
    with pytest.raises(errors.BelowMinimumBet):
        h.act(3, "raise", 3)
    h.act(3, "raise", 4)  # a raise of one big blind
    with pytest.raises(errors.BelowMinimumBet):
        h.act(1, "raise", 5)
    h.act(1, "raise", 6)
    h.act(2, "raise", 9)  # raise by 3
    legal = h.legal()
    assert (legal.seat, legal.min_to, legal.max_to) == (3, 12, 200)


def short_all_in_hand() -> Hand:
    h = Hand(config(), {1: 200, 2: 17, 3: 200}, button=3)
    h.deal(HOLES3)
    h.act(3, "call")
    h.act(1, "call")
    h.act(2, "check")
    h.board("KsQs7h")
    h.act(1, "bet", 10)
    h.act(2, "all_in")  # to 15: a raise of 5, short of the 10 needed
    return h


def test_short_all_in_raise_does_not_reopen_betting_for_those_who_acted() -> None:
    h = short_all_in_hand()
    legal = h.legal()
    assert legal.seat == 3
    assert legal.can_raise
    h.act(3, "call")
    legal = h.legal()
    assert legal.seat == 1
    assert legal.call_amount == 5
    assert not legal.can_raise
    before = h.s
    with pytest.raises(errors.BettingNotReopened):
        h.act(1, "raise", 40)
    assert h.s == before
    h.act(1, "call")
    assert h.s.phase is Phase.BOARD


def test_short_all_ins_adding_up_to_a_full_raise_reopen_betting() -> None:
    h = Hand(config(), {1: 200, 2: 17, 3: 23, 4: 200}, button=4)
    h.deal({1: "2c3d", 2: "4h6s", 3: "8d9c", 4: "TdJd"})
    for seat in (3, 4, 1):
        h.act(seat, "call")
    h.act(2, "check")
    h.board("KsQs7h")
    h.act(1, "bet", 10)
    h.act(2, "all_in")  # 15
    h.act(3, "all_in")  # 21: the two short raises add up to 11 >= 10
    h.act(4, "call")
    legal = h.legal()
    assert legal.seat == 1
    assert legal.can_raise
    assert legal.min_to == 31


def bets_only(h: Hand, seat: int, size: int, *, refused: int) -> None:
    """``seat`` may not bet ``refused`` (a fixed-limit street's other size), and bets ``size``."""
    with pytest.raises(errors.NotFixedLimitSize):
        h.act(seat, "bet", refused)
    h.act(seat, "bet", size)


def test_fixed_limit_sizes_and_cap() -> None:
    h = Hand(config(Variant.FIXED_LIMIT), {1: 100, 2: 100, 3: 100}, button=3)
    h.deal(HOLES3)
    with pytest.raises(errors.NotFixedLimitSize):
        h.act(3, "raise", 3)
    h.act(3, "raise", 4)
    h.act(1, "raise", 6)
    h.act(2, "raise", 8)  # the big blind's bet and three raises: capped
    legal = h.legal()
    assert not legal.can_raise
    assert legal.refusal is errors.RaiseCapReached
    with pytest.raises(errors.RaiseCapReached):
        h.act(3, "raise", 10)
    h.act(3, "call")
    h.act(1, "call")
    h.board("KsQs7h")
    bets_only(h, 1, 2, refused=4)  # small bet on the flop
    h.act(2, "call")
    h.act(3, "call")
    h.board("2s")
    bets_only(h, 1, 4, refused=2)  # big bet on the turn


def test_pot_limit_maximum_is_the_pot() -> None:
    h = Hand(config(Variant.POT_LIMIT), {1: 100, 2: 100, 3: 100}, button=3)
    h.deal(HOLES3)
    with pytest.raises(errors.OverPotLimit):
        h.act(3, "raise", 8)
    h.act(3, "raise", 7)  # call 2, then raise the pot of 5
    legal = h.legal()
    assert legal.max_to == 23


def test_refusals_have_codes_and_change_nothing() -> None:
    h = Hand(config(), THREE, button=3)
    h.deal(HOLES3)
    before, count = h.s, len(h.events)
    cases = [
        (Act(1, Action.CALL), errors.NotYourTurn, "poker_not_your_turn"),
        (Act(3, Action.CHECK), errors.CannotCheck, "poker_cannot_check"),
        (Act(3, Action.RAISE, 500), errors.OverStack, "poker_over_stack"),
        (Act(3, Action.BET, 10), errors.BetNotAllowed, "poker_bet_not_allowed"),
        (Act(3, Action.RAISE), errors.AmountRequired, "poker_amount_required"),
        (Act(9, Action.FOLD), errors.UnknownSeat, "poker_unknown_seat"),
    ]
    for command, error, code in cases:
        with pytest.raises(error) as caught:
            decide(h.s, command)
        assert caught.value.code == code
    assert h.s == before
    assert len(h.events) == count
    h.act(3, "fold")
    h.act(1, "call")
    with pytest.raises(errors.PlayerFolded):
        h.act(3, "call")
    h.act(2, "check")
    with pytest.raises(errors.WrongPhase):
        h.act(1, "check")
    with pytest.raises(errors.InvalidCards):
        h.board("KsQs")
    with pytest.raises(errors.InvalidCards):
        h.board("KsQs2c")  # 2c is in seat 1's hand
    h.board("KsQs7h")
    h.act(1, "bet", 2)
    h.act(2, "fold")
    assert h.s.phase is Phase.COMPLETE
    with pytest.raises(errors.HandComplete):
        h.act(1, "check")


def test_start_is_refused_for_bad_tables() -> None:
    cfg = config()
    with pytest.raises(errors.InvalidHandSetup):
        decide(None, StartHand("x", cfg, (SeatSpec(1, "a", 100),), 1))
    with pytest.raises(errors.InvalidHandSetup):
        decide(None, StartHand("x", cfg, (SeatSpec(1, "a", 100), SeatSpec(2, "b", 100)), 3))
    with pytest.raises(errors.InvalidHandSetup):
        decide(None, StartHand("x", cfg, (SeatSpec(1, "a", 100), SeatSpec(1, "b", 100)), 1))
    eleven = tuple(SeatSpec(i, f"p{i}", 100) for i in range(1, 12))
    with pytest.raises(errors.InvalidHandSetup):
        decide(None, StartHand("x", cfg, eleven, 1))


def test_side_pots_and_uncalled_bet() -> None:
    h = Hand(config(), {1: 50, 2: 100, 3: 300}, button=3)
    h.deal({1: "AsAh", 2: "KsKh", 3: "QsQh"})
    h.act(3, "all_in")
    h.act(1, "all_in")
    h.act(2, "all_in")
    assert [(e.seat, e.amount) for e in h.of(UncalledBetReturned)] == [(3, 200)]
    for cards in ("2c7d9c", "Jd", "3h"):
        assert h.s.phase is Phase.BOARD
        h.board(cards)
    pots = h.of(PotAwarded)
    assert [(p.amount, p.eligible, p.winners) for p in pots] == [
        (150, (1, 2, 3), ((1, 150),)),
        (100, (2, 3), ((2, 100),)),
    ]
    assert (h.stack(1), h.stack(2), h.stack(3)) == (150, 100, 200)
    assert {e.seat for e in h.of(HandShown)} == {1, 2, 3}  # all-in hands are tabled


def test_split_pot_odd_chip_goes_to_first_winner_left_of_button() -> None:
    h = Hand(config(), THREE, button=3)
    h.deal({1: "2c3d", 2: "4h5h", 3: "4s5s"})
    h.act(3, "call")
    h.act(1, "fold")
    h.act(2, "check")
    h.check_down(("AsKdQh", "Jc", "Tc"), (2, 3))  # both play the board's straight
    (pot,) = h.of(PotAwarded)
    assert pot.amount == 5
    assert pot.winners == ((2, 3), (3, 2))
    h = Hand(config(), THREE, button=1)  # seat 2 small blind, 3 big blind, 1 button
    h.deal({1: "4s5s", 2: "2c3d", 3: "4h5h"})
    h.act(1, "call")
    h.act(2, "fold")
    h.act(3, "check")
    h.check_down(("AsKdQh", "Jc", "Tc"), (3, 1))
    (pot,) = h.of(PotAwarded)
    assert pot.winners == ((3, 3), (1, 2))


def test_tied_pots_split_each_on_its_own_at_tables() -> None:
    """RULES.md (``PotSplit.PER_POT``, the default): each pot is split on its
    own, its odd chip to the first winner left of the button: seat 1 takes
    the odd chip of both pots."""
    h = two_odd_pots(PotSplit.PER_POT)
    assert [(p.amount, p.eligible, p.winners) for p in h.of(PotAwarded)] == [
        (81, (1, 2, 3), ((1, 41), (2, 40))),
        (35, (1, 2), ((1, 18), (2, 17))),
    ]
    assert h.s.pots == (81, 35)
    assert h.s.stacks == (165 + 59, 164 + 57, 0, 175)


def test_pokerkit_split_merges_pots_left_with_the_same_players() -> None:
    """``PotSplit.POKERKIT`` (PHH files): seat 3's losing hand is killed, so
    the main pot is left with seats 1 and 2 like the side pot; the two merge
    into one pot of 116, split once: 58 each, no odd chip."""
    h = two_odd_pots(PotSplit.POKERKIT)
    assert [(p.index, p.amount, p.rake, p.eligible, p.winners) for p in h.of(PotAwarded)] == [
        (0, 116, 0, (1, 2), ((1, 58), (2, 58))),
    ]
    assert h.s.pots == (116,)
    assert h.s.split_pots == 1
    assert h.s.stacks == (165 + 58, 164 + 58, 0, 175)
    started = h.of(HandStarted)[0]
    assert started.pot_split == "pokerkit"
    assert event_from_dict(started.to_dict()) == started
    assert replay(h.events)[-1] == h.s  # the events rebuild the merged pots
    # Events stored before the rule existed read as the table rule.
    old = {key: value for key, value in started.to_dict().items() if key != "pot_split"}
    assert event_from_dict(old).pot_split == "per_pot"  # type: ignore[attr-defined]


def test_pokerkit_split_keeps_apart_pots_a_live_hand_holds_apart() -> None:
    """When seat 3 wins the main pot its hand is not killed: the main pot
    (seats 1, 2, 3) and the side pot (seats 1, 2) stay apart under both
    rules, and the side pot's odd chip goes to seat 1."""
    for split in PotSplit:
        h = two_odd_pots(split, short_hole="AhAd", river="Ac")  # four aces
        assert [(p.amount, p.eligible, p.winners) for p in h.of(PotAwarded)] == [
            (81, (1, 2, 3), ((3, 81),)),
            (35, (1, 2), ((1, 18), (2, 17))),
        ], split


def test_pokerkit_split_takes_the_rake_of_the_pots_it_merges() -> None:
    """Rake is the whole hand's, allocated over the pots as they are formed
    (the main pot first); a merged pot pays its parts' rake."""
    per_pot = two_odd_pots(PotSplit.PER_POT, rake=RakeRule())
    merged = two_odd_pots(PotSplit.POKERKIT, rake=RakeRule())
    (rake,) = per_pot.of(RakeTaken)
    assert rake.amount == 2  # 2.5 % of 116
    assert [(p.amount, p.rake) for p in per_pot.of(PotAwarded)] == [(81, 1), (35, 1)]
    assert merged.of(RakeTaken)[0].per_pot == (2,)
    assert [(p.amount, p.rake, p.winners) for p in merged.of(PotAwarded)] == [(116, 2, ((1, 57), (2, 57)))]


def test_fold_to_a_raise_returns_the_uncalled_part_and_no_flop_no_drop() -> None:
    rule = seed_rake_rule(Variant.NO_LIMIT, players=3, small_blind=50)
    h = Hand(config(blinds=(50, 100), rake=rule), {1: 10_000, 2: 10_000, 3: 10_000}, button=3)
    h.deal(HOLES3)
    h.act(3, "raise", 400)
    h.act(1, "fold")
    h.act(2, "fold")
    assert [(e.seat, e.amount) for e in h.of(UncalledBetReturned)] == [(3, 300)]
    assert h.of(RakeTaken)[0].amount == 0
    assert h.stack(3) == 10_150
    assert not h.of(HandShown)
    assert not h.of(HandMucked)
    rule = RakeRule(250, 0, 100, no_flop_no_drop=False)
    h = Hand(config(blinds=(50, 100), rake=rule), {1: 10_000, 2: 10_000, 3: 10_000}, button=3)
    h.deal(HOLES3)
    h.act(3, "raise", 400)
    h.act(1, "fold")
    h.act(2, "fold")
    assert h.of(RakeTaken)[0].amount == 6  # 2.5 % of 250, rounded down
    assert h.stack(3) == 10_150 - 6


def _flop_bet_called(rule: RakeRule, bet: int) -> Hand:
    """Three players limp, seat 1 bets ``bet`` on the flop, seat 2 calls."""
    h = Hand(config(blinds=(50, 100), rake=rule), {1: 10_000, 2: 10_000, 3: 10_000}, button=3)
    h.deal({1: "AsAh", 2: "KsKh", 3: "2c3d"})
    h.act(3, "call")
    h.act(1, "call")
    h.act(2, "check")
    h.board("7c8d9h")
    h.act(1, "bet", bet)
    h.act(2, "call")
    h.act(3, "fold")
    return h


def test_rake_after_the_flop_is_two_and_a_half_percent_rounded_down_and_capped() -> None:
    rule = seed_rake_rule(Variant.NO_LIMIT, players=3, small_blind=50)
    assert rule == RakeRule(250, 0, 100, True)
    h = _flop_bet_called(rule, 300)
    h.check_down(("Js", "4h"), (1, 2))
    assert h.s.rake == 22  # 900 * 2.5 % = 22.5
    assert h.stack(1) == 10_000 - 400 + 900 - 22
    h = _flop_bet_called(rule, 9_900)  # both all-in
    h.board("Js")
    h.board("4h")
    assert h.s.rake == 100  # capped at 1 euro for 2-3 players


def test_antes_and_straddle() -> None:
    h = Hand(config(blinds=(1, 2, 4), ante=1), {1: 100, 2: 100, 3: 100, 4: 100}, button=4)
    assert [(e.seat, e.amount) for e in h.of(AntePosted)] == [(1, 1), (2, 1), (3, 1), (4, 1)]
    assert [(e.seat, e.kind, e.amount) for e in h.of(BlindPosted)] == [
        (1, "small", 1),
        (2, "big", 2),
        (3, "straddle", 4),
    ]
    h.deal({1: "2c3d", 2: "4h6s", 3: "8d9c", 4: "TdJd"})
    assert h.to_act() == 4  # left of the straddle
    for seat in (4, 1, 2):
        h.act(seat, "call")
    legal = h.legal()
    assert legal.seat == 3
    assert legal.call_amount == 0
    assert legal.can_raise
    h.act(3, "check")
    assert h.s.pot_total == 20
    assert compute_pots(h.s.players)[0].amount == 20


def test_players_not_dealt_in_cannot_act() -> None:
    h = Hand(config(), {1: 100, 3: 100, 4: 100}, button=1)  # seat 2 sits out
    h.deal({1: "2c3d", 3: "4h6s", 4: "8d9c"})
    with pytest.raises(errors.UnknownSeat):
        h.act(2, "call")
    with pytest.raises(errors.InvalidCards):
        Hand(config(), {1: 100, 3: 100}, button=1).deal({1: "2c3d", 2: "4h6s", 3: "8d9c"})


def test_replay_gives_the_state_after_each_event() -> None:
    h = short_all_in_hand()
    h.act(3, "call")
    h.act(1, "call")
    h.board("2d")
    h.act(1, "check")
    h.act(3, "check")
    h.board("3s")
    h.act(1, "check")
    h.act(3, "check")
    states = replay(h.events)
    assert len(states) == len(h.events)
    assert states[-1] == h.s
    assert states[-1].phase is Phase.COMPLETE
    assert [s.version for s in states] == list(range(1, len(states) + 1))
    assert sum(states[-1].stacks) == 417
    assert isinstance(h.events[-1], HandEnded)
    for event in h.events:
        assert event_from_dict(json.loads(json.dumps(event.to_dict()))) == event


def test_step_equals_decide_then_apply_on_random_hands() -> None:
    """``step`` builds some states in one go; they must equal the replay."""
    rng = random.Random(7)
    deck = [r + s for r in "23456789TJQKA" for s in "shdc"]
    for hand_no in range(150):
        variant = rng.choice(list(Variant))
        n = rng.randint(2, 9)
        cfg = config(variant, ante=rng.choice([0, 0, 1]), rake=rng.choice([None, RakeRule()]))
        cfg = replace(cfg, pot_split=rng.choice(list(PotSplit)))
        seats = tuple(SeatSpec(i + 1, f"p{i}", rng.randint(1, 300)) for i in range(n))
        rng.shuffle(deck)
        state = None
        command: object = StartHand(f"h{hand_no}", cfg, seats, rng.randint(1, n))
        while True:
            fast, events = step(state, command)  # type: ignore[arg-type]
            slow = state
            for event in events:
                slow = apply(slow, event)
            assert fast == slow
            state = fast
            if state.phase is Phase.COMPLETE:
                break
            deal = next_deal(state, deck)
            if deal is not None:
                command = deal
                continue
            legal = legal_actions(state)
            assert legal is not None
            roll = rng.random()
            if legal.call_amount and roll < 0.2:
                command = Act(legal.seat, Action.FOLD)
            elif legal.can_raise and roll > 0.7:
                command = Act(legal.seat, Action.RAISE if state.max_bet else Action.BET, legal.max_to)
            else:
                command = Act(legal.seat, Action.CALL if legal.call_amount else Action.CHECK)
        assert sum(state.stacks) + state.rake == sum(s.stack for s in seats)


def test_hole_cards_must_cover_exactly_the_players() -> None:
    h = Hand(config(), THREE, button=3)
    with pytest.raises(errors.InvalidCards):
        h.do(DealHoleCards({1: ("As", "Ks"), 2: ("As", "2d"), 3: ("3c", "4c")}))
    with pytest.raises(errors.InvalidCards):
        h.do(DealHoleCards({1: ("As", "Ks"), 2: ("Qs", "Xd"), 3: ("3c", "4c")}))


def test_a_player_all_in_for_less_than_the_ante_wins_only_what_they_matched() -> None:
    """Seed 001 "Side Pots" and RULES.md: seat 3 put in 5, so it wins 5 from
    each of the three others (20), not the whole ante pot (35); the 15 the
    others put in over its 5, and their blinds and calls, are a side pot
    it cannot win."""
    h = short_ante_hand("AsAh")
    awards = h.of(PotAwarded)
    assert [(a.amount, a.eligible) for a in awards] == [(20, (1, 2, 3, 4)), (45, (1, 2, 4))]
    assert awards[0].winners == ((3, 20),)
    assert h.stack(3) == 20
    assert sum(h.s.stacks) == 3005  # no chip created or lost
    assert [(p.amount, p.eligible) for p in compute_pots(h.s.players)] == [(20, (0, 1, 2, 3)), (45, (0, 1, 3))]


def test_the_ante_nobody_can_match_is_returned_not_won() -> None:
    """Only seat 1 covers the 10-chip ante; seat 2 has 5 and seat 3 has 3:
    the part of seat 1's ante over the next largest (5) is uncalled and never
    goes into a pot (as pokerkit's ante trimming)."""
    h = Hand(config(blinds=(5, 10), ante=10), {1: 1000, 2: 5, 3: 3}, button=3)
    assert [(e.seat, e.amount, e.all_in) for e in h.of(AntePosted)] == [(1, 5, False), (2, 5, True), (3, 3, True)]
    h.deal({1: "2c3d", 2: "4h6s", 3: "AsAh"})
    for cards in ("KsQd7h", "Jc", "2s"):  # nobody can bet: the board runs out
        h.board(cards)
    assert h.s.phase is Phase.COMPLETE
    assert [(e.seat, e.amount) for e in h.of(UncalledBetReturned)] == [(1, 5)]  # its small blind
    assert [(a.amount, a.eligible) for a in h.of(PotAwarded)] == [(9, (1, 2, 3)), (4, (1, 2))]
    assert h.stack(3) == 9
    assert sum(h.s.stacks) == 1008
