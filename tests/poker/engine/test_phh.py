"""PHH: our files load in pokerkit, pokerkit's load in our engine, and
``poker_replay`` prints the result."""

from __future__ import annotations

import json
import random
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from pokerkit import Automation, FixedLimitTexasHoldem, HandHistory, NoLimitTexasHoldem

from games.poker.engine import hand as engine
from games.poker.engine.errors import BelowMinimumBet, RaiseCapReached
from games.poker.engine.events import Event
from games.poker.engine.phh import PhhError, read_phh, replay_phh, write_phh
from games.poker.engine.rules import (
    POKERKIT_CAP,
    TABLE_DEFAULT_CAP,
    HandConfig,
    PotSplit,
    RakeRule,
    Reopening,
    Variant,
)
from games.poker.tooling import differential

from .helpers import Hand, config, short_ante_hand, two_odd_pots

AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.CARD_BURNING,
    Automation.HOLE_DEALING,
    Automation.BOARD_DEALING,
    Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    Automation.HAND_KILLING,
    Automation.CHIPS_PUSHING,
    Automation.CHIPS_PULLING,
)

EXAMPLE = """\
variant = "NT"
ante_trimming_status = true
antes = [0, 0, 0]
blinds_or_straddles = [50, 100, 0]
min_bet = 100
starting_stacks = [10000, 10000, 10000]
actions = [
  "d dh p1 AcAd", "d dh p2 ????", "d dh p3 KsKh",
  "p3 cbr 300", "p1 cbr 1000", "p2 f", "p3 cc",
  "d db 2c7d9h", "p1 cbr 1500", "p3 cc",
  "d db Js", "p1 cc", "p3 cc",
  "d db 3s", "p1 cbr 2000", "p3 f",
]
"""


def test_replay_of_a_hand_written_by_hand() -> None:
    _events, state = replay_phh(EXAMPLE)
    # p1 wins the 5,100 pot (2,500 each from p1 and p3, p2's big blind); the river bet comes back.
    assert state.stacks == (12_600, 9_900, 7_500)
    assert state.pots == (5_100,)
    assert state.rake == 0
    _, raked = replay_phh(EXAMPLE, rake=RakeRule(250, 0, 100))
    assert raked.rake == 100
    assert raked.stacks == (12_500, 9_900, 7_500)


def _our_hands(count: int, seed: int) -> list[tuple[list[Event], engine.HandState, differential.Spec]]:
    """Random hands played by the differential driver, with their events."""
    rng = random.Random(seed)
    hands = []
    for _ in range(count):
        spec = differential.random_spec(rng)
        events: list[Event] = []
        final = differential.play(spec, rng, events=events)
        hands.append((events, final, spec))
    return hands


def test_our_phh_files_load_in_pokerkit_and_back_in_ours() -> None:
    checked = {"no_limit": 0, "fixed_limit": 0, "pot_limit": 0}
    for events, final, spec in _our_hands(200, seed=11):
        text = write_phh(events)
        _, again = replay_phh(text, rake=spec.config.rake)
        assert again.stacks == final.stacks
        assert again.pots == final.pots
        assert again.rake == final.rake
        checked[spec.config.variant.value] += 1
        if spec.config.variant is Variant.POT_LIMIT:
            assert 'variant = "PT"' in text  # our extension; pokerkit has no PL hold'em code
            continue
        _, rake_free = replay_phh(text)
        *_, theirs = HandHistory.loads(text)
        if tuple(theirs.stacks) != rake_free.stacks:
            # docs/poker.md: pokerkit merges tied side pots after killing hands; odd chips may differ.
            assert rake_free.split_pots
            assert sum(theirs.stacks) == sum(rake_free.stacks)
    assert min(checked.values()) > 30


