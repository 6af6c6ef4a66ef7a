"""Responsible gaming: deposit and loss limits per currency, a session time
limit over continuous play with reality checks, self-exclusion and cool-off
(docs/cashier-and-responsible-gaming.md).

Enforced in the services that take deposits (``casino.cashier``) and place
bets (``assert_may_wager``, called by the bet services and before every poker
hand), never in the API layer. On the bet path the check is one primary-key
read of the player's own row (no shared row; the house context query reads it
in its own join); only a player who set a loss limit in the bet's currency
costs a second, per-player read of that wallet's statement lines in the window.

**Sessions are play, not logins.** A session starts at the first wager after
``CASINO_RG_SESSION_IDLE_GAP_MINUTES`` without one and ends when that gap
passes with no wager (``session_of``). The row stores the session's start and
its last wager (``session_started_at``, ``last_wager_at``); ``note_wager``
records a wager. To keep the bet path free of writes, a player without a row
is not tracked at all (they have no session limit and no reality check; their
first setting creates the row and the next wager starts a session), and for a
player with a row ``last_wager_at`` is written only when a session starts or
when it moved by at least ``TOUCH_INTERVAL`` (one minute): at most one small
primary-key UPDATE per player and minute, none on most bets. So the recorded
last wager lags the real one by less than a minute, and a session may be taken
as ended up to a minute before the real idle gap has passed.

**Limits are per currency.** ``limits`` maps a currency to its limit kinds;
deposits are compared with the deposit limits of their currency, bets with the
loss limits of the table's currency, whose net loss is read from the wallet in
that currency (house stakes and poker buy-ins alike: money moved from the
wallet to a table counts as lost until it comes back).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings as django_settings
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
# Bounds of the values a player may set (larger ones are ``invalid_limit``):
# amounts fit the ledger's bigint columns, minutes the PositiveIntegerField,
# and an exclusion ends within a century (longer: permanent, ``days: null``).
MAX_AMOUNT = 2**63 - 1
MAX_MINUTES = 2_147_483_647
MAX_EXCLUSION_DAYS = 36_500
# ``last_wager_at`` is written only when it moved by this much (module docstring).
TOUCH_INTERVAL = timedelta(minutes=1)
_CURRENCY = re.compile(r"^[A-Z]{3}$")


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


class InvalidLimitCurrency(InvalidLimit, code="invalid_limit_currency"):
    """Limits are set for one of the player's wallet currencies (or the default currency)."""


def idle_gap() -> timedelta:
    """The gap without a wager that ends a play session (``CASINO_RG_SESSION_IDLE_GAP_MINUTES``)."""
    return timedelta(minutes=django_settings.CASINO_RG_SESSION_IDLE_GAP_MINUTES)


def session_of(row: Mapping[str, Any], now: datetime) -> datetime | None:
    """The start of the player's play session running at ``now``, or ``None``
    when none runs (never played, or the idle gap passed since the last wager:
    the next wager starts a new one)."""
    started, last = row.get("session_started_at"), row.get("last_wager_at")
    if started is None or last is None or now - last >= idle_gap():
        return None
    return started


