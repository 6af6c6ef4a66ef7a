"""Regulator reports from the ledger (docs/compliance.md, "Reports").

Every report has the header regulators expect: title, period, generated at,
filters, software version; an empty report says "No Activity". Rendered as
JSON (``as_json``) or CSV (``as_csv``, header lines then the table).
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Case, Count, F, Max, OuterRef, Q, QuerySet, Subquery, Sum, When
from django.db.models.functions import TruncDate

from casino.errors import DomainError
from ledger.currencies import CHIPS
from ledger.models import Account, Event, Hold, StatementLine, Transfer
from ledger.services.events import json_value, now, timestamp

NO_ACTIVITY = "No Activity"


class UnknownReport(DomainError, code="unknown_report", http_status=404):
    """No report of that name."""


@dataclass
class Report:
    title: str
    start: datetime
    end: datetime
    filters: dict[str, Any]
    columns: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    generated_at: datetime = field(default_factory=now)

    def header(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "period": {"from": timestamp(self.start), "to": timestamp(self.end)},
            "generated_at": timestamp(self.generated_at),
            "filters": self.filters,
            "software_version": settings.CASINO_VERSION,
        }

    def as_json(self) -> dict[str, Any]:
        body = self.header()
        body["columns"] = self.columns
        body["rows"] = self.rows
        if not self.rows:
            body["status"] = NO_ACTIVITY
        return body

    def as_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\r\n")
        head = self.header()
        writer.writerow(["Title", head["title"]])
        writer.writerow(["Period", head["period"]["from"], head["period"]["to"]])
        writer.writerow(["Generated at", head["generated_at"]])
        writer.writerow(["Filters", *(f"{k}={v}" for k, v in sorted(self.filters.items()) if v is not None)])
        writer.writerow(["Software version", head["software_version"]])
        writer.writerow([])
        if not self.rows:
            writer.writerow([NO_ACTIVITY])
            return out.getvalue()
        writer.writerow(self.columns)
        for row in self.rows:
            writer.writerow([row[c] for c in self.columns])
        return out.getvalue()


def day_bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time.min, tzinfo=UTC)
    return start, start + timedelta(days=1)


@dataclass(frozen=True)
class Accounts:
    """A set of ledger accounts by kind (and owner, owner prefix, currency, ids),
    as a filter on either side of a transfer or statement line: the ORM's joins,
    so every report runs the same on PostgreSQL and SQLite, with no list of ids
    as parameters (``docs/compliance.md``, "Both databases")."""

    kind: str | None = None
    owner: str | None = None
    owner_prefix: str | None = None
    currency: str | None = None
    kinds: tuple[str, ...] = ()

    def on(self, side: str = "") -> Q:
        """This set as a filter on the relation ``side`` (``debit_account``,
        ``credit_account``, ``account``), or on ``Account`` itself (no side)."""
        prefix = f"{side}__" if side else ""
        lookups: dict[str, Any] = {
            f"{prefix}kind": self.kind, f"{prefix}owner": self.owner,
            f"{prefix}owner__startswith": self.owner_prefix, f"{prefix}currency": self.currency,
        }  # fmt: skip
        if self.kinds:
            lookups[f"{prefix}kind__in"] = list(self.kinds)
        return Q(**{lookup: value for lookup, value in lookups.items() if value is not None})

    def either_side(self) -> Q:
        return self.on("debit_account") | self.on("credit_account")


def _accounts(kind: str, owner: str | None, currency: str | None) -> dict[int, tuple[str, str]]:
    """The accounts of ``kind`` (with that owner and currency when given): id -> (owner, currency)."""
    rows = Account.objects.filter(Accounts(kind=kind, owner=owner, currency=currency).on())
    return {int(pk): (own, cur) for pk, own, cur in rows.values_list("id", "owner", "currency")}


def _balances_before(accounts: Accounts, moment: datetime) -> dict[int, int]:
    """Each account of the set with transfers before ``moment``: its balance then (credits - debits)."""
    balances: dict[int, int] = defaultdict(int)
    before = Transfer.objects.filter(created_at__lt=moment)
    for side, sign in (("credit_account", 1), ("debit_account", -1)):
        for account, total in (
            before.filter(accounts.on(side)).values_list(f"{side}_id").annotate(total=Sum("amount")).order_by()
        ):
            balances[int(account)] += sign * int(total)
    return dict(balances)


def _projected_before(accounts: Accounts, moment: datetime) -> dict[int, int]:
    """The ledger's statement projection: each account's last running balance before ``moment``."""
    last = (
        StatementLine.objects.filter(accounts.on("account"), created_at__lt=moment)
        .values("account_id")
        .annotate(last=Max("id"))
        .values("last")
    )
    lines = StatementLine.objects.filter(id__in=Subquery(last)).values_list("account_id", "balance_after")
    return {int(account): int(balance) for account, balance in lines}


def _movements(accounts: Accounts, start: datetime, end: datetime) -> list[tuple[Any, ...]]:
    """The transfers on the set's accounts in ``[start, end)``: debit and credit
    account ids, amount, kind, both accounts' kinds, and the kind of the
    destination of the hold a transfer belongs to (None outside holds)."""
    destination = Hold.objects.filter(id=OuterRef("hold_id")).values("destination__kind")[:1]
    return list(
        Transfer.objects.filter(accounts.either_side(), created_at__gte=start, created_at__lt=end)
        .annotate(hold_destination_kind=Subquery(destination))
        .order_by("id")
        .values_list(
            "debit_account_id",
            "credit_account_id",
            "amount",
            "kind",
            "debit_account__kind",
            "credit_account__kind",
            "hold_destination_kind",
        )
    )


def player_account_summary(*, day: date, player: str | None = None, currency: str | None = None) -> Report:
    """Daily player account summary: per wallet, opening balance, deposits,
    withdrawals, stakes, returns, adjustments, closing balance, and whether it
    reconciles with the ledger's own statement projection; then the player's
    suspense account (deposits paid by the provider that could not be credited,
    ``refund_due``): received into it that day, refunded from it that day, and
    its balance at the end of the day (still owed back to the provider). A
    player with only suspense movements that day has a row too."""
    start, end = day_bounds(day)
    owner = None if player is None else f"player:{player}"
    wallet_set = Accounts(kind="wallet", owner=owner, currency=currency)
    suspense_set = Accounts(kind="suspense", owner=owner, currency=currency)
    wallets = _accounts("wallet", owner, currency)
    sums: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(_FLOWS + _INTERNAL, 0))
    for debit, credit, amount, kind, debit_kind, credit_kind, hold_dest_kind in _movements(wallet_set, start, end):
        for account, sign, other_kind in ((debit, -1, credit_kind), (credit, 1, debit_kind)):
            if account in wallets:
                sums[account][_classify(sign, kind, other_kind, hold_dest_kind)] += amount
    wallet_of = {key: account for account, key in wallets.items()}
    suspense = {a: wallet_of[key] for a, key in _accounts("suspense", owner, currency).items() if key in wallet_of}
    suspense_flows: dict[int, dict[str, int]] = defaultdict(lambda: {"refund_due": 0, "refunded": 0})
    for debit, credit, amount, *_ in _movements(suspense_set, start, end):
        if credit in suspense:
            suspense_flows[suspense[credit]]["refund_due"] += amount
        if debit in suspense:
            suspense_flows[suspense[debit]]["refunded"] += amount
    suspense_closing = {
        suspense[a]: balance for a, balance in _balances_before(suspense_set, end).items() if a in suspense
    }
    opening = _balances_before(wallet_set, start)
    closing = _balances_before(wallet_set, end)
    projected = _projected_before(wallet_set, end)
    rows = []
    for account in sorted(set(sums) | set(suspense_flows), key=lambda a: (wallets[a][0], wallets[a][1])):
        flow = sums[account]
        flow["withdrawals"] -= flow.pop("withdrawals_reversed")
        expected = opening.get(account, 0) + flow["deposits"] - flow["withdrawals"] - flow["stakes"]
        expected += flow["returns"] + flow["adjustments"]
        close = closing.get(account, 0)
        rows.append(
            {
                "player": wallets[account][0].removeprefix("player:"),
                "currency": wallets[account][1],
                "opening_balance": opening.get(account, 0),
                **flow,
                "closing_balance": close,
                **suspense_flows[account],
                "suspense_balance": suspense_closing.get(account, 0),
                "reconciled": expected == close == projected.get(account, 0),
            }
        )
    return Report(
        title="Daily player account summary",
        start=start,
        end=end,
        filters={"player": player, "currency": currency},
        columns=["player", "currency", "opening_balance", *_FLOWS, "closing_balance", *_SUSPENSE, "reconciled"],
        rows=rows,
    )


_FLOWS = ("deposits", "withdrawals", "stakes", "returns", "adjustments")
_SUSPENSE = ("refund_due", "refunded", "suspense_balance")
# A rejected withdrawal's void lands here and is netted into withdrawals.
_INTERNAL = ("withdrawals_reversed",)
_GAME_KINDS = frozenset({"house", "pool", "poker_seat", "poker_pot", "rake", "tournament_pool"})


def _classify(sign: int, kind: str, other_kind: str, hold_dest_kind: str | None) -> str:
    """Which column a wallet's movement belongs to (amounts are shown positive;
    a reversal is netted into its column with the opposite sign)."""
    if other_kind == "cashier":
        return "deposits" if sign > 0 else "withdrawals"
    if other_kind == "held":  # a hold, its release or its void
        if hold_dest_kind == "cashier":
            return "withdrawals" if sign < 0 else "withdrawals_reversed"
        return "stakes" if sign < 0 else "returns"
    if other_kind in _GAME_KINDS:
        return "stakes" if sign < 0 else "returns"
    return "adjustments"


def progressive_pool_report(*, start: datetime, end: datetime, currency: str | None = None) -> Report:
    """Per progressive pool account: opening balance, contributions (the share of
    stakes paid in), seeding (the house's seed and its reset after a hit: never a
    contribution), payouts (pool hits), closing balance."""
    pools = _accounts("pool", None, currency)
    pool_set = Accounts(kind="pool", currency=currency)
    flows: dict[int, dict[str, int]] = defaultdict(lambda: {"contributions": 0, "seeding": 0, "payouts": 0})
    for debit, credit, amount, kind, *_ in _movements(pool_set, start, end):
        if credit in pools:
            flows[credit]["seeding" if kind in SEEDING_KINDS else "contributions"] += amount
        if debit in pools:
            flows[debit]["payouts"] += amount
    opening = _balances_before(pool_set, start)
    closing = _balances_before(pool_set, end)
    rows = [
        {
            "pool": pools[a][0],
            "currency": pools[a][1],
            "opening_balance": opening.get(a, 0),
            **flows[a],
            "closing_balance": closing.get(a, 0),
        }
        for a in sorted(flows, key=lambda a: pools[a])
    ]
    return Report(
        title="Progressive pool report",
        start=start,
        end=end,
        filters={"currency": currency},
        columns=["pool", "currency", "opening_balance", "contributions", "seeding", "payouts", "closing_balance"],
        rows=rows,
    )


#: The transfer kinds that fund a progressive pool from the house: its seed when
#: empty (``pool_seed``) and its reset after a hit (``pool_reset``).
SEEDING_KINDS = frozenset({"pool_seed", "pool_reset"})
#: The lines of the house's money (docs/compliance.md, "Handle, payouts and
#: hold"): every transfer on a house, progressive pool or rake account is on
#: exactly one of them (``house_line``).
HOUSE_LINES = (
    "handle", "payouts", "progressive_seeding", "progressive_contributions", "pool_hits", "rake", "tournament_fees",
    "prize_pool_overlay", "other",
)  # fmt: skip
_PLAYER_SIDE = frozenset({"wallet", "held"})
_HOUSE_SIDE = ("house", "pool", "rake")


def house_line(kind: str, debit_kind: str, credit_kind: str) -> tuple[str, int]:
    """The line of ``HOUSE_LINES`` a transfer on a house, pool or rake account is
    on, and the sign it is counted with there, from its ledger ``kind`` and its two
    accounts' kinds:

    - a player's stake into a house (``post`` of a hold, or from the wallet): handle;
    - a house paying a player: payouts (winnings paid; nothing else is a payout);
    - into a progressive pool: seeding (``pool_seed``, ``pool_reset``) or
      contributions (the share of stakes, from the house or a player);
    - a pool paying a player: pool hits;
    - a house into a tournament's prize pool (the guarantee's overlay): prize pool overlay;
    - into or out of a rake account: tournament fees (``tourney_*``: fees in,
      refunds out, negative) or rake (a poker pot's rake);
    - anything else a house account takes (+) or gives (-): other.
    """
    if credit_kind == "house" and debit_kind in _PLAYER_SIDE:
        return "handle", 1
    if debit_kind == "house" and credit_kind in _PLAYER_SIDE:
        return "payouts", 1
    if credit_kind == "pool":
        return ("progressive_seeding" if kind in SEEDING_KINDS else "progressive_contributions"), 1
    if debit_kind == "pool" and credit_kind in _PLAYER_SIDE:
        return "pool_hits", 1
    if debit_kind == "house" and credit_kind == "tournament_pool":
        return "prize_pool_overlay", 1
    if "rake" in (credit_kind, debit_kind):
        return ("tournament_fees" if kind.startswith("tourney_") else "rake"), 1 if credit_kind == "rake" else -1
    return "other", 1 if credit_kind == "house" else -1


def _house_transfers(start: datetime, end: datetime, currency: str | None) -> QuerySet[Transfer]:
    """Money transfers (never tournament chips) in ``[start, end)`` on a house, pool or rake account."""
    transfers = Transfer.objects.filter(
        Accounts(kinds=_HOUSE_SIDE).either_side(), created_at__gte=start, created_at__lt=end
    ).exclude(currency=CHIPS)
    return transfers if currency is None else transfers.filter(currency=currency)


def _with_hold(lines: dict[str, int]) -> dict[str, Any]:
    """``lines`` with hold = handle - payouts and hold % of handle ("" with no handle), in report order."""
    hold = lines["handle"] - lines["payouts"]
    pct = f"{100 * hold / lines['handle']:.2f}" if lines["handle"] else ""
    return {"handle": lines["handle"], "payouts": lines["payouts"], "hold": hold, "hold_pct": pct,
            **{line: lines[line] for line in HOUSE_LINES[2:]}}  # fmt: skip


HOUSE_DAY_COLUMNS = ["day", "currency", "handle", "payouts", "hold", "hold_pct", *HOUSE_LINES[2:]]


def house_days(*, start: date, days: int, currency: str | None = None) -> Report:
    """Per UTC day and currency with money on the house's lines (``house_line``):
    handle = players' stakes into the houses, payouts = winnings the houses paid
    players, hold = handle - payouts, hold % of handle; then each other line on
    its own: progressive seeding, contributions and pool hits, poker rake,
    tournament fees (net of refunds), the houses' overlay into prize pools, other.
    Days without money have no row (the reports page draws them as zero)."""
    first, _ = day_bounds(start)
    last = first + timedelta(days=days)
    rows: dict[tuple[date, str], dict[str, int]] = defaultdict(lambda: dict.fromkeys(HOUSE_LINES, 0))
    grouped = (
        _house_transfers(first, last, currency)
        .annotate(day=TruncDate("created_at", tzinfo=UTC))
        .values("day", "currency", "kind", "debit_account__kind", "credit_account__kind")
        .annotate(total=Sum("amount"))
        .order_by()
    )
    for g in grouped:
        line, sign = house_line(g["kind"], g["debit_account__kind"], g["credit_account__kind"])
        rows[(g["day"], g["currency"])][line] += sign * int(g["total"])
    out = [{"day": day.isoformat(), "currency": cur, **_with_hold(lines)} for (day, cur), lines in sorted(rows.items())]
    return Report(
        title="House handle and hold per day",
        start=first,
        end=last,
        filters={"currency": currency},
        columns=list(HOUSE_DAY_COLUMNS),
        rows=out,
    )


_TABLE_OWNER = "table:"
PERFORMANCE_COLUMNS = ["table", "game", "currency", "rounds", "handle", "payouts", "hold", "hold_pct",
                       *HOUSE_LINES[2:], "voids"]  # fmt: skip


def table_performance(*, start: datetime, end: datetime, currency: str | None = None) -> Report:
    """Per table and game. House-banked tables: rounds opened in the period and
    how many were voided (``HouseRound``), and the money the ledger moved in the
    period on the table's house and progressive pool accounts, on the house's
    lines (``house_line``: handle, payouts, hold, hold %, seeding, contributions,
    pool hits ...). Voided rounds' stakes are never posted to the house (their
    holds are voided), so they are in neither handle nor payouts. Poker tables
    are rows too (``_poker_performance``): rounds are hands, the house's hold is
    the rake."""
    from games.house.models import HouseRound, HouseTable

    money: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: dict.fromkeys(HOUSE_LINES, 0))
    table_side = Accounts(kinds=("house", "pool"), owner_prefix=_TABLE_OWNER)
    grouped = (
        _house_transfers(start, end, currency)
        .filter(table_side.either_side())
        .annotate(
            owner=Case(
                When(table_side.on("credit_account"), then=F("credit_account__owner")),
                default=F("debit_account__owner"),
            )
        )
        .values("owner", "currency", "kind", "debit_account__kind", "credit_account__kind")
        .annotate(total=Sum("amount"))
        .order_by()
    )
    for g in grouped:
        line, sign = house_line(g["kind"], g["debit_account__kind"], g["credit_account__kind"])
        money[(g["owner"].split(":")[1], g["currency"])][line] += sign * int(g["total"])
    rounds = HouseRound.objects.filter(opened_at__gte=start, opened_at__lt=end)
    if currency is not None:
        rounds = rounds.filter(currency=currency)
    counts = {
        (str(g["table_id"]), g["currency"]): (g["rounds"], g["voids"])
        for g in rounds.values("table_id", "currency").annotate(rounds=Count("id"),
                                                                voids=Count("id", filter=Q(status="voided")))
    }  # fmt: skip
    tables = {str(t.pk): t for t in HouseTable.objects.filter(pk__in=[int(k) for k, _ in {*money, *counts}
                                                                       if k.isdigit()])}  # fmt: skip
    rows = []
    for key in sorted({*money, *counts}):
        table = tables.get(key[0])
        played, voids = counts.get(key, (0, 0))
        rows.append(
            _performance_row(table.code if table else f"{_TABLE_OWNER}{key[0]}", table.game if table else "",
                             key[1], played, money[key], voids)
        )  # fmt: skip
    rows += _poker_performance(start=start, end=end, currency=currency)
    rows.sort(key=lambda row: (row["table"], row["game"], row["currency"]))
    return Report(
        title="Table and game performance",
        start=start,
        end=end,
        filters={"currency": currency},
        columns=list(PERFORMANCE_COLUMNS),
        rows=rows,
    )


def _performance_row(
    table: str, game: str, currency: str, rounds: int, lines: dict[str, int], voids: int
) -> dict[str, Any]:
    return {"table": table, "game": game, "currency": currency, "rounds": rounds, **_with_hold(lines), "voids": voids}


def _rake(owner: str, currency: str, start: datetime, end: datetime) -> int:
    """What the ledger credited to ``owner``'s rake account in the period."""
    credited = Transfer.objects.filter(
        Accounts(kind="rake", owner=owner, currency=currency).on("credit_account"),
        created_at__gte=start,
        created_at__lt=end,
    ).aggregate(total=Sum("amount"))["total"]
    return int(credited or 0)


