"""Responsible gaming: deposit and loss limits, session time limit with reality
checks, self-exclusion and cool-off (docs/cashier-and-responsible-gaming.md).

Enforced in the services that take deposits (``casino.cashier``) and place
bets (``assert_may_wager``, called by the bet services), never in the API
layer. On the bet path the check is one primary-key read of the player's own
row (no shared row); only a player who set a loss limit costs a second,
per-player read of their wallet's statement lines in the window.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection, transaction
from django.db.models import Sum

from casino.errors import DomainError
from casino.models import CashierKind, CashierState, CashierTransaction, ResponsibleGaming

WINDOWS: dict[str, timedelta] = {"day": timedelta(hours=24), "week": timedelta(days=7), "month": timedelta(days=30)}
DEPOSIT_KINDS = tuple(f"deposit_{w}" for w in WINDOWS)
LOSS_KINDS = tuple(f"loss_{w}" for w in WINDOWS)
LIMIT_KINDS = DEPOSIT_KINDS + LOSS_KINDS
INCREASE_DELAY = timedelta(hours=24)
COOL_OFF_DAYS = (1, 42)  # a cool-off lasts one day to six weeks
SELF_EXCLUSION_MIN_DAYS = 180  # shorter breaks are cool-offs; no days means permanent


class ResponsibleGamingRefusal(DomainError, code="responsible_gaming", http_status=403):
    """Refused by the player's responsible-gaming settings."""


class PlayerExcluded(ResponsibleGamingRefusal, code="self_excluded"):
    """The player is self-excluded or cooling off: no bets and no deposits until the date given."""


class DepositLimitExceeded(ResponsibleGamingRefusal, code="deposit_limit_exceeded"):
    """The deposit would exceed the player's deposit limit for the window."""


class LossLimitExceeded(ResponsibleGamingRefusal, code="loss_limit_exceeded"):
    """The bet could take the player's losses in the window past their loss limit."""


class SessionTimeLimitReached(ResponsibleGamingRefusal, code="session_time_limit_reached"):
    """The player's session time limit is reached; bets resume in a new session."""


class InvalidLimit(DomainError, code="invalid_limit", http_status=400):
    """The limit or exclusion asked for is not valid."""


def _permanent() -> datetime:
    return datetime(9999, 12, 31, tzinfo=UTC)


def effective_limit(entry: dict[str, Any] | None, now: datetime) -> int | None:
    """The limit in force at ``now``: a pending increase applies from its date."""
    if not entry:
        return None
    pending_from = entry.get("pending_from")
    if pending_from is not None and datetime.fromisoformat(pending_from) <= now:
        return entry.get("pending")
    return entry.get("amount")


# The settings a bet is checked against; a caller may read them in its own
# query (``settings_row`` then shapes them) instead of ``_row``'s round trip.
ROW_COLUMNS = ("currency", "limits", "session_limit_minutes", "session_started_at", "exclusion", "excluded_until")
ROW_TABLE = ResponsibleGaming._meta.db_table
_ROW_SQL = f"SELECT {', '.join(ROW_COLUMNS)} FROM {ROW_TABLE} WHERE user_id = %s"


def _row(player_id: int) -> dict[str, Any] | None:
    """The player's settings: one primary-key read in plain SQL (the ORM's
    per-query overhead is several times the read itself on the bet path)."""
    with connection.cursor() as cursor:
        cursor.execute(_ROW_SQL, [player_id])
        found = cursor.fetchone()
    return None if found is None else settings_row(found)


def settings_row(values: Sequence[Any]) -> dict[str, Any]:
    """The settings row from its ``ROW_COLUMNS`` values, as a caller's own query read them."""
    row = dict(zip(ROW_COLUMNS, values, strict=True))
    if isinstance(row["limits"], str | bytes):
        row["limits"] = json.loads(row["limits"])
    for name in ("session_started_at", "excluded_until"):  # SQLite hands back naive UTC (or text)
        value = row[name]
        if isinstance(value, str):
            value = datetime.fromisoformat(value)
        if isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        row[name] = value
    return row


def _check_exclusion(row: dict[str, Any], now: datetime) -> None:
    until = row["excluded_until"]
    if until is not None and until > now:
        exclusion = row["exclusion"] or "self_exclusion"
        code = "cooling_off" if exclusion == "cool_off" else "self_excluded"
        message = (
            "You are on a cool-off break until the date given: no bets and no deposits."
            if code == "cooling_off"
            else "You have excluded yourself until the date given: no bets and no deposits."
        )
        raise PlayerExcluded(message, code=code, until=until.isoformat())


