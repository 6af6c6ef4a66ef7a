"""Hand modes, STAX progressive split, redaction, histories and replay."""

from __future__ import annotations

import json

import pytest

from games.house.models import PlayerRound
from games.house.realtime.presenters import account_history, game_history, private_delta, public_delta, table_view
from games.house.round.state import replay_player, replay_round
from games.house.services import make_decision, place_chip, pool_account
from games.house.store.rows import state_from_json
from games.house.store.streams import load_round, player_stream, round_stream
from ledger.services import balance_of, read_stream
from tests.db import ledger_sums
from tests.house.services.conftest import (
    dealt_round,
    key,
    later,
    make_player,
    make_table,
    open_round,
    shoe,
    step,
    wallet,
)

pytestmark = pytest.mark.django_db


def test_per_seat_mode_deals_each_player_their_own_cards() -> None:
    table = make_table("xtreme", hand_mode="per_seat")
    a = make_player(table)
    b = make_player(table)
    tick = open_round(table, shoe_cards=shoe("Ah 5h", "4c 5d", dealer="Kd Qs", board="2h 7h 9h Kc 3d"))
    for p in (a, b):
        place_chip(table_id=table.pk, player_id=p, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    # Hands go out in player-id order: a gets the flush, b the lower hand.
    tick = step(table, tick)
    view_a = table_view(table_id=table.pk, viewer_id=a)
    view_b = table_view(table_id=table.pk, viewer_id=b)
    assert view_a["round"]["cards"]["player"] == ["Ah", "5h"]
    assert view_b["round"]["cards"]["player"] == ["4c", "5d"]
    assert view_b["round"]["cards"]["seats"][str(a)] == [None, None]  # not someone else's cards
    assert view_a["round"]["cards"]["seat_numbers"] == {str(a): 1, str(b): 2}
    for p in (a, b):
        make_decision(table_id=table.pk, player_id=p, option="play4x", idempotency_key=key(), now=later(tick))
    tick = step(table, tick)
    assert tick.phase == "between"
    rows = {r.player_id: r for r in PlayerRound.objects.all()}
    assert rows[a].net == 100 + 150 + 400  # ante 1:1, xtra bonus flush 3:2, play 1:1
    assert rows[b].net == -600
    assert ledger_sums() == {"EUR": 0}


def test_redaction_hides_dealer_and_unrevealed_board_cards_until_revealed() -> None:
    table, p, tick = dealt_round("uth", "2s 3s", dealer="Qc Qd", board="Ah 7d 9s Jc 4h")
    hidden = ["Qc", "Qd", "Ah", "7d", "9s", "Jc", "4h", "Tc"]  # Tc: the next card of the undealt deck
    for viewer in (p, None):
        text = json.dumps(table_view(table_id=table.pk, viewer_id=viewer))
        assert not any(f'"{c}"' in text for c in hidden)
        text = json.dumps(game_history(game_number=tick.game_number, player_id=viewer))
        assert not any(f'"{c}"' in text for c in hidden)
    deltas = json.dumps([public_delta(e) for e in read_stream(stream_id=round_stream(tick.round_id))])
    assert not any(f'"{c}"' in deltas for c in hidden)
    assert '"2s"' in deltas  # the shared player hand is public
    make_decision(table_id=table.pk, player_id=p, option="check", idempotency_key=key(), now=later(tick))
    tick = step(table, tick)  # flop revealed
    text = json.dumps(table_view(table_id=table.pk, viewer_id=p))
    assert all(f'"{c}"' in text for c in ("Ah", "7d", "9s"))
    assert not any(f'"{c}"' in text for c in ("Qc", "Qd", "Jc", "4h"))


def test_stax_progressive_hits_of_one_pool_split_equally_remainder_stays() -> None:
    progressives = {"reset": {"star": 100_001}, "contribution_bp": {"star": 0}}
    table = make_table("xtreme", progressives=progressives)
    a, b = make_player(table), make_player(table)
    tick = open_round(table, shoe_cards=shoe("Ad Kd", dealer="2c 3s", board="Qd Jd Td 5c 8h"))
    star = pool_account(table_id=table.pk, game_code="xtreme", pool="star", currency="EUR")
    assert balance_of(account_id=star) == 100_001  # seeded at opening
    for p in (a, b):
        for spot, amount in (("ante", 100), ("stax", 100)):
            place_chip(table_id=table.pk, player_id=p, spot=spot, amount=amount, idempotency_key=key(),
                       now=later(tick))  # fmt: skip
    # Shared hand: royal flush in diamonds on two cards + flop (STAX table 1: the Star pool).
    tick = step(table, tick)
    while tick.phase != "between":
        tick = step(table, tick)
    for p in (a, b):
        events = read_stream(stream_id=player_stream(tick.round_id, p))
        [result] = [e.data for e in events if e.type == "house_player.settled"]
        stax = next(w for w in result["wagers"] if w["wager"] == "stax")
        assert stax["returned"] == 50_000
        assert stax["progressive"] == "star"
    hit = next(
        e.data for e in read_stream(stream_id=round_stream(tick.round_id)) if e.type == "house_round.progressive_hit"
    )
    assert hit["remainder_kept"] == 1
    assert hit["reset_added"] == 100_001
    assert balance_of(account_id=star) == 1 + 100_001
    assert ledger_sums() == {"EUR": 0}


def test_contributions_move_at_settlement_from_the_stax_stakes() -> None:
    progressives = {"reset": {"heart": 1000}, "contribution_bp": {"heart": 250}}
    table = make_table("xtreme", progressives=progressives)
    p = make_player(table)
    tick = open_round(table, shoe_cards=shoe("2c 7d", dealer="Kd Qs", board="9h 4s 5c Jd 3h"))
    heart = pool_account(table_id=table.pk, game_code="xtreme", pool="heart", currency="EUR")
    place_chip(table_id=table.pk, player_id=p, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    place_chip(table_id=table.pk, player_id=p, spot="stax", amount=1000, idempotency_key=key(), now=later(tick))
    assert balance_of(account_id=heart) == 1000  # nothing moves at bet time
    tick = step(table, tick)
    while tick.phase != "between":
        tick = step(table, tick)
    assert balance_of(account_id=heart) == 1000 + 25  # 2.5 % of 1000


def test_replaying_the_streams_gives_the_projected_state_and_histories_recall_everything() -> None:
    table, p, tick = dealt_round("uth", "As Ad", dealer="Kc Qd", board="Ah 7d 9s Jc 4h",
                                 bets={"ante": 100, "best_five": 100})  # fmt: skip
    make_decision(table_id=table.pk, player_id=p, option="call4x", idempotency_key=key(), now=later(tick))
    tick = step(table, tick)
    state = load_round(tick.round_id)
    assert replay_round(read_stream(stream_id=round_stream(tick.round_id))) == state
    row = PlayerRound.objects.get(player_id=p)
    replayed = replay_player(p, read_stream(stream_id=player_stream(tick.round_id, p)))
    assert replayed == state_from_json(p, row.state)
    history = game_history(game_number=tick.game_number, player_id=p)
    assert history["cards"] == {"player": ["As", "Ad"], "dealer": ["Kc", "Qd"], "board": ["Ah", "7d", "9s", "Jc", "4h"]}
    assert history["pay_tables"]["best_five"]["number"] == 1
    assert history["player"]["decisions"] == [{"street": "preflop", "option": "call4x", "auto": False}]
    assert history["player"]["balance_after"] == wallet(p)
    assert history["player"]["balance_after"] - history["player"]["balance_before"] == history["player"]["net"]
    rows = account_history(player_id=p)
    assert rows[0]["game_number"] == tick.game_number
    assert rows[0]["bets"] == {"ante": 100, "ante_plus": 100, "best_five": 100, "call": 400}
    assert rows[0]["payout"] == history["player"]["returned"]
    assert all(private_delta(e) is not None for e in read_stream(stream_id=player_stream(tick.round_id, p)))


def test_game_numbers_are_unique_within_one_second() -> None:
    from games.tables.pacing import game_number
    from tests.house.services.conftest import T0

    table = make_table("uth", code="UTH1")
    tick = open_round(table)
    assert tick.game_number == "UTH1-20261122-134501"
    assert game_number(table_code=table.code, now=T0) == "UTH1-20261122-134501-2"


def test_the_round_records_the_pay_tables_whose_rtp_is_published() -> None:
    from fractions import Fraction

    from games.house.math.enumeration import SEVEN_CARD_COUNTS
    from games.house.math.rtp import rtp_from_counts
    from games.house.rules.registry import pay_table

    table = make_table("uth", pay_tables={"ante_plus": 1, "best_five": 1})
    tick = open_round(table)
    opened = read_stream(stream_id=round_stream(tick.round_id))[0].data
    recorded = opened["pay_tables"]["best_five"]["table"]
    assert recorded == pay_table("uth", "best_five", 1).as_dict()
    # Best Five (seed 000) / Trips (seed 004): RTP 96.50 % (RULES.md), exactly from the recorded lines.
    lines = {line["outcome"]: Fraction(line["ratio"]) for line in recorded["lines"]}
    assert lines == {"royal_flush": 50, "straight_flush": 40, "four_of_a_kind": 30, "full_house": 8, "flush": 7,
                     "straight": 4, "three_of_a_kind": 3}  # fmt: skip
    rtp, _, _ = rtp_from_counts(pay_table("uth", "best_five", 1), SEVEN_CARD_COUNTS)
    assert round(float(rtp) * 100, 2) == 96.50


def test_a_round_stored_with_per_wager_settlement_events_still_recalls_its_wagers() -> None:
    """Schema 1 recorded one ``house_wager.settled`` per wager before a
    ``house_player.settled`` without ``wagers``; schema 2 puts the wagers inside.
    Stored events never change, so the old shape must still read."""
    from games.house.realtime.presenters import settled_wagers
    from ledger.services import NewEvent, append_events

    ante = {"wager": "ante", "stake": 100, "outcome": "win", "returned": 200, "rounding_kept": "0", "hand": None,
            "progressive": None, "wheel": None}  # fmt: skip
    blind = {**ante, "wager": "blind", "outcome": "push", "returned": 100}
    result = {"result": "win", "staked": 200, "returned": 300, "net": 100,
              "player": {"category": "pair", "best_five": []}, "at": "2026-11-23T00:00:00+00:00"}  # fmt: skip
    # Not under ``round-``: no round opened in this log (a player stream's row needs its round's).
    stream = "legacy-round-LEGACY-20261123-000000-player-1"
    append_events(stream_id=stream, expected_version=0, events=[
        NewEvent("house_wager.settled", ante), NewEvent("house_wager.settled", blind),
        NewEvent("house_player.settled", result, schema_version=1),
    ])  # fmt: skip
    events = read_stream(stream_id=stream)
    assert events[-1].data["wagers"] is None  # upcast to schema 2: "look in the stream"
    assert [(w["wager"], w["returned"]) for w in settled_wagers(events)] == [("ante", 200), ("blind", 100)]
    current = NewEvent("house_player.settled", {**result, "wagers": [ante]}, schema_version=2)
    append_events(stream_id="legacy-round-NEW-20261123-000000-player-1", expected_version=0, events=[current])
    recorded = read_stream(stream_id="legacy-round-NEW-20261123-000000-player-1")
    assert [(w["wager"], w["outcome"]) for w in settled_wagers(recorded)] == [("ante", "win")]
