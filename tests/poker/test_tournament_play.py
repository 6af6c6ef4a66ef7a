"""Tournament play through the services (docs/poker.md, "Tournaments: play";
issue #23): the start, the away rule of seed 001, the level clock, busts and
places, hand-for-hand, balancing, the finish with the payouts, late
registration, scheduled starts, and the refusals at a tournament table. Bots
play with the deterministic driver (``games.poker.tournament.driver``); the
seating and the decks come from a seeded source where a test needs a
repeatable run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from games.cards.shuffle import SeededRandomSource
from games.poker import event_types as et
from games.poker import services
from games.poker.models import PokerHand, PokerSeat, PokerTable
from games.poker.tournament import clock as level_clock
from games.poker.tournament import services as tournament_services
from games.poker.tournament.driver import TournamentDriver
from games.poker.tournament.models import Tournament, TournamentEntry
from games.poker.tournament.services import start as tournament_start
from games.poker.tournament.services import step as tournament_step
from games.tables import pacing, presence
from games.tables.dealkeys import DealKey
from ledger.services import balance_of, read_stream
from ledger.services.projectors import check_projections, rebuild
from ledger.services.seals import seal_key
from ledger.services.verify import verify_ledger
from tests.db import ledger_sums
from tests.poker.tables import BUY_IN, FEE, key, make_player, make_tournament, refused, wallet

pytestmark = pytest.mark.django_db

THREE_PAID = [{"max_entrants": None, "shares_bp": [5000, 3000, 2000]}]


def registered(tournament: Tournament, players: int, *, now: datetime) -> list[int]:
    """``players`` funded players registered (a Sit & Go starts with the last one)."""
    ids = [make_player() for _ in range(players)]
    for player in ids:
        tournament_services.register(tournament_id=tournament.pk, player_id=player, idempotency_key=key("reg"), now=now)
    return ids


@pytest.fixture
def seeded(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """``seeded(n)``: the seat draw of the next start, and the balancing of a step
    run without its own source, come from ``SeededRandomSource(n)`` (a repeatable
    run; live play draws from the secure source)."""

    def seed(number: int) -> None:
        for module in (tournament_start, tournament_step):
            monkeypatch.setattr(module, "SecureRandomSource", lambda: SeededRandomSource(number))

    return seed


def events(tournament: Tournament) -> list[str]:
    return [e.type for e in read_stream(stream_id=et.tournament_stream(tournament.pk))]


def assert_ranking_is_complete(tournament: Tournament) -> None:
    """Every entrant has a place; tied places are shared by exactly ``tied``
    players and take the places after them (the eliminations rule), so the
    places run 1..N; the winner alone is first."""
    entries = list(TournamentEntry.objects.filter(tournament=tournament))
    assert all(e.place is not None for e in entries), [(e.pk, e.state, e.place) for e in entries]
    counts = Counter(e.place or 0 for e in entries)
    for entry in entries:
        assert counts[entry.place or 0] == entry.tied
    place = 1
    for value in sorted(counts):
        assert value == place, sorted(counts)
        place += counts[value]
    assert place == len(entries) + 1
    winners = [e for e in entries if e.place == 1]
    assert len(winners) == 1
    assert winners[0].state == "winner"


def assert_money_and_chips_closed(tournament: Tournament, *, pool: int) -> None:
    prizes = sum(e.prize or 0 for e in TournamentEntry.objects.filter(tournament=tournament))
    assert prizes == pool
    assert balance_of(account_id=tournament_services.pool_account(tournament_id=tournament.pk, currency="EUR")) == 0
    assert balance_of(account_id=tournament_services.chip_bank(tournament_id=tournament.pk)) == 0
    assert all(total == 0 for total in ledger_sums().values())
    assert verify_ledger(key=seal_key()) == []


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_sit_and_go_plays_to_the_end_and_pays_the_payout_table(seed: int, seeded: Callable[[int], None]) -> None:
    tournament = make_tournament(max_players=6, table_seats=3, payouts=THREE_PAID)
    now = timezone.now()
    seeded(seed)
    players = registered(tournament, 6, now=now)
    tournament.refresh_from_db()
    assert tournament.state == "running"
    assert tournament.entrants == 6
    assert PokerTable.objects.filter(tournament=tournament).count() == 2  # 6 players, 3-seat tables
    before = {player: wallet(player) for player in players}
    report = TournamentDriver(tournament.pk, start=now, seed=seed, rng_source=SeededRandomSource(seed)).run(
        max_rounds=5000
    )
    tournament.refresh_from_db()
    assert report.finished, report
    assert tournament.players_left == 1
    assert_ranking_is_complete(tournament)
    assert_money_and_chips_closed(tournament, pool=6 * BUY_IN)
    # Untied places get the table's share of the pool (50/30/20 of 6,000); a tie shares its places' prizes.
    by_place = {1: 3000, 2: 1800, 3: 1200}
    for entry in TournamentEntry.objects.filter(tournament=tournament):
        assert entry.place is not None
        shared = sum(by_place.get(p, 0) for p in range(entry.place, entry.place + entry.tied))
        assert entry.prize in (shared // entry.tied, shared // entry.tied + shared % entry.tied)
        assert wallet(entry.player_id) == before[entry.player_id] + entry.prize
    assert events(tournament)[-2:] == [et.TOURNAMENT_FINISHED, et.TOURNAMENT_PAID]
    assert not PokerTable.objects.filter(tournament=tournament, is_open=True).exists()
    # Seed 001: every hand ended with the table's leaves revealed and its deal key shredded.
    hands = list(PokerHand.objects.filter(table__tournament=tournament).values_list("hand_id", flat=True))
    assert hands
    assert not DealKey.objects.filter(deal_id__in=[f"poker-hand:{h}" for h in hands]).exists()
    for hand_id in hands:
        assert [e.type for e in read_stream(stream_id=et.hand_stream(hand_id))][-1] == et.CARDS_REVEALED


def test_chips_are_tournament_chips_not_money() -> None:
    tournament = make_tournament(max_players=2, table_seats=2)
    now = timezone.now()
    first, second = registered(tournament, 2, now=now)
    table = PokerTable.objects.get(tournament=tournament)
    assert table.currency == "XXX"
    seats = {s.player_id: s.stack for s in PokerSeat.objects.filter(table=table)}
    assert seats == {first: 1_500, second: 1_500}
    # The players' money is only what registration took: buy-in and fee, nothing for the chips.
    assert wallet(first) == 100_000 - BUY_IN - FEE
    assert balance_of(account_id=tournament_services.chip_bank(tournament_id=tournament.pk)) == -3_000
    assert ledger_sums().get("XXX") == 0


def test_the_away_rule_deals_the_absent_player_in_and_folds_them_at_their_turn() -> None:
    """Seed 001: "players will be given unlimited time to re-join ... small, big
    blinds and antes will be posted ... you are dealt with the cards and they are
    folded when your turn comes." """
    tournament = make_tournament(max_players=3, table_seats=3)
    now = timezone.now()
    players = registered(tournament, 3, now=now)
    table = PokerTable.objects.get(tournament=tournament)
    # Everyone was seen at the table; one player's last sign of life is long gone.
    away = players[0]
    for player in players:
        presence.touch(family=presence.POKER, table_id=table.pk, player_id=player, now=now)
    presence.touch(family=presence.POKER, table_id=table.pk, player_id=away, now=now - timedelta(hours=1))
    with pacing.suppress_scheduling():
        clock = now
        for _ in range(60):  # hands until the absent player's turn has come (and a hand after it)
            if (
                PokerHand.objects.filter(table=table).count() >= 3
                and PokerSeat.objects.get(table=table, player_id=away).sitting_out
            ):
                break
            table.refresh_from_db()
            clock = max(clock, table.deadline or clock)
            for player in players[1:]:
                presence.touch(family=presence.POKER, table_id=table.pk, player_id=player, now=clock)
            if table.phase == services.BETWEEN:
                services.advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=clock)
            elif table.phase == services.HAND:
                hand = PokerHand.objects.get(hand_id=table.current_hand_id)
                assert hand.actor_seat is not None
                seat = PokerSeat.objects.get(table=table, seat_number=hand.actor_seat)
                if seat.player_id == away:
                    # Their turn is due at once: the dealer folds them without waiting.
                    assert hand.deadline == clock
                    services.advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=clock)
                else:
                    services.act(table_id=table.pk, player_id=seat.player_id, action="fold",
                                 idempotency_key=key("a"), now=clock)  # fmt: skip
            else:
                tournament_services.advance_tournament(tournament_id=tournament.pk, now=clock)
    hands = list(PokerHand.objects.filter(table=table))
    assert len(hands) >= 2
    for hand in hands:
        assert str(away) in {str(p) for p in hand.players.values()}  # dealt into every hand
    seat = PokerSeat.objects.get(table=table, player_id=away)  # never freed
    assert seat.sitting_out
    assert seat.sat_out_reason == "disconnected"
    timed_out = [e for h in hands for e in read_stream(stream_id=et.hand_stream(h.hand_id)) if e.type == et.TIMED_OUT]
    assert timed_out
    assert all(e.data["action"] == "fold" for e in timed_out)


