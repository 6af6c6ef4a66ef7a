"""Responsible-gaming limits are enforced by the bet services (issue 8: "no bets
... and the player is told why"), not by the API layer: a refused bet changes
nothing; removing chips stays possible."""

from __future__ import annotations

from datetime import timedelta

import pytest

from casino.responsible_gaming import exclude, set_limit
from games.house.services import make_decision, place_chip, undo_bet
from tests.house.services.conftest import key, later, make_player, make_table, open_round, refused, step, wallet

pytestmark = pytest.mark.django_db

LIMITS = {"ante": {"min": 100, "max": 1000}, "best_five": {"min": 100, "max": 500}}


@pytest.mark.parametrize(
    ("kind", "days", "code"), [("cool_off", 7, "cooling_off"), ("self_exclusion", 180, "self_excluded")]
)
def test_an_excluded_player_cannot_bet_but_can_take_chips_back(kind, days, code) -> None:
    table = make_table("uth", limits=LIMITS)
    player = make_player(table, funds=10_000)
    tick = open_round(table)
    now = later(tick)
    place_chip(table_id=table.pk, player_id=player, spot="ante", amount=100, idempotency_key=key(), now=now)
    exclude(player_id=player, currency=table.currency, kind=kind, days=days, now=now)
    refused(
        code, place_chip, table_id=table.pk, player_id=player, spot="ante", amount=100, idempotency_key=key(), now=now
    )
    undone = undo_bet(table_id=table.pk, player_id=player, idempotency_key=key(), now=now)
    assert undone.totals.get("ante", 0) == 0
    assert wallet(player) == 10_000


def test_a_bet_that_could_pass_the_loss_limit_is_refused() -> None:
    table = make_table("uth", limits=LIMITS)
    player = make_player(table, funds=10_000)
    tick = open_round(table)
    now = later(tick)
    # Ante 300 holds 600 with the automatic Ante Plus, and the river's 1x play
    # (300) must stay possible: within a daily loss limit of 900.
    set_limit(player_id=player, kind="loss_day", amount=900, currency=table.currency, now=now - timedelta(days=2))
    place_chip(table_id=table.pk, player_id=player, spot="ante", amount=300, idempotency_key=key(), now=now)
    refused(
        "loss_limit_exceeded",
        place_chip,
        table_id=table.pk,
        player_id=player,
        spot="best_five",
        amount=200,
        idempotency_key=key(),
        now=now,
    )


def test_an_excluded_player_cannot_call_or_play_but_can_check() -> None:
    """A call or play is a new stake (docs: assert_may_wager covers a call/play):
    refused once the player is excluded mid-round; checking costs nothing and
    stays possible."""
    table = make_table("uth", limits=LIMITS)
    player = make_player(table, funds=10_000)
    tick = open_round(table)
    place_chip(table_id=table.pk, player_id=player, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    tick = step(table, tick)
    assert tick.phase == "preflop"
    now = later(tick)
    exclude(player_id=player, currency=table.currency, kind="self_exclusion", days=180, now=now)
    for option in ("call3x", "call4x"):
        refused(
            "self_excluded", make_decision, table_id=table.pk, player_id=player, option=option,
            idempotency_key=key(), now=now,
        )  # fmt: skip
    checked = make_decision(table_id=table.pk, player_id=player, option="check", idempotency_key=key(), now=now)
    assert (checked.option, checked.amount) == ("check", 0)
    assert wallet(player) == 10_000 - 200  # only the Ante and its Ante Plus are held
