"""A casino floor for the dashboard tests (``test_dashboard.py``, ``test_browser_dashboard.py``),
built through the real services at the real time (the dashboard reads the clock): tables of both
families in every state a shift manager must tell apart, a settled round, and the rows behind
each alert."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from casino.cashier import provider_callback, request_deposit
from casino.responsible_gaming import set_limit
from games.house.models import HouseRound, HouseTable
from games.house.services import advance_table, dealer, place_chip, start_table
from games.poker.models import PokerHand, PokerTable
from games.tables.presence import HOUSE, TablePresence
from tests.house.services.conftest import key, make_player, make_table, play_round
from tests.poker import tables as poker

FOLDED_ANTE = 1_000  # the settled round: a Casino Hold'em ante of 10.00 EUR, folded (the house keeps it)


@dataclass(frozen=True)
class Floor:
    now: datetime
    live: HouseTable  # betting, a bet in, a seated player and one watching
    live_round: HouseRound
    late: HouseTable  # its phase ended a minute ago (queue lag)
    gone: HouseTable  # its phase ended an hour ago (dealer gone)
    paused: HouseTable
    paused_round: HouseRound
    closed: HouseTable
    poker: PokerTable  # a hand in play, two seated
    hand: PokerHand
    settled_game_number: str
    near_limit_player: str
    rejected_reference: str


def _started(code: str, *, ago: float, betting_seconds: int = 600) -> HouseTable:
    """An open UTH table whose first round opened ``ago`` seconds before now (its betting
    window ``betting_seconds`` long), one player seated."""
    table = make_table("uth", code=code)
    HouseTable.objects.filter(pk=table.pk).update(betting_seconds=betting_seconds)
    make_player(table)
    start_table(table_id=table.pk, now=timezone.now() - timedelta(seconds=ago))
    table.refresh_from_db()
    return table


def build_floor(operator: object) -> Floor:
    """The floor (``operator``: the staff user who pauses one round)."""
    played = play_round("casino_holdem", hand="2c 7d", dealer="As Ad", board="Kh 9s 4c 3d Jh",
                        wagers={"ante": FOLDED_ANTE}, decisions={})  # fmt: skip
    # Its table closed (the pause after the round ends, the table idles): off the floor.
    finished = HouseRound.objects.select_related("table").get(game_number=played.game_number).table
    dealer.operator_close(table_id=finished.pk, operator=operator)
    finished.refresh_from_db()
    assert finished.deadline is not None
    advance_table(table_id=finished.pk, expected_seq=finished.phase_seq, now=finished.deadline)

    live = _started("LIVE1", ago=0)
    seated = make_player(live, name="seated-sam")
    place_chip(table_id=live.pk, player_id=seated, spot="ante", amount=500, idempotency_key=key(),
               now=timezone.now())  # fmt: skip
    watcher = get_user_model().objects.create(username="watching-wes")
    TablePresence.objects.create(family=HOUSE, table_id=live.pk, player=watcher,
                                 socket_until=timezone.now() + timedelta(hours=1))  # fmt: skip
    late = _started("LATE1", ago=660)  # the 600 s window ended 60 s ago
    gone = _started("GONE1", ago=4200)  # ended an hour ago
    paused = _started("PAUSE1", ago=0)
    dealer.operator_round_control(table_id=paused.pk, operator=operator, action="pause",
                                  reason="a card fell off the table")  # fmt: skip
    closed = make_table("uth", code="SHUT1")
    HouseTable.objects.filter(pk=closed.pk).update(is_open=False)
    for house_table in (live, late, gone, paused, closed):
        house_table.refresh_from_db()

    table = poker.make_table(code="NL1", name="Hold'em one", turn_seconds=600)
    now = timezone.now()
    for seat in (1, 2):
        poker.sit(table, make_player(), seat, at=now)  # (the house builders: one key counter)
    table = poker.advance(table)  # the hand dealt at the table's deadline (a few seconds from now)

    near = get_user_model().objects.create_user("near-nina", password="pw-near-nina-1")
    set_limit(player_id=near.pk, kind="deposit_day", amount=10_000, currency="EUR", now=timezone.now())
    request_deposit(player_id=near.pk, amount=9_000, currency="EUR", request_key="nina-1", now=timezone.now())
    half = get_user_model().objects.create_user("half-hal", password="pw-half-hal-1")
    set_limit(player_id=half.pk, kind="deposit_day", amount=10_000, currency="EUR", now=timezone.now())
    request_deposit(player_id=half.pk, amount=5_000, currency="EUR", request_key="hal-1", now=timezone.now())

    payer = get_user_model().objects.create_user("payer-pat", password="pw-payer-pat-1")
    refused = request_deposit(player_id=payer.pk, amount=2_500, currency="EUR", request_key="pat-1",
                              now=timezone.now())  # fmt: skip
    provider_callback(external_reference=refused.external_reference, status="rejected", amount=2_500,
                      currency="EUR", provider="acme", now=timezone.now())  # fmt: skip

    return Floor(
        now=now, live=live, live_round=HouseRound.objects.get(round_id=live.current_round_id), late=late,
        gone=gone, paused=paused, paused_round=HouseRound.objects.get(round_id=paused.current_round_id),
        closed=closed, poker=table, hand=PokerHand.objects.get(hand_id=table.current_hand_id),
        settled_game_number=played.game_number, near_limit_player="near-nina",
        rejected_reference=refused.external_reference,
    )  # fmt: skip
