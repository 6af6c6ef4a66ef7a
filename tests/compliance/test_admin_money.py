"""Money in the admin (issue 36, part 2): every amount a list or a read-only page
shows carries its currency and the currency's decimals, through the one function
``ledger.currencies.display_money`` ("1,500.00 EUR"); a bare ``700`` or ``1500`` is
never shown. An amount an operator edits stays the form's integer in minor units
(what the services take)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db import models
from django.test import RequestFactory
from django.utils import timezone

from casino.cashier import request_deposit
from casino.responsible_gaming import set_limit
from compliance.roles import COMPLIANCE, OPERATOR, setup_roles
from games.poker.models import PokerTable
from tests.compliance.staff import staff
from tests.house.services.conftest import make_player, make_table
from tests.poker.tables import make_tournament

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

#: Model fields that hold an amount of money (minor units) or chips.
MONEY_COLUMNS = frozenset({
    "amount", "posted_amount", "balance", "balance_after", "balance_before", "staked", "returned", "net", "pot",
    "rake", "prize", "buy_in", "fee", "guarantee", "small_blind", "big_blind", "ante", "buy_in_min", "buy_in_max",
    "rake_minimum", "rake_cap", "stack",
})  # fmt: skip


def _bare_money(model: type[models.Model], names: Any) -> list[str]:
    bare = []
    for name in names:
        if not isinstance(name, str) or name not in MONEY_COLUMNS:
            continue
        try:
            field = model._meta.get_field(name)
        except Exception:  # not a model field: a display of the admin's own
            continue
        if isinstance(field, models.IntegerField):
            bare.append(name)
    return bare


def test_no_admin_lists_or_shows_a_bare_amount() -> None:
    superuser = get_user_model().objects.create_superuser("root", password="pw-root-123")
    request = RequestFactory().get("/admin/")
    request.user = superuser
    found = {}
    for model, model_admin in admin.site._registry.items():
        shown = [*model_admin.get_list_display(request), *model_admin.get_readonly_fields(request, None)]
        if bare := _bare_money(model, shown):
            found[model.__name__] = bare
    assert found == {}


def test_lists_and_pages_show_amounts_with_currency_and_decimals() -> None:
    setup_roles()
    _, operator = staff("op", OPERATOR)
    _, compliance = staff("co", COMPLIANCE)
    player = get_user_model().objects.create_user("payer", password="pw-payer-123")
    txn = request_deposit(player_id=player.pk, amount=150_000, currency="EUR", request_key="r1", now=timezone.now())
    cashier = operator.get("/admin/casino/cashiertransaction/").content.decode()
    assert "1,500.00 EUR" in cashier
    assert not re.search(r">\s*150000\s*<", cashier)
    page = compliance.get(f"/admin/casino/cashiertransaction/{txn.pk}/change/").content.decode()
    assert "1,500.00 EUR" in page
    assert not re.search(r">\s*150000\s*<", page)

    seated = make_table("uth", code="MONEY1")
    make_player(seated, funds=70_000)
    accounts = operator.get("/admin/ledger/account/?q=wallet").content.decode()
    assert "700.00 EUR" in accounts
    assert not re.search(r">\s*70000\s*<", accounts)
    lines = operator.get("/admin/ledger/statementline/").content.decode()
    assert "700.00 EUR" in lines
    transfers = operator.get("/admin/ledger/transfer/").content.decode()
    assert "700.00 EUR" in transfers


def test_a_poker_tables_stakes_are_money_when_read_and_integers_when_edited() -> None:
    setup_roles()
    table = PokerTable.objects.create(code="NL2", name="stakes", currency="EUR", small_blind=50, big_blind=100,
                                      buy_in_min=2_000, buy_in_max=20_000)  # fmt: skip
    _, compliance = staff("co", COMPLIANCE)
    _, operator = staff("op", OPERATOR)
    listed = compliance.get("/admin/games/pokertable/").content.decode()
    assert "0.50 EUR" in listed
    assert "1.00 EUR" in listed
    read = compliance.get(f"/admin/games/pokertable/{table.pk}/change/").content.decode()
    assert "20.00 EUR" in read
    assert "200.00 EUR" in read
    edited = operator.get(f"/admin/games/pokertable/{table.pk}/change/").content.decode()
    assert re.search(r'<input[^>]*name="small_blind"[^>]*value="50"', edited)


def test_a_tournaments_fixed_terms_are_shown_as_money() -> None:
    setup_roles()
    tournament = make_tournament()
    _, operator = staff("op", OPERATOR)
    page = operator.get(f"/admin/games/tournament/{tournament.pk}/change/").content.decode()
    assert "10.00 EUR" in page
    assert "1.00 EUR" in page
    assert 'name="buy_in"' not in page
    listed = operator.get("/admin/games/tournament/").content.decode()
    assert "10.00 EUR" in listed


def test_a_players_limits_and_a_tables_betting_limits_read_as_money() -> None:
    setup_roles()
    _, operator = staff("op", OPERATOR)
    _, compliance = staff("co", COMPLIANCE)
    player = get_user_model().objects.create_user("limited", password="pw-limited-123")
    set_limit(player_id=player.pk, kind="loss_week", amount=25_000, currency="EUR", now=timezone.now())
    page = operator.get(f"/admin/casino/responsiblegaming/{player.pk}/change/").content.decode()
    limits = re.search(r'<table id="player-limits">.*?</table>', page, re.S)
    assert limits is not None
    assert "<td>EUR</td><td>loss per week</td><td>250.00 EUR</td>" in limits.group(0)
    assert "25000" not in page

    table = make_table("uth", code="LIM1")  # every spot from 1.00 EUR to 10,000.00 EUR
    read = compliance.get(f"/admin/games/housetable/{table.pk}/change/").content.decode()
    shown = re.search(r'<table id="table-limits">.*?</table>', read, re.S)
    assert shown is not None
    assert "<td>ante</td><td>1.00 EUR</td><td>10,000.00 EUR</td>" in shown.group(0)
