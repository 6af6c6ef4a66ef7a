"""Issue 8's table/game performance and voided-rounds reports cover the poker
tables: hands are the rounds, the house's hold is the rake (seed 001), a voided
hand (RULES.md: "Malfunction voids all pays and play") counts only as a void
and is listed with its reason and refunds."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from compliance.reports import table_performance, voided_rounds
from games.poker import services
from games.poker.models import PokerHand
from tests.poker.tables import T0, advance, play_the_raked_hand
from tests.poker.test_tables import AA_VS_KK, three_handed

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def test_a_raked_hand_and_a_voided_hand_in_the_reports() -> None:
    table, (p1, p2, p3) = three_handed()
    table = advance(table, cards=AA_VS_KK)
    played = table.current_hand_id
    # The hand of tests/poker/test_tables.py: pot 210, seed 001's 2.5 % rake = 5.
    play_the_raked_hand(table, p1, p2, p3)
    assert PokerHand.objects.get(hand_id=played).rake == 5
    table = advance(table, cards=AA_VS_KK)  # the next hand: blinds posted, then a malfunction
    voided = table.current_hand_id
    assert voided != played
    services.void_hand(table_id=table.pk, actor="operator:7", reason="deck error", now=T0 + timedelta(minutes=1))

    # Hands carry the table's clock (T0); the ledger records the rake at the real time.
    start, end = T0 - timedelta(hours=1), timezone.now() + timedelta(hours=1)
    [row] = [r for r in table_performance(start=start, end=end).rows if r["table"] == table.code]
    assert row == {
        "table": table.code, "game": "holdem_no_limit", "currency": "EUR", "rounds": 2, "handle": 210,
        "payouts": 205, "hold": 5, "hold_pct": "2.38", "voids": 1, "rake": 5, "progressive_seeding": 0,
        "progressive_contributions": 0, "pool_hits": 0, "tournament_fees": 0, "prize_pool_overlay": 0, "other": 0,
    }  # fmt: skip
    [void] = [r for r in voided_rounds(start=start, end=end).rows if r["table"] == table.code]
    assert (void["game_number"], void["game"], void["reason"], void["actor"]) == (
        voided, "holdem_no_limit", "deck error", "operator:7")  # fmt: skip
    assert (void["players"], void["refunded"]) == (2, 5 + 10)  # the two blinds came back
    assert void["event"]
