"""Demo data: the demo player's wallet, funded by a cashier deposit."""

from __future__ import annotations

from django.conf import settings

from casino.demo import DemoLogins
from ledger.currencies import format_minor
from ledger.services import balance_of, deposit, player_accounts

DEMO_DEPOSIT = 100_000  # 1,000.00 in a two-decimal currency


def seed_wallet(logins: DemoLogins) -> list[str]:
    """Fund the demo player's wallet once (the idempotency key makes reruns no-ops)."""
    currency = settings.CASINO_DEFAULT_CURRENCY
    accounts = player_accounts(player_id=logins.player.pk, currency=currency)
    deposit(
        wallet=accounts.wallet,
        amount=DEMO_DEPOSIT,
        currency=currency,
        external_reference=f"demo-seed-{logins.player.pk}",
        idempotency_key=f"demo:deposit:{logins.player.pk}:{currency}",
        actor=f"user:{logins.operator.pk}",
    )
    balance = format_minor(balance_of(account_id=accounts.wallet), currency)
    return [f"demo player wallet:          {balance} (account {accounts.wallet})"]
