"""The fixed-limit raise cap is a per-table setting (issue #23): the number of
bets and raises a betting round allows (the big blind counting as the bet
preflop) and whether heads-up play is uncapped; the default is today's rule,
a bet and three raises. It reaches the hand, the admin and the players."""

from __future__ import annotations

import pytest

from compliance.roles import OPERATOR, setup_roles
from games.poker import services
from games.poker.engine.events import HandStarted
from games.poker.models import PokerTable
from games.poker.realtime import presenters
from games.poker.services.tables import engine_events, load_hand
from tests.compliance.staff import staff
from tests.poker.tables import act, advance, make_table, refused
from tests.poker.test_tables import AA_VS_KK, three_handed

pytestmark = pytest.mark.django_db
FIXED = {"variant": "fixed_limit"}


def hand_started(hand_id: str) -> HandStarted:
    """The hand's first event as stored (read back from the ledger stream)."""
    started = engine_events(load_hand(hand_id)[2])[0]
    assert isinstance(started, HandStarted)
    return started


def test_the_default_is_a_bet_and_three_raises() -> None:
    table, (p1, p2, p3) = three_handed(**FIXED)
    assert (table.raise_cap, table.heads_up_uncapped) == (4, False)
    table = advance(table, cards=AA_VS_KK)
    act(table, p1, "raise", 20)
    act(table, p2, "raise", 30)
    act(table, p3, "raise", 40)  # the big blind's bet and three raises
    refused("poker_raise_cap_reached", lambda: act(table, p1, "raise", 50))
    act(table, p1, "call")
    view = presenters.table_summary(table)["raise_cap"]
    assert view["bets_per_round"] == 4
    assert view["heads_up_uncapped"] is False
    assert "a bet and 3 raises" in view["text"]


def test_a_table_cap_of_two_bets_reaches_the_hand() -> None:
    table, (p1, p2, _p3) = three_handed(raise_cap=2, **FIXED)
    table = advance(table, cards=AA_VS_KK)
    started = hand_started(table.current_hand_id)
    assert (started.raise_cap, started.blind_is_bet, started.heads_up_uncapped) == (2, True, False)
    act(table, p1, "raise", 20)  # the big blind and one raise: capped
    refused("poker_raise_cap_reached", lambda: act(table, p2, "raise", 30))
    act(table, p2, "call")


def test_heads_up_uncapped_lifts_the_cap_when_two_players_are_left() -> None:
    table, (p1, p2, p3) = three_handed(raise_cap=2, heads_up_uncapped=True, **FIXED)
    table = advance(table, cards=AA_VS_KK)
    act(table, p1, "raise", 20)
    act(table, p2, "fold")  # two players left
    act(table, p3, "raise", 30)
    act(table, p1, "raise", 40)
    view = presenters.table_summary(table)["raise_cap"]
    assert view["text"] == (
        "a bet and 1 raise per betting round (before the flop the big blind is the bet); "
        "no cap when only two players are left in the hand"
    )


def test_no_limit_tables_show_no_cap() -> None:
    table = make_table()
    assert presenters.table_summary(table)["raise_cap"] is None


def test_the_operator_sets_the_cap_and_the_next_hand_uses_it() -> None:
    table, _ = three_handed(**FIXED)
    services.update_table(table_id=table.pk, changes={"raise_cap": 5, "heads_up_uncapped": True})
    table.refresh_from_db()
    assert (table.raise_cap, table.heads_up_uncapped) == (5, True)
    table = advance(table, cards=AA_VS_KK)
    started = hand_started(table.current_hand_id)
    assert (started.raise_cap, started.heads_up_uncapped) == (5, True)


def test_admin_form_shows_and_validates_the_cap() -> None:
    setup_roles()
    table = make_table(**FIXED)
    _operator, client = staff("poker-cap", OPERATOR)
    page = client.get(f"/admin/games/pokertable/{table.pk}/change/").content.decode()
    assert 'name="raise_cap"' in page
    assert 'name="heads_up_uncapped"' in page
    from django.contrib.admin.sites import site
    from django.test import RequestFactory

    admin = site._registry[PokerTable]
    request = RequestFactory().get("/")
    request.user = _operator  # an admin request always has its user (the form's fields depend on its permissions)
    form_class = admin.get_form(request, table)
    data = {name: getattr(table, name) for name in services.configure.SETTINGS}
    data["raise_cap"] = 0
    form = form_class(data=data, instance=table)
    assert not form.is_valid()
    assert "raise_cap" in form.errors
    table.refresh_from_db()
    assert table.raise_cap == 4
