"""The operator's malfunction controls of a running tournament over the
operator REST API (docs/compliance.md, "Tournaments: operator"; issue #23,
"Malfunction"), on PostgreSQL: a 6-player Sit & Go on 3-seat tables started
through ``register`` and played by the deterministic driver.

- pause: every table paused (the hand in play paused, the table between hands
  waiting), the level clock stopped, a player's action refused with
  ``poker_hand_paused``; resume: the clock runs on and the driver plays it to
  the end; each recorded as ``operator.action`` with the actor and the reason;
- pausing a paused tournament, resuming a running one, cancelling a finished
  one: refused with their codes, nothing changes;
- cancel while running under both policies, the expected amounts computed here
  from the rule and the stacks read before cancelling: ``refund`` (every buy-in
  and fee back) and ``chip_count`` (places already reached paid, the rest of the
  pool by chips, rounded down, the remainder to the biggest stack, fees kept).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from compliance.roles import COMPLIANCE, OPERATOR
from games.cards.shuffle import SeededRandomSource
from games.poker import event_types as et
from games.poker import services
from games.poker.models import PokerHand, PokerSeat, PokerTable
from games.poker.tournament import services as tournament_services
from games.poker.tournament.driver import TournamentDriver
from games.poker.tournament.models import Tournament, TournamentEntry
from games.tables import pacing
from games.tables.dealkeys import DealKey
from ledger.models import Event
from ledger.services import balance_of, read_stream
from tests.db import ledger_sums, rows
from tests.house.live.test_operator_api import client_for
from tests.poker.tables import BUY_IN, FEE, key, make_player, make_tournament, wallet
from tests.poker.test_tournament_registration import client, fees, pool, refused

pytestmark = pytest.mark.django_db

FUNDS = 5_000
EVERYTHING = ("games_tournament", "games_tournamententry", "games_pokertable", "games_pokerseat", "games_pokerhand",
              "ledger_account", "ledger_transfer", "ledger_event", "ledger_idempotency")  # fmt: skip
CHIP_COUNT_SEED = 5
THREE_PAID = [{"max_entrants": None, "shares_bp": [5000, 3000, 2000]}]


def started(players: int = 6, *, at: datetime, **terms: Any) -> tuple[Tournament, list[int]]:
    """A Sit & Go of ``players`` on 3-seat tables, started by the last registration at ``at``."""
    tournament = make_tournament(max_players=players, table_seats=3, **terms)
    entrants = [make_player(funds=FUNDS) for _ in range(players)]
    for player in entrants:
        tournament_services.register(tournament_id=tournament.pk, player_id=player, idempotency_key=key("reg"), now=at)
    tournament.refresh_from_db()
    assert tournament.state == "running"
    return tournament, entrants


def control(api: APIClient, tournament: Tournament, action: str, reason: Any = None) -> Any:
    body = {} if reason is None else {"reason": reason}
    return api.post(f"/api/poker/tournaments/{tournament.pk}/{action}/", body, format="json")


def controlled(api: APIClient, tournament: Tournament, action: str, reason: str, *tables: PokerTable) -> Any:
    """``action`` with ``reason``, answered 200: its body, once ``tournament`` and
    ``tables`` are read again."""
    response = control(api, tournament, action, reason)
    assert response.status_code == 200, response.content
    for row in (tournament, *tables):
        row.refresh_from_db()
    return response.json()


def operator() -> tuple[APIClient, int]:
    api = client_for("tourney-op", OPERATOR)
    return api, get_user_model().objects.get(username="tourney-op").pk


def tables_of(tournament: Tournament) -> list[PokerTable]:
    return list(PokerTable.objects.filter(tournament=tournament, is_open=True).order_by("pk"))


def actions(operator_id: int, action: str) -> list[Event]:
    return [
        e
        for e in Event.objects.filter(type="operator.action", stream_id=f"operator-{operator_id}").order_by("id")
        if e.data["action"] == action
    ]


def chip_bank(tournament: Tournament) -> int:
    return balance_of(account_id=tournament_services.chip_bank(tournament_id=tournament.pk))


# --- pause and resume -----------------------------------------------------------------------------------


def test_pause_stops_every_table_and_the_clock_resume_plays_on_to_the_end() -> None:
    start = timezone.now() - timedelta(seconds=10)
    tournament, players = started(at=start)
    first, second = tables_of(tournament)
    # One table deals its first hand (the driver's dealer step at its deadline); the other stays between hands.
    driver = TournamentDriver(tournament.pk, start=start + timedelta(seconds=3), seed=5)
    with pacing.suppress_scheduling():
        assert driver.table_step(first)
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.phase, second.phase) == (services.HAND, services.BETWEEN)
    hand = PokerHand.objects.get(hand_id=first.current_hand_id)
    assert hand.actor_seat is not None
    actor = PokerSeat.objects.get(table=first, seat_number=hand.actor_seat).player_id

    api, operator_id = operator()
    answer = controlled(api, tournament, "pause", "  shuffler fault at table 1 ", first, second)
    assert answer == {"tournament_id": tournament.pk, "state": "paused", "tables": 2}
    assert tournament.state == "paused"
    # The level clock stopped with the playing time kept.
    assert tournament.clock_started_at is None
    elapsed = tournament.clock_elapsed
    assert 10 <= elapsed < 60
    # Every table paused: the hand in play (its own pause event) and the table between hands.
    assert (first.phase, first.deadline, second.phase, second.deadline) == ("paused", None, "paused", None)
    paused = [e for e in read_stream(stream_id=et.hand_stream(hand.hand_id)) if e.type == et.PAUSED]
    assert [e.data["reason"] for e in paused] == ["shuffler fault at table 1"]
    # The player to act is refused.
    act = client(actor).post(f"/api/poker/tables/{first.pk}/act/", {"action": "fold"}, format="json",
                             HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex)  # fmt: skip
    refused(act, 409, "poker_hand_paused")
    # The tournament's stream and the operator's action: actor and reason.
    [event] = [e for e in read_stream(stream_id=et.tournament_stream(tournament.pk)) if e.type == et.TOURNAMENT_PAUSED]
    assert (event.data["reason"], event.data["actor"]) == ("shuffler fault at table 1", f"user:{operator_id}")
    [action] = actions(operator_id, "tournament.pause")
    assert (action.data["target"], action.data["reason"], action.metadata["actor"]) == (
        f"poker-tournament:{tournament.pk}", "shuffler fault at table 1", f"user:{operator_id}",
    )  # fmt: skip
    assert action.data["details"]["tables"] == 2

    # Nothing deals while paused: the driver does nothing.
    assert TournamentDriver(tournament.pk, start=timezone.now(), seed=5).run(max_rounds=20).rounds == 0

    answer = controlled(api, tournament, "resume", "shuffler replaced", first, second)
    assert answer == {"tournament_id": tournament.pk, "state": "running", "tables": 2}
    assert (tournament.state, tournament.clock_elapsed) == ("running", elapsed)
    assert tournament.clock_started_at is not None
    assert (first.phase, second.phase) == (services.HAND, services.BETWEEN)
    assert first.deadline is not None
    assert second.deadline is not None
    [action] = actions(operator_id, "tournament.resume")
    assert (action.data["reason"], action.metadata["actor"]) == ("shuffler replaced", f"user:{operator_id}")

    report = TournamentDriver(tournament.pk, start=timezone.now(), seed=5).run(max_rounds=5000)
    assert report.finished, report
    entries = TournamentEntry.objects.filter(tournament=tournament)
    assert sum(e.prize or 0 for e in entries) == 6 * BUY_IN
    assert (pool(tournament), chip_bank(tournament)) == (0, 0)
    assert all(total == 0 for total in ledger_sums().values())
    assert sum(wallet(p) for p in players) == 6 * (FUNDS - FEE)


def test_pausing_a_paused_or_resuming_a_running_tournament_is_refused() -> None:
    tournament, _players = started(at=timezone.now())
    api, operator_id = operator()
    before = rows(*EVERYTHING)
    refused(control(api, tournament, "resume"), 409, "tournament_not_paused")
    assert rows(*EVERYTHING) == before

    assert control(api, tournament, "pause", "network fault").status_code == 200
    before = rows(*EVERYTHING)
    refused(control(api, tournament, "pause", "again"), 409, "tournament_not_running")
    assert rows(*EVERYTHING) == before
    assert len(actions(operator_id, "tournament.pause")) == 1


def test_pause_needs_a_reason_and_an_operator() -> None:
    tournament, players = started(at=timezone.now())
    api, _operator_id = operator()
    before = rows(*EVERYTHING)
    refused(control(api, tournament, "pause"), 400, "reason_required")
    refused(control(api, tournament, "pause", "   "), 400, "reason_required")
    refused(control(api, tournament, "pause", "x" * 501), 400, "reason_required")
    refused(control(client(players[0]), tournament, "pause", "me"), 403, "permission_denied")
    refused(control(client_for("tourney-viewer", COMPLIANCE), tournament, "pause", "look"), 403,
            "permission_denied")  # fmt: skip
    refused(control(APIClient(), tournament, "pause", "anon"), 401, "not_authenticated")
    refused(api.post("/api/poker/tournaments/999999/pause/", {"reason": "x"}, format="json"), 404,
            "tournament_not_found")  # fmt: skip
    assert rows(*EVERYTHING) == before
    assert control(api, tournament, "pause", "ok").status_code == 200
    before = rows(*EVERYTHING)
    refused(control(client(players[0]), tournament, "resume"), 403, "permission_denied")
    refused(api.post("/api/poker/tournaments/999999/resume/", {}, format="json"), 404, "tournament_not_found")
    assert rows(*EVERYTHING) == before


def test_cancelling_a_finished_tournament_is_refused_and_changes_nothing() -> None:
    """Issue #23's bad input: "An operator cancelling a finished tournament"."""
    tournament, players = started(at=timezone.now())
    assert TournamentDriver(tournament.pk, start=timezone.now(), seed=3).run(max_rounds=5000).finished
    api, operator_id = operator()
    before = rows(*EVERYTHING), [wallet(p) for p in players], ledger_sums()
    refused(control(api, tournament, "cancel", "too late"), 409, "tournament_not_cancellable")
    refused(control(api, tournament, "pause", "too late"), 409, "tournament_not_running")
    assert (rows(*EVERYTHING), [wallet(p) for p in players], ledger_sums()) == before
    assert actions(operator_id, "tournament.cancel") == []


