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
from django.db import connection

from casino.errors import DomainError
from ledger.currencies import CHIPS
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


_TRANSFERS = """
SELECT t.debit_account_id, t.credit_account_id, t.amount, t.kind, da.kind, ca.kind, hd.kind
FROM ledger_transfer t
JOIN ledger_account da ON da.id = t.debit_account_id
JOIN ledger_account ca ON ca.id = t.credit_account_id
LEFT JOIN ledger_hold h ON h.id = t.hold_id
LEFT JOIN ledger_account hd ON hd.id = h.destination_id
WHERE t.created_at >= %s AND t.created_at < %s AND (t.debit_account_id = ANY(%s) OR t.credit_account_id = ANY(%s))
"""


def _accounts(kind: str, owner: str | None, currency: str | None) -> dict[int, tuple[str, str]]:
    sql = "SELECT id, owner, currency FROM ledger_account WHERE kind = %s"
    params: list[Any] = [kind]
    if owner is not None:
        sql += " AND owner = %s"
        params.append(owner)
    if currency is not None:
        sql += " AND currency = %s"
        params.append(currency)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {int(r[0]): (r[1], r[2]) for r in cursor.fetchall()}


def _per_account(ids: list[int], sql: str, params: list[Any]) -> dict[int, int]:
    """``sql``'s (account id, amount) rows as a dict; with no ``ids``, nothing (and no query)."""
    if not ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {int(r[0]): int(r[1]) for r in cursor.fetchall()}


def _balances_before(ids: list[int], moment: datetime) -> dict[int, int]:
    """Each account's balance from its transfers before ``moment`` (credits - debits)."""
    return _per_account(
        ids,
        "SELECT a, SUM(d) FROM (SELECT credit_account_id a, amount d FROM ledger_transfer "
        "WHERE created_at < %s AND credit_account_id = ANY(%s) UNION ALL SELECT debit_account_id, -amount "
        "FROM ledger_transfer WHERE created_at < %s AND debit_account_id = ANY(%s)) x GROUP BY a",
        [moment, ids, moment, ids],
    )


def _projected_before(ids: list[int], moment: datetime) -> dict[int, int]:
    """The ledger's statement projection: each account's last running balance before ``moment``."""
    return _per_account(
        ids,
        "SELECT DISTINCT ON (account_id) account_id, balance_after FROM ledger_statement_line "
        "WHERE account_id = ANY(%s) AND created_at < %s ORDER BY account_id, id DESC",
        [ids, moment],
    )


def _movements(ids: list[int], start: datetime, end: datetime) -> list[tuple[Any, ...]]:
    if not ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(_TRANSFERS, [start, end, ids, ids])
        return cursor.fetchall()


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
    wallets = _accounts("wallet", owner, currency)
    ids = list(wallets)
    sums: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(_FLOWS + _INTERNAL, 0))
    for debit, credit, amount, kind, debit_kind, credit_kind, hold_dest_kind in _movements(ids, start, end):
        for account, sign, other_kind in ((debit, -1, credit_kind), (credit, 1, debit_kind)):
            if account in wallets:
                sums[account][_classify(sign, kind, other_kind, hold_dest_kind)] += amount
    wallet_of = {key: account for account, key in wallets.items()}
    suspense = {a: wallet_of[key] for a, key in _accounts("suspense", owner, currency).items() if key in wallet_of}
    suspense_flows: dict[int, dict[str, int]] = defaultdict(lambda: {"refund_due": 0, "refunded": 0})
    for debit, credit, amount, *_ in _movements(list(suspense), start, end):
        if credit in suspense:
            suspense_flows[suspense[credit]]["refund_due"] += amount
        if debit in suspense:
            suspense_flows[suspense[debit]]["refunded"] += amount
    suspense_closing = {suspense[a]: balance for a, balance in _balances_before(list(suspense), end).items()}
    opening = _balances_before(ids, start)
    closing = _balances_before(ids, end)
    projected = _projected_before(ids, end)
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
    """Per progressive pool account: opening balance, contributions, payouts, closing balance."""
    pools = _accounts("pool", None, currency)
    ids = list(pools)
    flows: dict[int, dict[str, int]] = defaultdict(lambda: {"contributions": 0, "payouts": 0})
    for debit, credit, amount, *_ in _movements(ids, start, end):
        if credit in pools:
            flows[credit]["contributions"] += amount
        if debit in pools:
            flows[debit]["payouts"] += amount
    opening = _balances_before(ids, start)
    closing = _balances_before(ids, end)
    rows = [
        {
            "pool": pools[a][0],
            "currency": pools[a][1],
            "opening_balance": opening.get(a, 0),
            "contributions": flows[a]["contributions"],
            "payouts": flows[a]["payouts"],
            "closing_balance": closing.get(a, 0),
        }
        for a in sorted(flows, key=lambda a: pools[a])
    ]
    return Report(
        title="Progressive pool report",
        start=start,
        end=end,
        filters={"currency": currency},
        columns=["pool", "currency", "opening_balance", "contributions", "payouts", "closing_balance"],
        rows=rows,
    )


