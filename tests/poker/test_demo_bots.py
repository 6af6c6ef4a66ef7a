"""The make run demo's Sit & Go (issue #23: "make run has a demo Sit & Go that bots
fill"): the template is seeded, a demo tournament is kept registering, one bot
registers whenever nobody has for the join interval (a person may take a seat
meanwhile), the full Sit & Go starts, and bots act at their turns through the
services while the dealer runs the table."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from casino.demo import seed_demo
from games.poker import services
from games.poker.demo_bots import DEMO_TEMPLATE, demo_bots_tick
from games.poker.models import PokerHand, PokerSeat, PokerTable
from games.poker.tournament import services as tournament_services
from games.poker.tournament.models import Tournament, TournamentEntry
from games.tables import pacing
from tests.poker.tables import key, make_player

pytestmark = pytest.mark.django_db


def test_bots_fill_the_demo_sit_and_go_and_play_it() -> None:
    seed_demo()
    now = timezone.now()
    first = demo_bots_tick(now=now, join_seconds=20)
    assert first == {"created": 1, "registered": 1, "acted": 0}
    tournament = Tournament.objects.get(template__name=DEMO_TEMPLATE)
    # Within the join interval nobody else is registered by the bots: a person may take a seat.
    assert demo_bots_tick(now=now + timedelta(seconds=5), join_seconds=20)["registered"] == 0
    person = make_player()
    tournament_services.register(tournament_id=tournament.pk, player_id=person, idempotency_key=key(), now=now)
    clock = now
    for _ in range(10):
        clock += timedelta(seconds=21)
        demo_bots_tick(now=clock, join_seconds=20)
        tournament.refresh_from_db()
        if tournament.state == "running":
            break
    assert tournament.state == "running"
    entries = TournamentEntry.objects.filter(tournament=tournament)
    assert entries.count() == 6
    assert entries.filter(player__username__startswith="demo-bot-").count() == 5
    # The next beat opens a new demo Sit & Go for the next players.
    assert demo_bots_tick(now=clock, join_seconds=20)["created"] == 1
    assert Tournament.objects.filter(template__name=DEMO_TEMPLATE, state="registering").count() == 1
    table = PokerTable.objects.get(tournament=tournament)
    with pacing.suppress_scheduling():
        clock += timedelta(seconds=10)
        services.advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=clock)
        acted = 0
        for _ in range(10):
            hand = PokerHand.objects.get(table=table)
            actor = PokerSeat.objects.filter(table=table, seat_number=hand.actor_seat or 0).first()
            if actor is not None and actor.player_id == person and hand.status == "playing":
                # The person's turn: bots wait for them (their clock runs); they fold.
                services.act(table_id=table.pk, player_id=person, action="fold", idempotency_key=key(), now=clock)
            acted += demo_bots_tick(now=clock, join_seconds=20)["acted"]
    assert acted >= 1
    hand = PokerHand.objects.get(table=table)
    assert hand.stream_version > 0
