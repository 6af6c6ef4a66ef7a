"""The tournament step's reads in one round trip (``games.poker.store.step``,
issue #39's lean path): the same rows, locked in the same order, as the ORM
reads they replace (``read_step_orm``, SQLite's path), and each what the step
needs by the rules it applies (docs/poker.md, "Tournaments: play"): the
players out are those left with no chips at a table between hands, each with
the stack they started that hand with; the pool is the buy-ins of the
entries that count."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone

from games.cards.shuffle import SeededRandomSource
from games.poker import services
from games.poker.models import PokerHandPlayer, PokerSeat, PokerTable
from games.poker.store.step import StepRead, lock_tables, read_step
from games.poker.tournament import services as tournament_services
from games.poker.tournament.driver import TournamentDriver
from games.poker.tournament.models import EntryState, Tournament, TournamentEntry
from games.poker.tournament.services.core import ACTIVE
from games.poker.tournament.services.step import read_step_orm
from tests.poker.tables import make_player, make_tournament

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

WAITING_PHASES = (services.WAITING, services.IDLE)
PAID = [{"max_entrants": None, "shares_bp": [5000, 3000, 2000]}]


class _NoStep(TournamentDriver):
    """Plays the tables' hands but never takes the tournament's step: every table
    ends up waiting for it, with its busts not yet recorded."""

    def tournament_step(self) -> bool:
        return False


def _tables_waiting_with_busts() -> Tournament:
    """A running 18-player tournament on three tables, each having played a hand of
    all-ins and waiting for the step, at least one player left with no chips."""
    tournament = make_tournament(max_players=18, table_seats=6, payouts=PAID)
    now = timezone.now()
    for n in range(18):
        tournament_services.register(
            tournament_id=tournament.pk, player_id=make_player(), idempotency_key=f"reg-{n}", now=now
        )
    driver = _NoStep(tournament.pk, start=now + timedelta(minutes=1), seed=7, aggression=1.0,
                     rng_source=SeededRandomSource(7))  # fmt: skip
    for _ in range(60):
        tables = list(PokerTable.objects.filter(tournament=tournament, is_open=True).order_by("pk"))
        if all(table.phase == services.WAITING for table in tables):
            break
        for table in tables:
            driver.table_step(table)
        driver.now += driver.step_seconds
    assert all(t.phase == services.WAITING for t in PokerTable.objects.filter(tournament=tournament, is_open=True))
    assert PokerSeat.objects.filter(table__tournament=tournament, stack=0).exists()
    return tournament


def _rows(read: StepRead) -> dict[str, Any]:
    """What a read found, as plain values (every concrete column of each row)."""

    def values(row: Any) -> tuple[Any, ...]:
        return tuple(getattr(row, f.attname) for f in row._meta.concrete_fields)

    assert read.tournament is not None
    return {
        "tournament": values(read.tournament),
        "tables": [values(table) for table in read.tables],
        "waiting": [values(table) for table in read.waiting],
        "seats": sorted(values(seat) for seat in read.seats),
        "busts": [values(entry) for entry in read.busts],
        "starts": read.starts,
        "collected": read.collected,
    }


def test_the_one_round_trip_reads_what_the_orm_reads() -> None:
    tournament = _tables_waiting_with_busts()
    with transaction.atomic():
        lean = read_step(tournament_id=tournament.pk, phases=WAITING_PHASES, counted=ACTIVE)
        orm = read_step_orm(tournament.pk)
    assert _rows(lean) == _rows(orm)


def test_the_busts_are_the_players_left_with_no_chips_with_the_stack_they_started_the_hand_with() -> None:
    tournament = _tables_waiting_with_busts()
    with transaction.atomic():
        read = read_step(tournament_id=tournament.pk, phases=WAITING_PHASES, counted=ACTIVE)
    out = PokerSeat.objects.filter(table__tournament=tournament, stack=0)
    assert sorted(entry.player_id for entry in read.busts) == sorted(seat.player_id for seat in out)
    assert all(entry.state == EntryState.PLAYING for entry in read.busts)
    for seat in out:
        table = PokerTable.objects.get(pk=seat.table_id)
        started = PokerHandPlayer.objects.get(hand__hand_id=table.current_hand_id, player_id=seat.player_id)
        assert read.starts[(seat.table_id, seat.player_id)] == started.stack_before > 0
    assert [table.pk for table in read.waiting] == [table.pk for table in read.tables]  # every table waits
    assert read.collected == 18 * tournament.buy_in  # every entry counts, out or not


def test_an_unknown_tournament_reads_as_none() -> None:
    with transaction.atomic():
        assert read_step(tournament_id=987654, phases=WAITING_PHASES, counted=ACTIVE).tournament is None


def test_the_step_records_the_busts_the_read_found_and_frees_their_seats() -> None:
    tournament = _tables_waiting_with_busts()
    out = set(PokerSeat.objects.filter(table__tournament=tournament, stack=0).values_list("player_id", flat=True))
    later = timezone.now() + timedelta(minutes=2)
    step = tournament_services.advance_tournament(tournament_id=tournament.pk, now=later, rng=SeededRandomSource(1))
    assert step is not None
    assert step.busted == len(out)
    assert step.players_left == 18 - len(out)
    eliminated = TournamentEntry.objects.filter(tournament=tournament, state=EntryState.ELIMINATED)
    assert set(eliminated.values_list("player_id", flat=True)) == out
    assert not PokerSeat.objects.filter(table__tournament=tournament, player_id__in=out).exists()
    assert all(entry.bust_group is not None for entry in eliminated)  # registration closed: grouped at once


def test_lock_tables_returns_the_tables_asked_for_in_id_order() -> None:
    tournament = _tables_waiting_with_busts()
    ids = list(PokerTable.objects.filter(tournament=tournament).order_by("-pk").values_list("pk", flat=True))
    with transaction.atomic():
        assert [table.pk for table in lock_tables(table_ids=ids)] == sorted(ids)