def test_a_player_cannot_sit_down_add_chips_or_leave_at_a_tournament_table() -> None:
    tournament = make_tournament(max_players=2, table_seats=3)
    now = timezone.now()
    first, _ = registered(tournament, 2, now=now)
    table = PokerTable.objects.get(tournament=tournament)
    stranger = make_player()
    refused("poker_tournament_table", lambda: services.sit_down(
        table_id=table.pk, player_id=stranger, seat_number=3, buy_in=1_500, idempotency_key=key(),
        now=now))  # fmt: skip
    refused("poker_tournament_table", lambda: services.top_up(
        table_id=table.pk, player_id=first, amount=100, idempotency_key=key(), now=now))  # fmt: skip
    refused("poker_tournament_table", lambda: services.stand_up(
        table_id=table.pk, player_id=first, idempotency_key=key(), now=now))  # fmt: skip


def test_blinds_follow_the_level_clock_and_the_clock_stops_while_paused() -> None:
    levels = [
        {"small_blind": 10, "big_blind": 20, "ante": 0, "duration_seconds": 60},
        {"small_blind": 20, "big_blind": 40, "ante": 5, "duration_seconds": 60},
    ]
    tournament = make_tournament(max_players=2, table_seats=2, levels=levels)
    now = timezone.now()
    registered(tournament, 2, now=now)
    tournament.refresh_from_db()
    assert level_clock.clock_seconds(tournament, now + timedelta(seconds=59)) == 59
    assert level_clock.level_now(tournament, now + timedelta(seconds=59))[0] == 1
    assert level_clock.level_now(tournament, now + timedelta(seconds=60))[0] == 2
    table = PokerTable.objects.get(tournament=tournament)
    later = now + timedelta(seconds=61)
    with pacing.suppress_scheduling():
        services.advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=later)
    hand = PokerHand.objects.get(table=table)
    blinds = [e.data for e in read_stream(stream_id=et.hand_stream(hand.hand_id)) if e.type == "poker.blind_posted"]
    assert sorted(b["amount"] for b in blinds) == [20, 40]  # level 2's blinds
    antes = [e.data for e in read_stream(stream_id=et.hand_stream(hand.hand_id)) if e.type == "poker.ante_posted"]
    assert [a["amount"] for a in antes] == [5, 5]