def limits_in(row: Mapping[str, Any], currency: str) -> dict[str, Any]:
    """The player's limit entries in ``currency`` (kind -> entry)."""
    return dict((row.get("limits") or {}).get(currency) or {})


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
ROW_COLUMNS = (
    "currency",
    "limits",
    "session_limit_minutes",
    "session_started_at",
    "last_wager_at",
    "exclusion",
    "excluded_until",
)
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
    for name in ("session_started_at", "last_wager_at", "excluded_until"):  # SQLite hands back naive UTC (or text)
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
    limits = limits_in(row, currency)
    for window, span in WINDOWS.items():
        limit = effective_limit(limits.get(f"deposit_{window}"), now)
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
                window=window, limit=limit, used=used, remaining=max(0, limit - used), currency=currency,
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
    *,
    player_id: int,
    amount: int,
    currency: str,
    now: datetime,
    settings: dict[str, Any] | None = UNREAD_SETTINGS,
    reserve: int = 0,
) -> None:
    """Refuse a bet of ``amount`` (in ``currency``) the player's exclusion,
    session time limit or loss limits in that currency forbid. One primary-key
    read (none when the caller passes the row it read in this transaction as
    ``settings``: ``settings_row(...)``, or ``None`` for a player without one);
    a loss limit in ``currency`` adds one read of that wallet's statement lines.
    ``reserve``: money the player must still be able to stake after this bet
    (the round's smallest forced decision wager): the loss limits must leave
    room for it too. ``amount=0`` checks exclusion, session and a loss limit
    already passed (poker, before each hand). Changes nothing; call inside the
    bet's transaction."""
    row = _row(player_id) if settings is UNREAD_SETTINGS else settings
    if row is None:
        return
    _check_exclusion(row, now)
    minutes = row["session_limit_minutes"]
    started = session_of(row, now) if minutes else None
    if minutes and started is not None and now - started >= timedelta(minutes=minutes):
        raise SessionTimeLimitReached(
            "Your session time limit is reached; play again after a break.",
            limit_minutes=minutes, session_started_at=started.isoformat(),
            resumes_at=(row["last_wager_at"] + idle_gap()).isoformat(),
        )  # fmt: skip
    limits = limits_in(row, currency)
    for window, span in WINDOWS.items():
        limit = effective_limit(limits.get(f"loss_{window}"), now)
        if limit is None:
            continue
        lost = net_loss(player_id=player_id, currency=currency, since=now - span)
        if lost + amount + reserve > limit:
            raise LossLimitExceeded(
                f"This bet could take your losses past your {window} loss limit"
                + (" with the decision the round can ask for." if reserve else "."),
                window=window, limit=limit, lost=lost, remaining=max(0, limit - lost), currency=currency,
                reserved_for_decision=reserve,
            )  # fmt: skip


def wager_allowance(*, player_id: int, currency: str, now: datetime, settings: Any = UNREAD_SETTINGS) -> int | None:
    """The largest stake ``assert_may_wager`` would accept now in ``currency``
    (``None``: no limit; 0 when excluded or past the session limit). The
    decision offer hides the options above it."""
    row = _row(player_id) if settings is UNREAD_SETTINGS else settings
    if row is None:
        return None
    try:
        assert_may_wager(player_id=player_id, amount=0, currency=currency, now=now, settings=row)
    except ResponsibleGamingRefusal:
        return 0
    allowance: int | None = None
    limits = limits_in(row, currency)
    for window, span in WINDOWS.items():
        limit = effective_limit(limits.get(f"loss_{window}"), now)
        if limit is None:
            continue
        room = max(0, limit - net_loss(player_id=player_id, currency=currency, since=now - span))
        allowance = room if allowance is None else min(allowance, room)
    return allowance


def wager_allowances(*, player_ids: Iterable[int], currency: str, now: datetime) -> dict[int, int | None]:
    """``wager_allowance`` for many players: one read of their rows (players
    without one are not listed: no limit)."""
    ids = list(player_ids)
    if not ids:
        return {}
    with connection.cursor() as cursor:
        marks = ", ".join(["%s"] * len(ids))
        cursor.execute(f"SELECT user_id, {', '.join(ROW_COLUMNS)} FROM {ROW_TABLE} WHERE user_id IN ({marks})", ids)
        found = cursor.fetchall()
    return {
        int(values[0]): wager_allowance(player_id=int(values[0]), currency=currency, now=now,
                                        settings=settings_row(values[1:]))
        for values in found
    }  # fmt: skip


def note_wager(*, player_id: int, currency: str, now: datetime, settings: Any = UNREAD_SETTINGS) -> None:
    """Record a wager for the play session (module docstring): a new session
    when none runs, else ``last_wager_at`` moved on when it lags by a minute or
    more. A player without a settings row is not tracked (no write). Call in
    the wager's transaction, after ``assert_may_wager`` accepted it."""
    row = _row(player_id) if settings is UNREAD_SETTINGS else settings
    if row is None:
        return
    if session_of(row, now) is None:
        ResponsibleGaming.objects.filter(pk=player_id).update(
            session_started_at=now, last_wager_at=now, last_reality_check_at=now
        )
    elif now - row["last_wager_at"] >= TOUCH_INTERVAL:
        ResponsibleGaming.objects.filter(pk=player_id).update(last_wager_at=now)


def note_wagers(*, player_ids: Iterable[int], currency: str, now: datetime) -> None:
    """``note_wager`` for every player dealt into a poker hand (one read of their rows)."""
    ids = list(player_ids)
    if not ids:
        return
    rows = ResponsibleGaming.objects.filter(pk__in=ids).values("pk", *ROW_COLUMNS)
    for values in rows:
        note_wager(player_id=values["pk"], currency=currency, now=now,
                   settings=settings_row([values[c] for c in ROW_COLUMNS]))  # fmt: skip