def _poker_performance(*, start: datetime, end: datetime, currency: str | None) -> list[dict[str, Any]]:
    """Poker tables, hands started in the period: handle is every chip put into
    the finished hands' pots (uncalled bets included), payouts what went back to
    the players, so the house's hold is the rake taken; voided hands refund
    everything and count only in ``voids``. ``rake`` is the ledger's figure."""
    from games.poker.models import PokerHand

    # Tournament hands are played for tournament chips (XXX), never money: not here
    # (the ``tournaments`` report counts them).
    hands = PokerHand.objects.filter(started_at__gte=start, started_at__lt=end).exclude(currency=CHIPS)
    if currency is not None:
        hands = hands.filter(currency=currency)
    grouped = (
        hands.values("table_id", "table__code", "table__variant", "currency")
        .annotate(
            hands=Count("id"),
            voids=Count("id", filter=Q(status="voided")),
            handle=Sum("pot", filter=Q(status="complete")),
            kept=Sum("rake", filter=Q(status="complete")),
        )
        .order_by("table__code", "currency")
    )
    rows = []
    for g in grouped:
        handle = int(g["handle"] or 0)
        lines = dict.fromkeys(HOUSE_LINES, 0) | {
            "handle": handle,
            "payouts": handle - int(g["kept"] or 0),
            "rake": _rake(f"poker-table:{g['table_id']}", g["currency"], start, end),
        }
        rows.append(
            _performance_row(g["table__code"], f"holdem_{g['table__variant']}", g["currency"], g["hands"], lines,
                             g["voids"])
        )  # fmt: skip
    return rows


