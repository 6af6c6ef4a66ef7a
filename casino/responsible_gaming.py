"""Responsible gaming: deposit and loss limits per currency, a session time
limit over continuous play with reality checks, self-exclusion and cool-off
(docs/cashier-and-responsible-gaming.md).

Enforced in the services that take deposits (``casino.cashier``) and place
bets (``assert_may_wager``, called by the bet services and before every poker
hand), never in the API layer. On the bet path the check is one primary-key
read of the player's own row (no shared row; the house context query reads it
in its own join); only a player who set a loss limit in the bet's currency
pays more: their row read again ``FOR UPDATE`` (the per-player lock, below),
one read of that wallet's statement lines over the windows, and one read of
what they have in play elsewhere (``in_play``).

**One rule for every change.** A change that makes a limit more protective (a
first limit, a lower one) applies at once; one that makes it less protective
(higher, removed) waits ``INCREASE_DELAY`` (24 h) as ``pending`` from
``pending_from`` (``changed_entry``, read by ``effective_limit``): deposit and
loss limits per currency, and the session time limit alike. Exclusions are
never shortened at all (``exclude``).

**Worst case, under a per-player lock.** A wager is checked against the net
loss in the window plus the stake plus everything the player still has in play
that could be lost without another check: the current round's forced decision
(``reserve``) and those pending at their other tables, reported by the game
families through ``register_in_play`` (a poker stack needs nothing more: it
counts in full from its buy-in, the wallet movement). The check runs after
``lock_settings`` took the player's row ``FOR UPDATE`` in a statement of its
own, so the loss and in-play reads that follow see every wager of the player
committed before (READ COMMITTED takes a new snapshot per statement): two
wagers of one player at two tables cannot both pass a limit they pass alone.
Deposits take the same lock (``casino.cashier.request_deposit``).

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings as django_settings
from django.db import connection, transaction
from django.db.models import Sum

from casino import metrics
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


def _moment(value: datetime | str) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


def effective_limit(entry: Mapping[str, Any] | None, now: datetime) -> int | None:
    """The limit in force at ``now``: a pending less protective value applies from its date."""
    if not entry:
        return None
    pending_from = entry.get("pending_from")
    if pending_from is not None and _moment(pending_from) <= now:
        return entry.get("pending")
    return entry.get("amount")


def changed_entry(entry: Mapping[str, Any] | None, value: int | None, now: datetime) -> dict[str, Any]:
    """A limit's entry once the player asks for ``value`` (``None``: no limit),
    the one rule for every limit kind: a more protective value (a first limit, a
    lower one, the one in force) applies at once and cancels anything pending; a
    less protective one (higher, or none) waits ``INCREASE_DELAY`` as ``pending``
    from ``pending_from``, the value in force staying until then. Asking again
    for what is already pending keeps its date (a retry does not push it back)."""
    current = effective_limit(entry, now)
    if current is not None and (value is None or value > current):
        pending_from = (entry or {}).get("pending_from")
        if pending_from is not None and _moment(pending_from) > now and (entry or {}).get("pending") == value:
            return {"amount": current, "pending": value, "pending_from": _moment(pending_from).isoformat()}
        return {"amount": current, "pending": value, "pending_from": (now + INCREASE_DELAY).isoformat()}
    return {"amount": value, "pending": None, "pending_from": None}


def session_limit_entry(row: Mapping[str, Any] | ResponsibleGaming) -> dict[str, Any]:
    """The session time limit (minutes) as a limit entry, from its three columns."""
    get = row.get if isinstance(row, Mapping) else lambda name: getattr(row, name)
    pending_from = get("session_limit_pending_from")
    return {"amount": get("session_limit_minutes"), "pending": get("session_limit_pending"),
            "pending_from": pending_from.isoformat() if pending_from is not None else None}  # fmt: skip


def session_limit(row: Mapping[str, Any] | ResponsibleGaming, now: datetime) -> int | None:
    """The session time limit in force at ``now`` (minutes; ``None``: none)."""
    return effective_limit(session_limit_entry(row), now)


# The settings a bet is checked against; a caller may read them in its own
# query (``settings_row`` then shapes them) instead of ``_row``'s round trip.
ROW_COLUMNS = (
    "currency",
    "limits",
    "session_limit_minutes",
    "session_limit_pending",
    "session_limit_pending_from",
    "session_started_at",
    "last_wager_at",
    "exclusion",
    "excluded_until",
)
ROW_TABLE = ResponsibleGaming._meta.db_table
_ROW_SQL = f"SELECT {', '.join(ROW_COLUMNS)} FROM {ROW_TABLE} WHERE user_id = %s"
# ``lock_settings``'s key in the row it read ``FOR UPDATE`` (not a column).
LOCKED = "locked"


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
    for name in ("session_started_at", "last_wager_at", "excluded_until", "session_limit_pending_from"):
        value = row[name]
        if isinstance(value, str):  # SQLite hands back text, or naive UTC
            value = datetime.fromisoformat(value)
        if isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        row[name] = value
    return row


def _for_update() -> str:
    # SQLite has no row locks: its writers are serialised by the database lock.
    return " FOR UPDATE" if connection.features.has_select_for_update else ""


def lock_settings(*, player_id: int) -> dict[str, Any] | None:
    """The per-player lock: the player's settings row read ``FOR UPDATE`` (its
    values as they are now), ``None`` when they have none (nothing to lock: no
    limit). Held until the transaction ends; call it in a statement before the
    reads it protects (a read in the same statement as the lock's wait would use
    a snapshot from before it). Lock order: after the house command's own rows
    (``games.house.store.commands``) or the poker table, before any wallet."""
    with connection.cursor() as cursor:
        cursor.execute(_ROW_SQL + _for_update(), [player_id])
        found = cursor.fetchone()
    return None if found is None else {**settings_row(found), LOCKED: True}


def lock_settings_many(*, player_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """``lock_settings`` for several players in one statement, locked in
    player-id order (two batches locking the same players cannot deadlock)."""
    ids = sorted(set(player_ids))
    if not ids:
        return {}
    marks = ", ".join(["%s"] * len(ids))
    sql = (f"SELECT user_id, {', '.join(ROW_COLUMNS)} FROM {ROW_TABLE} WHERE user_id IN ({marks}) "
           f"ORDER BY user_id{_for_update()}")  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(sql, ids)
        found = cursor.fetchall()
    return {int(values[0]): {**settings_row(values[1:]), LOCKED: True} for values in found}


def loss_limited(row: Mapping[str, Any] | None, currency: str, now: datetime) -> bool:
    """Whether a loss limit of ``currency`` is in force for the player (their
    wagers in it then take the per-player lock)."""
    if row is None:
        return False
    limits = limits_in(row, currency)
    return any(effective_limit(limits.get(kind), now) is not None for kind in LOSS_KINDS)


def lock_for_wagers(
    *, settings: Mapping[int, dict[str, Any] | None], currency: str, now: datetime
) -> dict[int, dict[str, Any] | None]:
    """``settings`` (player -> their row as read, or ``None``) with the rows of
    the players a loss limit in ``currency`` limits read again under the lock,
    all in one statement (``lock_settings_many``); the others as they were. A
    batch of wagers calls it before checking any of them."""
    limited = [player for player, row in settings.items() if loss_limited(row, currency, now)]
    return {**settings, **lock_settings_many(player_ids=limited)} if limited else dict(settings)


def _check_exclusion(row: Mapping[str, Any], now: datetime) -> None:
    until = row["excluded_until"]
    if until is not None and until > now:
        exclusion = row["exclusion"] or "self_exclusion"
        code = "cooling_off" if exclusion == "cool_off" else "self_excluded"
        message = (
            "You are on a cool-off break until the date given: no bets and no deposits."
            if code == "cooling_off"
            else "You have excluded yourself until the date given: no bets and no deposits."
        )
        metrics.rg_refused("cool_off" if code == "cooling_off" else "self_exclusion")
        raise PlayerExcluded(message, code=code, until=until.isoformat())


def assert_not_excluded(*, player_id: int, now: datetime) -> None:
    """Refuse (``self_excluded`` / ``cooling_off``) a player excluded now: what
    a paid deposit is checked against before it is credited."""
    row = _row(player_id)
    if row is not None:
        _check_exclusion(row, now)


def assert_may_deposit(*, player_id: int, amount: int, currency: str, now: datetime, settings: Any = None) -> None:
    """Refuse a deposit the player's exclusion or deposit limits forbid.

    Counts every deposit requested in the window that is not rejected, so
    several pending requests cannot add up past a limit. ``settings``: the row
    ``lock_settings`` read (the caller holds the lock, so concurrent requests
    of the player are counted one after the other); ``None`` reads it unlocked.
    """
    row = settings if settings is not None else _row(player_id)
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
            .aggregate(total=Sum("amount"))["total"]
            or 0
        )
        if used + amount > limit:
            metrics.rg_refused(f"deposit_{window}")
            raise DepositLimitExceeded(
                f"This deposit would exceed your {window} deposit limit.",
                window=window, limit=limit, used=used, remaining=max(0, limit - used), currency=currency,
            )  # fmt: skip


# Wallet movements that count as game losses: all but the cashier's (deposits,
# withdrawals and the holds of withdrawals), in the window from %s.
_LOSS_TERM = "COALESCE(SUM(sl.amount) FILTER (WHERE sl.created_at >= %s), 0)"
_LOSSES_FROM = (
    "FROM ledger_account w "
    "JOIN ledger_statement_line sl ON sl.account_id = w.id "
    "JOIN ledger_transfer t ON t.id = sl.transfer_id "
    "LEFT JOIN ledger_hold h ON h.id = t.hold_id LEFT JOIN ledger_account d ON d.id = h.destination_id "
    "WHERE w.key = %s AND sl.created_at >= %s AND t.kind NOT IN ('deposit', 'withdraw') "
    "AND (d.kind IS NULL OR d.kind <> 'cashier')"
)


def net_losses(*, player_id: int, currency: str, since: Sequence[datetime]) -> list[int]:
    """The player's net game loss since each of ``since`` (stakes minus returns;
    >= 0): every wallet movement but cashier ones (deposits, withdrawals and
    the holds of withdrawals). One read for every window."""
    if not since:
        return []
    if connection.vendor != "postgresql":  # no FILTER clause: one read per window
        return [_net_loss(player_id, currency, moment) for moment in since]
    terms = ", ".join([_LOSS_TERM] * len(since))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {terms} {_LOSSES_FROM}",
                       [*since, f"wallet:player:{player_id}:{currency}", min(since)])  # fmt: skip
        found = cursor.fetchone()
    return [max(0, -int(total)) for total in found]


def net_losses_many(*, pairs: Iterable[tuple[int, str]], since: Sequence[datetime]) -> dict[tuple[int, str], list[int]]:
    """``net_losses`` of many (player, currency) ``pairs`` in one read,
    on either database (the same movements: ``_LOSSES_FROM``): (player, currency) ->
    the net loss since each of ``since``. Pairs without a movement are left out."""
    keys = {f"wallet:player:{player}:{currency}": (player, currency) for player, currency in pairs}
    if not keys or not since:
        return {}
    terms = ", ".join(["COALESCE(SUM(CASE WHEN sl.created_at >= %s THEN sl.amount ELSE 0 END), 0)"] * len(since))
    one_wallet = _LOSSES_FROM.replace("w.key = %s", f"w.key IN ({', '.join(['%s'] * len(keys))})")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT w.key, {terms} {one_wallet} GROUP BY w.key", [*since, *keys, min(since)])
        found = cursor.fetchall()
    return {keys[key]: [max(0, -int(total)) for total in totals] for key, *totals in found}


def _net_loss(player_id: int, currency: str, since: datetime) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COALESCE(SUM(sl.amount), 0) {_LOSSES_FROM}",
                       [f"wallet:player:{player_id}:{currency}", since])  # fmt: skip
        return max(0, -int(cursor.fetchone()[0]))


def net_loss(*, player_id: int, currency: str, since: datetime) -> int:
    """The player's net game loss since ``since`` (``net_losses`` for one window)."""
    return _net_loss(player_id, currency, since)


