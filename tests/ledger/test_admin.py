"""The operator sees the ledger in the admin site and cannot change it there."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from .conftest import World

pytestmark = pytest.mark.django_db


def test_operator_reads_the_ledger_but_cannot_edit_it(client, world: World):
    operator = get_user_model().objects.create_superuser("op", "op@example.com", "pw-for-tests-only")
    client.force_login(operator)
    for model in ("event", "account", "transfer", "hold", "statementline", "seal"):
        assert client.get(f"/admin/ledger/{model}/").status_code == 200
    page = client.get("/admin/ledger/event/").content.decode()
    assert "cashier.deposited" in page
    assert client.get("/admin/ledger/account/add/").status_code == 403
    assert client.get(f"/admin/ledger/account/{world.alice.wallet}/delete/").status_code == 403
