"""The operator's dashboard: what a shift manager reads at a glance on the admin's
index page (docs/live.md, "Operator's dashboard"). Application layer, reads only.

``operator_dashboard`` gathers, for what the viewer may see (``Sees``):

- every table of both families, live or closed, its phase and the seconds left
  in it, players seated and watching (present at the table, not seated), the
  round or hand in play;
- today's (UTC) handle, payouts, hold and hold % per currency
  (``compliance.reports.house_days``) and the poker rake of the hands ended today;
- alerts, each a sentence and a link to where to act: paused rounds and hands, a
  late dealer (queue lag) or one gone, feed lag (a long transaction holding the
  feed and the seals back), the ledger's seal age, payments the provider refused
  or never answered or that wait for a refund, players near a responsible-gaming
  limit. Thresholds: the ``CASINO_DASHBOARD_*`` settings.

Every query is a cheap one on indexed columns or small tables (no broker round
trip), since the page refreshes itself every few seconds. It reads no card, no
event data and no credential.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import TypeGuard, TypeVar

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import Count, Exists, OuterRef, Q, Sum
from django.urls import reverse

from casino.errors import DomainError
from casino.models import CashierKind, CashierState, CashierTransaction, ResponsibleGaming
from casino.responsible_gaming import (
    DEPOSIT_KINDS,
    LOSS_KINDS,
    WINDOWS,
    effective_limit,
    limits_in,
    net_losses_many,
    session_limit,
    session_of,
)
from compliance.reports import house_days
from games.house.models import HouseRound, HouseTable, TableSeat
from games.poker.models import PokerHand, PokerSeat, PokerTable
from games.tables.presence import HOUSE, POKER, TablePresence
from ledger.currencies import CHIPS, display_money
from ledger.services.events import oldest_writer_seconds
from ledger.services.seals import seal_lag

log = logging.getLogger(__name__)

T = TypeVar("T")
CRITICAL, WARNING = "critical", "warning"
#: The phases in which nobody deals (the table waits for an operator, or for players).
_WAITING = frozenset({"", "idle", "paused"})


@dataclass(frozen=True)
class Sees:
    """What the viewer's permissions let the dashboard show (the interface reads
    them from the staff user: ``casino.admin_site``)."""

    house_tables: bool = False
    poker_tables: bool = False
    money: bool = False  # handle, payouts, hold, rake and amounts in alerts: ledger or report permission
    ledger: bool = False  # the seals
    cashier: bool = False
    responsible_gaming: bool = False


@dataclass(frozen=True)
class TableRow:
    family: str  # HOUSE | POKER
    code: str
    name: str
    game: str
    status: str  # live | closing | paused | late | gone | closed
    phase: str
    seconds_left: int | None
    overdue_seconds: int | None
    seated: int
    watching: int
    in_play: str  # the round's game number or the hand's id ("" when none)
    in_play_url: str
    table_url: str

    @property
    def over(self) -> str:
        """How long ago the phase's deadline passed, in words ("66 s", "60 min")."""
        return _ago(self.overdue_seconds or 0)


@dataclass(frozen=True)
class Alert:
    level: str  # CRITICAL | WARNING
    kind: str
    text: str
    url: str
    action: str


@dataclass(frozen=True)
class MoneyLine:
    """Today's figures of one currency, shown (``display_money``)."""

    currency: str
    handle: str
    payouts: str
    hold: str
    hold_pct: str
    rake: str
    negative_hold: bool


@dataclass(frozen=True)
class Dashboard:
    now: datetime
    day: date
    tables: list[TableRow]
    money: list[MoneyLine] | None  # None: the viewer may not see money
    money_note: str
    alerts: list[Alert] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        """The floor in figures: tables live, paused, in trouble (late or dealer gone),
        closed; players seated and watching."""
        status = [t.status for t in self.tables]
        return {
            "live": status.count("live") + status.count("closing"),
            "paused": status.count("paused"),
            "trouble": status.count("late") + status.count("gone"),
            "closed": status.count("closed"),
            "seated": sum(t.seated for t in self.tables),
            "watching": sum(t.watching for t in self.tables),
        }