#: What a game family reports the player has in play in a currency, beyond
#: what already left their wallet: ``(player_id, currency, excluding) -> amount``
#: (``excluding``: the family's own key of the item the wager being checked
#: replaces, e.g. a house round's id; other families ignore it).
InPlay = Callable[[int, str, "str | None"], int]
_IN_PLAY: dict[str, InPlay] = {}


def register_in_play(name: str, report: InPlay) -> None:
    """Register a family's in-play report (``games.apps``: the house rounds'
    pending forced decisions); casino imports no game."""
    _IN_PLAY[name] = report


def in_play(*, player_id: int, currency: str, excluding: str | None = None) -> int:
    """Everything the player has in play in ``currency`` that could still be
    lost without another check, across every family (module docstring)."""
    return sum(report(player_id, currency, excluding) for report in _IN_PLAY.values())


# ``assert_may_wager``'s default: read the settings row itself.
UNREAD_SETTINGS: Any = object()


def _check_session(row: Mapping[str, Any], now: datetime) -> None:
    minutes = session_limit(row, now)
    started = session_of(row, now) if minutes else None
    if minutes and started is not None and now - started >= timedelta(minutes=minutes):
        metrics.rg_refused("session_time")
        raise SessionTimeLimitReached(
            "Your session time limit is reached; play again after a break.",
            limit_minutes=minutes, session_started_at=started.isoformat(),
            resumes_at=(row["last_wager_at"] + idle_gap()).isoformat(),
        )  # fmt: skip