def _pokerkit_hand(rng: random.Random, fixed: bool) -> tuple[str, tuple[int, ...]]:
    n = rng.randint(2, 9)
    stack = rng.choice([40, 200, 1000])
    antes = rng.choice([0, 1])
    blinds = (1, 2, 4) if n >= 4 and rng.random() < 0.3 else (1, 2)
    game: FixedLimitTexasHoldem | NoLimitTexasHoldem
    if fixed:
        game = FixedLimitTexasHoldem(AUTOMATIONS, True, antes, blinds, 2, 4)
    else:
        game = NoLimitTexasHoldem(AUTOMATIONS, True, antes, blinds, 2)
    state = game((stack,) * n, n)  # equal stacks (differential.run_pokerkit_replay: random ones)
    while state.status:
        roll = rng.random()
        if state.can_complete_bet_or_raise_to() and roll > 0.7:  # pokerkit's own cap: PHH means its rules
            low = state.min_completion_betting_or_raising_to_amount
            high = state.max_completion_betting_or_raising_to_amount
            assert low is not None
            assert high is not None
            state.complete_bet_or_raise_to(rng.choice([low, high, rng.randint(low, high)]))
        elif state.checking_or_calling_amount and roll < 0.2:
            state.fold()
        else:
            state.check_or_call()
    return HandHistory.from_game_state(game, state).dumps(), tuple(state.stacks)


@pytest.mark.parametrize("fixed", [False, True], ids=["NT", "FT"])
def test_pokerkit_phh_files_replay_in_our_engine(fixed: bool) -> None:
    rng = random.Random(5)
    for _ in range(150):
        text, stacks = _pokerkit_hand(rng, fixed)
        _, state = replay_phh(text)
        assert state.stacks == stacks, text


def test_written_file_fields() -> None:
    h = Hand(config(Variant.FIXED_LIMIT, ante=1), {3: 100, 5: 100, 8: 100}, button=8)
    h.deal({3: "AsAh", 5: "KsKh", 8: "2c3d"})
    h.act(8, "fold")
    h.act(3, "call")
    h.act(5, "check")
    h.check_down(("7c8d9h", "Js", "4h"), (3, 5))
    text = write_phh(h.events, extra={"currency": "EUR"})
    hand = read_phh(text)
    assert hand.fields["variant"] == "FT"
    assert hand.fields["seats"] == [3, 5, 8]
    assert hand.fields["antes"] == [1, 1, 1]
    assert hand.fields["small_bet"] == 2
    assert hand.fields["big_bet"] == 4
    assert hand.fields["finishing_stacks"] == list(h.s.stacks)
    assert hand.fields["currency"] == "EUR"
    assert "p1 sm AsAh" in hand.fields["actions"]
    *_, theirs = HandHistory.loads(text)
    assert tuple(theirs.stacks) == h.s.stacks


def test_unreadable_files_are_refused() -> None:
    with pytest.raises(PhhError) as caught:
        read_phh(EXAMPLE.replace('"NT"', '"PO"'))
    assert caught.value.code == "phh_variant_unsupported"
    with pytest.raises(PhhError):
        read_phh("variant = ")
    with pytest.raises(PhhError) as caught:
        replay_phh(EXAMPLE.replace('"d db 3s", "p1 cbr 2000", "p3 f",', ""))
    assert caught.value.code == "phh_incomplete"
    with pytest.raises(BelowMinimumBet):
        replay_phh(EXAMPLE.replace('"p3 cbr 300"', '"p3 cbr 150"'))


def test_poker_replay_command(tmp_path: Path) -> None:
    path = tmp_path / "hand.phh"
    path.write_text(EXAMPLE, encoding="utf-8")
    out = StringIO()
    call_command("poker_replay", str(path), stdout=out)
    assert json.loads(out.getvalue().strip().splitlines()[-1]) == {
        "finishing_stacks": [12_600, 9_900, 7_500],
        "pots": [5_100],
        "rake": 0,
    }
    out = StringIO()
    call_command("poker_replay", str(path), "--rake", "seed001", stdout=out)
    # Seed 001, no-limit, 3 players: 2.5 % capped at 1 euro (100 cents).
    assert json.loads(out.getvalue().strip().splitlines()[-1])["rake"] == 100
    out = StringIO()
    call_command("poker_replay", str(path), "--rake", "percent_bp=100,cap=5000", stdout=out)
    assert json.loads(out.getvalue().strip().splitlines()[-1])["rake"] == 51
    bad = tmp_path / "bad.phh"
    bad.write_text(EXAMPLE.replace('"NT"', '"PO"'), encoding="utf-8")
    with pytest.raises(CommandError, match="phh_variant_unsupported"):
        call_command("poker_replay", str(bad))