# --- cancel while running, by policy ------------------------------------------------------------------


def test_cancel_while_running_refund_policy_returns_every_buy_in_and_fee() -> None:
    tournament, players = started(at=timezone.now(), cancel_policy="refund")
    TournamentDriver(tournament.pk, start=timezone.now(), seed=2, rng_source=SeededRandomSource(2)).run(max_rounds=4)
    in_play = [t for t in tables_of(tournament) if t.phase == services.HAND]
    assert in_play  # a hand is voided by the cancel
    api, operator_id = operator()

    response = control(api, tournament, "cancel", "table server lost")
    assert response.status_code == 200, response.content
    assert response.json() == {"tournament_id": tournament.pk, "state": "cancelled", "refunded": 6,
                               "buy_ins": 6 * BUY_IN, "fees": 6 * FEE}  # fmt: skip
    # Every entry's buy-in and fee back: every wallet as before registering.
    assert [wallet(p) for p in players] == [FUNDS] * 6
    assert (pool(tournament), fees(tournament), chip_bank(tournament)) == (0, 0, 0)
    assert all(total == 0 for total in ledger_sums().values())
    tournament.refresh_from_db()
    assert tournament.state == "cancelled"
    assert not PokerTable.objects.filter(tournament=tournament, is_open=True).exists()
    assert not PokerSeat.objects.filter(table__tournament=tournament).exists()
    for table in in_play:
        assert PokerHand.objects.get(hand_id=table.current_hand_id).status == "voided"
        # The voided hand's deal key is shredded too (seed 001), its board's leaves revealed.
        assert not DealKey.objects.filter(deal_id=f"poker-hand:{table.current_hand_id}").exists()
        stream = read_stream(stream_id=et.hand_stream(table.current_hand_id))
        assert [e.type for e in stream][-2:] == [et.VOIDED, et.CARDS_REVEALED]
    assert not DealKey.objects.exists()
    assert set(TournamentEntry.objects.filter(tournament=tournament).values_list("state", flat=True)) == {
        "unregistered"
    }
    [action] = actions(operator_id, "tournament.cancel")
    assert (action.data["reason"], action.data["details"]["policy"]) == ("table server lost", "refund")
    assert action.metadata["actor"] == f"user:{operator_id}"


