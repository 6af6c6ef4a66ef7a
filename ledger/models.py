"""Ledger tables. Writes go through ``ledger.services`` (raw SQL on the hot
paths); the ORM models serve migrations, the admin and reads.

Append-only tables (events, transfers, seals) are guarded by database
triggers (``ledger.triggers``), and accounts cannot be deleted. References
into those tables therefore cannot dangle, so the hot tables carry no
foreign-key constraints (each would cost a row lock and a check per row at
commit, and lock the shared house row from every bet); ``verify_ledger``
checks every reference instead. Accounts' ``balance``, holds' status and
statement lines are projections of the transfers, updated in the same
transaction and rebuildable (``ledger.services.projections``).
"""

from __future__ import annotations

from typing import Any

from django.db import models


class VerbatimJSONField(models.JSONField):
    """JSON stored as the text written (PostgreSQL ``json``, not ``jsonb``): an
    event's data and metadata are written as their canonical encoding, which
    PostgreSQL then only validates; ``jsonb`` rebuilt each document into its
    binary form, the largest part of writing a settlement's events. (Rows
    migrated from ``jsonb`` keep its normalised text: readers decode and
    re-encode, never hash the stored text.) Read back as text and decoded by
    Django, like ``jsonb`` (``casino.db_backends.postgresql``). Elsewhere an
    ordinary ``JSONField``."""

    def db_type(self, connection: Any) -> str | None:
        return "json" if connection.vendor == "postgresql" else super().db_type(connection)


class Event(models.Model):
    """One immutable event. ``id`` is the global position; ``txid`` the writing
    transaction (PostgreSQL ``pg_current_xact_id()``): the global log is read in
    ``(txid, id)`` order below a safe bound (docs/ledger.md)."""

    id = models.BigAutoField(primary_key=True)
    txid = models.BigIntegerField()
    stream_id = models.CharField(max_length=200)
    version = models.PositiveIntegerField()
    type = models.CharField(max_length=100)
    schema_version = models.PositiveSmallIntegerField(default=1)
    data = VerbatimJSONField()
    metadata = VerbatimJSONField(default=dict)
    recorded_at = models.DateTimeField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)
    # HMAC-SHA256 of ``hash`` under CASINO_EVENT_MAC_KEY (docs/ledger.md, "Event
    # MACs"); null on events from before the ``mac`` integrity epoch.
    mac = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001 (NULL: written before MACs)

    class Meta:
        db_table = "ledger_event"
        constraints = [
            models.UniqueConstraint(fields=["stream_id", "version"], name="ledger_event_stream_version_uniq"),
            models.CheckConstraint(condition=models.Q(version__gte=1), name="ledger_event_version_positive"),
        ]
        indexes = [models.Index(fields=["txid", "id"], name="ledger_event_global_idx")]

    def __str__(self) -> str:
        return f"{self.stream_id}@{self.version} {self.type}"


class AccountKind(models.TextChoices):
    WALLET = "wallet", "player wallet"
    HELD = "held", "player stakes in play"
    HOUSE = "house", "house (per table or game)"
    POOL = "pool", "progressive pool"
    POKER_SEAT = "poker_seat", "poker seat (chips on the table)"
    POKER_POT = "poker_pot", "poker pot"
    RAKE = "rake", "rake"
    CASHIER = "cashier", "cashier (external money)"
    SUSPENSE = "suspense", "cashier suspense (received, owed back to the provider)"
    TOURNAMENT_POOL = "tournament_pool", "poker tournament prize pool"
    TOURNAMENT_CHIPS = "tournament_chips", "poker tournament chip bank (chips in play, negative)"


# Only these may go below zero: the house pays out more than it took, and the
# cashier account mirrors money that came from outside.
MAY_GO_NEGATIVE = frozenset({AccountKind.HOUSE, AccountKind.CASHIER, AccountKind.TOURNAMENT_CHIPS})
# The only kinds that hold tournament chips (``ledger.currencies.CHIPS``): the
# chip bank issues them to seats, hands' pots take bets from seats.
CHIP_ACCOUNT_KINDS = frozenset({AccountKind.TOURNAMENT_CHIPS, AccountKind.POKER_SEAT, AccountKind.POKER_POT})


class Account(models.Model):
    """A money account in one currency. ``balance`` = credits - debits (minor units)."""

    id = models.BigAutoField(primary_key=True)
    key = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=20, choices=AccountKind.choices)
    owner = models.CharField(max_length=100)
    currency = models.CharField(max_length=3)
    may_go_negative = models.BooleanField(default=False)
    balance = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "ledger_account"
        constraints = [
            # The database, not Python, keeps wallets (and every other
            # non-house, non-cashier account) from going negative.
            models.CheckConstraint(
                condition=models.Q(may_go_negative=True) | models.Q(balance__gte=0),
                name="ledger_account_no_overdraft",
            )
        ]

    def __str__(self) -> str:
        return self.key