def assert_may_deposit(*, player_id: int, amount: int, currency: str, now: datetime, request_id: Any = None) -> None:
    """Refuse a deposit the player's exclusion or deposit limits forbid.

    Counts every deposit requested in the window that is not rejected, so
    several pending requests cannot add up past a limit (``request_id``: the
    cashier transaction being paid, not counted twice).
    """
    row = _row(player_id)
    if row is None:
        return
    _check_exclusion(row, now)
    for window, span in WINDOWS.items():
        limit = effective_limit(row["limits"].get(f"deposit_{window}"), now)
        if limit is None:
            continue
        used = (
            CashierTransaction.objects.filter(
                player_id=player_id, kind=CashierKind.DEPOSIT, created_at__gt=now - span, currency=currency
            )
            .exclude(state=CashierState.REJECTED)
            .exclude(pk=request_id)
            .aggregate(total=Sum("amount"))["total"]
            or 0
        )
        if used + amount > limit:
            raise DepositLimitExceeded(
                f"This deposit would exceed your {window} deposit limit.",
                window=window, limit=limit, used=used, remaining=max(0, limit - used), currency=row["currency"],
            )  # fmt: skip


def net_loss(*, player_id: int, currency: str, since: datetime) -> int:
    """The player's net game loss since ``since`` (stakes minus returns; >= 0):
    every wallet movement but cashier ones (deposits, withdrawals and the
    holds of withdrawals)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COALESCE(SUM(sl.amount), 0) FROM ledger_account w "
            "JOIN ledger_statement_line sl ON sl.account_id = w.id "
            "JOIN ledger_transfer t ON t.id = sl.transfer_id "
            "LEFT JOIN ledger_hold h ON h.id = t.hold_id LEFT JOIN ledger_account d ON d.id = h.destination_id "
            "WHERE w.key = %s AND sl.created_at >= %s AND t.kind NOT IN ('deposit', 'withdraw') "
            "AND (d.kind IS NULL OR d.kind <> 'cashier')",
            [f"wallet:player:{player_id}:{currency}", since],
        )
        return max(0, -int(cursor.fetchone()[0]))


# ``assert_may_wager``'s default: read the settings row itself.
UNREAD_SETTINGS: Any = object()


def assert_may_wager(
    *, player_id: int, amount: int, currency: str, now: datetime, settings: dict[str, Any] | None = UNREAD_SETTINGS
) -> None:
    """Refuse a bet of ``amount`` the player's exclusion, session limit or loss
    limits forbid. One primary-key read (none when the caller passes the row it
    read in this transaction as ``settings``: ``settings_row(...)``, or ``None``
    for a player without one); a loss limit adds one read of the player's own
    statement lines. Call inside the bet's transaction."""
    row = _row(player_id) if settings is UNREAD_SETTINGS else settings
    if row is None:
        return
    _check_exclusion(row, now)
    minutes, started = row["session_limit_minutes"], row["session_started_at"]
    if minutes and started is not None and now - started >= timedelta(minutes=minutes):
        raise SessionTimeLimitReached(
            "Your session time limit is reached.", limit_minutes=minutes, session_started_at=started.isoformat()
        )
    for window, span in WINDOWS.items():
        limit = effective_limit(row["limits"].get(f"loss_{window}"), now)
        if limit is None or row["currency"] != currency:
            continue
        lost = net_loss(player_id=player_id, currency=currency, since=now - span)
        if lost + amount > limit:
            raise LossLimitExceeded(
                f"This bet could take your losses past your {window} loss limit.",
                window=window, limit=limit, lost=lost, remaining=max(0, limit - lost), currency=currency,
            )  # fmt: skip


def read_settings(*, player_id: int, currency: str) -> ResponsibleGaming:
    """The player's settings for reading: unsaved defaults when none are stored
    (a read creates nothing)."""
    return ResponsibleGaming.objects.filter(pk=player_id).first() or ResponsibleGaming(pk=player_id, currency=currency)


def settings_of(*, player_id: int, currency: str) -> ResponsibleGaming:
    row, _ = ResponsibleGaming.objects.get_or_create(pk=player_id, defaults={"currency": currency})
    return row