def house_days(*, start: date, days: int, currency: str | None = None) -> Report:
    """Handle and hold per day over every table's house account: handle = stakes
    the house took (posted holds and direct stakes), payouts = what it paid back,
    hold = handle - payouts, hold % of handle."""
    first, _ = day_bounds(start)
    last = first + timedelta(days=days)
    houses = _accounts("house", None, currency)
    ids = list(houses)
    rows: dict[tuple[date, str], dict[str, int]] = defaultdict(lambda: {"handle": 0, "payouts": 0})
    if ids:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT (created_at AT TIME ZONE 'UTC')::date, currency, "
                "SUM(CASE WHEN credit_account_id = ANY(%s) THEN amount ELSE 0 END), "
                "SUM(CASE WHEN debit_account_id = ANY(%s) THEN amount ELSE 0 END) FROM ledger_transfer "
                "WHERE created_at >= %s AND created_at < %s AND (credit_account_id = ANY(%s) OR debit_account_id = "
                "ANY(%s)) GROUP BY 1, 2 ORDER BY 1, 2",
                [ids, ids, first, last, ids, ids],
            )
            for day, cur, handle, payouts in cursor.fetchall():
                rows[(day, cur)] = {"handle": int(handle), "payouts": int(payouts)}
    out = []
    for (day, cur), value in sorted(rows.items()):
        hold = value["handle"] - value["payouts"]
        pct = f"{100 * hold / value['handle']:.2f}" if value["handle"] else ""
        out.append({"day": day.isoformat(), "currency": cur, **value, "hold": hold, "hold_pct": pct})
    return Report(
        title="House handle and hold per day",
        start=first,
        end=last,
        filters={"currency": currency},
        columns=["day", "currency", "handle", "payouts", "hold", "hold_pct"],
        rows=out,
    )


def table_performance(*, start: datetime, end: datetime, currency: str | None = None) -> Report:
    """Per table and game, rounds opened in the period: rounds, handle (staked),
    payouts (returned), hold and hold %, voided rounds, rake (from the ledger's
    rake accounts of the table). Voided rounds' stakes are refunded, so they
    count in ``voids`` but not in handle or payouts. Poker tables are rows too
    (``_poker_performance``): rounds are hands, the house's hold is the rake."""
    from django.db.models import Count, Q, Sum

    from games.house.models import HouseRound

    rounds = HouseRound.objects.filter(opened_at__gte=start, opened_at__lt=end)
    if currency is not None:
        rounds = rounds.filter(currency=currency)
    grouped = (
        rounds.values("table_id", "table__code", "game", "currency")
        .annotate(
            rounds=Count("id"),
            voids=Count("id", filter=Q(status="voided")),
            handle=Sum("staked", filter=~Q(status="voided")),
            payouts=Sum("returned", filter=~Q(status="voided")),
        )
        .order_by("table__code", "game", "currency")
    )
    rows = []
    for g in grouped:
        handle, payouts = int(g["handle"] or 0), int(g["payouts"] or 0)
        rows.append(
            _performance_row(g["table__code"], g["game"], g["currency"], g["rounds"], handle, payouts, g["voids"],
                             _rake(f"table:{g['table_id']}", g["currency"], start, end))
        )  # fmt: skip
    rows += _poker_performance(start=start, end=end, currency=currency)
    rows.sort(key=lambda row: (row["table"], row["game"], row["currency"]))
    return Report(
        title="Table and game performance",
        start=start,
        end=end,
        filters={"currency": currency},
        columns=["table", "game", "currency", "rounds", "handle", "payouts", "hold", "hold_pct", "voids", "rake"],
        rows=rows,
    )