FT_FIVE_BETS = """variant = "FT"
antes = [0, 0, 0]
blinds_or_straddles = [1, 2, 0]
small_bet = 2
big_bet = 4
starting_stacks = [100, 100, 100]
actions = ["d dh p1 AsAh", "d dh p2 KsKh", "d dh p3 2c3d", "p3 cbr 4", "p1 cbr 6", "p2 cbr 8", "p3 cbr 10",
  "p1 cc", "p2 cc", "d db 7c8d9h", "p1 cc", "p2 cc", "p3 cc", "d db Js", "p1 cc", "p2 cc", "p3 cc",
  "d db 4h", "p1 cc", "p2 cc", "p3 cc", "p1 sm AsAh", "p2 sm KsKh", "p3 sm 2c3d"]
"""


def test_phh_fixed_limit_follows_pokerkits_cap_unless_told_otherwise(tmp_path: Path) -> None:
    """``FT`` is pokerkit's ``FixedLimitTexasHoldem``: four raises over the
    big blind preflop (a fifth bet). Our table default (the big blind is the
    bet, three raises) refuses the fourth raise, and changes nothing."""
    *_, theirs = HandHistory.loads(FT_FIVE_BETS)  # pokerkit plays it
    _, state = replay_phh(FT_FIVE_BETS)
    assert state.stacks == tuple(theirs.stacks) == (120, 90, 90)
    assert state.config.raise_cap == 4
    assert not state.config.blind_is_bet
    with pytest.raises(RaiseCapReached) as refused:
        replay_phh(FT_FIVE_BETS, cap=TABLE_DEFAULT_CAP)
    assert refused.value.code == "poker_raise_cap_reached"
    path = tmp_path / "ft.phh"
    path.write_text(FT_FIVE_BETS, encoding="utf-8")
    out = StringIO()
    call_command("poker_replay", str(path), stdout=out)
    assert json.loads(out.getvalue().strip().splitlines()[-1])["finishing_stacks"] == [120, 90, 90]
    with pytest.raises(CommandError, match="poker_raise_cap_reached"):
        call_command("poker_replay", str(path), "--blind-is-bet", "yes")
    with pytest.raises(CommandError, match="poker_raise_cap_reached"):
        call_command("poker_replay", str(path), "--raise-cap", "3")
    out = StringIO()
    call_command("poker_replay", str(path), "--raise-cap", "none", "--blind-is-bet", "yes", stdout=out)
    assert json.loads(out.getvalue().strip().splitlines()[-1])["finishing_stacks"] == [120, 90, 90]
    with pytest.raises(CommandError, match="raise-cap"):
        call_command("poker_replay", str(path), "--raise-cap", "0")


def test_written_files_carry_a_tables_own_rules() -> None:
    """A table hand (our cap and reopening rule) is written with user-defined
    fields pokerkit ignores and our reader honours; a hand under pokerkit's
    rules needs none."""
    cfg = HandConfig(
        variant=Variant.FIXED_LIMIT, blinds_or_straddles=(1, 2), heads_up_uncapped=True, reopening=Reopening.ACTED
    )
    h = Hand(cfg, {1: 100, 2: 100}, button=2)
    h.deal({1: "AsAh", 2: "KsKh"})
    for seat, to in ((2, 4), (1, 6), (2, 8), (1, 10), (2, 12)):  # heads-up: no cap
        h.act(seat, "raise", to)
    h.act(1, "call")
    h.check_down(("7c8d9h", "Js", "4h"), (1, 2))
    text = write_phh(h.events)
    hand = read_phh(text)
    assert hand.fields["_raise_cap"] == 4
    assert hand.fields["_blind_is_bet"] is True
    assert hand.fields["_heads_up_uncapped"] is True
    assert hand.fields["_reopening"] == "acted"
    assert hand.config.heads_up_uncapped
    assert hand.config.reopening is Reopening.ACTED
    _, again = replay_phh(text)
    assert again.stacks == h.s.stacks
    with pytest.raises(RaiseCapReached):  # told otherwise: pokerkit's cap
        replay_phh(text, cap=POKERKIT_CAP)
    with pytest.raises(PhhError) as bad:
        read_phh(text.replace('_reopening = "acted"', '_reopening = "never"'))
    assert bad.value.code == "phh_invalid_rules"
    pk_rules = Hand(HandConfig(variant=Variant.NO_LIMIT, blinds_or_straddles=(1, 2), reopening=Reopening.POKERKIT),
                    {1: 100, 2: 100}, button=2)  # fmt: skip
    pk_rules.deal({1: "AsAh", 2: "KsKh"})
    pk_rules.act(2, "fold")
    assert "_reopening" not in read_phh(write_phh(pk_rules.events)).fields


