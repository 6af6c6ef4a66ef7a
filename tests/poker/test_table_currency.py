"""A poker table's currency is its chips' unit (issue #20): changing it while
players are seated would orphan their chips (their ``poker_seat`` accounts and
the hand's pot are in it). It cannot change while anyone is seated (sitting out
included) or a hand is open, through the service or the admin form; an empty
table's can, and everything else stays editable meanwhile."""

from __future__ import annotations

import pytest

from compliance.roles import OPERATOR, setup_roles
from games.poker import services
from games.poker.models import PokerTable
from ledger.services import deposit, player_accounts
from tests.compliance.staff import staff, unchanged_form
from tests.db import ledger_sums
from tests.poker.tables import T0, advance, key, make_player, make_table, refused, sit, snapshot
from tests.poker.test_tables import AA_VS_KK, three_handed

pytestmark = pytest.mark.django_db
ADMIN = "/admin/games/pokertable/"


def to_usd(table: PokerTable) -> PokerTable:
    return services.update_table(table_id=table.pk, changes={"currency": "USD"})


def stand(table: PokerTable, player: int) -> None:
    services.stand_up(table_id=table.pk, player_id=player, idempotency_key=key("up"), now=T0)


def test_not_while_anyone_is_seated_then_on_an_empty_table() -> None:
    table = make_table()
    player = make_player()
    sit(table, player, 1)
    refused("poker_currency_in_use", lambda: to_usd(table))
    services.sit_out(table_id=table.pk, player_id=player, now=T0)  # a reserved seat still holds the chips
    refused("poker_currency_in_use", lambda: to_usd(table))
    stand(table, player)
    assert to_usd(table).currency == "USD"
    table.refresh_from_db()
    assert table.currency == "USD"
    dollars = make_player(funds=1)
    deposit(wallet=player_accounts(player_id=dollars, currency="USD").wallet, amount=5_000, currency="USD",
            external_reference=key("usd"), idempotency_key=key("usd"), actor="test")  # fmt: skip
    sit(table, dollars, 2)
    assert ledger_sums() == {"EUR": 0, "USD": 0}


def test_not_while_a_hand_is_open_though_other_settings_change() -> None:
    table, _ = three_handed()
    table = advance(table, cards=AA_VS_KK)
    assert table.phase == "hand"
    refused("poker_currency_in_use", lambda: to_usd(table))
    renamed = services.update_table(table_id=table.pk, changes={"name": "the high table", "turn_seconds": 30})
    table.refresh_from_db()
    assert (table.name, table.turn_seconds, table.currency) == ("the high table", 30, "EUR")
    # Only the settings named are written: the dealer's projection on the row is the dealer's.
    assert (renamed.phase, renamed.phase_seq, renamed.current_hand_id) == (
        table.phase, table.phase_seq, table.current_hand_id
    )  # fmt: skip


def test_an_unknown_currency_is_refused() -> None:
    table = make_table()
    refused("unknown_currency", lambda: services.update_table(table_id=table.pk, changes={"currency": "XXX"}))


def test_the_admin_form_refuses_the_currency_of_a_table_in_use() -> None:
    setup_roles()
    _, client = staff("poker-config", OPERATOR)
    table = make_table()
    player = make_player()
    sit(table, player, 1)
    data = unchanged_form(client, f"{ADMIN}{table.pk}/change/") | {"currency": "USD"}
    before = snapshot()
    response = client.post(f"{ADMIN}{table.pk}/change/", data)
    assert response.status_code == 200
    [error] = response.context["adminform"].form.errors["currency"]
    assert error.startswith("poker_currency_in_use: ")
    assert snapshot() == before
    # The other settings save while the table is in use; the currency once it is empty.
    renamed = client.post(f"{ADMIN}{table.pk}/change/", data | {"currency": "EUR", "name": "renamed"})
    assert renamed.status_code == 302, renamed.context["adminform"].form.errors
    stand(table, player)
    assert client.post(f"{ADMIN}{table.pk}/change/", data | {"name": "renamed"}).status_code == 302
    table.refresh_from_db()
    assert (table.name, table.currency) == ("renamed", "USD")
    unknown = client.post(f"{ADMIN}{table.pk}/change/", data | {"currency": "XXX"})
    assert "currency" in unknown.context["adminform"].form.errors
