"""Ultimate Texas Hold'em settlement through the services and ledger (RULES.md, seeds 000/004).

Stakes are odd (101) so the 3:2 flush pay shows its rounding down."""

from __future__ import annotations

import pytest

from tests.db import ledger_sums
from tests.house.services.conftest import play_round

pytestmark = pytest.mark.django_db

BOARD = "2h 7h 9h Kc 3d"


def uth(hand: str, dealer: str, board: str = BOARD, decisions: dict[str, str] | None = None, **wagers: int):
    played = play_round("uth", hand=hand, dealer=dealer, board=board, wagers={"ante": 101, **wagers},
                        decisions={"preflop": "call4x"} if decisions is None else decisions)  # fmt: skip
    assert played.wallet_change == played.net  # the ledger moved exactly what settlement says
    assert ledger_sums() == {"EUR": 0}
    return played


def test_player_wins_dealer_qualifies_flush_blind_pays_3_to_2_rounded_down() -> None:
    played = uth("Ah 5h", "Kd Qs")  # player flush, dealer pair of kings
    assert played.dealer_qualifies is True
    assert played.wagers["ante"] == (101, "win", 202)
    assert played.wagers["ante_plus"] == (101, "win", 101 + 151)  # 151.5 rounded down
    assert played.rounding["ante_plus"] == "1/2"
    assert played.wagers["call"] == (404, "win", 808)


def test_player_wins_dealer_does_not_qualify_ante_pushes() -> None:
    played = uth("Ah 5h", "Qd Js")  # dealer king high
    assert played.dealer_qualifies is False
    assert played.wagers["ante"] == (101, "push", 101)
    assert played.wagers["ante_plus"] == (101, "win", 252)
    assert played.wagers["call"] == (404, "win", 808)


def test_dealer_wins_and_qualifies_everything_loses() -> None:
    played = uth("4c 5d", "Kd Qs")
    assert played.wagers == {"ante": (101, "lose", 0), "ante_plus": (101, "lose", 0), "call": (404, "lose", 0)}


def test_dealer_wins_without_qualifying_ante_pushes_blind_and_call_lose() -> None:
    played = uth("4c 5d", "Qd Js")
    assert played.dealer_qualifies is False
    assert played.wagers == {"ante": (101, "push", 101), "ante_plus": (101, "lose", 0), "call": (404, "lose", 0)}


def test_tie_pushes_ante_blind_and_call() -> None:
    played = uth("2c 3s", "4c 5s", board="Ts Js Qd Kc 9h")  # both play the board's straight
    assert played.wagers == {"ante": (101, "push", 101), "ante_plus": (101, "push", 101), "call": (404, "push", 404)}


def test_fold_by_timeout_loses_ante_and_blind_side_bet_still_on_the_cards() -> None:
    played = uth("9c 9d", "Kd Qs", board="9h 2s 5c Jd Kh", decisions={}, best_five=51)
    assert "call" not in played.wagers
    assert played.wagers["ante"] == (101, "lose", 0)
    assert played.wagers["ante_plus"] == (101, "lose", 0)
    assert played.wagers["best_five"] == (51, "win", 51 * 4)  # trips 3 to 1


@pytest.mark.parametrize(
    ("decisions", "call"),
    [({"preflop": "call3x"}, 303), ({"flop": "call2x"}, 202), ({"river": "call1x"}, 101)],
)
def test_call_sizes_per_street(decisions: dict[str, str], call: int) -> None:
    played = uth("Ah 5h", "Kd Qs", decisions=decisions)
    assert played.wagers["call"] == (call, "win", 2 * call)


@pytest.mark.parametrize(
    ("hand", "dealer", "board", "returned"),
    [
        ("Ah Kh", "2c 3d", "Qh Jh Th 4c 5d", 101 * 501),  # royal 500 to 1
        ("9h 8h", "2c 3d", "7h 6h 5h Kc Jd", 101 * 51),  # straight flush 50
        ("Kc Kd", "2c 3d", "Ks Kh 7d 4c 9s", 101 * 11),  # quads 10
        ("Kc Kd", "2c 3d", "Ks 7h 7d 4c 9s", 101 * 4),  # full house 3
        ("8c 9d", "3c 5d", "Ts Jh Qd 2s 4h", 101 * 2),  # straight 1
        ("9c 9d", "3c 4d", "9h 2s 5c Jd Kh", 101),  # trips push
    ],
)
def test_ante_plus_pay_table_lines_on_a_win(hand: str, dealer: str, board: str, returned: int) -> None:
    played = uth(hand, dealer, board=board)
    assert played.wagers["call"][1] == "win"
    assert played.wagers["ante_plus"][2] == returned


@pytest.mark.parametrize(
    ("hand", "board", "multiple"),
    [
        ("Ah Kh", "Qh Jh Th 4c 5d", 51),
        ("9h 8h", "7h 6h 5h Kc Jd", 41),
        ("Kc Kd", "Ks Kh 7d 4c 9s", 31),
        ("Kc Kd", "Ks 7h 7d 4c 9s", 9),
        ("Ah 5h", BOARD, 8),
        ("8c 9d", "Ts Jh Qd 2s 4h", 5),
        ("9c 9d", "9h 2s 5c Jd Kh", 4),
        ("9c 8d", "9h 2s 5c Jd Kh", 0),  # a pair loses
    ],
)
def test_best_five_pay_table_lines(hand: str, board: str, multiple: int) -> None:
    played = uth(hand, "3c 4d", board=board, best_five=50, decisions={"preflop": "check"})
    assert played.wagers["best_five"][2] == 50 * multiple