def _performance_row(
    table: str, game: str, currency: str, rounds: int, handle: int, payouts: int, voids: int, rake: int
) -> dict[str, Any]:
    hold = handle - payouts
    return {
        "table": table, "game": game, "currency": currency, "rounds": rounds, "handle": handle, "payouts": payouts,
        "hold": hold, "hold_pct": f"{100 * hold / handle:.2f}" if handle else "", "voids": voids, "rake": rake,
    }  # fmt: skip


def _rake(owner: str, currency: str, start: datetime, end: datetime) -> int:
    """What the ledger credited to ``owner``'s rake account in the period."""
    return sum(_credits(list(_accounts("rake", owner, currency)), start, end).values())


def _poker_performance(*, start: datetime, end: datetime, currency: str | None) -> list[dict[str, Any]]:
    """Poker tables, hands started in the period: handle is every chip put into
    the finished hands' pots (uncalled bets included), payouts what went back to
    the players, so the house's hold is the rake taken; voided hands refund
    everything and count only in ``voids``. ``rake`` is the ledger's figure."""
    from django.db.models import Count, Q, Sum

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
        rows.append(
            _performance_row(g["table__code"], f"holdem_{g['table__variant']}", g["currency"], g["hands"], handle,
                             handle - int(g["kept"] or 0), g["voids"],
                             _rake(f"poker-table:{g['table_id']}", g["currency"], start, end))
        )  # fmt: skip
    return rows


def _credits(ids: list[int], start: datetime, end: datetime) -> dict[int, int]:
    return _per_account(
        ids,
        "SELECT credit_account_id, SUM(amount) FROM ledger_transfer WHERE credit_account_id = ANY(%s) "
        "AND created_at >= %s AND created_at < %s GROUP BY 1",
        [ids, start, end],
    )


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

    sql = (
        "SELECT id, kind, owner, currency FROM ledger_account WHERE owner LIKE %s AND currency <> %s AND kind = ANY(%s)"
    )
    params: list[Any] = [_TOURNAMENT_OWNER + "%", CHIPS, ["tournament_pool", "rake"]]
    if currency is not None:
        sql += " AND currency = %s"
        params.append(currency)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        accounts = {int(r[0]): (r[1], int(r[2].removeprefix(_TOURNAMENT_OWNER)), r[3]) for r in cursor.fetchall()}
        ids = list(accounts)
        moves: list[tuple[Any, ...]] = []
        if ids:
            cursor.execute(
                "SELECT t.debit_account_id, t.credit_account_id, t.amount, t.kind, t.event_id, e.type "
                "FROM ledger_transfer t JOIN ledger_event e ON e.id = t.event_id "
                "WHERE t.created_at >= %s AND t.created_at < %s "
                "AND (t.debit_account_id = ANY(%s) OR t.credit_account_id = ANY(%s)) ORDER BY t.id",
                [start, end, ids, ids],
            )
            moves = cursor.fetchall()
        cursor.execute(
            "SELECT stream_id, data, recorded_at FROM ledger_event WHERE type = ANY(%s) AND stream_id LIKE %s "
            "AND recorded_at >= %s AND recorded_at < %s ORDER BY id",
            [[et.TOURNAMENT_CANCELLED, et.TOURNAMENT_PAID], "poker-tournament-%", start, end],
        )
        marks = [(int(r[0].removeprefix("poker-tournament-")), _json(r[1]), r[2]) for r in cursor.fetchall()]
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
    opening = _balances_before(list(pools.values()), start)
    closing = _balances_before(list(pools.values()), end)
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