def read_settings(*, player_id: int, currency: str) -> ResponsibleGaming:
    """The player's settings for reading: unsaved defaults when none are stored
    (a read creates nothing)."""
    return ResponsibleGaming.objects.filter(pk=player_id).first() or ResponsibleGaming(pk=player_id, currency=currency)


def settings_of(*, player_id: int, currency: str) -> ResponsibleGaming:
    row, _ = ResponsibleGaming.objects.get_or_create(pk=player_id, defaults={"currency": currency})
    return row


def _check_currency(*, player_id: int, currency: str) -> None:
    """A limit's currency: the default currency or one of the player's wallets."""
    if not isinstance(currency, str) or not _CURRENCY.match(currency):
        raise InvalidLimitCurrency("a currency is three capital letters", currency=str(currency)[:8])
    if currency == django_settings.CASINO_DEFAULT_CURRENCY:
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM ledger_account WHERE key = %s", [f"wallet:player:{player_id}:{currency}"])
        if cursor.fetchone() is None:
            raise InvalidLimitCurrency(
                "you have no wallet in this currency", currency=currency,
                default=django_settings.CASINO_DEFAULT_CURRENCY,
            )  # fmt: skip


def _check_amount(kind: str, amount: Any) -> None:
    if kind not in LIMIT_KINDS:
        raise InvalidLimit(f"unknown limit {kind!r}", kind=str(kind)[:40], known=list(LIMIT_KINDS))
    if amount is not None and (
        not isinstance(amount, int) or isinstance(amount, bool) or not 0 <= amount <= MAX_AMOUNT
    ):
        raise InvalidLimit("a limit is a non-negative integer amount in minor units", kind=kind, max_amount=MAX_AMOUNT)


def _check_minutes(name: str, value: Any) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_MINUTES):
        raise InvalidLimit(f"{name} is a whole number of minutes from 1 to {MAX_MINUTES}", field=name)


# ``set_limits``'s default for the session settings it leaves as they are.
UNCHANGED: Any = object()


def check_limits(
    *, player_id: int, currency: str, limits: Mapping[str, Any], session_limit_minutes: Any = UNCHANGED,
    reality_check_minutes: Any = UNCHANGED,
) -> None:  # fmt: skip
    """Raise ``InvalidLimit`` (or ``InvalidLimitCurrency``) for the first thing
    ``set_limits`` would refuse; reads nothing but the player's wallets."""
    if not isinstance(limits, Mapping):
        raise InvalidLimit("limits are a mapping of limit kind to amount")
    if limits:
        _check_currency(player_id=player_id, currency=currency)
    for kind, amount in limits.items():
        _check_amount(kind, amount)
    for name, value in (("session_limit_minutes", session_limit_minutes),
                        ("reality_check_minutes", reality_check_minutes)):  # fmt: skip
        if value is not UNCHANGED:
            _check_minutes(name, value)


@transaction.atomic
def set_limits(
    *, player_id: int, currency: str, limits: Mapping[str, Any], now: datetime,
    session_limit_minutes: Any = UNCHANGED, reality_check_minutes: Any = UNCHANGED,
) -> ResponsibleGaming:  # fmt: skip
    """Change several limits at once, all or nothing: everything is validated
    first (``check_limits``), then applied to the locked row and saved once, in
    one transaction; a refusal leaves every limit as it was. ``limits`` maps a
    kind to an amount in minor units of ``currency`` (``None`` removes it): a
    decrease (or a first limit) takes effect at once, an increase or a removal
    only after 24 hours. The session settings apply at once; ``UNCHANGED``
    leaves one as it is."""
    check_limits(player_id=player_id, currency=currency, limits=limits,
                 session_limit_minutes=session_limit_minutes, reality_check_minutes=reality_check_minutes)  # fmt: skip
    ResponsibleGaming.objects.get_or_create(pk=player_id, defaults={"currency": currency})
    row = ResponsibleGaming.objects.select_for_update().get(pk=player_id)
    in_currency = dict(row.limits.get(currency) or {})
    for kind, amount in limits.items():
        current = effective_limit(in_currency.get(kind), now)
        if current is not None and (amount is None or amount > current):
            in_currency[kind] = {"amount": current, "pending": amount,
                                 "pending_from": (now + INCREASE_DELAY).isoformat()}  # fmt: skip
        else:
            in_currency[kind] = {"amount": amount, "pending": None, "pending_from": None}
    if limits:
        row.limits = {**row.limits, currency: in_currency}
    if session_limit_minutes is not UNCHANGED:
        row.session_limit_minutes = session_limit_minutes
    if reality_check_minutes is not UNCHANGED:
        row.reality_check_minutes = reality_check_minutes
    row.save(update_fields=["limits", "session_limit_minutes", "reality_check_minutes", "updated_at"])
    return row


