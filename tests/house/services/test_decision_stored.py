"""A decision's stored result (the idempotency key's) is exactly what the
decision returned (``decision_stored``), its tick and ``all_decided`` read by
the same statement that stores it: a retry answers the same, whether or not
the deadline falls on a whole second."""

from __future__ import annotations

from datetime import timedelta

import pytest

from games.house.services import advance_table, make_decision, place_chip, start_table
from games.house.services.bets import decision_stored
from ledger.models import IdempotencyRecord
from tests.house.services.conftest import T0, key, make_player, make_table

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("offset", [timedelta(0), timedelta(microseconds=123_450)])
def test_the_stored_decision_is_the_returned_one(offset: timedelta) -> None:
    table = make_table("uth")
    p, q = make_player(table), make_player(table)
    tick = start_table(table_id=table.pk, now=T0 + offset)
    assert tick.deadline is not None
    for player in (p, q):
        place_chip(table_id=table.pk, player_id=player, spot="ante", amount=100, idempotency_key=key(),
                   now=tick.deadline - timedelta(seconds=1))  # fmt: skip
    dealt = advance_table(table_id=table.pk, expected_seq=tick.phase_seq, now=tick.deadline)
    assert dealt is not None
    assert dealt.deadline is not None
    assert dealt.deadline.microsecond == offset.microseconds
    at = dealt.deadline - timedelta(seconds=1)
    first = make_decision(table_id=table.pk, player_id=p, option="call4x", idempotency_key="d-p", now=at)
    last = make_decision(table_id=table.pk, player_id=q, option="check", idempotency_key="d-q", now=at)
    assert (first.all_decided, last.all_decided) == (False, True)  # q was still to decide when p called
    for result, stored_key, player, option in ((first, "d-p", p, "call4x"), (last, "d-q", q, "check")):
        assert result.tick is not None
        assert result.tick.deadline == dealt.deadline
        assert IdempotencyRecord.objects.get(key=stored_key).result == decision_stored(result)
        again = make_decision(table_id=table.pk, player_id=player, option=option, idempotency_key=stored_key, now=at)
        assert again == result