def test_a_scheduled_tournament_starts_at_its_time_and_seats_late_registrations() -> None:
    start = timezone.now()
    tournament = make_tournament(kind="scheduled", name="MTT", start_at=start, max_players=30, table_seats=4,
                                 late_registration_level=1, payouts=THREE_PAID)  # fmt: skip
    early = registered_without_start(tournament, 9, now=start - timedelta(minutes=5))
    assert tournament_services.sweep_tournaments(now=start - timedelta(seconds=1)) == {"started": 0, "stepped": 0}
    assert tournament_services.sweep_tournaments(now=start)["started"] == 1
    tournament.refresh_from_db()
    assert tournament.state == "running"
    sizes = sorted(PokerTable.objects.get(pk=t).seats.count() for t in tables_of(tournament))
    assert sizes == [3, 3, 3]  # 9 players on the fewest 4-seat tables, sizes within one
    assert set(PokerSeat.objects.filter(table__tournament=tournament).values_list("player_id", flat=True)) == set(early)
    late = make_player()
    tournament_services.register(tournament_id=tournament.pk, player_id=late, idempotency_key=key(), now=start)
    seat = PokerSeat.objects.get(table__tournament=tournament, player_id=late)
    assert seat.stack == tournament.starting_chips
    tournament.refresh_from_db()
    assert tournament.entrants == 10
    assert tournament.players_left == 10
    # Level 2 starts after level 1's 600 s: late registration is closed then.
    Tournament.objects.filter(pk=tournament.pk).update(current_level=2)
    too_late = make_player()
    refused("tournament_registration_closed", lambda: tournament_services.register(
        tournament_id=tournament.pk, player_id=too_late, idempotency_key=key(), now=start))  # fmt: skip
    report = TournamentDriver(tournament.pk, start=start, seed=7).run(max_rounds=20_000)
    assert report.finished
    tournament.refresh_from_db()
    assert_ranking_is_complete(tournament)
    assert_money_and_chips_closed(tournament, pool=10 * BUY_IN)
    types = events(tournament)
    assert et.TOURNAMENT_TABLE_BROKEN in types
    assert et.TOURNAMENT_FINAL_TABLE in types
    assert et.TOURNAMENT_MOVED in types