def operator_dashboard(*, now: datetime, sees: Sees) -> Dashboard:
    """The dashboard at ``now`` as ``sees`` allows (module docstring). A part that
    cannot be read (a bug, a forged row) is an alert saying so, its error logged;
    the rest of the dashboard is shown."""
    tables: list[TableRow] = []
    alerts: list[Alert] = []

    def part(name: str, read: Callable[[], T], empty: T) -> T:
        try:
            with transaction.atomic():
                return read()
        except Exception:  # the index page must answer; the error is logged in full
            log.exception("dashboard: %s could not be read", name)
            alerts.append(Alert(WARNING, "unreadable", f"The dashboard could not read {name} (the error is in the "
                                "server's log).", "", ""))  # fmt: skip
            return empty

    if sees.house_tables:
        house = part("the house tables", lambda: house_rows(now=now), list[TableRow]())
        tables += house
        alerts += part("the paused rounds", lambda: paused_rounds(now=now), [])
        alerts += dealer_alerts(house)
    if sees.poker_tables:
        poker = part("the poker tables", lambda: poker_rows(now=now), list[TableRow]())
        tables += poker
        alerts += part("the paused hands", paused_hands, [])
        alerts += dealer_alerts(poker)
    if sees.house_tables or sees.poker_tables:
        alerts += part("the feed's lag", feed_lag, [])
    if sees.ledger:
        alerts += part("the ledger's seals", lambda: seal_alerts(now=now), [])
    if sees.cashier:
        alerts += part("the payments", lambda: payment_alerts(now=now, money=sees.money), [])
    if sees.responsible_gaming:
        alerts += part("the players' limits", lambda: limit_alerts(now=now, money=sees.money), [])
    day = now.astimezone(UTC).date()
    money: list[MoneyLine] | None = None  # None: not the viewer's to see
    note = ""
    if sees.money:
        money, note = part("today's money", lambda: today_figures(day=day), (list[MoneyLine](), ""))
    alerts.sort(key=lambda a: a.level != CRITICAL)  # critical first, each kind in its own order
    return Dashboard(now=now, day=day, tables=tables, money=money, money_note=note, alerts=alerts)


# --- tables ---------------------------------------------------------------------------------------


