"""Casino Hold'em (seed 003) and Xtreme Hold'em (seed 002) settlement through the services
and ledger, from RULES.md."""

from __future__ import annotations

import pytest

from tests.db import ledger_sums
from tests.house.services.conftest import play_round

pytestmark = pytest.mark.django_db


def ch(hand: str, dealer: str, board: str, decisions: dict[str, str] | None = None, **wagers: int):
    played = play_round("casino_holdem", hand=hand, dealer=dealer, board=board, wagers={"ante": 101, **wagers},
                        decisions={"flop": "call"} if decisions is None else decisions)  # fmt: skip
    assert played.wallet_change == played.net
    assert ledger_sums() == {"EUR": 0}
    return played


@pytest.mark.parametrize(
    ("hand", "dealer", "board", "qualifies", "wagers"),
    [
        pytest.param("Kd Ks", "2c 3d", "Ah 7d 9s Jc 5h", False, {"ante": (101, "win", 202), "call": (202, "push", 202)},
                     id="dealer_not_qualified_ante_pays_table_call_pushes"),
        pytest.param("Kd 2s", "3c 3d", "Ah 7d 9s Jc 5h", False, {"ante": (101, "win", 202), "call": (202, "push", 202)},
                     id="pair_of_threes_does_not_qualify_even_when_the_dealer_wins"),
        pytest.param("Ah 5h", "4c 4d", "2h 7h 9h Kc 3s", True, {"ante": (101, "win", 303), "call": (202, "win", 404)},
                     id="qualified_dealer_player_wins_with_a_flush_ante_pays_2_to_1"),
    ],
)  # fmt: skip
def test_ch_dealer_qualification_and_the_ante_and_call(hand: str, dealer: str, board: str, qualifies: bool,
                                                       wagers: dict[str, tuple[int, str, int]]) -> None:  # fmt: skip
    played = ch(hand, dealer, board)
    assert played.dealer_qualifies is qualifies
    assert played.wagers == wagers


def test_ch_qualified_dealer_wins_ante_and_call_lose() -> None:
    played = ch("Kd 2s", "4c 4d", "Ah 7d 9s Jc 5h")
    assert played.wagers == {"ante": (101, "lose", 0), "call": (202, "lose", 0)}


def test_ch_tie_pushes_both() -> None:
    played = ch("2c 3s", "4c 5s", "Ts Js Qd Kc 9h")
    assert played.wagers == {"ante": (101, "push", 101), "call": (202, "push", 202)}


def test_ch_fold_by_timeout_loses_the_ante_bonus_still_paid() -> None:
    played = ch("As Ad", "4c 4d", "Ah 7d 9s Jc 2h", decisions={}, bonus=51)
    assert played.wagers["ante"] == (101, "lose", 0)
    assert "call" not in played.wagers
    assert played.wagers["bonus"] == (51, "win", 51 * 8)  # trips 7 to 1


@pytest.mark.parametrize(
    ("hand", "board", "ante_multiple"),
    [
        ("Ah Kh", "Qh Jh Th 4c 5d", 101),
        ("9h 8h", "7h 6h 5h Kc Jd", 21),
        ("Kc Kd", "Ks Kh 7d 4c 9s", 11),
        ("Kc Kd", "Ks 7h 7d 4c 9s", 4),
        ("8c 9d", "Ts Jh Qd 2s 4h", 2),
    ],
)
def test_ch_ante_pay_table_lines(hand: str, board: str, ante_multiple: int) -> None:
    played = ch(hand, "3c 2d", board)  # dealer never qualifies here
    assert played.wagers["ante"][2] == 101 * ante_multiple


@pytest.mark.parametrize(
    ("hand", "board", "multiple"),
    [
        ("Ah Kh", "Qh Jh Th 4c 5d", 101),
        ("9h 8h", "7h 6h 5h Kc Jd", 51),
        ("Kc Kd", "Ks Kh 7d 4c 9s", 41),
        ("Kc Kd", "Ks 7h 7h 4c 9s".replace("7h 7h", "7h 7d"), 31),
        ("Ah 5h", "2h 7h 9h Kc 3s", 21),
        ("8c 9d", "Ts Jh Qd 2s 4h", 8),
        ("9c 9d", "9h 2s 5c Jd Kh", 8),
        ("9c 5d", "9h 5s 2c Jd Kh", 8),  # two pair
        ("As Ad", "2h 7d 9s Jc 4h", 8),  # pair of aces
        ("Ks Kd", "2h 7d 9s Jc 4h", 0),  # another pair loses
    ],
)
def test_ch_bonus_pay_table_lines_on_the_first_five_cards(hand: str, board: str, multiple: int) -> None:
    played = ch(hand, "3c 2d", board, decisions={}, bonus=50)
    assert played.wagers["bonus"][2] == 50 * multiple