def assert_may_wager(
    *,
    player_id: int,
    amount: int,
    currency: str,
    now: datetime,
    settings: dict[str, Any] | None = UNREAD_SETTINGS,
    reserve: int = 0,
    excluding: str | None = None,
) -> None:
    """Refuse a bet of ``amount`` (in ``currency``) the player's exclusion,
    session time limit or loss limits in that currency forbid. Changes nothing;
    call inside the bet's transaction, before any wallet moves.

    One primary-key read (none when the caller passes the row it read in this
    transaction as ``settings``: ``settings_row(...)``, or ``None`` for a player
    without one). A loss limit in ``currency`` adds the per-player lock
    (``lock_settings``: the row read again ``FOR UPDATE``, unless ``settings``
    came from it), one read of the wallet's losses over the windows and one of
    what is in play elsewhere (``in_play``). The worst case must fit every loss
    limit: losses + ``amount`` + ``reserve`` (money the player must still be
    able to stake after this bet: the round's forced decision) + in play at the
    other tables (``excluding``: the item this bet replaces, whose part is
    ``reserve``). ``amount=0`` checks exclusion, session and a loss limit
    already passed, without the lock (poker, before each hand: the stack
    already counts in full)."""
    row = _row(player_id) if settings is UNREAD_SETTINGS else settings
    if row is None:
        return
    staking = amount > 0 or reserve > 0
    if staking and not row.get(LOCKED) and loss_limited(row, currency, now):
        row = lock_settings(player_id=player_id)
        if row is None:
            return
    _check_exclusion(row, now)
    _check_session(row, now)
    limits = limits_in(row, currency)
    windows = [(w, span, limit) for w, span in WINDOWS.items()
               if (limit := effective_limit(limits.get(f"loss_{w}"), now)) is not None]  # fmt: skip
    if not windows:
        return
    # In play first, losses second: a forced decision taken elsewhere meanwhile
    # (exempt: it takes no lock) is then counted twice, never missed.
    elsewhere = in_play(player_id=player_id, currency=currency, excluding=excluding) if staking else 0
    losses = net_losses(player_id=player_id, currency=currency, since=[now - span for _, span, _ in windows])
    for (window, _, limit), lost in zip(windows, losses, strict=True):
        if lost + amount + reserve + elsewhere > limit:
            because = (" with the decisions your other tables can still ask for" if elsewhere
                       else " with the decision the round can ask for" if reserve else "")  # fmt: skip
            metrics.rg_refused(f"loss_{window}")
            raise LossLimitExceeded(
                f"This bet could take your losses past your {window} loss limit{because}.",
                window=window, limit=limit, lost=lost, remaining=max(0, limit - lost - elsewhere),
                currency=currency, reserved_for_decision=reserve, in_play=elsewhere,
            )  # fmt: skip


