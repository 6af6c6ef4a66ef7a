"""Deal keys: one AES-256 key per house round or poker hand, stored only wrapped
by the card key, and destroyed when the deal is over (docs/fairness.md,
"Face-down cards at rest").

``new_deal_key`` makes and stores a deal's key (wrapped, bound to the deal id);
``deal_key`` unwraps it for the dealer service, the only code that opens a
sealed deck; ``shred_deal_key`` deletes it: from then on the ciphertexts it
sealed (the rest of the deck, the folded hands) cannot be read by anyone, the
database's owner and the application included. ``card_keyring`` is the card
key ring from the settings (``CASINO_CARD_KEY``, ``CASINO_CARD_KEYS_RETIRED``).

The table is not a ledger table and not a projection: the runtime role may
delete its rows (shredding is a delete), and nothing rebuilds them.
"""

from __future__ import annotations

from functools import lru_cache

from django.conf import settings
from django.db import models

from games.cards.vault import CardKeyring, keyring_from_config, new_data_key, unwrap_key, wrap_key


class DealKeyMissing(LookupError):
    """The deal's key is gone (shredded at the deal's end) or was never made."""


class DealKey(models.Model):
    """A deal's data key, wrapped by the card key (``games.cards.vault.wrap_key``)."""

    deal_id = models.CharField(max_length=64, primary_key=True, help_text="house-round:<id> or poker-hand:<id>")
    wrapped = models.JSONField(help_text="The data key sealed under the card key named by its kid.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "games"

    def __str__(self) -> str:
        return f"deal key {self.deal_id}"


@lru_cache(maxsize=8)
def _ring(current: str, retired: tuple[str, ...]) -> CardKeyring:
    return keyring_from_config(current, retired)


def card_keyring() -> CardKeyring:
    """The card key ring of the settings (``ValueError`` when it is not configured right)."""
    return _ring(settings.CASINO_CARD_KEY, tuple(settings.CASINO_CARD_KEYS_RETIRED))


def new_deal_key(*, deal_id: str) -> bytes:
    """A fresh data key for ``deal_id``, stored wrapped (in the caller's transaction)."""
    key = new_data_key()
    DealKey.objects.create(deal_id=deal_id, wrapped=wrap_key(card_keyring(), key, aad=deal_id))
    return key


def deal_key(*, deal_id: str) -> bytes:
    """The deal's data key; ``DealKeyMissing`` once shredded."""
    row = DealKey.objects.filter(deal_id=deal_id).values_list("wrapped", flat=True).first()
    if row is None:
        raise DealKeyMissing(deal_id)
    return unwrap_key(card_keyring(), row, aad=deal_id)


def shred_deal_key(*, deal_id: str) -> bool:
    """Destroy the deal's key (idempotent); whether there was one."""
    deleted, _ = DealKey.objects.filter(deal_id=deal_id).delete()
    return bool(deleted)