class Transfer(models.Model):
    """A double entry: ``amount`` leaves ``debit_account`` and enters
    ``credit_account``; ``event`` is the event that caused it."""

    id = models.BigAutoField(primary_key=True)
    debit_account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False
    )
    credit_account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False
    )
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    kind = models.CharField(max_length=16)
    hold_id = models.UUIDField(null=True, blank=True)
    event = models.ForeignKey(Event, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False)
    created_at = models.DateTimeField()

    class Meta:
        db_table = "ledger_transfer"
        # Reports and the operator's dashboard read transfers by period (issue 36);
        # without it "today's handle" scans the whole ledger on every refresh.
        indexes = [models.Index(fields=["created_at"], name="ledger_transfer_created_idx")]
        constraints = [
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="ledger_transfer_amount_positive"),
            models.CheckConstraint(
                condition=~models.Q(debit_account=models.F("credit_account")), name="ledger_transfer_two_accounts"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.debit_account_id}->{self.credit_account_id} {self.amount} {self.currency}"


class HoldStatus(models.TextChoices):
    PENDING = "pending"
    POSTED = "posted"
    VOIDED = "voided"


class Hold(models.Model):
    """A two-phase transfer: ``amount`` moved from ``source`` into ``escrow`` at
    open; a post moves part or all of it to ``destination`` and releases the
    rest to ``source``; a void releases all of it. Resolves at most once."""

    id = models.UUIDField(primary_key=True)
    source = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False)
    escrow = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False)
    destination = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False
    )
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    status = models.CharField(max_length=8, choices=HoldStatus.choices, default=HoldStatus.PENDING)
    posted_amount = models.BigIntegerField(null=True, blank=True)
    opened_event = models.ForeignKey(
        Event, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False
    )
    resolved_event = models.ForeignKey(
        Event, on_delete=models.PROTECT, related_name="+", null=True, blank=True, db_index=False, db_constraint=False
    )

    class Meta:
        db_table = "ledger_hold"
        constraints = [models.CheckConstraint(condition=models.Q(amount__gt=0), name="ledger_hold_amount_positive")]

    def __str__(self) -> str:
        return f"hold {self.id} {self.amount} {self.currency} {self.status}"


class StatementLine(models.Model):
    """Projection: one line per account per transfer, with the running balance."""

    id = models.BigAutoField(primary_key=True)
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False
    )
    transfer = models.ForeignKey(
        Transfer, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False
    )
    event = models.ForeignKey(Event, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False)
    amount = models.BigIntegerField()
    balance_after = models.BigIntegerField()
    created_at = models.DateTimeField()

    class Meta:
        db_table = "ledger_statement_line"
        indexes = [models.Index(fields=["account", "id"], name="ledger_statement_account_idx")]

    def __str__(self) -> str:
        return f"{self.account_id} {self.amount:+d} -> {self.balance_after}"


class IdempotencyRecord(models.Model):
    """The first result of a money command, by its idempotency key."""

    key = models.CharField(max_length=200, primary_key=True)
    command = models.CharField(max_length=50)
    request_hash = models.CharField(max_length=64)
    result = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        db_table = "ledger_idempotency"

    def __str__(self) -> str:
        return f"{self.command} {self.key}"


class Seal(models.Model):
    """A signed Merkle root over the events with ``from_txid <= txid < to_txid``
    in ``(txid, id)`` order; seals chain through ``prev_root``."""

    id = models.BigAutoField(primary_key=True)
    from_txid = models.BigIntegerField()
    to_txid = models.BigIntegerField()
    event_count = models.BigIntegerField()
    last_event_id = models.BigIntegerField(null=True, blank=True)
    merkle_root = models.CharField(max_length=64)
    prev_root = models.CharField(max_length=64)
    algorithm = models.CharField(max_length=20, default="HMAC-SHA256")
    signature = models.CharField(max_length=128)
    created_at = models.DateTimeField()
    # The integrity epochs when the seal was taken (canonical JSON, feature ->
    # first event id), signed with the rest; null on seals from before seals signed them.
    epochs = models.TextField(null=True, blank=True)  # noqa: DJ001 (NULL: signed before epochs were)

    class Meta:
        db_table = "ledger_seal"
        constraints = [models.UniqueConstraint(fields=["from_txid"], name="ledger_seal_from_uniq")]

    def __str__(self) -> str:
        return f"seal {self.id} [{self.from_txid}, {self.to_txid}) {self.event_count} events"


class IntegrityEpoch(models.Model):
    """Where a ledger guarantee starts: every event with ``id >= first_event_id``
    is written under ``feature`` (``legs``: its money movements are legs in its
    data; ``mac``: it carries a MAC under the application's event key). Events
    below predate the feature and are checked as before. Written once, by the
    migration that introduced the feature (it rewrites no event); if a feature
    has several rows the smallest bound counts, so an added row can only make
    the checks stricter."""

    feature = models.CharField(max_length=32)
    first_event_id = models.BigIntegerField()
    recorded_at = models.DateTimeField()

    class Meta:
        db_table = "ledger_integrity_epoch"

    def __str__(self) -> str:
        return f"{self.feature} from event {self.first_event_id}"