def registered_without_start(tournament: Tournament, players: int, *, now: datetime) -> list[int]:
    ids = [make_player() for _ in range(players)]
    for player in ids:
        tournament_services.register(tournament_id=tournament.pk, player_id=player, idempotency_key=key("reg"), now=now)
    return ids


def tables_of(tournament: Tournament) -> list[int]:
    return list(PokerTable.objects.filter(tournament=tournament, is_open=True).values_list("pk", flat=True))


def test_a_scheduled_tournament_with_one_player_is_cancelled_and_refunded_at_its_time() -> None:
    start = timezone.now()
    tournament = make_tournament(kind="scheduled", name="Empty", start_at=start, max_players=30)
    (alone,) = registered_without_start(tournament, 1, now=start - timedelta(minutes=1))
    tournament_services.sweep_tournaments(now=start)
    tournament.refresh_from_db()
    assert tournament.state == "cancelled"
    assert wallet(alone) == 100_000
    cancelled = [
        e for e in read_stream(stream_id=et.tournament_stream(tournament.pk)) if e.type == et.TOURNAMENT_CANCELLED
    ]
    assert cancelled[0].data["reason"] == "not_enough_players"


def test_hand_for_hand_waits_for_every_table_and_ranks_the_round_as_one_group(seeded: Callable[[int], None]) -> None:
    """Near the money every table plays one hand and waits for the others; players
    busted in the same round at different tables are one group (ranked by their
    stacks at the start of the hand)."""
    tournament = make_tournament(max_players=6, table_seats=3, payouts=THREE_PAID)
    now = timezone.now()
    seeded(11)
    registered(tournament, 6, now=now)
    driver = TournamentDriver(tournament.pk, start=now, seed=11, rng_source=SeededRandomSource(11))
    seen_waiting_while_other_plays = False
    with pacing.suppress_scheduling():
        for _ in range(5000):
            tournament.refresh_from_db()
            if tournament.state != "running":
                break
            tables = list(PokerTable.objects.filter(tournament=tournament, is_open=True).order_by("pk"))
            if tournament.hand_for_hand:
                phases = {t.phase for t in tables}
                # A table never deals a new hand while another has not finished the round's hand.
                assert not ({services.BETWEEN} <= phases and services.WAITING in phases), phases
                if services.WAITING in phases and services.HAND in phases:
                    seen_waiting_while_other_plays = True
            for table in tables:
                driver.table_step(table)
            driver.now += driver.step_seconds
    tournament.refresh_from_db()
    assert tournament.state == "finished"
    assert et.TOURNAMENT_HAND_FOR_HAND in events(tournament)
    assert seen_waiting_while_other_plays
    assert_ranking_is_complete(tournament)
    assert_money_and_chips_closed(tournament, pool=6 * BUY_IN)


