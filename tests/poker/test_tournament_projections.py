"""Issue #24: the tournaments (``Tournament``'s projected columns) and their
entries (``TournamentEntry``) are projections of the tournament streams
(``games.poker.tournament.projectors``): a tournament played to the end, or
cancelled, rebuilds from its log to the same entries (places, prizes) and the
same tournament row; applying its events again changes nothing; a changed or
deleted row is named by ``check_projections``, ``rebuild_projections --check``
and ``verify_ledger``, and repaired by ``rebuild_projections``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from games.cards.shuffle import SeededRandomSource
from games.poker import event_types as et
from games.poker.models import PokerSeat
from games.poker.tournament import services as tournament_services
from games.poker.tournament.driver import TournamentDriver
from games.poker.tournament.models import Tournament, TournamentEntry
from games.poker.tournament.projectors import TournamentEntryProjector, TournamentProjector
from ledger.services import read_stream
from ledger.services.projectors import check_projections, rebuild
from tests.poker.tables import key, make_player, make_tournament

pytestmark = pytest.mark.django_db
THREE_PAID = [{"max_entrants": None, "shares_bp": [5000, 3000, 2000]}]
ENTRY_ROW = "games_tournamententry [poker_tournament_entry] row tournament_id={t}, id={entry}"
TOURNAMENT_COLUMNS = (
    "id", "state", "current_level", "started_at", "finished_at", "entrants", "players_left", "hand_for_hand",
    "final_table_id", "bust_groups", "clock_elapsed", "clock_started_at",
)  # fmt: skip
ENTRY_COLUMNS = (
    "id", "player_id", "state", "buy_in", "fee", "place", "tied", "prize", "bust_group", "bust_stack", "bust_hand_id",
    "eliminated_at", "registered_at", "unregistered_at",
)  # fmt: skip


def registered(tournament: Tournament, players: int, *, now: datetime) -> list[int]:
    ids = [make_player() for _ in range(players)]
    for player in ids:
        tournament_services.register(tournament_id=tournament.pk, player_id=player, idempotency_key=key("reg"), now=now)
    return ids


def state(tournament: Tournament) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    row = Tournament.objects.filter(pk=tournament.pk).values(*TOURNAMENT_COLUMNS).get()
    entries = list(TournamentEntry.objects.filter(tournament=tournament).order_by("pk").values(*ENTRY_COLUMNS))
    return row, entries


def finished() -> Tournament:
    """A six-player Sit & Go on 3-seat tables played to the end by the driver (seeded)."""
    tournament = make_tournament(max_players=6, table_seats=3, payouts=THREE_PAID)
    now = timezone.now()
    registered(tournament, 6, now=now)
    report = TournamentDriver(tournament.pk, start=now, seed=5, rng_source=SeededRandomSource(5)).run(max_rounds=5000)
    assert report.finished, report
    tournament.refresh_from_db()
    return tournament


def test_a_tournament_played_to_the_end_rebuilds_to_the_same_entries_and_row() -> None:
    tournament = finished()
    live_row, live_entries = state(tournament)
    assert (live_row["state"], live_row["players_left"], live_row["entrants"]) == ("finished", 1, 6)
    assert sorted(e["place"] for e in live_entries)[0] == 1
    assert sum(e["prize"] for e in live_entries) == 6 * tournament.buy_in  # the whole pool paid
    assert live_row["bust_groups"] >= 1
    assert not PokerSeat.objects.filter(table__tournament=tournament).exists()
    assert check_projections() == []
    result = rebuild(check=False)
    assert result.differences == []
    assert result.rows["poker_tournament_entry"] >= 6
    assert state(tournament) == (live_row, live_entries)  # the level clock too, and the entries' ids


def test_a_cancelled_tournament_rebuilds_to_the_same_entries_and_row() -> None:
    tournament = make_tournament(max_players=6)
    players = registered(tournament, 3, now=timezone.now())
    tournament_services.unregister(
        tournament_id=tournament.pk, player_id=players[0], idempotency_key=key(), now=timezone.now()
    )
    tournament_services.register(
        tournament_id=tournament.pk, player_id=players[0], idempotency_key=key(), now=timezone.now()
    )
    operator = get_user_model().objects.create(username=key("op"), is_staff=True)
    tournament_services.cancel_tournament(
        tournament_id=tournament.pk, operator=operator, reason="test", now=timezone.now()
    )
    live_row, live_entries = state(tournament)
    assert live_row["state"] == "cancelled"
    assert [e["state"] for e in live_entries] == ["unregistered"] * 4  # the first registration, then the three refunds
    assert check_projections() == []
    rebuild(check=False)
    assert state(tournament) == (live_row, live_entries)


def test_a_running_tournament_cancelled_by_chip_count_rebuilds_to_the_same_prizes() -> None:
    tournament = make_tournament(max_players=6, table_seats=3, payouts=THREE_PAID, cancel_policy="chip_count")
    now = timezone.now()
    registered(tournament, 6, now=now)
    driver = TournamentDriver(tournament.pk, start=now, seed=9, rng_source=SeededRandomSource(9))
    driver.run(max_rounds=40)
    operator = get_user_model().objects.create(username=key("op"), is_staff=True)
    tournament_services.cancel_tournament(tournament_id=tournament.pk, operator=operator, reason="test", now=driver.now)
    live = state(tournament)
    assert live[0]["state"] == "cancelled"
    assert sum(e["prize"] for e in live[1]) == 6 * tournament.buy_in
    assert check_projections() == []
    rebuild(check=False)
    assert state(tournament) == live


def test_each_event_applied_twice_in_a_row_rebuilds_the_same_rows() -> None:
    """Idempotence: replayed from empty tables, every event of the tournament's
    stream applied again right after itself (a retried batch) changes nothing."""
    tournament = finished()
    before = state(tournament)
    projectors = (TournamentProjector(), TournamentEntryProjector())
    for projector in reversed(projectors):
        projector.reset()
    assert state(tournament)[1] == []
    for event in read_stream(stream_id=et.tournament_stream(tournament.pk)):
        for projector in projectors:
            if projector.wants(event):
                projector.apply_many([event])
                type(projector)().apply_many([event])  # again, afresh
    assert state(tournament) == before
    assert check_projections() == []


FORGES = [
    ("UPDATE games_tournamententry SET place = 99 WHERE id = %(entry)s",
     ENTRY_ROW + ": place live 99, rebuilt {place}"),
    ("DELETE FROM games_tournamententry WHERE id = %(entry)s", ENTRY_ROW + ": missing (the log has it)"),
    ("UPDATE games_tournament SET players_left = 4 WHERE id = %(t)s",
     "games_tournament [poker_tournament] row id={t}: players_left live 4, rebuilt 1"),
]  # fmt: skip


def test_a_changed_tournament_row_is_named_and_repaired(capsys: pytest.CaptureFixture[str]) -> None:
    """Each forge in turn on one finished tournament (a rebuild gives the rows
    new ids: the entry is found again by its place each time)."""
    tournament = finished()
    live = state(tournament)
    for forge, named in FORGES:
        entry = TournamentEntry.objects.filter(tournament=tournament).order_by("-place").first()
        assert entry is not None
        with connection.cursor() as cursor:
            cursor.execute(forge, {"entry": entry.pk, "t": tournament.pk})
        forged = state(tournament)
        expected = named.format(t=tournament.pk, entry=entry.pk, place=entry.place)
        assert [str(d) for d in check_projections()] == [expected]
        with pytest.raises(CommandError, match="projections differ from their rebuild"):
            call_command("rebuild_projections", "--check")
        assert expected in capsys.readouterr().err
        assert state(tournament) == forged  # --check changes nothing
        with pytest.raises(CommandError, match="ledger verification FAILED"):
            call_command("verify_ledger")
        assert expected in capsys.readouterr().err
        call_command("verify_ledger", "--no-projections")
        call_command("rebuild_projections")
        assert state(tournament) == live
        assert check_projections() == []


def test_a_log_from_before_busted_rebuilds_to_the_same_entries_and_row() -> None:
    """Tournaments recorded before ``poker_tournament.busted``: their group's
    ``eliminated`` is the bust (the time: the group's, the same step's but in
    hand-for-hand play)."""
    tournament = finished()
    row, entries = state(tournament)
    projectors = (TournamentProjector(), TournamentEntryProjector())
    for projector in reversed(projectors):
        projector.reset()
    legacy = [e for e in read_stream(stream_id=et.tournament_stream(tournament.pk)) if e.type != et.TOURNAMENT_BUSTED]
    for projector in projectors:
        projector.apply_many([e for e in legacy if projector.wants(e)])
    rebuilt_row, rebuilt_entries = state(tournament)
    assert rebuilt_row == row
    assert [{**e, "eliminated_at": None} for e in rebuilt_entries] == [{**e, "eliminated_at": None} for e in entries]
    assert all(e["eliminated_at"] is not None for e in rebuilt_entries if e["state"] == "eliminated")
    rebuild(check=False)  # the log has the busts: back to the live rows
    assert state(tournament) == (row, entries)
