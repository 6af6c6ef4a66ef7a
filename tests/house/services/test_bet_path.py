"""The fast bet and decision paths: "has everyone decided?" by index probe equals
a recount of every participant, the round state cache follows the round's version,
and a retried chip answers its first result."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from games.house.models import HouseRound, HouseTable
from games.house.round.dealer import all_decided
from games.house.services import make_decision, place_chip
from games.house.services.rounds import _players
from games.house.store.cache import load_round_at
from games.house.store.streams import load_round
from ledger.services.projectors import check_projections, rebuild
from tests.db import ledger_sums
from tests.house.services.conftest import key, later, make_player, make_table, open_round, snapshot, step

pytestmark = pytest.mark.django_db


def _recount(table: HouseTable) -> bool:
    """Every participant's projection and state read back, decided by the domain."""
    table.refresh_from_db()
    round_row = HouseRound.objects.get(round_id=table.current_round_id)
    _, players = _players(round_row)
    return all_decided(load_round(round_row.round_id), players)


def test_all_decided_after_each_decision_equals_a_recount_of_every_participant() -> None:
    table = make_table("uth")
    ids = [make_player(table) for _ in range(5)]
    tick = open_round(table)
    for pid in ids:
        place_chip(table_id=table.pk, player_id=pid, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    tick = step(table, tick)
    assert tick.phase == "preflop"
    # Preflop: 0 and 1 call (done deciding), 2..4 check; then on the flop 2 and 3 check,
    # 4 calls: every answer must match the recount, including the last one (True).
    plan = [("preflop", [(0, "call4x"), (1, "call3x"), (2, "check"), (3, "check"), (4, "check")]),
            ("flop", [(2, "check"), (3, "check"), (4, "call2x")])]  # fmt: skip
    for street, choices in plan:
        assert tick.phase == street
        for n, (index, option) in enumerate(choices):
            result = make_decision(table_id=table.pk, player_id=ids[index], option=option, idempotency_key=key(),
                                   now=later(tick))  # fmt: skip
            assert result.all_decided == _recount(table)
            assert result.all_decided == (n == len(choices) - 1)
        tick = step(table, tick)
    # River: only 2 and 3 (who checked twice) still decide; one answer leaves one waiting.
    assert tick.phase == "river"
    first = make_decision(table_id=table.pk, player_id=ids[2], option="fold", idempotency_key=key(), now=later(tick))
    assert not first.all_decided
    assert not _recount(table)
    last = make_decision(table_id=table.pk, player_id=ids[3], option="call1x", idempotency_key=key(), now=later(tick))
    assert last.all_decided
    assert _recount(table)
    assert ledger_sums() == {"EUR": 0}


def test_round_state_cache_follows_the_round_rows_version() -> None:
    table = make_table("uth")
    pid = make_player(table)
    tick = open_round(table)
    place_chip(table_id=table.pk, player_id=pid, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    row = HouseRound.objects.get(round_id=tick.round_id)
    betting = load_round_at(row.round_id, row.stream_version)
    assert betting == load_round(row.round_id)
    step(table, tick)
    row.refresh_from_db()
    dealt = load_round_at(row.round_id, row.stream_version)
    assert dealt.version == row.stream_version > betting.version
    assert dealt == load_round(row.round_id)
    assert dealt.phase == "preflop"
    assert betting.phase == "betting"


def test_a_retried_chip_answers_its_first_result_and_writes_nothing() -> None:
    table = make_table("uth")
    pid = make_player(table, funds=10_000)
    tick = open_round(table)
    same = key()
    first = place_chip(table_id=table.pk, player_id=pid, spot="ante", amount=300, idempotency_key=same,
                       now=later(tick))  # fmt: skip
    before = snapshot()
    again = place_chip(table_id=table.pk, player_id=pid, spot="ante", amount=300, idempotency_key=same,
                       now=later(tick))  # fmt: skip
    assert again == first
    assert snapshot() == before
    # Stored and answered as the dataclass's own fields (``as_json`` is asdict without the deep copy).
    assert first.as_json() == asdict(first)


@pytest.mark.postgres
def test_the_context_query_reads_the_player_streams_head_and_settings() -> None:
    """PostgreSQL's one context query also reads what the bet chains onto (the
    player stream's head hash) and the responsible-gaming row, so neither costs
    a round trip of its own; both must equal what a separate read finds."""
    from django.db import connection, transaction

    from casino.responsible_gaming import _row, set_limit
    from games.house.store.commands import _pg_context
    from games.house.store.streams import player_stream
    from ledger.services.events import stream_head

    table = make_table("uth")
    player = make_player(table)
    tick = open_round(table)
    now = later(tick)
    set_limit(player_id=player, currency=table.currency, kind="loss_day", amount=50_000, now=now)
    for _ in range(2):
        place_chip(table_id=table.pk, player_id=player, spot="ante", amount=100, idempotency_key=key(), now=now)
    round_id = HouseTable.objects.get(pk=table.pk).current_round_id
    with transaction.atomic():
        claimed, context, seated = _pg_context(command="test", table_id=table.pk, player_id=player, key=key(),
                                               digest="0" * 64, now=now)  # fmt: skip
        assert claimed
        assert seated
        assert context is not None
        with connection.cursor() as cursor:
            version, head = stream_head(cursor, player_stream(round_id, player))
        assert context.row.stream_version == version == 2
        assert context.head_hash == head
        assert context.settings == _row(player)
        transaction.set_rollback(True)


class _Rollback(Exception):
    pass


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_player_state_is_remembered_at_its_committed_version_and_only_there() -> None:
    """The bet path keeps each player's last committed state (``store.cache.known_player``)
    and then does not read the projected state again. A chip rolled back by the
    caller's transaction is not remembered; a remembered state of an older
    version, or of another database incarnation (a server that may have lost
    commits), is ignored: the projection is read instead."""
    from dataclasses import replace
    from datetime import timedelta

    from django.db import transaction

    from games.house.store import cache
    from games.house.store.cache import known_player

    table = make_table("uth")
    player = make_player(table, funds=10_000)
    tick = open_round(table)
    now = later(tick)
    first = place_chip(table_id=table.pk, player_id=player, spot="ante", amount=100, idempotency_key=key(), now=now)
    assert first.totals["ante"] == 100
    remembered = known_player(table.pk, player)
    assert remembered is not None
    assert (remembered.round_id, remembered.version) == (tick.round_id, 1)
    assert remembered.incarnation is not None
    assert remembered.state.totals()["ante"] == 100

    # A chip whose transaction rolls back leaves the remembered state as it was.
    def chip_rolled_back() -> None:
        with transaction.atomic():
            place_chip(table_id=table.pk, player_id=player, spot="ante", amount=100, idempotency_key=key(), now=now)
            raise _Rollback

    with pytest.raises(_Rollback):
        chip_rolled_back()
    assert known_player(table.pk, player) == remembered

    def stand_in(**changes: object) -> None:
        """Remember a state without chips: used, it shows in the next chip's totals."""
        empty = replace(remembered.state, chips=())
        cache._PLAYER_CACHE[(table.pk, player)] = replace(remembered, state=empty, **changes)  # type: ignore[arg-type]

    def chip(amount: int) -> int:
        result = place_chip(table_id=table.pk, player_id=player, spot="ante", amount=amount, idempotency_key=key(),
                            now=now)  # fmt: skip
        return result.totals["ante"]

    # At the current version the remembered state is what the next chip builds on ...
    stand_in()
    assert chip(200) == 200
    assert known_player(table.pk, player).version == 2  # type: ignore[union-attr]
    # ... at an older version it is ignored: the chip reads the row (200 + 100) ...
    stand_in(version=1)
    assert chip(100) == 300
    # ... and so it is when the database server is not the one it was read from.
    current = known_player(table.pk, player)
    assert current is not None
    stand_in(version=current.version, incarnation=current.incarnation - timedelta(seconds=1))  # type: ignore[operator]
    assert chip(100) == 400
    assert ledger_sums() == {"EUR": 0}
    # The stand-in used at the current version wrote a row without the first
    # chip: the rebuild from the log names it (the events hold every chip) and repairs it.
    named = check_projections()
    assert {(d.projector, d.column) for d in named} == {
        ("house_player_round", column) for column in ("state", "totals", "staked")
    }
    staked = next(d for d in named if d.column == "staked")
    assert (staked.live, staked.rebuilt) == (2 * 400, 2 * 500)  # ante and its ante plus
    rebuild(check=False)
    assert check_projections() == []