def test_an_eliminated_player_has_no_action_and_gets_a_clear_refusal() -> None:
    tournament = make_tournament(max_players=6, table_seats=3, payouts=THREE_PAID)
    now = timezone.now()
    registered(tournament, 6, now=now)
    driver = TournamentDriver(tournament.pk, start=now, seed=5)
    with pacing.suppress_scheduling():
        for _ in range(5000):
            out = TournamentEntry.objects.filter(tournament=tournament, state="eliminated").first()
            if out is not None:
                break
            for table in PokerTable.objects.filter(tournament=tournament, is_open=True):
                driver.table_step(table)
            driver.now += driver.step_seconds
    assert out is not None
    table_id = PokerHand.objects.get(hand_id=out.bust_hand_id).table_id
    refused("tournament_player_eliminated", lambda: services.act(
        table_id=table_id, player_id=out.player_id, action="fold", idempotency_key=key(), now=driver.now))  # fmt: skip


def test_a_chip_count_cancel_ranks_the_players_out_from_the_events_not_their_rows(
    seeded: Callable[[int], None],
) -> None:
    """Cancel by chip count: the players already out get their place's prize by the
    eliminations rule over the bust groups; a forged place or prize on an entry row
    changes nothing."""
    tournament = make_tournament(max_players=6, table_seats=6, payouts=THREE_PAID, cancel_policy="chip_count")
    now = timezone.now()
    seeded(21)
    registered(tournament, 6, now=now)
    driver = TournamentDriver(tournament.pk, start=now, seed=21, rng_source=SeededRandomSource(21))
    with pacing.suppress_scheduling():
        for _ in range(5000):
            tournament.refresh_from_db()
            if tournament.players_left <= 3 or tournament.state != "running":
                break
            for table in PokerTable.objects.filter(tournament=tournament, is_open=True):
                driver.table_step(table)
            driver.now += driver.step_seconds
    tournament.refresh_from_db()
    assert tournament.state == "running"
    out = list(TournamentEntry.objects.filter(tournament=tournament, state="eliminated").order_by("pk"))
    assert len(out) >= 3
    honest = {e.pk: (e.place, e.tied, e.prize) for e in out}
    # Forge every busted row: a paid place and a big prize.
    TournamentEntry.objects.filter(pk__in=[e.pk for e in out]).update(place=1, tied=1, prize=999_999)
    operator = get_user_model().objects.create(username=key("op"), is_staff=True)
    tournament_services.cancel_tournament(
        tournament_id=tournament.pk, operator=operator, reason="malfunction", now=driver.now
    )
    by_place = {1: 3000, 2: 1800, 3: 1200}
    for entry in TournamentEntry.objects.filter(pk__in=honest):
        place, tied, _ = honest[entry.pk]
        assert place is not None
        shared = sum(by_place.get(p, 0) for p in range(place, place + tied))
        assert entry.prize in (shared // tied, shared // tied + shared % tied)
    # The forged places are not the log's: named by the check, repaired by a rebuild.
    forged = {(d.key["id"], d.column) for d in check_projections() if d.projector == "poker_tournament_entry"}
    assert {pk for pk, column in forged if column == "place"} == set(honest)  # every honest place is 2 or more
    rebuild(check=False)
    assert {e.pk: (e.place, e.tied) for e in TournamentEntry.objects.filter(pk__in=honest)} == {
        pk: h[:2] for pk, h in honest.items()
    }
    assert_money_and_chips_closed(tournament, pool=6 * BUY_IN)
