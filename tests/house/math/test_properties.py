"""Property tests (Hypothesis) of settlement for random cards, stakes and decisions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from games.cards.cards import Card
from games.house.rules.bonus_spin import WheelSegment
from games.house.rules.definitions import Play, settle_round
from games.house.rules.registry import GAMES, pay_table, table_numbers

PLAYS = {
    "uth": [Play((), m, False) for m in (4, 3, 2, 1)] + [Play((), 0, True)],
    "xtreme": [Play((), m, False) for m in (4, 3, 2, 1)] + [Play((), 0, True)],
    "casino_holdem": [Play((), 2, False), Play((), 0, True)],
}
SIDE = {"uth": ["best_five"], "casino_holdem": ["bonus"], "xtreme": ["player_bonus", "hole_card_bonus", "stax"]}


@st.composite
def rounds(draw):
    game = draw(st.sampled_from(sorted(GAMES)))
    cards = [Card.from_index(i) for i in draw(st.permutations(range(52)))[:9]]
    stakes = {"ante": draw(st.integers(1, 10_000))}
    tables = GAMES[game].default_pay_tables()
    for wager in SIDE[game]:
        if draw(st.booleans()):
            stakes[wager] = draw(st.integers(1, 10_000))
            tables[wager] = pay_table(game, wager, draw(st.sampled_from(table_numbers(game, wager))))
    if game == "xtreme" and draw(st.booleans()):
        stakes["bonus_spin"] = draw(st.sampled_from([100, 200, 500]))
    return game, cards, stakes, tables


def settle(game, cards, stakes, tables, play):
    return settle_round(
        GAMES[game],
        tables=tables,
        player=cards[:2],
        dealer=cards[2:4],
        board=cards[4:],
        stakes=stakes,
        decisions=play,
        progressive_awards={"star": 1_000, "spade": 900, "heart": 800, "diamond": 700, "club": 600},
        wheel_spin=WheelSegment("10x", 10, 1),
    )


@settings(max_examples=300, deadline=None)
@given(rounds())
def test_amounts_never_negative_push_returns_stake_loss_returns_nothing(args):
    game, cards, stakes, tables = args
    for play in PLAYS[game]:
        result = settle(game, cards, stakes, tables, play)
        for wager in result.wagers:
            assert wager.returned >= 0
            assert wager.rounding_kept >= 0
            assert wager.rounding_kept < 1
            if wager.outcome == "push":
                assert wager.returned == wager.stake
            if wager.outcome == "lose":
                assert wager.returned == 0
            if wager.outcome == "win" and wager.progressive is None:
                assert wager.returned > wager.stake or (wager.wager == "stax" and wager.returned >= 4 * wager.stake)
        assert result.net == result.returned - result.staked


@settings(max_examples=200, deadline=None)
@given(rounds())
def test_side_bets_do_not_depend_on_decisions(args):
    game, cards, stakes, tables = args
    side = {w for w in stakes if w in SIDE[game] or w == "bonus_spin"}
    seen = None
    for play in PLAYS[game]:
        result = settle(game, cards, stakes, tables, play)
        mine = {w.wager: w for w in result.wagers if w.wager in side}
        assert seen is None or mine == seen
        seen = mine


@settings(max_examples=200, deadline=None)
@given(rounds())
def test_folding_loses_exactly_the_ante_and_its_automatic_wager(args):
    game, cards, stakes, tables = args
    result = settle(game, cards, stakes, tables, PLAYS[game][-1])
    main = {w.wager: w for w in result.wagers if GAMES[game].wager(w.wager).main_rule is not None}
    expected = {"uth": {"ante", "ante_plus"}, "xtreme": {"ante", "xtra_bonus"}, "casino_holdem": {"ante"}}
    assert set(main) == expected[game]
    assert all(w.outcome == "lose" and w.returned == 0 for w in main.values())