def test_cancel_while_running_chip_count_policy_pays_places_reached_and_the_rest_by_chips() -> None:
    """Three paid places (50/30/20 of 6 buy-ins: 3,000, 1,800, 1,200). Played until
    two are left, the third out in place 3; no hand in play. Cancelled: place 3 gets
    its prize; the other 4,800 go to the two left in proportion to their chips,
    rounded down, the remainder to the bigger stack; the fees stay with the house."""
    tournament, players = started(at=timezone.now(), cancel_policy="chip_count", payouts=THREE_PAID)
    pool_total = 6 * BUY_IN
    place_prizes = {1: pool_total * 5000 // 10000, 2: pool_total * 3000 // 10000, 3: pool_total * 2000 // 10000}
    assert place_prizes == {1: 3000, 2: 1800, 3: 1200}
    # Seeded deals and balancing: this seed reaches two players left with places 3 to 6 taken, no tie.
    driver = TournamentDriver(tournament.pk, start=timezone.now(), seed=CHIP_COUNT_SEED,
                              rng_source=SeededRandomSource(CHIP_COUNT_SEED))  # fmt: skip
    for _ in range(5000):
        driver.run(max_rounds=1)
        tournament.refresh_from_db()
        phases = {t.phase for t in tables_of(tournament)}
        if tournament.players_left <= 2 and phases <= {services.BETWEEN, services.IDLE}:
            break
    assert (tournament.state, tournament.players_left) == ("running", 2)
    out = {e.player_id: e for e in TournamentEntry.objects.filter(tournament=tournament, state="eliminated")}
    [third] = [e for e in out.values() if e.place == 3]
    assert third.tied == 1
    assert {e.place for e in out.values()} == {3, 4, 5, 6}
    stacks = dict(PokerSeat.objects.filter(table__tournament=tournament).values_list("player_id", "stack"))
    assert len(stacks) == 2
    assert sum(stacks.values()) == 6 * 1_500
    wallets = {p: wallet(p) for p in players}

    # The rule: places reached are paid; the rest by chips, rounded down, remainder to the biggest stack.
    rest = pool_total - place_prizes[3]
    expected = {p: rest * stack // sum(stacks.values()) for p, stack in stacks.items()}
    biggest = max(stacks, key=lambda p: stacks[p])
    expected[biggest] += rest - sum(expected.values())
    expected[third.player_id] = place_prizes[3]

    api, operator_id = operator()
    response = control(api, tournament, "cancel", "data centre evacuated")
    assert response.status_code == 200, response.content
    assert response.json()["state"] == "cancelled"
    assert {p: wallet(p) - wallets[p] for p in players} == {p: expected.get(p, 0) for p in players}
    assert (pool(tournament), chip_bank(tournament)) == (0, 0)
    assert fees(tournament) == 6 * FEE  # the fees are kept
    assert all(total == 0 for total in ledger_sums().values())
    prizes = dict(TournamentEntry.objects.filter(tournament=tournament).values_list("player_id", "prize"))
    assert {p: prize for p, prize in prizes.items() if prize} == expected
    [action] = actions(operator_id, "tournament.cancel")
    assert (action.data["reason"], action.data["details"]["policy"]) == ("data centre evacuated", "chip_count")
