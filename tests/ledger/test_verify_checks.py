"""``verify_ledger`` runs the checks other apps register (``register_check``)
after its own, so the ledger stays generic (it imports no game)."""

from __future__ import annotations

import pytest
from django.conf import settings

from ledger.services import verify
from ledger.services.verify import Problem, register_check, verify_ledger

pytestmark = pytest.mark.django_db


def test_a_registered_check_is_reported_and_registering_a_name_again_replaces_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(verify, "_extra_checks", {})
    register_check("extra", lambda: [Problem("extra", "the first version")])
    register_check("extra", lambda: [Problem("extra", "seat 7 differs")])
    register_check("clean", list)
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == [Problem("extra", "seat 7 differs")]