def _ago(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _seconds(later: datetime | None, earlier: datetime) -> float | None:
    return None if later is None else (later - earlier).total_seconds()


def _status(*, is_open: bool, phase: str, overdue: float | None) -> str:
    if phase == "paused":
        return "paused"
    if phase not in _WAITING and overdue is not None and overdue > settings.CASINO_DASHBOARD_DEALER_GONE_SECONDS:
        return "gone"
    if phase not in _WAITING and overdue is not None and overdue > settings.CASINO_DASHBOARD_QUEUE_LAG_SECONDS:
        return "late"
    if is_open:
        return "live"
    return "closed" if phase in _WAITING else "closing"


def _present(family: str, now: datetime) -> Q:
    grace = timedelta(seconds=settings.CASINO_PRESENCE_GRACE_SECONDS)
    return Q(family=family) & (Q(socket_until__gt=now) | Q(rest_at__gt=now - grace))


def _watching(family: str, now: datetime, seat_model: type[TableSeat] | type[PokerSeat]) -> dict[int, int]:
    """Table id -> players present at it (``games.tables.presence``) who hold no seat there."""
    seated = seat_model.objects.filter(table_id=OuterRef("table_id"), player_id=OuterRef("player_id"))
    rows = (
        TablePresence.objects.filter(_present(family, now))
        .exclude(Exists(seated))
        .values("table_id")
        .annotate(n=Count("pk"))
    )
    return {int(r["table_id"]): int(r["n"]) for r in rows}


def _row(family: str, table: HouseTable | PokerTable, *, now: datetime, game: str, seated: int, watching: int,
         in_play: tuple[str, str], table_url: str) -> TableRow:  # fmt: skip
    left = _seconds(table.deadline, now)
    overdue = None if left is None or left >= 0 else -left
    return TableRow(
        family=family, code=table.code, name=table.name, game=game,
        status=_status(is_open=table.is_open, phase=table.phase, overdue=overdue),
        phase=table.phase or "idle", seconds_left=None if left is None or left < 0 else math.ceil(left),
        overdue_seconds=None if overdue is None else int(overdue), seated=seated, watching=watching,
        in_play=in_play[0], in_play_url=in_play[1], table_url=table_url,
    )  # fmt: skip


def house_rows(*, now: datetime) -> list[TableRow]:
    """Every house table, in code order (four queries however many tables)."""
    tables = list(HouseTable.objects.order_by("code"))
    seated = dict(TableSeat.objects.values("table_id").annotate(n=Count("pk")).values_list("table_id", "n"))
    watching = _watching(HOUSE, now, TableSeat)
    current = [t.current_round_id for t in tables if t.current_round_id]
    rounds = {rid: (pk, number) for rid, pk, number in
              HouseRound.objects.filter(round_id__in=current).values_list("round_id", "pk", "game_number")}  # fmt: skip
    out = []
    for table in tables:
        found = rounds.get(table.current_round_id) if table.phase not in ("", "idle") else None
        in_play = (found[1], reverse("admin:games_houseround_change", args=[found[0]])) if found else ("", "")
        out.append(_row(HOUSE, table, now=now, game=table.get_game_display(), seated=seated.get(table.pk, 0),
                        watching=watching.get(table.pk, 0), in_play=in_play,
                        table_url=reverse("admin:games_housetable_change", args=[table.pk])))  # fmt: skip
    return out


def poker_rows(*, now: datetime) -> list[TableRow]:
    """Every ring table and every tournament table still in use, in code order."""
    tables = list(
        PokerTable.objects.filter(Q(tournament__isnull=True) | Q(is_open=True) | ~Q(phase="idle"))
        .select_related("tournament")
        .order_by("code")
    )
    seated = dict(PokerSeat.objects.values("table_id").annotate(n=Count("pk")).values_list("table_id", "n"))
    watching = _watching(POKER, now, PokerSeat)
    current = [t.current_hand_id for t in tables if t.current_hand_id]
    hands = dict(PokerHand.objects.filter(hand_id__in=current, status="playing").values_list("hand_id", "pk"))
    out = []
    for table in tables:
        pk = hands.get(table.current_hand_id)
        in_play = (table.current_hand_id, reverse("admin:games_pokerhand_change", args=[pk])) if pk else ("", "")
        stakes = f"{display_money(table.small_blind, table.currency)}/{display_money(table.big_blind, table.currency)}"
        if table.tournament is not None:
            game = f"Tournament {table.tournament.name}, table {table.table_number} (blinds {stakes})"
        else:
            game = f"Hold'em, {table.get_variant_display().lower()} (blinds {stakes})"
        out.append(_row(POKER, table, now=now, game=game, seated=seated.get(table.pk, 0),
                        watching=watching.get(table.pk, 0), in_play=in_play,
                        table_url=reverse("admin:games_pokertable_change", args=[table.pk])))  # fmt: skip
    return out


# --- alerts ----------------------------------------------------------------------------------------


def paused_rounds(*, now: datetime) -> list[Alert]:
    """A house table's round paused by an operator: its players wait until it is resumed or voided."""
    tables = list(HouseTable.objects.filter(phase="paused").order_by("code"))
    rounds = dict(
        HouseRound.objects.filter(round_id__in=[t.current_round_id for t in tables]).values_list("round_id", "pk")
    )
    out = []
    for table in tables:
        since = f" since {table.updated_at:%H:%M} UTC" if table.updated_at else ""
        pk = rounds.get(table.current_round_id)
        url = (reverse("admin:games_houseround_change", args=[pk]) if pk else
               reverse("admin:games_housetable_change", args=[table.pk]))  # fmt: skip
        out.append(Alert(WARNING, "paused", f"Table {table.code}: round paused{since}; its players wait until "
                         "it is resumed or voided.", url, "Resume or void the round"))  # fmt: skip
    return out


def paused_hands() -> list[Alert]:
    """A poker hand paused by an operator (or with its tournament)."""
    return [
        Alert(WARNING, "paused", f"Table {t.code}: hand {t.current_hand_id} paused; nobody may act until it is "
              "resumed or voided.", reverse("admin:games_pokertable_change", args=[t.pk]), "Resume or void the hand")
        for t in PokerTable.objects.filter(phase="paused").order_by("code")
    ]  # fmt: skip


def dealer_alerts(rows: Iterable[TableRow]) -> list[Alert]:
    """Tables whose phase ended without the dealer acting: late (queue lag) or gone."""
    out = []
    for row in rows:
        over = row.over
        if row.status == "gone":
            out.append(Alert(CRITICAL, "dealer_gone", f"Table {row.code}: dealer gone. Its {row.phase} phase ended "
                             f"{over} ago and nothing moved it: no dealer worker or no beat is running.",
                             row.table_url, "Open the table (pause, void or close)"))  # fmt: skip
        elif row.status == "late":
            out.append(Alert(WARNING, "queue_lag", f"Table {row.code}: the dealer is {over} late. Its {row.phase} "
                             "phase ended and the task that moves it has not run: the worker's queue is behind.",
                             row.table_url, "Open the table"))  # fmt: skip
    return out


def feed_lag() -> list[Alert]:
    """A database transaction open longer than ``CASINO_DASHBOARD_FEED_LAG_SECONDS``."""
    try:
        with transaction.atomic():
            seconds = oldest_writer_seconds()
    except DatabaseError:
        log.warning("dashboard: could not read the running transactions", exc_info=True)
        return []
    if seconds is None or seconds <= settings.CASINO_DASHBOARD_FEED_LAG_SECONDS:
        return []
    return [Alert(WARNING, "feed_lag", f"Feed lag: a database transaction has been open for {seconds:.0f} s. "
                  f"The tables' feeds deliver its events late (after {settings.CASINO_FEED_GAP_SECONDS:.0f} s) and "
                  "the ledger is not sealed past it.", "/api/health/", "Check the system's health")]  # fmt: skip


def seal_alerts(*, now: datetime) -> list[Alert]:
    """Events older than ``CASINO_DASHBOARD_SEAL_AGE_SECONDS`` that no seal covers yet."""
    lag = seal_lag()
    if lag.oldest_unsealed_at is None:
        return []
    age = (now - lag.oldest_unsealed_at).total_seconds()
    if age <= settings.CASINO_DASHBOARD_SEAL_AGE_SECONDS:
        return []
    last = (
        "never sealed"
        if lag.last_sealed_at is None
        else f"last seal {_ago((now - lag.last_sealed_at).total_seconds())} ago"
    )
    return [Alert(CRITICAL, "seal_age", f"Ledger not sealed: events recorded {_ago(age)} ago are not sealed yet "
                  f"({last}; a seal is due every minute). Check the beat process and the seal task's errors.",
                  reverse("admin:ledger_seal_changelist"), "See the seals")]  # fmt: skip


def _cashier_url(**query: str) -> str:
    return reverse("admin:casino_cashiertransaction_changelist") + "?" + "&".join(f"{k}={v}" for k, v in query.items())


def _count_text(n: int, one: str, many: str) -> str:
    return f"1 {one}" if n == 1 else f"{n} {many}"


def _totals(rows: Iterable[tuple[str, int]]) -> str:
    return ", ".join(display_money(amount, currency) for currency, amount in rows)


def payment_alerts(*, now: datetime, money: bool) -> list[Alert]:
    """Payments that need an operator: deposits the provider paid that wait for a
    refund (``refund_due``), payments the provider rejected in the last 24 hours,
    and payments waiting for the provider's callback longer than
    ``CASINO_DASHBOARD_PAYMENT_WAIT_MINUTES``."""
    out = []
    wait = timedelta(minutes=settings.CASINO_DASHBOARD_PAYMENT_WAIT_MINUTES)
    groups = [
        (CRITICAL, "refund_due", Q(state=CashierState.REFUND_DUE), _cashier_url(state__exact="refund_due"),
         ("deposit", "deposits"), "paid by the provider could not be credited (the player is excluded since): "
         "refund through the provider", "Refund them"),
        (WARNING, "payment_rejected", Q(state=CashierState.REJECTED, decided_by__startswith="psp:",
                                        updated_at__gte=now - timedelta(hours=24)),
         _cashier_url(state__exact="rejected"), ("payment", "payments"),
         "rejected by the payment provider in the last 24 h", "See them"),
        (WARNING, "callback_overdue", (Q(state=CashierState.REQUESTED, kind=CashierKind.DEPOSIT)
                                       | Q(state=CashierState.APPROVED, kind=CashierKind.WITHDRAWAL))
         & Q(updated_at__lt=now - wait), _cashier_url(state__exact="requested"), ("payment", "payments"),
         f"waiting over {settings.CASINO_DASHBOARD_PAYMENT_WAIT_MINUTES:.0f} min for the provider's callback",
         "See the cashier"),
    ]  # fmt: skip
    for level, kind, query, url, nouns, what, action in groups:
        found = list(
            CashierTransaction.objects.filter(query).values("currency").annotate(n=Count("pk"), total=Sum("amount"))
        )
        count = sum(int(r["n"]) for r in found)
        if not count:
            continue
        total = f" ({_totals((r['currency'], int(r['total'])) for r in found)})" if money else ""
        out.append(Alert(level, kind, f"{_count_text(count, *nouns)}{total} {what}.", url, action))
    return out


def _amount(value: object) -> TypeGuard[int]:
    """A limit the dashboard can weigh: a positive integer (a forged entry is left out)."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


@dataclass(frozen=True)
class LimitUse:
    player_id: int
    username: str
    currency: str
    kind: str  # deposit_day ... loss_month, or session
    used: int  # minor units (minutes for a session)
    limit: int

    @property
    def percent(self) -> int:
        return math.floor(100 * self.used / self.limit) if self.limit else 100


def limits_in_use(*, now: datetime, share_percent: float, players: int) -> list[LimitUse]:
    """The limits (deposit, loss, session time) of which players have used at
    least ``share_percent`` at ``now``, the most used first; at most ``players``
    players with limits are looked at, the most recently active first. Three reads."""
    rows = list(
        ResponsibleGaming.objects.exclude(limits={}, session_limit_minutes=None, session_limit_pending=None)
        .order_by("-last_wager_at", "-updated_at")
        .values("user_id", "user__username", "limits", "session_limit_minutes", "session_limit_pending",
                "session_limit_pending_from", "session_started_at", "last_wager_at")[:players]
    )  # fmt: skip
    limits: dict[tuple[int, str], dict[str, int]] = {}
    for row in rows:
        for currency in row["limits"] or {}:
            found = {kind: limit for kind in (*DEPOSIT_KINDS, *LOSS_KINDS)
                     if _amount(limit := effective_limit(limits_in(row, currency).get(kind), now))}  # fmt: skip
            if found:
                limits[(int(row["user_id"]), currency)] = found
    used: dict[tuple[int, str], dict[str, int]] = {pair: {} for pair in limits}
    spans = list(WINDOWS.items())
    for pair, losses in net_losses_many(pairs=limits, since=[now - span for _, span in spans]).items():
        used[pair].update({f"loss_{window}": lost for (window, _), lost in zip(spans, losses, strict=True)})
    deposits = (
        CashierTransaction.objects.filter(kind=CashierKind.DEPOSIT, player_id__in={p for p, _ in limits},
                                          created_at__gt=now - max(WINDOWS.values()))
        .exclude(state=CashierState.REJECTED)
        .values("player_id", "currency")
        .annotate(**{f"deposit_{w}": Sum("amount", filter=Q(created_at__gt=now - span)) for w, span in spans})
    )  # fmt: skip
    for deposited in deposits:
        pair = (int(deposited["player_id"]), str(deposited["currency"]))
        if pair in used:
            used[pair].update({kind: int(deposited[kind] or 0) for kind in DEPOSIT_KINDS})  # type: ignore[literal-required]
    names = {int(r["user_id"]): str(r["user__username"]) for r in rows}
    out = [
        LimitUse(player, names[player], currency, kind, used[(player, currency)].get(kind, 0), limit)
        for (player, currency), found in limits.items()
        for kind, limit in found.items()
    ]
    for row in rows:
        minutes, started = session_limit(row, now), session_of(row, now)
        if minutes and started is not None:
            out.append(LimitUse(int(row["user_id"]), str(row["user__username"]), "", "session",
                                int((now - started).total_seconds() // 60), minutes))  # fmt: skip
    return sorted((u for u in out if u.limit and 100 * u.used >= share_percent * u.limit),
                  key=lambda u: (-u.used / u.limit, u.username, u.kind))  # fmt: skip


_KIND_WORDS = {**{f"deposit_{w}": f"{w}ly deposit" for w in WINDOWS}, **{f"loss_{w}": f"{w}ly loss" for w in WINDOWS},
               "session": "session time"}  # fmt: skip
_KIND_WORDS.update({"deposit_day": "daily deposit", "loss_day": "daily loss"})


def limit_alerts(*, now: datetime, money: bool) -> list[Alert]:
    """Players at or past ``CASINO_DASHBOARD_RG_SHARE_PERCENT`` of a limit."""
    out = []
    for use in limits_in_use(now=now, share_percent=settings.CASINO_DASHBOARD_RG_SHARE_PERCENT,
                             players=settings.CASINO_DASHBOARD_RG_PLAYERS):  # fmt: skip
        if use.kind == "session":
            amounts = f" ({use.used} of {use.limit} min)"
        else:
            amounts = (f" ({display_money(use.used, use.currency)} of {display_money(use.limit, use.currency)})"
                       if money else f" ({use.currency})")  # fmt: skip
        out.append(Alert(WARNING, "near_limit", f"Player {use.username} has used {use.percent} % of their "
                         f"{_KIND_WORDS[use.kind]} limit{amounts}.",
                         reverse("admin:casino_responsiblegaming_change", args=[use.player_id]),
                         "See their limits"))  # fmt: skip
    return out


# --- money -----------------------------------------------------------------------------------------


def today_figures(*, day: date) -> tuple[list[MoneyLine], str]:
    """``day``'s handle, payouts, hold and hold % per currency (the house-days
    report's rows: day, currency, handle, payouts, hold, hold_pct) and the rake of
    the poker hands that ended that day; a note instead when the report cannot be
    read here (e.g. it needs PostgreSQL)."""
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    try:
        with transaction.atomic():
            rows = house_days(start=day, days=1).rows
    except (DomainError, DatabaseError) as exc:
        log.warning("dashboard: today's house figures could not be read", exc_info=True)
        return [], f"Today's house figures could not be read here ({getattr(exc, 'code', type(exc).__name__)})."
    rake = dict(
        PokerHand.objects.filter(ended_at__gte=start, ended_at__lt=start + timedelta(days=1))
        .exclude(currency=CHIPS)
        .values("currency")
        .annotate(total=Sum("rake"))
        .values_list("currency", "total")
    )
    lines = []
    for currency in sorted({str(r["currency"]) for r in rows} | set(rake)):
        row = next((r for r in rows if r["currency"] == currency), None)
        handle, payouts, hold = (int(row[k]) for k in ("handle", "payouts", "hold")) if row else (0, 0, 0)
        pct = str(row["hold_pct"]) if row and row["hold_pct"] not in ("", None) else ""
        lines.append(MoneyLine(
            currency=currency, handle=display_money(handle, currency), payouts=display_money(payouts, currency),
            hold=display_money(hold, currency), hold_pct=f"{pct} %" if pct else "n/a",
            rake=display_money(int(rake.get(currency) or 0), currency), negative_hold=hold < 0,
        ))  # fmt: skip
    return lines, ""
