"""The showdown's appends: every player stream continues from its own head,
read while the showdown is decided instead of by the ledger after it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.conf import settings

import games.house.services.rounds as rounds
import ledger.services.batch as batch
from games.house.models import HouseTable
from games.house.services import TableTick, make_decision, place_chip
from games.house.store import player_stream
from ledger.services import read_stream
from ledger.services.verify import verify_ledger
from tests.house.services.conftest import key, later, make_player, make_table, open_round, step

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def _to_the_river(seated: int) -> tuple[HouseTable, list[int], TableTick]:
    """A UTH table of ``seated`` players: everyone bets; one calls preflop, one
    on the flop; the river window is open. The table, the players, the tick."""
    table = make_table("uth")
    players = [make_player(table) for _ in range(seated)]
    tick = open_round(table)
    for player in players:
        for spot in ("ante", "best_five"):
            place_chip(table_id=table.pk, player_id=player, spot=spot, amount=100, idempotency_key=key(),
                       now=later(tick))  # fmt: skip
    tick = step(table, tick)
    for street, player, option in [("preflop", players[0], "call4x"), ("flop", players[1], "call2x")]:
        assert tick.phase == street
        make_decision(table_id=table.pk, player_id=player, option=option, idempotency_key=key(), now=later(tick))
        tick = step(table, tick)
    assert tick.phase == "river"
    return table, players, tick


def _heads_read_by_the_ledger(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every stream whose head ``settle_batch`` reads itself, from now on."""
    read: list[str] = []
    real = batch._heads

    def spy(cursor: Any, stream_ids: list[str]) -> dict[str, tuple[int, str]]:
        read.extend(stream_ids)
        return real(cursor, stream_ids)

    monkeypatch.setattr(batch, "_heads", spy)
    return read


def _assert_chained(round_id: str, players: list[int]) -> None:
    for player in players:
        events = read_stream(stream_id=player_stream(round_id, player))
        assert events[-1].type == "house_player.settled"
        assert [e.prev_hash for e in events[1:]] == [e.hash for e in events[:-1]]
        assert [e.version for e in events] == list(range(1, len(events) + 1))
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []


def test_the_showdown_appends_onto_the_heads_it_read_even_one_the_same_step_just_appended_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The last player times out on the river: the same step first appends
    # their fold, then settles everyone on heads read after that.
    table, players, tick = _to_the_river(4)
    make_decision(table_id=table.pk, player_id=players[2], option="call1x", idempotency_key=key(), now=later(tick))
    read = _heads_read_by_the_ledger(monkeypatch)
    tick = step(table, tick)
    assert tick.phase == "between"
    assert not [s for s in read if "-player-" in s], read  # every player head came with the showdown
    _assert_chained(tick.round_id, players)
    timed_out = read_stream(stream_id=player_stream(tick.round_id, players[3]))[-2]
    assert (timed_out.type, timed_out.data["street"], timed_out.data["option"], timed_out.data["auto"]) == (
        "house_decision.made", "river", "fold", True,
    )  # fmt: skip


def test_a_head_read_at_another_version_than_the_row_is_left_out_and_read_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As if a command had moved one stream on between reading the rows and
    # the heads: that head (here also a wrong hash) must not be chained onto.
    table, players, tick = _to_the_river(3)
    real_heads = rounds.player_heads_read_meanwhile

    @contextmanager
    def skewed(round_row: Any) -> Iterator[dict[int, tuple[int, str]]]:
        with real_heads(round_row) as heads:
            yield heads
        version, _ = heads[players[0]]
        heads[players[0]] = (version + 1, "0" * 64)

    monkeypatch.setattr(rounds, "player_heads_read_meanwhile", skewed)
    read = _heads_read_by_the_ledger(monkeypatch)
    tick = step(table, tick)
    assert tick.phase == "between"
    assert [s for s in read if "-player-" in s] == [player_stream(tick.round_id, players[0])]
    _assert_chained(tick.round_id, players)
