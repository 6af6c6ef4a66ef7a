"""The showdown's appends: every player stream continues from its own head."""

from __future__ import annotations

import pytest
from django.conf import settings

from games.services import make_decision, place_chip
from games.services.store import player_stream
from ledger.services import read_stream
from ledger.services.verify import verify_ledger
from tests.rounds.conftest import key, later, make_player, make_table, open_round, step

pytestmark = pytest.mark.django_db


@pytest.mark.postgres
def test_the_showdown_chains_every_player_stream_onto_its_head_even_one_the_same_step_just_appended_to() -> None:
    # The showdown reads the player streams' heads alongside its own work and
    # appends without reading them again: a head missed or read too early
    # would break a chain. The last player times out on the river, so the same
    # step first appends their fold and then settles everyone.
    table = make_table("uth")
    players = [make_player(table) for _ in range(4)]
    tick = open_round(table)
    for player in players:
        for spot in ("ante", "best_five"):
            place_chip(table_id=table.pk, player_id=player, spot=spot, amount=100, idempotency_key=key(),
                       now=later(tick))  # fmt: skip
    tick = step(table, tick)
    assert tick.phase == "preflop"
    choices = {"preflop": {players[0]: "call4x"}, "flop": {players[1]: "call2x"}, "river": {players[2]: "call1x"}}
    while tick.phase in choices:
        for player, option in choices[tick.phase].items():
            make_decision(table_id=table.pk, player_id=player, option=option, idempotency_key=key(),
                          now=later(tick))  # fmt: skip
        tick = step(table, tick)
    assert tick.phase == "between"
    for player in players:
        events = read_stream(stream_id=player_stream(tick.round_id, player))
        assert events[-1].type == "house_player.settled"
        assert [e.prev_hash for e in events[1:]] == [e.hash for e in events[:-1]]
        assert [e.version for e in events] == list(range(1, len(events) + 1))
    timed_out = read_stream(stream_id=player_stream(tick.round_id, players[3]))[-2]
    assert (timed_out.type, timed_out.data["street"], timed_out.data["option"], timed_out.data["auto"]) == (
        "house_decision.made", "river", "fold", True,
    )  # fmt: skip
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []
