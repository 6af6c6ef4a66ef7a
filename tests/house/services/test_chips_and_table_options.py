"""Issue 37, parts 1 and 3: a table's chip set (seed 000:179, 003:15), its mandatory
side wagers (seed 002:13) and tables unavailable for multi-game play (seed
000:274), through the real services on PostgreSQL (docs/rounds.md, "Chips,
mandatory side wagers and multi-play")."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.contrib.auth import get_user_model

from games.house.models import HouseRound, HouseTable, PlayerRound
from games.house.realtime.presenters import public_delta, table_summary, table_view
from games.house.services import double_bets, place_chip, repeat_bets
from games.house.services.bets import BetResult
from games.house.services.seats import leave_table, take_seat
from games.house.services.tables import InvalidTableConfig, configure_table, create_table
from ledger.services import read_stream
from tests.db import ledger_sums
from tests.house.services.conftest import (
    T0,
    key,
    later,
    make_player,
    make_table,
    open_round,
    play_out,
    refused,
    step,
    wallet,
)

pytestmark = pytest.mark.django_db

CHIPS = [100, 500, 1000, 2500]
UTH_LIMITS = {"ante": {"min": 100, "max": 5000}, "best_five": {"min": 100, "max": 500}}


def chip(table: HouseTable, player: int, spot: str, amount: int, now: datetime) -> BetResult:
    return place_chip(table_id=table.pk, player_id=player, spot=spot, amount=amount, idempotency_key=key(), now=now)


def test_only_the_tables_denominations_are_chips_and_a_refusal_changes_nothing() -> None:
    table = make_table("uth", limits=UTH_LIMITS, chips=CHIPS)
    player = make_player(table, funds=20_000)
    now = later(open_round(table))
    for amount in (200, 99, 2600, 0, -100):
        refused("invalid_chip", chip, table=table, player=player, spot="ante", amount=amount, now=now)
    assert chip(table, player, "ante", 100, now).totals["ante"] == 100
    assert chip(table, player, "ante", 500, now).totals["ante"] == 600
    # A chip above the spot's room is capped (RULES.md), still a chip of the set.
    capped = chip(table, player, "best_five", 2500, now)
    assert capped.capped
    assert capped.totals["best_five"] == 500


def test_double_and_repeat_re_place_amounts_that_are_not_single_chips() -> None:
    table = make_table("uth", limits=UTH_LIMITS, chips=CHIPS)
    player = make_player(table, funds=20_000)
    tick = open_round(table)
    chip(table, player, "ante", 100, later(tick))
    chip(table, player, "ante", 500, later(tick))
    doubled = double_bets(table_id=table.pk, player_id=player, idempotency_key=key(), now=later(tick))
    assert doubled.totals["ante"] == 1200  # not a denomination: the double of chips placed
    tick = step(table, play_out(table, step(table, tick)))
    assert tick.phase == "betting"
    repeated = repeat_bets(table_id=table.pk, player_id=player, idempotency_key=key(), now=later(tick))
    assert repeated.totals["ante"] == 1200


def test_the_table_view_serves_the_chips_and_those_the_balance_covers_as_it_changes() -> None:
    table = make_table("uth", limits=UTH_LIMITS, chips=CHIPS, mandatory_wagers=["best_five"], multi_play=False)
    player = make_player(table, funds=3000)
    before = table_view(table_id=table.pk, viewer_id=player)
    assert before["table"]["chips"] == CHIPS
    assert before["table"]["mandatory_wagers"] == ["best_five"]
    assert before["table"]["multi_play"] is False
    assert before["me"]["covered_chips"] == CHIPS  # no round yet: the balance of 3000 covers every chip
    tick = open_round(table)
    chip(table, player, "ante", 500, later(tick))  # ante and ante plus hold 1000: 2000 left
    view = table_view(table_id=table.pk, viewer_id=player, now=later(tick))
    assert view["me"]["balance"] == 2000
    assert view["me"]["covered_chips"] == [100, 500, 1000]
    assert view["me"]["mandatory_missing"] == ["best_five"]
    assert view["round"]["chips"] == CHIPS
    assert view["round"]["mandatory_wagers"] == ["best_five"]
    chip(table, player, "best_five", 100, later(tick))
    view = table_view(table_id=table.pk, viewer_id=player, now=later(tick))
    assert view["me"]["covered_chips"] == [100, 500, 1000]  # 1900 left
    assert view["me"]["mandatory_missing"] == []
    # The round's opening tells every watcher its chips and mandatory wagers.
    opened = public_delta(read_stream(stream_id=f"round-{tick.round_id}")[0])
    assert opened is not None
    assert (opened["data"]["chips"], opened["data"]["mandatory_wagers"]) == (CHIPS, ["best_five"])
    # The lobby row is the same summary.
    assert {"chips", "mandatory_wagers", "multi_play"} <= set(table_summary(table))


def test_a_table_with_mandatory_stax_does_not_play_a_player_without_it() -> None:
    """Seed 002:13: the property may require STAX as a mandatory wager. A player
    with an Ante and no STAX at "No More Bets" is not in the round: every chip
    comes back and nothing else changes; a player with both plays."""
    table = make_table("xtreme", mandatory_wagers=["stax"], chips=[100, 500, 1000])
    without, with_stax = make_player(table, funds=10_000), make_player(table, funds=10_000)
    sums = ledger_sums()
    tick = open_round(table)
    chip(table, without, "ante", 100, later(tick))
    chip(table, with_stax, "ante", 100, later(tick))
    chip(table, with_stax, "stax", 100, later(tick))
    assert wallet(without) < 10_000
    tick = step(table, tick)  # betting closes
    round_row = HouseRound.objects.get(round_id=tick.round_id)
    assert round_row.participants == 1
    assert wallet(without) == 10_000  # everything returned
    assert PlayerRound.objects.get(round=round_row, player_id=without).status == "declined"
    [declined] = [e for e in read_stream(stream_id=f"round-{tick.round_id}-player-{without}")
                  if e.type == "house_player.declined"]  # fmt: skip
    assert declined.data["reason"] == "mandatory_wager_missing"
    assert declined.data["returned"] == 200  # the ante and its x-tra bonus
    closed = [e for e in read_stream(stream_id=f"round-{tick.round_id}") if e.type == "house_round.betting_closed"]
    assert closed[0].data["participants"] == [with_stax]
    play_out(table, tick)
    assert ledger_sums() == sums


def test_repeat_that_would_leave_out_a_mandatory_wager_is_refused() -> None:
    table = make_table("xtreme", chips=[100, 500, 1000])
    player = make_player(table, funds=10_000)
    tick = open_round(table)
    chip(table, player, "ante", 100, later(tick))
    tick = step(table, play_out(table, step(table, tick)))
    HouseTable.objects.filter(pk=table.pk).update(mandatory_wagers=["stax"])  # in force from the next round
    tick = step(table, play_out(table, step(table, tick)))
    assert tick.phase == "betting"
    refused("mandatory_wager_missing", repeat_bets, table_id=table.pk, player_id=player, idempotency_key=key(),
            now=later(tick))  # fmt: skip
    chip(table, player, "ante", 100, later(tick))
    chip(table, player, "stax", 100, later(tick))
    # Double keeps every spot it doubles, the mandatory one too.
    assert double_bets(table_id=table.pk, player_id=player, idempotency_key=key(), now=later(tick)).totals["stax"]


def test_a_table_unavailable_for_multi_play_is_played_alone() -> None:
    """Seed 000:274: "Certain tables may be unavailable for multi-game play"."""
    alone = make_table("uth", multi_play=False)
    other, third = make_table("uth"), make_table("casino_holdem")
    player = make_player(None)
    take_seat(table_id=other.pk, player_id=player)
    refused("multi_play_not_allowed", take_seat, table_id=alone.pk, player_id=player)
    leave_table(table_id=other.pk, player_id=player, now=T0)
    take_seat(table_id=alone.pk, player_id=player)
    refused("multi_play_not_allowed", take_seat, table_id=third.pk, player_id=player)
    # Several multi-play tables together stay allowed (up to the 4-table limit).
    friend = make_player(None)
    take_seat(table_id=other.pk, player_id=friend)
    take_seat(table_id=third.pk, player_id=friend)


def test_operators_set_chips_mandatory_wagers_and_multi_play_as_versioned_configuration() -> None:
    operator = get_user_model().objects.create(username=key("operator"), is_staff=True)
    config = {"name": "chips", "hand_mode": "shared", "max_seats": None, "limits": UTH_LIMITS,
              "pay_tables": {"ante_plus": 1, "best_five": 1}, "wheel": {}, "progressives": {},
              "betting_seconds": 15, "warning_seconds": 5, "decision_seconds": 12, "deal_pause_seconds": 2,
              "between_rounds_seconds": 5}  # fmt: skip
    table = create_table(operator=operator, code=key("CH").replace("-", ""), game_code="uth", currency="EUR",
                         config=config, now=T0)  # fmt: skip
    assert table.chips == [100, 500, 1000, 2500, 10_000, 50_000]  # the currency's default
    assert (table.mandatory_wagers, table.multi_play) == ([], True)
    change = {"chips": [100, 200], "mandatory_wagers": ["best_five"], "multi_play": False}
    version = configure_table(table_id=table.pk, operator=operator, now=T0, config=change)
    assert version is not None
    assert version.changes["chips"] == {"from": [100, 500, 1000, 2500, 10_000, 50_000], "to": [100, 200]}
    assert version.config["mandatory_wagers"] == ["best_five"]
    assert version.config["multi_play"] is False
    with pytest.raises(InvalidTableConfig) as refusal:
        configure_table(table_id=table.pk, operator=operator, now=T0, config={"chips": [200, 100]})
    assert [p["field"] for p in refusal.value.details["problems"]] == ["chips"]
    table.refresh_from_db()
    assert table.chips == [100, 200]
    assert table.config_version == 2


def test_a_group_commit_refuses_the_non_denominations_and_takes_the_chips() -> None:
    """The batch path decides with the same domain calls: one refusal changes only its own command."""
    from casino.errors import DomainError
    from games.house.services.group import PlaceChip, run_commands

    table = make_table("uth", limits=UTH_LIMITS, chips=CHIPS)
    first, second = make_player(table, funds=20_000), make_player(table, funds=20_000)
    tick = open_round(table)
    commands = [PlaceChip(first, key(), "ante", 300), PlaceChip(second, key(), "ante", 500)]
    refusal, placed = run_commands(table_id=table.pk, commands=commands, now=later(tick))
    assert isinstance(refusal, DomainError)
    assert refusal.code == "invalid_chip"
    assert wallet(first) == 20_000
    assert not isinstance(placed, DomainError)
    assert wallet(second) == 20_000 - 1000
