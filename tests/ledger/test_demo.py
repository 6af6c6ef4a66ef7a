"""The demo seeder funds each demo player's wallet once."""

from __future__ import annotations

import pytest
from django.conf import settings

from casino.demo import seed_demo
from ledger.demo import DEMO_DEPOSIT
from ledger.event_types import DEPOSITED
from ledger.services import balance_of, player_accounts, read_stream
from tests.db import ledger_sums

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("username", ["demo", "demo2"])
def test_demo_wallet_is_funded_by_one_cashier_deposit_however_often_seeded(username):
    seed_demo()
    lines = seed_demo()
    from django.contrib.auth import get_user_model

    player = get_user_model().objects.get(username=username)
    wallet = player_accounts(player_id=player.pk, currency=settings.CASINO_DEFAULT_CURRENCY).wallet
    assert balance_of(account_id=wallet) == DEMO_DEPOSIT == 100_000
    assert [e.type for e in read_stream(stream_id=f"account-{wallet}")] == [DEPOSITED]
    assert ledger_sums() == {settings.CASINO_DEFAULT_CURRENCY: 0}
    assert any("1000.00" in line for line in lines)
