"""Demo data: the demo players' wallets, each funded by a cashier deposit."""

from __future__ import annotations

from django.conf import settings

from casino.demo import DemoLogins
from ledger.currencies import format_minor
from ledger.services import balance_of, deposit, player_accounts

DEMO_DEPOSIT = 100_000  # 1,000.00 in a two-decimal currency


def seed_wallet(logins: DemoLogins) -> list[str]:
    """Fund each demo player's wallet once (the idempotency key makes reruns no-ops)."""
    currency = settings.CASINO_DEFAULT_CURRENCY
    lines = []
    for player in logins.players:
        accounts = player_accounts(player_id=player.pk, currency=currency)
        deposit(
            wallet=accounts.wallet,
            amount=DEMO_DEPOSIT,
            currency=currency,
            external_reference=f"demo-seed-{player.pk}",
            idempotency_key=f"demo:deposit:{player.pk}:{currency}",
            actor=f"user:{logins.operator.pk}",
        )
        balance = format_minor(balance_of(account_id=accounts.wallet), currency)
        lines.append(f"{player.username + ' wallet:':<29}{balance} (account {accounts.wallet})")
    return lines