@transaction.atomic
def set_limit(*, player_id: int, kind: str, amount: int | None, currency: str, now: datetime) -> ResponsibleGaming:
    """Set a deposit or loss limit (``None`` removes it). A decrease takes
    effect at once; an increase or a removal only after 24 hours."""
    if kind not in LIMIT_KINDS:
        raise InvalidLimit(f"unknown limit {kind!r}", kind=kind, known=list(LIMIT_KINDS))
    if amount is not None and (not isinstance(amount, int) or isinstance(amount, bool) or amount < 0):
        raise InvalidLimit("a limit is a non-negative integer amount in minor units", kind=kind)
    settings_of(player_id=player_id, currency=currency)
    row = ResponsibleGaming.objects.select_for_update().get(pk=player_id)
    if row.currency != currency:
        raise InvalidLimit("limits are kept in the player's currency", currency=row.currency)
    current = effective_limit(row.limits.get(kind), now)
    if current is not None and (amount is None or amount > current):
        row.limits[kind] = {"amount": current, "pending": amount, "pending_from": (now + INCREASE_DELAY).isoformat()}
    else:
        row.limits[kind] = {"amount": amount, "pending": None, "pending_from": None}
    row.save(update_fields=["limits", "updated_at"])
    return row


@transaction.atomic
def set_session_limits(
    *, player_id: int, currency: str, session_limit_minutes: int | None, reality_check_minutes: int | None
) -> ResponsibleGaming:
    for value in (session_limit_minutes, reality_check_minutes):
        if value is not None and (not isinstance(value, int) or value < 1):
            raise InvalidLimit("minutes are a positive integer")
    settings_of(player_id=player_id, currency=currency)
    row = ResponsibleGaming.objects.select_for_update().get(pk=player_id)
    row.session_limit_minutes = session_limit_minutes
    row.reality_check_minutes = reality_check_minutes
    row.save(update_fields=["session_limit_minutes", "reality_check_minutes", "updated_at"])
    return row


@transaction.atomic
def exclude(*, player_id: int, currency: str, kind: str, days: int | None, now: datetime) -> ResponsibleGaming:
    """Start a cool-off (1-42 days) or a self-exclusion (180 days or more, or
    permanent with ``days=None``). An exclusion can be lengthened, never shortened."""
    if kind == "cool_off":
        if days is None or not COOL_OFF_DAYS[0] <= days <= COOL_OFF_DAYS[1]:
            raise InvalidLimit("a cool-off lasts 1 to 42 days", kind=kind)
    elif kind == "self_exclusion":
        if days is not None and days < SELF_EXCLUSION_MIN_DAYS:
            raise InvalidLimit("a self-exclusion lasts at least 180 days (or is permanent)", kind=kind)
    else:
        raise InvalidLimit(f"unknown exclusion {kind!r}", kind=kind)
    settings_of(player_id=player_id, currency=currency)
    row = ResponsibleGaming.objects.select_for_update().get(pk=player_id)
    until = _permanent() if days is None else now + timedelta(days=days)
    if row.excluded_until is None or row.excluded_until <= now or until > row.excluded_until:
        row.exclusion, row.excluded_until = kind, until
        row.save(update_fields=["exclusion", "excluded_until", "updated_at"])
    return row


def start_session(*, player_id: int, now: datetime) -> None:
    """A new playing session (login): the session clock and reality checks restart."""
    ResponsibleGaming.objects.filter(pk=player_id).update(session_started_at=now, last_reality_check_at=now)


def send_reality_checks(*, now: datetime) -> int:
    """Send ``player.notice`` reality checks to every player whose interval has
    passed (Channels group ``player-<id>``); returns how many were sent."""
    layer = get_channel_layer()
    sent = 0
    due = ResponsibleGaming.objects.filter(reality_check_minutes__isnull=False, session_started_at__isnull=False)
    for row in due.only("pk", "currency", "reality_check_minutes", "session_started_at", "last_reality_check_at"):
        if row.session_started_at is None or row.reality_check_minutes is None:
            continue
        last = row.last_reality_check_at or row.session_started_at
        if now - last < timedelta(minutes=row.reality_check_minutes):
            continue
        # Claim the reminder first: two beat runs never send the same one twice.
        claimed = ResponsibleGaming.objects.filter(pk=row.pk, last_reality_check_at=row.last_reality_check_at).update(
            last_reality_check_at=now
        )
        if not claimed:
            continue
        elapsed = int((now - row.session_started_at).total_seconds() // 60)
        notice = {
            "kind": "reality_check",
            "session_started_at": row.session_started_at.isoformat(),
            "elapsed_minutes": elapsed,
            "net_loss": net_loss(player_id=row.pk, currency=row.currency, since=row.session_started_at),
            "currency": row.currency,
            "message": f"You have been playing for {elapsed} minutes.",
        }
        if layer is not None:
            async_to_sync(layer.group_send)(f"player-{row.pk}", {"type": "player.notice", "notice": notice})
        sent += 1
    return sent