def xt(hand: str, dealer: str, board: str, decisions: dict[str, str] | None = None, **kwargs):
    wagers = {"ante": 101, **{k: v for k, v in kwargs.items() if isinstance(v, int)}}
    extra = {k: v for k, v in kwargs.items() if not isinstance(v, int)}
    played = play_round("xtreme", hand=hand, dealer=dealer, board=board, wagers=wagers,
                        decisions={"preflop": "play4x"} if decisions is None else decisions, **extra)  # fmt: skip
    assert played.wallet_change == played.net
    assert ledger_sums() == {"EUR": 0}
    return played


def test_xtreme_dealer_opens_player_wins() -> None:
    played = xt("Ah 5h", "Kd Qs", "2h 7h 9h Kc 3d")
    assert played.wagers == {
        "ante": (101, "win", 202),
        "xtra_bonus": (101, "win", 252),  # flush 3:2, rounded down
        "play": (404, "win", 808),
    }


def test_xtreme_dealer_does_not_open_ante_pushes() -> None:
    played = xt("Ah 5h", "Qd Js", "2h 7h 9h Kc 3d")
    assert played.wagers["ante"] == (101, "push", 101)
    assert played.wagers["play"] == (404, "win", 808)


def test_xtreme_tie_pushes_and_loss_loses_xtra_bonus() -> None:
    tie = xt("2c 3s", "4c 5s", "Ts Js Qd Kc 9h")
    assert tie.wagers == {"ante": (101, "push", 101), "xtra_bonus": (101, "push", 101), "play": (404, "push", 404)}
    lost = xt("4c 5d", "Kd Qs", "2h 7h 9h Kc 3d")
    assert lost.wagers == {"ante": (101, "lose", 0), "xtra_bonus": (101, "lose", 0), "play": (404, "lose", 0)}


def test_xtreme_fold_forfeits_ante_and_xtra_bonus() -> None:
    played = xt("4c 5d", "Kd Qs", "2h 7h 9h Kc 3d", decisions={})
    assert played.wagers == {"ante": (101, "lose", 0), "xtra_bonus": (101, "lose", 0)}


def test_xtreme_player_and_hole_card_bonus_settle_on_the_cards_even_after_a_fold() -> None:
    played = xt("Ah Ad", "Kd Qs", "As 7h 9h Kc 3d", decisions={}, player_bonus=100, hole_card_bonus=100)
    assert played.wagers["ante"][1] == "lose"
    assert played.wagers["player_bonus"] == (100, "win", 400)  # trips 3 to 1 (table 1)
    assert played.wagers["hole_card_bonus"][1] == "win"  # a pair of aces


def test_xtreme_stax_for_one_pays_include_the_stake() -> None:
    # Table 1: flush pays 50 for 1 (two cards + flop all hearts).
    played = xt("Ah 5h", "Kd Qs", "2h 7h 9h Kc 3d", stax=100)
    assert played.wagers["stax"] == (100, "win", 5000)


def test_xtreme_bonus_spin_trigger_spins_the_wheel_and_pays_fixed_award() -> None:
    wheel = {"name": "one", "version": "1", "segments": [{"label": "10x", "multiple": 10, "weight": 1}]}
    # Board full house 7s over 2s: fixed award 10 units for a 1-unit wager, plus 10x the wager on the wheel.
    played = xt("Ah Kd", "Qs Jc", "7h 7d 7c 2s 2h", bonus_spin=100, wheel=wheel)
    assert played.wagers["bonus_spin"] == (100, "win", 100 + 1000 + 1000)
    miss = xt("Ah Kd", "Qs Jc", "7h 8d 9c 2s 3h", bonus_spin=100, wheel=wheel)
    assert miss.wagers["bonus_spin"] == (100, "lose", 0)
