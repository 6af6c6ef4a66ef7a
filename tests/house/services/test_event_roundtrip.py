"""Typed house events against the JSON rounds really store: for every event type,
``from_data(data).to_data() == data`` on events recorded by played rounds (read
back from the ledger, upcast to their current schema), and each class's schema
version is the one the ledger records."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from games.house.round.events import EVENT_CLASSES, PLAYER_EVENT_TYPES, ROUND_EVENT_TYPES, WAGER_SETTLED, decode
from games.house.services import (
    clear_bets,
    double_bets,
    make_decision,
    pause_round,
    place_chip,
    resume_round,
    undo_bet,
    void_round,
)
from games.house.store import player_stream, round_stream
from games.tables.presence import HOUSE, touch
from ledger.legs import without_legs
from ledger.services import NewEvent, append_events, read_stream
from ledger.upcasting import CURRENT_VERSIONS
from tests.house.services.conftest import key, later, make_player, make_table, open_round, play_round, shoe, step

pytestmark = pytest.mark.django_db

WHEEL = {"name": "one", "version": "1", "segments": [{"label": "10x", "multiple": 10, "weight": 1}]}


def _streams(round_id: str, players: list[int]) -> list[Any]:
    events = list(read_stream(stream_id=round_stream(round_id)))
    for player in players:
        events.extend(read_stream(stream_id=player_stream(round_id, player)))
    return events


def _progressive_round() -> list[Any]:
    """Xtreme with a STAX hit (royal flush), contributions, a call and a timeout."""
    progressives = {"reset": {"star": 100_001}, "contribution_bp": {"star": 100}}
    table = make_table("xtreme", progressives=progressives)
    a, b = make_player(table), make_player(table)
    tick = open_round(table, shoe_cards=shoe("Ad Kd", dealer="2c 3s", board="Qd Jd Td 5c 8h"))
    for p in (a, b):
        for spot, amount in (("ante", 100), ("stax", 100)):
            place_chip(table_id=table.pk, player_id=p, spot=spot, amount=amount, idempotency_key=key(),
                       now=later(tick))  # fmt: skip
    tick = step(table, tick)
    make_decision(table_id=table.pk, player_id=a, option="play3x", idempotency_key=key(), now=later(tick))
    round_id = tick.round_id
    while tick.phase != "between":
        tick = step(table, tick)
    return _streams(round_id, [a, b])


def _declined_round() -> list[Any]:
    """A player not present at "No More Bets" (their last REST call long before):
    bets declined (``house_player.declined``) while the present one plays."""
    table = make_table("uth")
    gone, here = make_player(table), make_player(table)
    tick = open_round(table)
    for p in (gone, here):
        place_chip(table_id=table.pk, player_id=p, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    touch(family=HOUSE, table_id=table.pk, player_id=gone, now=later(tick) - timedelta(hours=1))
    round_id = tick.round_id
    while tick.phase != "between":
        tick = step(table, tick)
    return _streams(round_id, [gone, here])


def _commands_round() -> list[Any]:
    """Chips, undo, clear, double, pause, resume and void (players' wagers returned)."""
    table = make_table("uth")
    p = make_player(table)
    tick = open_round(table)
    now = later(tick)
    for spot in ("ante", "best_five", "ante"):
        place_chip(table_id=table.pk, player_id=p, spot=spot, amount=100, idempotency_key=key(), now=now)
    undo_bet(table_id=table.pk, player_id=p, idempotency_key=key(), now=now)
    clear_bets(table_id=table.pk, player_id=p, idempotency_key=key(), now=now)
    place_chip(table_id=table.pk, player_id=p, spot="ante", amount=100, idempotency_key=key(), now=now)
    double_bets(table_id=table.pk, player_id=p, idempotency_key=key(), now=now)
    pause_round(table_id=table.pk, actor="operator:test", reason="malfunction", now=now)
    resume_round(table_id=table.pk, actor="operator:test", now=now)
    void_round(table_id=table.pk, actor="operator:test", reason="test", now=now)
    return _streams(tick.round_id, [p])


def _legacy_player_stream() -> list[Any]:
    """Schema 1: per-wager ``house_wager.settled`` and ``house_player.settled`` without wagers."""
    ante = {"wager": "ante", "stake": 100, "outcome": "win", "returned": 200, "rounding_kept": "0", "hand": None,
            "progressive": None, "wheel": None}  # fmt: skip
    result = {"result": "win", "staked": 100, "returned": 200, "net": 100,
              "player": {"category": "pair", "best_five": []}, "at": "2026-11-23T00:00:00+00:00"}  # fmt: skip
    # Not under ``round-``: no round opened in this log (a player stream's row needs its round's).
    stream = "legacy-round-LEGACY-20261123-000001-player-1"
    append_events(stream_id=stream, expected_version=0, events=[
        NewEvent(WAGER_SETTLED, ante), NewEvent("house_player.settled", result, schema_version=1),
    ])  # fmt: skip
    return list(read_stream(stream_id=stream))


def test_every_recorded_house_event_round_trips_through_its_class() -> None:
    spin = play_round("xtreme", hand="Ah Kd", dealer="Qs Jc", board="7h 7d 7c 2s 2h",
                      wagers={"ante": 100, "bonus_spin": 100}, wheel=WHEEL)  # fmt: skip
    recorded = [
        *_progressive_round(),
        *_commands_round(),
        *_declined_round(),
        *read_stream(stream_id=round_stream(spin.game_number)),
    ]
    legacy = _legacy_player_stream()
    assert legacy[-1].schema_version == 2  # upcast applied
    assert legacy[-1].data["wagers"] is None
    seen: dict[str, int] = {}
    for event in [*recorded, *legacy]:
        cls = EVENT_CLASSES[event.type]
        # The money legs are the ledger's, not the game event's (docs/events.md): the class ignores them.
        assert cls.from_data(event.data).to_data() == without_legs(event.data), event.type
        assert decode(event) == cls.from_data(event.data)
        assert cls.schema == CURRENT_VERSIONS[event.type] == event.schema_version
        seen[event.type] = seen.get(event.type, 0) + 1
    assert set(seen) == set(ROUND_EVENT_TYPES) | set(PLAYER_EVENT_TYPES) == set(EVENT_CLASSES)
    removed = [e.data for e in recorded if e.type == "house_bet.removed"]
    assert {d["reason"] for d in removed} == {"undo", "clear"}  # both shapes covered
