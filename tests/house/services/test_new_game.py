"""Games are data: a fourth house-banked game, defined and registered from this module
alone, gets a table through the operator services and plays rounds through the
round services, settled by its own pay table (docs/architecture.md, "Adding a game")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from games.house.models import HouseTable
from games.house.rules.definitions import (
    BLIND,
    CALL_EVEN,
    FOLD,
    DecisionOption,
    DecisionPoint,
    GameDefinition,
    Qualifier,
    UnknownGame,
    Wager,
    WagerKind,
)
from games.house.rules.paytables import Basis, PayTable, lines, to
from games.house.rules.registry import GAMES, game, registered
from games.house.services import TableTick, make_decision, place_chip, pool_account
from games.house.services.tables import create_table, open_table
from ledger.models import Account
from ledger.services import read_stream
from tests.db import ledger_sums
from tests.house.services.conftest import T0, key, later, make_player, shoe, step, wallet

pytestmark = pytest.mark.django_db

# The toy game: an Ante paid by its own table on a win (push on a tie, as a Blind),
# and one decision on the river: call 1x the Ante (even money) or fold.
TOY_ANTE_LINES = lines(
    ("royal_flush", to(10)),
    ("straight_flush", to(10)),
    ("four_of_a_kind", to(10)),
    ("full_house", to(10)),
    ("flush", to(5)),
    ("straight", to(3)),
    ("three_of_a_kind", to(1)),
    ("two_pair", to(1)),
    ("pair", to(1)),
    ("high_card", to(1)),
)
TOY = GameDefinition(
    code="toy",
    title="Toy Hold'em",
    wagers=(
        Wager("ante", WagerKind.REQUIRED, BLIND, needs_pay_table=True),
        Wager("call", WagerKind.DECISION, CALL_EVEN),
    ),
    decision_points=(DecisionPoint("river", (DecisionOption("call", 1), FOLD), "fold"),),
    decision_wager="call",
    qualifier=Qualifier(2),
    pay_tables=(PayTable("toy", "ante", 1, Basis.PLAYER_SEVEN, TOY_ANTE_LINES, title="Toy ante"),),
)
CONFIG = {
    "name": "toy table",
    "hand_mode": "shared",
    "max_seats": None,
    "limits": {"ante": {"min": 100, "max": 10_000}},
    "pay_tables": {"ante": 1},
    "wheel": {},
    "progressives": {},
    "betting_seconds": 15,
    "warning_seconds": 5,
    "decision_seconds": 12,
    "deal_pause_seconds": 2,
    "between_rounds_seconds": 5,
}


@pytest.fixture
def toy() -> Iterator[GameDefinition]:
    with registered(TOY) as definition:
        yield definition
    assert "toy" not in GAMES


def toy_table() -> tuple[HouseTable, TableTick]:
    """A table of the toy game made and opened by an operator through the services."""
    operator = get_user_model().objects.create(username=key("operator"), is_staff=True)
    table = create_table(operator=operator, code=key("TOY").replace("-", ""), game_code="toy", currency="EUR",
                         config=CONFIG, now=T0)  # fmt: skip
    return table, open_table(table_id=table.pk, operator=operator, now=T0)


def play(*, hand: str, dealer: str, board: str, call: bool) -> tuple[dict[str, Any], int, int]:
    """One round at a new toy table with one funded player: (wagers settled, net, wallet change)."""
    table, tick = toy_table()
    assert tick.phase == "betting"
    player = make_player(table, funds=10_000)
    before = wallet(player)
    # The operator's first round passes without bets; the next is dealt from the scripted shoe.
    tick = step(table, step(table, tick), shoe_cards=shoe(hand, dealer=dealer, board=board))
    assert tick.phase == "betting"
    place_chip(table_id=table.pk, player_id=player, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    tick = step(table, tick)
    while tick.phase not in ("between", "idle"):
        if tick.phase == "river" and call:
            make_decision(table_id=table.pk, player_id=player, option="call", idempotency_key=key(), now=later(tick))
        tick = step(table, tick)
    [settled] = [e for e in read_stream(stream_id=f"round-{tick.round_id}-player-{player}")
                 if e.type == "house_player.settled"]  # fmt: skip
    wagers = {w["wager"]: (w["stake"], w["outcome"], w["returned"]) for w in settled.data["wagers"]}
    net = sum(returned - stake for stake, _, returned in wagers.values())
    return wagers, net, wallet(player) - before


def test_a_registered_game_plays_a_round_through_the_services_paid_by_its_own_table(toy: GameDefinition) -> None:
    assert game("toy") is toy
    # Player: ace-high flush in hearts; dealer: a pair of fours (qualifies, loses).
    wagers, net, change = play(hand="Ah 5h", dealer="4c 4d", board="2h 7h 9h Kc 3s", call=True)
    assert wagers == {"ante": (100, "win", 100 + 5 * 100), "call": (100, "win", 200)}  # flush 5 to 1; call 1:1
    assert net == change == 600
    assert ledger_sums() == {"EUR": 0}


def test_a_registered_game_times_out_to_its_own_default(toy: GameDefinition) -> None:
    # No decision: the river's timeout default folds, the Ante is lost whatever the cards.
    wagers, net, change = play(hand="Ah 5h", dealer="4c 4d", board="2h 7h 9h Kc 3s", call=False)
    assert wagers == {"ante": (100, "lose", 0)}
    assert net == change == -100
    assert ledger_sums() == {"EUR": 0}


# makemigrations checks the migration history on every alias, the owner's too.
@pytest.mark.django_db(databases=["default", "owner"])
def test_a_registered_game_is_a_valid_model_choice_and_needs_no_migration(toy: GameDefinition) -> None:
    table, _ = toy_table()
    table.full_clean()  # the model's game choices come from the registry when validated
    assert ("toy", toy.title) in list(HouseTable._meta.get_field("game").choices or [])
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)  # exits non-zero on a change


def test_registered_is_undone_after_the_block() -> None:
    with registered(TOY):
        assert [g.code for g in GAMES.values()][-1] == "toy"
    with pytest.raises(UnknownGame):
        game("toy")
    assert list(GAMES) == ["uth", "casino_holdem", "xtreme"]


def test_a_game_with_inconsistent_data_is_refused_when_defined() -> None:
    with pytest.raises(ValueError, match="pay table 1"):
        GameDefinition(code="bad", title="Bad", wagers=TOY.wagers, decision_points=TOY.decision_points,
                       decision_wager="call", qualifier=Qualifier(2))  # fmt: skip
    with pytest.raises(ValueError, match="decision wager"):
        GameDefinition(code="bad", title="Bad", wagers=TOY.wagers, decision_points=TOY.decision_points,
                       decision_wager="ante", qualifier=Qualifier(2), pay_tables=())  # fmt: skip


def test_the_stax_pool_accounts_keep_their_owner_names() -> None:
    """Pool accounts exist in databases under ``table:{id}:stax:{pool}``: deriving
    "stax" from Xtreme's progressive wager must not rename them."""
    assert game("xtreme").progressive_wager == "stax"
    assert game("xtreme").progressive_pools == ("star", "spade", "heart", "diamond", "club")
    account = pool_account(table_id=41, game_code="xtreme", pool="club", currency="EUR")
    assert Account.objects.get(pk=account).owner == "table:41:stax:club"
    assert game("uth").progressive_wager is None