def voided_rounds(*, start: datetime, end: datetime, currency: str | None = None) -> Report:
    """Every round voided in the period: game number, table, when, who and why
    (from its ``house_round.voided`` event), players and stakes refunded."""
    from django.db.models import Count, Sum

    from games.house.models import HouseRound
    from ledger.models import Event

    rounds = HouseRound.objects.filter(status="voided", closed_at__gte=start, closed_at__lt=end)
    if currency is not None:
        rounds = rounds.filter(currency=currency)
    rows = []
    for r in rounds.select_related("table").order_by("closed_at", "id"):
        voided = Event.objects.filter(stream_id=f"round-{r.round_id}", type="house_round.voided").first()
        staked = r.players.filter(staked__gt=0).aggregate(total=Sum("staked"), players=Count("id"))
        data = voided.data if voided is not None else {}
        rows.append(
            {
                "game_number": r.game_number, "table": r.table.code, "game": r.game, "currency": r.currency,
                "opened_at": timestamp(r.opened_at), "voided_at": timestamp(r.closed_at) if r.closed_at else "",
                "actor": data.get("actor", ""), "reason": data.get("reason", ""),
                "automatic": bool(data.get("automatic", False)), "players": staked["players"],
                "refunded": int(staked["total"] or 0),
                "event": voided.pk if voided is not None else "",
            }
        )  # fmt: skip
    rows += _poker_voids(start=start, end=end, currency=currency)
    rows.sort(key=lambda row: (row["voided_at"], row["game_number"]))
    return Report(
        title="Voided rounds",
        start=start,
        end=end,
        filters={"currency": currency},
        columns=[
            "game_number",
            "table",
            "game",
            "currency",
            "opened_at",
            "voided_at",
            "actor",
            "reason",
            "automatic",
            "players",
            "refunded",
            "event",
        ],
        rows=rows,
    )


