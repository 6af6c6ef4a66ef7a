"""The jackpot meter and the Bonus Spin wheel as players see them (issue 37, part 2;
seed 002:68-119, RULES.md "Xtreme Hold'em"; docs/rounds.md "Jackpot meter and wheel").

- The table view and the lobby (``GET /api/tables/``) serve each STAX pool's
  current amount, the ledger's pool balance, in the game's pool order; a table
  without STAX serves none; the lobby reads every table's pools in one query.
- Each change of the pools (seeding when a round opens; contributions, a hit
  and its reset at settlement) records ``house_round.jackpot`` with every
  pool's amount after it: the public delta of the meter.
- The wheel's segments are in the table view and in the round's public
  ``house_round.opened``; a spin's public delta names the segment, the board's
  triggering hand and what each wager size returns, never a player's stake.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from games.house.models import HouseTable
from games.house.realtime.presenters import public_delta, table_view
from games.house.services import make_decision, place_chip, pool_account
from games.house.store import round_stream
from ledger.models import Account
from ledger.services import balance_of, read_stream
from tests.house.services.conftest import (
    TEST_WHEEL,
    key,
    later,
    make_player,
    make_table,
    open_round,
    play_out,
    shoe,
    step,
)

pytestmark = pytest.mark.django_db

POOLS = ("star", "spade", "heart", "diamond", "club")  # seed 002's STAX pay tables, in the game's order
RESETS = {"star": 1_000_000, "spade": 250_000, "heart": 100_000, "diamond": 50_000, "club": 25_000}
RATES = {"star": 200, "spade": 150, "heart": 100, "diamond": 75, "club": 50}
PROGRESSIVES = {"reset": RESETS, "contribution_bp": RATES}
STAX = 1_000
# No STAX line for the player (two pair at best on Ah 5h + 2c 7s 9d), no Bonus Spin trigger on the board.
MISS = shoe("Ah 5h", dealer="Kd Qs", board="2c 7s 9d Kc 3d")
# Ad Kd + the flop Qd Jd Td: a royal flush in diamonds, the Star Progressive on pay table 1 (seed 002).
ROYAL = shoe("Ad Kd", dealer="2c 3s", board="Qd Jd Td 5c 8h")


def ledger_pools(table: HouseTable) -> dict[str, int]:
    """The pools' balances as the ledger holds them (the services' own accounts)."""
    accounts = {p: pool_account(table_id=table.pk, game_code=table.game, pool=p, currency="EUR") for p in POOLS}
    return {pool: balance_of(account_id=account) for pool, account in accounts.items()}


def meter(entries: list[dict[str, Any]]) -> dict[str, int]:
    assert [e["pool"] for e in entries] == list(POOLS)
    assert all(e["currency"] == "EUR" and e["name"] == f"{e['pool'].capitalize()} Progressive" for e in entries)
    return {e["pool"]: e["amount"] for e in entries}


def jackpot_deltas(round_id: str) -> list[dict[str, int]]:
    """The meter of every public ``house_round.jackpot`` delta of the round, in order."""
    found = []
    for event in read_stream(stream_id=round_stream(round_id)):
        delta = public_delta(event)
        if delta is not None and delta["type"] == "house_round.jackpot":
            found.append(meter(delta["data"]["jackpot"]))
    return found


def stax_round(table: HouseTable, player: int, tick: Any) -> Any:
    """The player stakes an Ante and ``STAX``; the round is played out by timeouts."""
    for spot, amount in (("ante", 100), ("stax", STAX)):
        place_chip(table_id=table.pk, player_id=player, spot=spot, amount=amount, idempotency_key=key(),
                   now=later(tick))  # fmt: skip
    return play_out(HouseTable.objects.get(pk=table.pk), tick)


def test_seeding_contributions_and_a_hit_each_publish_the_pools_after_them() -> None:
    table = make_table("xtreme", progressives=PROGRESSIVES)
    player = make_player(table, funds=10**7)
    tick = open_round(table, shoe_cards=MISS)
    first_round = tick.round_id
    # Seeding: every pool from the house to its reset amount (RULES.md), published as the round opens.
    assert jackpot_deltas(first_round) == [RESETS]
    tick = stax_round(table, player, tick)
    # Contributions move at settlement: floor(STAX stakes x rate / 10000) per pool.
    contributed = {pool: RESETS[pool] + STAX * RATES[pool] // 10_000 for pool in POOLS}
    assert contributed["diamond"] == 50_007  # 7.5 rounded down
    assert jackpot_deltas(first_round) == [RESETS, contributed]
    assert ledger_pools(table) == contributed
    # A royal flush in diamonds hits the Star pool: paid whole (after this round's contribution), reset.
    tick = step(table, tick, shoe_cards=ROYAL)
    second_round = tick.round_id
    stax_round(table, player, tick)
    after_hit = {pool: contributed[pool] + STAX * RATES[pool] // 10_000 for pool in POOLS} | {"star": RESETS["star"]}
    assert jackpot_deltas(second_round) == [after_hit]  # nothing seeded: no meter as it opened
    assert ledger_pools(table) == after_hit
    types = [e.type for e in read_stream(stream_id=round_stream(second_round))]
    assert types.index("house_round.jackpot") == types.index("house_round.progressive_hit") + 1
    # The winner's STAX returned the whole Star pool.
    settled = next(
        e.data for e in read_stream(stream_id=f"{round_stream(second_round)}-player-{player}")
        if e.type == "house_player.settled"
    )  # fmt: skip
    stax = next(w for w in settled["wagers"] if w["wager"] == "stax")
    assert (stax["progressive"], stax["returned"]) == ("star", contributed["star"] + STAX * RATES["star"] // 10_000)


def test_table_view_and_lobby_serve_the_ledger_pools_in_one_query() -> None:
    stax_tables = [make_table("xtreme", progressives=PROGRESSIVES) for _ in range(3)]
    plain = make_table("uth")
    player = make_player(stax_tables[0], funds=10**7)
    tick = open_round(stax_tables[0], shoe_cards=MISS)
    stax_round(stax_tables[0], player, tick)
    open_round(stax_tables[1])  # seeded, no play yet; the third table never opened: its pools are empty
    expected = {
        stax_tables[0].pk: {pool: RESETS[pool] + STAX * RATES[pool] // 10_000 for pool in POOLS},
        stax_tables[1].pk: RESETS,
        stax_tables[2].pk: dict.fromkeys(POOLS, 0),
    }
    for table in stax_tables[:2]:
        assert ledger_pools(table) == expected[table.pk]
    for table in stax_tables:
        assert meter(table_view(table_id=table.pk, viewer_id=player)["table"]["jackpot"]) == expected[table.pk]
    assert table_view(table_id=plain.pk, viewer_id=player)["table"]["jackpot"] == []

    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=player))

    def lobby() -> tuple[dict[int, dict[str, Any]], int]:
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/api/tables/")
        assert response.status_code == 200, response.content
        pool_queries = [q for q in queries.captured_queries if "ledger_account" in q["sql"]]
        return {row["id"]: row for row in response.json()}, len(pool_queries)

    rows, pool_reads = lobby()
    assert pool_reads == 1
    for table in stax_tables:
        assert meter(rows[table.pk]["jackpot"]) == expected[table.pk]
    assert rows[plain.pk]["jackpot"] == []
    # More STAX tables, still one read of the pools.
    make_table("xtreme", progressives=PROGRESSIVES)
    assert lobby()[1] == 1
    # Reading the meter opened no account (reads create nothing): the unplayed table still has none.
    assert not Account.objects.filter(owner__startswith=f"table:{stax_tables[2].pk}:").exists()


def test_the_wheel_is_in_the_table_view_and_the_opened_delta_only_where_bonus_spin_is_offered() -> None:
    table = make_table("xtreme")
    no_spin = make_table("xtreme", limits={"ante": {"min": 100, "max": 1000}})
    for made in (table, no_spin):
        open_round(made)
    viewer = make_player(None)
    expected = {"name": "test-wheel", "version": "1", "segments": [{"label": "2x", "multiple": 2, "weight": 1}]}
    view = table_view(table_id=table.pk, viewer_id=viewer)
    assert view["table"]["wheel"] == expected
    assert view["round"]["wheel"] == expected
    opened = public_delta(read_stream(stream_id=round_stream(view["round"]["round_id"]))[0])
    assert opened is not None
    assert opened["data"]["wheel"] == expected
    other = table_view(table_id=no_spin.pk, viewer_id=viewer)
    assert other["table"]["wheel"] is None
    assert other["round"]["wheel"] is None
    opened = public_delta(read_stream(stream_id=round_stream(other["round"]["round_id"]))[0])
    assert opened is not None
    assert opened["data"]["wheel"] is None


@pytest.mark.parametrize(("limit", "sizes"), [({"min": 100, "max": 500}, (1, 2, 5)), ({"min": 100, "max": 100}, (1,))])
def test_a_spin_award_is_public_with_what_each_wager_size_returns_not_a_players_stake(
    limit: dict[str, int], sizes: tuple[int, ...]
) -> None:
    limits = {"ante": {"min": 100, "max": 100_000}, "bonus_spin": limit}
    # Board 7h 7d 7c 2s 2h: a full house, "Wheel + $10 / $25 / $50" for a $1 / $2 / $5 wager (seed 002).
    table = make_table("xtreme", limits=limits, wheel=TEST_WHEEL)
    alice, bob = make_player(table), make_player(table)
    tick = open_round(table, shoe_cards=shoe("Ah Kd", dealer="Qs Jc", board="7h 7d 7c 2s 2h"))
    stakes = {alice: 100, bob: 100 * sizes[-1]}
    for pid, spin in stakes.items():
        for spot, amount in (("ante", 100), ("bonus_spin", spin)):
            place_chip(table_id=table.pk, player_id=pid, spot=spot, amount=amount, idempotency_key=key(),
                       now=later(tick))  # fmt: skip
    tick = step(table, tick)
    make_decision(table_id=table.pk, player_id=alice, option="play4x", idempotency_key=key(), now=later(tick))
    round_id = tick.round_id
    play_out(table, tick)
    spun = [
        public_delta(e) for e in read_stream(stream_id=round_stream(round_id)) if e.type == "house_round.wheel_spun"
    ]
    assert len(spun) == 1
    assert spun[0] is not None
    data = spun[0]["data"]
    fixed = {1: 10, 2: 25, 5: 50}  # currency units, seed 002 "Full House" row
    # EUR: 100 minor units a unit; the stake comes back with the fixed award and 2x the stake (the wheel).
    awards = [{"units": u, "stake": 100 * u, "returned": 100 * u + 100 * fixed[u] + 2 * 100 * u} for u in sizes]
    assert data == {"wheel": "test-wheel", "version": "1", "label": "2x", "multiple": 2, "weight": 1,
                    "hand": "full_house", "awards": awards}  # fmt: skip
    # Each player's own result (private) is the award of their wager size.
    for pid, spin in stakes.items():
        settled = next(
            e.data for e in read_stream(stream_id=f"{round_stream(round_id)}-player-{pid}")
            if e.type == "house_player.settled"
        )  # fmt: skip
        wager = next(w for w in settled["wagers"] if w["wager"] == "bonus_spin")
        assert wager["returned"] == next(a["returned"] for a in awards if a["stake"] == spin)
    # The table view shows the spin as the delta did.
    view = table_view(table_id=table.pk, viewer_id=alice)
    assert view["round"]["wheel_spin"] == data