def set_limit(*, player_id: int, kind: str, amount: int | None, currency: str, now: datetime) -> ResponsibleGaming:
    """Set one deposit or loss limit in ``currency`` (``set_limits`` with one)."""
    return set_limits(player_id=player_id, currency=currency, limits={kind: amount}, now=now)


def set_session_limits(
    *, player_id: int, currency: str, session_limit_minutes: int | None, reality_check_minutes: int | None
) -> ResponsibleGaming:
    """Set the session time limit and the reality-check interval (``set_limits``)."""
    return set_limits(player_id=player_id, currency=currency, limits={}, now=datetime.now(UTC),
                      session_limit_minutes=session_limit_minutes,
                      reality_check_minutes=reality_check_minutes)  # fmt: skip


@transaction.atomic
def exclude(*, player_id: int, currency: str, kind: str, days: int | None, now: datetime) -> ResponsibleGaming:
    """Start a cool-off (1-42 days) or a self-exclusion (180 to ``MAX_EXCLUSION_DAYS``
    days, or permanent with ``days=None``). An exclusion can be lengthened, never shortened."""
    if days is not None and (not isinstance(days, int) or isinstance(days, bool) or days < 1):
        raise InvalidLimit("days are a positive whole number (or null: permanent)", kind=str(kind)[:40])
    if kind == "cool_off":
        if days is None or not COOL_OFF_DAYS[0] <= days <= COOL_OFF_DAYS[1]:
            raise InvalidLimit("a cool-off lasts 1 to 42 days", kind=kind)
    elif kind == "self_exclusion":
        if days is not None and not SELF_EXCLUSION_MIN_DAYS <= days <= MAX_EXCLUSION_DAYS:
            raise InvalidLimit(
                f"a self-exclusion lasts {SELF_EXCLUSION_MIN_DAYS} to {MAX_EXCLUSION_DAYS} days (or is permanent)",
                kind=kind,
            )
    else:
        raise InvalidLimit(f"unknown exclusion {str(kind)[:40]!r}", kind=str(kind)[:40])
    settings_of(player_id=player_id, currency=currency)
    row = ResponsibleGaming.objects.select_for_update().get(pk=player_id)
    until = _permanent() if days is None else now + timedelta(days=days)
    if row.excluded_until is None or row.excluded_until <= now or until > row.excluded_until:
        row.exclusion, row.excluded_until = kind, until
        row.save(update_fields=["exclusion", "excluded_until", "updated_at"])
    return row


def send_reality_checks(*, now: datetime) -> int:
    """Send ``player.notice`` reality checks to every player in a running play
    session whose interval has passed since the session started or the last
    reminder (Channels group ``player-<id>``); returns how many were sent."""
    layer = get_channel_layer()
    sent = 0
    due = ResponsibleGaming.objects.filter(
        reality_check_minutes__isnull=False, session_started_at__isnull=False, last_wager_at__gt=now - idle_gap()
    )
    for row in due.only(
        "pk", "currency", "reality_check_minutes", "session_started_at", "last_wager_at", "last_reality_check_at"
    ):
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
        losses = {
            currency: net_loss(player_id=row.pk, currency=currency, since=row.session_started_at)
            for currency in wallet_currencies(player_id=row.pk)
        }
        notice = {
            "kind": "reality_check",
            "session_started_at": row.session_started_at.isoformat(),
            "elapsed_minutes": elapsed,
            "net_loss": losses.get(row.currency, 0),
            "currency": row.currency,
            "net_losses": losses,
            "message": f"You have been playing for {elapsed} minutes.",
        }
        if layer is not None:
            async_to_sync(layer.group_send)(f"player-{row.pk}", {"type": "player.notice", "notice": notice})
        sent += 1
    return sent


def wallet_currencies(*, player_id: int) -> list[str]:
    """The currencies of the player's wallets, sorted."""
    prefix = f"wallet:player:{player_id}:"
    with connection.cursor() as cursor:
        cursor.execute("SELECT key FROM ledger_account WHERE key LIKE %s", [prefix + "%"])  # no _ or % in it
        return sorted(key[len(prefix) :] for (key,) in cursor.fetchall())