def _poker_voids(*, start: datetime, end: datetime, currency: str | None) -> list[dict[str, Any]]:
    """Poker hands voided in the period, from their ``poker_hand.voided`` events."""
    from games.poker import event_types as poker_events
    from games.poker.models import PokerHand
    from ledger.models import Event

    hands = PokerHand.objects.filter(status="voided", ended_at__gte=start, ended_at__lt=end).exclude(currency=CHIPS)
    if currency is not None:
        hands = hands.filter(currency=currency)
    rows = []
    for hand in hands.select_related("table").order_by("ended_at", "id"):
        stream = poker_events.hand_stream(hand.hand_id)
        voided = Event.objects.filter(stream_id=stream, type=poker_events.VOIDED).first()
        data = voided.data if voided is not None else {}
        refunds = [r for r in data.get("refunds", []) if r.get("amount")]
        rows.append(
            {
                "game_number": hand.hand_id, "table": hand.table.code, "game": f"holdem_{hand.table.variant}",
                "currency": hand.currency, "opened_at": timestamp(hand.started_at),
                "voided_at": timestamp(hand.ended_at) if hand.ended_at else "", "actor": data.get("actor", ""),
                "reason": data.get("reason", ""), "automatic": bool(data.get("automatic", False)),
                "players": len(refunds), "refunded": sum(int(r["amount"]) for r in refunds),
                "event": voided.pk if voided is not None else "",
            }
        )  # fmt: skip
    return rows


