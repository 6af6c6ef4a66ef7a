"""How a running tournament ends (docs/poker.md, "Tournaments: play" and
"Tournaments: cancel"): the payouts with the entrants so far; the finish
(places and prizes by ``standings``, the winner's chips back to the chip bank,
the prize pool with the house's overlay for a guarantee paid to the wallets);
or the cancel of a running or paused tournament under its ``cancel_policy``.
Money moves here and at registration only.

Contract: neither opens a transaction; both are called with the tournament
row locked (``finish_tournament`` by the step, which holds the open tables
locked too; ``cancel_running`` by ``registration.cancel_tournament``, and it
locks the open tables in id order). Each checks that the chip bank and the
prize pool end at zero and raises ``AssertionError`` otherwise, which rolls the
caller's transaction back.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Sum

from games.poker import event_types as et
from games.poker.models import PokerTable
from games.poker.services.operator import void_hand
from games.poker.services.tables import IDLE, current_hand, iso, seat_account, set_table
from games.poker.tournament.models import CancelPolicy, EntryState, Tournament, TournamentEntry
from games.poker.tournament.rules.eliminations import Bust, rank_bust, standings
from games.poker.tournament.rules.payouts import Payouts, split_by_weights
from games.poker.tournament.services.core import ACTIVE, SYSTEM, chip_bank, fee_account, overlay_account, pool_account
from games.poker.tournament.services.stream import Batch, commit_batch
from ledger.currencies import CHIPS
from ledger.services import balance_of, player_accounts


def current_payouts(tournament: Tournament, *, collected: int | None = None) -> Payouts:
    """The payouts with the entrants so far: the pool collected is the buy-ins of the
    entries that count (what the pool account holds until the finish pays it out);
    ``collected``: that sum, when the caller has read it (the step does, in its one
    round trip), else it is summed here."""
    if collected is None:
        collected = collected_pool(tournament)
    return tournament.payout_structure().payouts(
        entrants=max(tournament.entrants, 1), collected=collected, guarantee=tournament.guarantee
    )


def collected_pool(tournament: Tournament) -> int:
    """The buy-ins of the entries that count (what the pool account holds until the finish)."""
    total = TournamentEntry.objects.filter(tournament=tournament, state__in=ACTIVE).aggregate(total=Sum("buy_in"))
    return int(total["total"] or 0)


def paid_places(tournament: Tournament, *, collected: int | None = None) -> int:
    return current_payouts(tournament, collected=collected).paid_places


def _groups(tournament: Tournament) -> list[list[Bust]]:
    rows = (
        TournamentEntry.objects.filter(tournament=tournament, bust_group__isnull=False)
        .order_by("bust_group", "eliminated_at", "id")
        .values_list("pk", "bust_group", "bust_stack")
    )
    groups: dict[int, list[Bust]] = {}
    for pk, group, stack in rows:
        assert group is not None
        groups.setdefault(group, []).append(Bust(str(pk), int(stack or 0)))
    return [groups[number] for number in sorted(groups)]


def _prizes_of_the_busted(tournament: Tournament, payouts: Payouts) -> dict[int, int]:
    """Entry id -> prize of every player already out, by the eliminations rule over
    the bust groups in order (as ``standings`` does at the finish, without a winner)."""
    groups = _groups(tournament)
    pending = [  # busted in a hand-for-hand round that has not ended: the last group out
        Bust(str(pk), int(stack or 0))
        for pk, stack in TournamentEntry.objects.filter(
            tournament=tournament, state=EntryState.ELIMINATED, bust_group__isnull=True
        )
        .order_by("eliminated_at", "id")
        .values_list("pk", "bust_stack")
    ]
    if pending:
        groups.append(pending)
    remaining = TournamentEntry.objects.filter(tournament=tournament, state=EntryState.PLAYING).count()
    prizes: dict[int, int] = {}
    for group in reversed(groups):  # the last group out was ranked just below the players left
        before = remaining + len(group)
        prizes.update({int(f.player): f.prize for f in rank_bust(group, before, payouts.by_place)})
        remaining = before
    return prizes


def close_tables(tables: Iterable[PokerTable], bank: int, batch: Batch, cause: int) -> None:
    """Every chip left on the tables back to the bank, caused by ``cause`` (whose
    projector frees the seats); the tables closed."""
    for table in tables:
        for seat in table.seats.all():
            batch.leg(seat_account(table_id=table.pk, player_id=seat.player_id, currency=CHIPS), bank, seat.stack,
                      "tourney_chips", cause)  # fmt: skip
        table.is_open = False
        set_table(table, phase=IDLE, deadline=None, is_open=False)


def finish_tournament(tournament: Tournament, tables: list[PokerTable], now: datetime) -> None:
    """One player holds every chip: places and prizes by ``standings`` (over the
    entries' projected bust groups and stacks), the
    winner's chips back to the bank (which ends at zero), the prize pool (with
    the house's overlay for a guarantee) paid to the wallets; the pool ends at zero."""
    winner = TournamentEntry.objects.select_for_update().get(tournament=tournament, state=EntryState.PLAYING)
    payouts = current_payouts(tournament)
    finishes = {int(f.player): f for f in standings(_groups(tournament), str(winner.pk), payouts)}
    bank = chip_bank(tournament_id=tournament.pk)
    chips = Batch(CHIPS)
    done = chips.event(et.TOURNAMENT_FINISHED, {"winner": winner.player_id, "entry_id": winner.pk, "at": iso(now),
                                                "entrants": tournament.entrants})  # fmt: skip
    close_tables(tables, bank, chips, done)
    # The winner, the tournament finished, the seats freed: the projectors'.
    commit_batch(tournament, chips, key=f"poker:tournament:{tournament.pk}:finish:chips", actor=SYSTEM, now=now,
                 entries=[winner])  # fmt: skip
    if balance_of(account_id=bank) != 0:
        raise AssertionError(f"tournament {tournament.pk}: the chip bank is not zero at the finish")
    money = Batch(tournament.currency)
    entries = {e.pk: e for e in TournamentEntry.objects.filter(tournament=tournament, pk__in=list(finishes))}
    results = [{"entry_id": pk, "player_id": entries[pk].player_id, "place": f.place, "tied": f.tied,
                "prize": f.prize} for pk, f in sorted(finishes.items(), key=lambda item: item[1].place)]  # fmt: skip
    paid = money.event(et.TOURNAMENT_PAID, {
        "pool": payouts.pool.amount, "collected": payouts.pool.collected, "overlay": payouts.pool.overlay,
        "standings": results, "at": iso(now),
    })  # fmt: skip
    pool = pool_account(tournament_id=tournament.pk, currency=tournament.currency)
    money.leg(overlay_account(tournament_id=tournament.pk, currency=tournament.currency), pool,
              payouts.pool.overlay, "tourney_overlay", paid)  # fmt: skip
    for row in results:
        wallet = player_accounts(player_id=row["player_id"], currency=tournament.currency).wallet
        money.leg(pool, wallet, row["prize"], "tourney_prize", paid)
    # The places and prizes: the projector's.
    commit_batch(tournament, money, key=f"poker:tournament:{tournament.pk}:finish:prizes", actor=SYSTEM, now=now,
                 entries=entries.values())  # fmt: skip
    if balance_of(account_id=pool) != 0:
        raise AssertionError(f"tournament {tournament.pk}: the prize pool is not zero after the payouts")


@dataclass(frozen=True)
class RunningCancel:
    policy: str
    refunded: int
    buy_ins: int
    fees: int
    paid: list[dict[str, int]]


def cancel_running(tournament: Tournament, *, actor: str, reason: str, now: datetime) -> RunningCancel:
    """Cancel a running or paused tournament (the tournament locked) under its
    ``cancel_policy``: every hand in play voided (chips back to the seats), every
    chip back to the bank, the tables closed; then ``refund``: every entry's
    buy-in and fee back to the wallet; ``chip_count``: players already out in a
    paid place get that place's prize, the rest of the pool (with the
    guarantee's overlay) goes to the players left in proportion to their chips,
    rounded down, the remainder to the biggest stack; fees are kept. The pool
    and the chip bank end at zero."""
    tables = list(PokerTable.objects.select_for_update().filter(tournament=tournament, is_open=True).order_by("pk"))
    for table in tables:
        if current_hand(table) is not None:
            void_hand(table_id=table.pk, actor=actor, reason=reason, now=now)
    tables = list(PokerTable.objects.select_for_update().filter(tournament=tournament, is_open=True).order_by("pk"))
    stacks = {seat.player_id: seat.stack for table in tables for seat in table.seats.all()}
    bank = chip_bank(tournament_id=tournament.pk)
    chips = Batch(CHIPS)
    data = {"reason": reason, "actor": actor, "at": iso(now), "stacks": {str(p): s for p, s in stacks.items()}}
    closed = chips.event(et.TOURNAMENT_TABLES_CLOSED, data)
    close_tables(tables, bank, chips, closed)
    commit_batch(tournament, chips, key=f"poker:tournament:{tournament.pk}:cancel:chips", actor=actor, now=now)
    currency = tournament.currency
    pool = pool_account(tournament_id=tournament.pk, currency=currency)
    fees = fee_account(tournament_id=tournament.pk, currency=currency)
    entries = list(
        TournamentEntry.objects.select_for_update().filter(tournament=tournament, state__in=ACTIVE).order_by("id")
    )
    money = Batch(currency)
    paid: list[dict[str, int]] = []
    policy = tournament.cancel_policy
    if policy == CancelPolicy.REFUND:
        refunds = [{"entry_id": e.pk, "player_id": e.player_id, "buy_in": e.buy_in, "fee": e.fee} for e in entries]
        cancelled = money.event(et.TOURNAMENT_CANCELLED, {
            "reason": reason, "actor": actor, "at": iso(now), "policy": policy, "refunds": refunds,
            "buy_ins": sum(e.buy_in for e in entries), "fees": sum(e.fee for e in entries),
        })  # fmt: skip
        for entry in entries:
            wallet = player_accounts(player_id=entry.player_id, currency=currency).wallet
            money.leg(pool, wallet, entry.buy_in, "tourney_refund", cancelled)
            money.leg(fees, wallet, entry.fee, "tourney_refund", cancelled)
        result = RunningCancel(policy, len(entries), sum(e.buy_in for e in entries), sum(e.fee for e in entries), [])
    else:
        payouts = current_payouts(tournament)
        # Out in a paid place: that place's prize (ties shared as at the finish),
        # ranked again from the bust groups, not read from the entries' rows.
        prizes = {pk: prize for pk, prize in _prizes_of_the_busted(tournament, payouts).items() if prize}
        rest = payouts.pool.amount - sum(prizes.values())
        players = sorted((e for e in entries if e.player_id in stacks and stacks[e.player_id] > 0),
                         key=lambda e: (-stacks[e.player_id], e.pk))  # fmt: skip
        if players and rest > 0:
            for entry, share in zip(players, split_by_weights(rest, [stacks[e.player_id] for e in players]),
                                    strict=True):  # fmt: skip
                prizes[entry.pk] = prizes.get(entry.pk, 0) + share
        by_pk = {e.pk: e for e in entries}
        paid = [{"entry_id": pk, "player_id": by_pk[pk].player_id, "prize": amount} for pk, amount in prizes.items()]
        cancelled = money.event(et.TOURNAMENT_CANCELLED, {
            "reason": reason, "actor": actor, "at": iso(now), "policy": policy, "paid": paid,
            "pool": payouts.pool.amount, "overlay": payouts.pool.overlay,
        })  # fmt: skip
        money.leg(overlay_account(tournament_id=tournament.pk, currency=currency), pool, payouts.pool.overlay,
                  "tourney_overlay", cancelled)  # fmt: skip
        for row in paid:
            wallet = player_accounts(player_id=row["player_id"], currency=currency).wallet
            money.leg(pool, wallet, row["prize"], "tourney_prize", cancelled)
        result = RunningCancel(policy, 0, 0, 0, paid)
    # The entries refunded or paid, the tournament cancelled: the projectors'.
    commit_batch(tournament, money, key=f"poker:tournament:{tournament.pk}:cancel:money", actor=actor, now=now,
                 entries=entries)  # fmt: skip
    if balance_of(account_id=pool) != 0 or balance_of(account_id=bank) != 0:
        raise AssertionError(f"tournament {tournament.pk}: the pool or the chip bank is not zero after the cancel")
    return result