def wager_allowance(
    *, player_id: int, currency: str, now: datetime, settings: Any = UNREAD_SETTINGS, excluding: str | None = None
) -> int | None:
    """The largest stake ``assert_may_wager`` would accept now in ``currency``
    (``None``: no limit; 0 when excluded or past the session limit), with
    ``excluding`` as the bet would pass it. The decision offer hides the options
    above it. Reads only, no lock."""
    row = _row(player_id) if settings is UNREAD_SETTINGS else settings
    if row is None:
        return None
    try:
        assert_may_wager(player_id=player_id, amount=0, currency=currency, now=now, settings=row)
    except ResponsibleGamingRefusal:
        return 0
    limits = limits_in(row, currency)
    windows = [(span, limit) for w, span in WINDOWS.items()
               if (limit := effective_limit(limits.get(f"loss_{w}"), now)) is not None]  # fmt: skip
    if not windows:
        return None
    elsewhere = in_play(player_id=player_id, currency=currency, excluding=excluding)
    losses = net_losses(player_id=player_id, currency=currency, since=[now - span for span, _ in windows])
    return min(max(0, limit - lost - elsewhere) for (_, limit), lost in zip(windows, losses, strict=True))


def wager_allowances(
    *, player_ids: Iterable[int], currency: str, now: datetime, excluding: str | None = None
) -> dict[int, int | None]:
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
                                        settings=settings_row(values[1:]), excluding=excluding)
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
    """``note_wager`` for every player dealt into a poker hand (one read of their
    rows; written in player-id order, the order ``lock_settings_many`` locks in)."""
    ids = list(player_ids)
    if not ids:
        return
    rows = ResponsibleGaming.objects.filter(pk__in=ids).order_by("pk").values("pk", *ROW_COLUMNS)
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
    kind to an amount in minor units of ``currency`` (``None`` removes it).
    Every limit, the session time limit included, changes by ``changed_entry``:
    a more protective value at once, a less protective one (higher, or none)
    after 24 hours. The reality-check interval is a reminder, not a limit: it
    applies at once. ``UNCHANGED`` leaves a session setting as it is."""
    check_limits(player_id=player_id, currency=currency, limits=limits,
                 session_limit_minutes=session_limit_minutes, reality_check_minutes=reality_check_minutes)  # fmt: skip
    ResponsibleGaming.objects.get_or_create(pk=player_id, defaults={"currency": currency})
    row = ResponsibleGaming.objects.select_for_update().get(pk=player_id)
    in_currency = dict(row.limits.get(currency) or {})
    for kind, amount in limits.items():
        in_currency[kind] = changed_entry(in_currency.get(kind), amount, now)
    if limits:
        row.limits = {**row.limits, currency: in_currency}
    if session_limit_minutes is not UNCHANGED:
        entry = changed_entry(session_limit_entry(row), session_limit_minutes, now)
        row.session_limit_minutes, row.session_limit_pending = entry["amount"], entry["pending"]
        row.session_limit_pending_from = None if entry["pending_from"] is None else _moment(entry["pending_from"])
    if reality_check_minutes is not UNCHANGED:
        row.reality_check_minutes = reality_check_minutes
    row.save(update_fields=["limits", "session_limit_minutes", "session_limit_pending", "session_limit_pending_from",
                            "reality_check_minutes", "updated_at"])  # fmt: skip
    return row


def set_limit(*, player_id: int, kind: str, amount: int | None, currency: str, now: datetime) -> ResponsibleGaming:
    """Set one deposit or loss limit in ``currency`` (``set_limits`` with one)."""
    return set_limits(player_id=player_id, currency=currency, limits={kind: amount}, now=now)


def set_session_limits(
    *, player_id: int, currency: str, session_limit_minutes: int | None, reality_check_minutes: int | None,
    now: datetime | None = None,
) -> ResponsibleGaming:  # fmt: skip
    """Set the session time limit and the reality-check interval (``set_limits``)."""
    return set_limits(player_id=player_id, currency=currency, limits={}, now=now or datetime.now(UTC),
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