_TOURNAMENT_OWNER = "poker-tournament:"
_TOURNAMENT_COLUMNS = [
    "tournament", "name", "kind", "currency", "state", "registrations", "unregistrations", "buy_ins",
    "buy_ins_refunded", "overlay", "payouts", "payouts_by_place", "pool_opening", "pool_closing", "fees",
    "fees_refunded", "net_fees", "cancelled_at", "cancel_policy", "cancel_refunded", "cancel_paid", "hands",
    "voided_hands", "reconciled",
]  # fmt: skip


def tournaments(*, start: datetime, end: datetime, currency: str | None = None) -> Report:
    """Per poker tournament with money movements (or a cancellation) in the period,
    from the ledger's transfers on the tournament's money accounts (owner
    ``poker-tournament:{id}``): its prize pool (``tournament_pool``: buy-ins in,
    refunds, the house's overlay in, prizes out), its fees (``rake``: fees in,
    refunds out) and the tournament event each transfer was caused by
    (registered, unregistered, cancelled, paid). Chips (XXX) are never summed:
    ``hands`` and ``voided_hands`` are counts of the tournament's hands started
    in the period. ``reconciled``: buy-ins - refunds + overlay - payouts = the
    pool's change over the period."""
    from games.poker import event_types as et
    from games.poker.models import PokerHand
    from games.poker.tournament.models import Tournament

    money_accounts = Accounts(kinds=("tournament_pool", "rake"), owner_prefix=_TOURNAMENT_OWNER, currency=currency)
    accounts: dict[int, tuple[str, int, str]] = {}
    for pk, kind, owner, cur in (
        Account.objects.filter(money_accounts.on())
        .exclude(currency=CHIPS)
        .values_list("id", "kind", "owner", "currency")
    ):
        accounts[int(pk)] = (kind, int(owner.removeprefix(_TOURNAMENT_OWNER)), cur)
    moves = list(
        Transfer.objects.filter(money_accounts.either_side(), created_at__gte=start, created_at__lt=end)
        .exclude(currency=CHIPS)
        .order_by("id")
        .values_list("debit_account_id", "credit_account_id", "amount", "kind", "event_id", "event__type")
    )
    marks = [
        (int(stream.removeprefix("poker-tournament-")), _json(data), recorded_at)
        for stream, data, recorded_at in Event.objects.filter(
            type__in=[et.TOURNAMENT_CANCELLED, et.TOURNAMENT_PAID], stream_id__startswith="poker-tournament-",
            recorded_at__gte=start, recorded_at__lt=end,
        ).order_by("id").values_list("stream_id", "data", "recorded_at")
    ]  # fmt: skip
    zero = ("registrations", "unregistrations", "buy_ins", "buy_ins_refunded", "overlay", "payouts", "fees",
            "fees_refunded", "cancel_refunded", "cancel_paid")  # fmt: skip
    rows: dict[int, dict[str, Any]] = defaultdict(lambda: dict.fromkeys(zero, 0))
    counted: set[tuple[int, int, str]] = set()
    for debit, credit, amount, kind, event_id, event_type in moves:
        for account, sign in ((debit, -1), (credit, 1)):
            if account not in accounts:
                continue
            account_kind, tid, _ = accounts[account]
            row = rows[tid]
            if account_kind == "tournament_pool":
                if sign > 0 and kind == "tourney_buy_in":
                    row["buy_ins"] += amount
                elif sign > 0 and kind == "tourney_overlay":
                    row["overlay"] += amount
                elif sign < 0 and kind == "tourney_refund":
                    row["buy_ins_refunded"] += amount
                elif sign < 0 and kind == "tourney_prize":
                    row["payouts"] += amount
            elif sign > 0 and kind == "tourney_fee":
                row["fees"] += amount
            elif sign < 0 and kind == "tourney_refund":
                row["fees_refunded"] += amount
            if event_type == et.TOURNAMENT_CANCELLED and sign < 0:
                row["cancel_refunded" if kind == "tourney_refund" else "cancel_paid"] += amount
            for counted_type, column in ((et.TOURNAMENT_REGISTERED, "registrations"),
                                         (et.TOURNAMENT_UNREGISTERED, "unregistrations")):  # fmt: skip
                if event_type == counted_type and (tid, event_id, column) not in counted:
                    counted.add((tid, event_id, column))
                    row[column] += 1
    by_place: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for tid, data, recorded_at in marks:
        row = rows[tid]
        if data.get("standings") is not None:
            for standing in data["standings"]:
                by_place[tid][int(standing["place"])] += int(standing["prize"])
        elif "policy" in data:
            row["cancelled_at"], row["cancel_policy"] = timestamp(recorded_at), data["policy"]
    known = {t.pk: t for t in Tournament.objects.filter(pk__in=list(rows))}
    if currency is not None:  # a cancellation without money (nobody registered) has no account to filter by
        rows = defaultdict(dict, {k: v for k, v in rows.items() if k in known and known[k].currency == currency})
    pools = {tid: a for a, (kind, tid, _) in accounts.items() if kind == "tournament_pool"}
    pool_set = Accounts(kind="tournament_pool", owner_prefix=_TOURNAMENT_OWNER, currency=currency)
    opening = _balances_before(pool_set, start)
    closing = _balances_before(pool_set, end)
    out = []
    for tid in sorted(rows):
        row, tournament = rows[tid], known.get(tid)
        pool = pools.get(tid)
        before, after = opening.get(pool, 0) if pool else 0, closing.get(pool, 0) if pool else 0
        hands = PokerHand.objects.filter(table__tournament_id=tid, started_at__gte=start, started_at__lt=end)
        row.update(
            tournament=tid, name=tournament.name if tournament else "", kind=tournament.kind if tournament else "",
            currency=tournament.currency if tournament else "", state=tournament.state if tournament else "",
            payouts_by_place=";".join(f"{place}={amount}" for place, amount in sorted(by_place[tid].items())),
            pool_opening=before, pool_closing=after, net_fees=row["fees"] - row["fees_refunded"],
            hands=hands.count(), voided_hands=hands.filter(status="voided").count(),
            reconciled=row["buy_ins"] - row["buy_ins_refunded"] + row["overlay"] - row["payouts"] == after - before,
        )  # fmt: skip
        row.setdefault("cancelled_at", "")
        row.setdefault("cancel_policy", "")
        out.append({column: row[column] for column in _TOURNAMENT_COLUMNS})
    return Report(
        title="Poker tournaments",
        start=start,
        end=end,
        filters={"currency": currency},
        columns=list(_TOURNAMENT_COLUMNS),
        rows=out,
    )


def _json(value: Any) -> dict[str, Any]:
    return dict(json_value(value) or {})


REPORTS: dict[str, Callable[..., Report]] = {
    "table-performance": table_performance,
    "voided-rounds": voided_rounds,
    "player-account-summary": player_account_summary,
    "progressive-pools": progressive_pool_report,
    "house-days": house_days,
    "tournaments": tournaments,
}