def test_phh_splits_tied_pots_as_pokerkit_unless_told_otherwise(tmp_path: Path) -> None:
    """A PHH file's tied pots are shared as pokerkit shares them
    (``PotSplit.POKERKIT``: pots left with the same players once the losing
    hands are killed merge, split once); a table hand (each pot split on its
    own) is written with ``_pot_split = "per_pot"``, which the reader honours
    and the caller or ``poker_replay --pot-split`` overrides."""
    table = two_odd_pots(PotSplit.PER_POT)
    text = write_phh(table.events)
    assert read_phh(text).fields["_pot_split"] == "per_pot"
    _, again = replay_phh(text)
    assert again.stacks == table.s.stacks == (224, 221, 0, 175)
    _, merged = replay_phh(text, pot_split=PotSplit.POKERKIT)
    assert merged.stacks == (223, 222, 0, 175)
    *_, theirs = HandHistory.loads(text)  # pokerkit ignores _pot_split: it merges
    assert tuple(theirs.stacks) == merged.stacks
    pk_rules = write_phh(two_odd_pots(PotSplit.POKERKIT).events)
    assert "_pot_split" not in read_phh(pk_rules).fields
    assert replay_phh(pk_rules)[1].stacks == merged.stacks
    assert replay_phh(pk_rules, pot_split=PotSplit.PER_POT)[1].stacks == table.s.stacks
    path = tmp_path / "hand.phh"
    path.write_text(pk_rules, encoding="utf-8")
    for option, stacks in ((None, [223, 222, 0, 175]), ("per_pot", [224, 221, 0, 175])):
        out = StringIO()
        call_command("poker_replay", str(path), *(("--pot-split", option) if option else ()), stdout=out)
        result = json.loads(out.getvalue().strip().splitlines()[-1])
        assert result["finishing_stacks"] == stacks
        assert result["pots"] == ([116] if option is None else [81, 35])
    with pytest.raises(PhhError) as bad:
        read_phh(text.replace('_pot_split = "per_pot"', '_pot_split = "merged"'))
    assert bad.value.code == "phh_invalid_rules"


def test_a_short_ante_hand_is_written_with_ante_trimming_and_pokerkit_agrees() -> None:
    """RULES.md "Antes in side pots": the all-in for 5 against 10-chip antes
    wins 20. pokerkit gives that only with ``ante_trimming_status`` true (its
    default reading, dead antes, gives 35): the file says so, and pokerkit and
    our reader replay it to the same stacks."""
    h = short_ante_hand("AsAh")
    text = write_phh(h.events)
    assert read_phh(text).fields["ante_trimming_status"] is True
    *_, theirs = HandHistory.loads(text)
    assert tuple(theirs.stacks) == h.s.stacks
    assert replay_phh(text)[1].stacks == h.s.stacks
    assert h.stack(3) == 20
    dead = HandHistory.loads(text.replace("ante_trimming_status = true", "ante_trimming_status = false"))
    *_, pokerkit_dead_antes = dead
    assert pokerkit_dead_antes.stacks[2] == 35  # the wrong figure of issue 37
