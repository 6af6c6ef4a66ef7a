"""Tournament registration (docs/poker.md, "Tournaments: registration").

Each command is keyword-only, idempotent by its key, and one transaction that
locks the tournament row first (so two registrations of one player, or two
last seats of a Sit & Go, are decided one after the other). Money moves
through the ledger, caused by the tournament stream's event
(``poker-tournament-{id}``): registering, wallet -> the tournament's
``tournament_pool`` account (the buy-in) and wallet -> its ``rake`` account
(the fee, the house's revenue, like a table's rake); unregistering before the
start, both back. Tournament chips are never money.

An operator cancels a tournament that has not started (``cancel_tournament``,
docs/poker.md, "Tournaments: cancel"): one ``poker_tournament.cancelled``
event causes every active entry's refund (buy-in from the pool, fee from the
house's account), the pool ends at zero, and the ``operator.action``
(``tournament.cancel``, actor and reason) is recorded in the same transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction

from casino.audit import operator_actor, record_operator_action
from casino.errors import required_reason
from casino.responsible_gaming import assert_may_wager
from games.poker import event_types as et
from games.poker.errors import (
    TournamentAlreadyRegistered,
    TournamentAlreadyStarted,
    TournamentFull,
    TournamentNotCancellable,
    TournamentNotRegistered,
    TournamentRegistrationClosed,
)
from games.poker.models import PokerTable
from games.poker.projectors import project_tournament
from games.poker.services.tables import IDLE, WAITING, iso, once
from games.poker.tournament.clock import level_now
from games.poker.tournament.models import Tournament, TournamentEntry, TournamentKind, TournamentState
from games.poker.tournament.services.core import (
    ACTIVE,
    SYSTEM,
    fee_account,
    get_tournament,
    lock_tournament,
    pool_account,
    registered_count,
    registration_open,
    tournament_owner,
)
from games.poker.tournament.services.finish import cancel_running
from games.poker.tournament.services.start import seat_late_entry, start_tournament
from games.poker.tournament.services.step import advance_tournament
from ledger.services import Move, NewEvent, StreamAppend, append_events, balance_of, player_accounts, transfer_many
from ledger.services.projectors import events_of

__all__ = [
    "ACTIVE",
    "CancelResult",
    "RegistrationResult",
    "cancel_tournament",
    "fee_account",
    "get_tournament",
    "lock_tournament",
    "pool_account",
    "register",
    "registered_count",
    "registration_open",
    "start_or_cancel_scheduled",
    "sweep_tournaments",
    "tournament_owner",
    "unregister",
]


def _project(tournament: Tournament, append: StreamAppend, *, now: datetime,
             entries: Sequence[TournamentEntry] = ()) -> None:  # fmt: skip
    """Apply the events just appended (through a transfer's cause: their versions
    are not known here, and the tournament's projectors do not read them)."""
    project_tournament(
        events_of(stream_id=append.stream_id, first_version=0, events=append.events, metadata=append.metadata,
                  at=now),
        tournament=tournament, entries=entries,
    )  # fmt: skip


def _new_entry_id() -> int:
    """The next ``TournamentEntry`` id, drawn before its ``registered`` event."""
    table = TournamentEntry._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id'))", [table])
        else:  # the transaction holds the tournament's lock; ids only need to be new
            cursor.execute(f"SELECT COALESCE(MAX(id), 0) + 1 FROM {connection.ops.quote_name(table)}")
        return int(cursor.fetchone()[0])


@dataclass(frozen=True)
class RegistrationResult:
    tournament_id: int
    entry_id: int
    state: str
    buy_in: int
    fee: int
    registered: int  # players registered after this command


def _move(tournament: Tournament, *, to_pool: bool, player_id: int, event_type: str, data: dict[str, Any],
          key: str, now: datetime, entries: Sequence[TournamentEntry] = ()) -> None:  # fmt: skip
    """The buy-in and the fee between the wallet and the tournament's accounts,
    both caused by the one tournament event, which the projectors then apply
    (``entries``: the rows held, kept current)."""
    currency = tournament.currency
    wallet = player_accounts(player_id=player_id, currency=currency).wallet
    pool = pool_account(tournament_id=tournament.pk, currency=currency)
    fees = fee_account(tournament_id=tournament.pk, currency=currency)
    stream, metadata = et.tournament_stream(tournament.pk), {"actor": f"user:{player_id}"}
    cause = StreamAppend(stream, None, [NewEvent(event_type, data)], metadata)
    kind = "tourney_buy_in" if to_pool else "tourney_refund"
    buy_in, fee = data["buy_in"], data["fee"]
    moves = [Move(wallet if to_pool else pool, pool if to_pool else wallet, buy_in, kind)]
    if fee > 0:
        moves.append(Move(wallet if to_pool else fees, fees if to_pool else wallet, fee,
                          "tourney_fee" if to_pool else "tourney_refund"))  # fmt: skip
    # Both legs in the one event's data (its hash covers them).
    transfer_many(moves=moves, currency=currency, idempotency_key=f"{key}:money", cause=cause)
    _project(tournament, cause, now=now, entries=entries)


def register(*, tournament_id: int, player_id: int, idempotency_key: str, now: datetime) -> RegistrationResult:
    """Register the player: buy-in to the prize pool, fee to the house. Refusals:
    ``tournament_not_found``, ``tournament_already_registered``,
    ``tournament_registration_closed``, ``tournament_full``, the responsible
    gaming refusals (buy-in + fee as a stake), ``insufficient_funds``.
    The registration that fills a Sit & Go starts it (``start_tournament``); a
    late registration is seated at once (``seat_late_entry``)."""
    request = {"tournament": tournament_id, "player": player_id}

    def run() -> RegistrationResult:
        tournament = lock_tournament(tournament_id)
        if TournamentEntry.objects.filter(tournament=tournament, player_id=player_id, state__in=ACTIVE).exists():
            raise TournamentAlreadyRegistered(tournament_id=tournament_id)
        if not registration_open(tournament):
            raise TournamentRegistrationClosed(tournament_id=tournament_id, state=tournament.state)
        count = registered_count(tournament)
        if count >= tournament.max_players:
            raise TournamentFull(tournament_id=tournament_id, max_players=tournament.max_players)
        buy_in, fee = tournament.buy_in, tournament.fee
        assert_may_wager(player_id=player_id, amount=buy_in + fee, currency=tournament.currency, now=now)
        # The entry's id is drawn first: the event names it, its projector creates the row.
        entry_id = _new_entry_id()
        data = {"entry_id": entry_id, "player_id": player_id, "buy_in": buy_in, "fee": fee, "at": iso(now)}
        _move(tournament, to_pool=True, player_id=player_id, event_type=et.TOURNAMENT_REGISTERED, data=data,
              key=f"{idempotency_key}:ledger", now=now)  # fmt: skip
        entry = TournamentEntry.objects.get(pk=entry_id)
        if tournament.state == TournamentState.RUNNING:  # late registration: seated at once
            seat_late_entry(tournament, entry, now=now)
        elif tournament.kind == TournamentKind.SIT_AND_GO and count + 1 == tournament.max_players:
            start_tournament(tournament, now=now)
        entry.refresh_from_db(fields=["state"])
        return RegistrationResult(tournament.pk, entry.pk, entry.state, buy_in, fee, count + 1)

    with transaction.atomic():
        return once(idempotency_key, "poker.tournament_register", request, run, RegistrationResult)


def unregister(*, tournament_id: int, player_id: int, idempotency_key: str, now: datetime) -> RegistrationResult:
    """Unregister before the start: the buy-in and the fee paid back to the wallet
    exactly. Refusals: ``tournament_not_found``, ``tournament_not_registered``,
    ``tournament_already_started`` (running, finished or cancelled)."""
    request = {"tournament": tournament_id, "player": player_id}

    def run() -> RegistrationResult:
        tournament = lock_tournament(tournament_id)
        entry = TournamentEntry.objects.filter(tournament=tournament, player_id=player_id, state__in=ACTIVE).first()
        if entry is None:
            raise TournamentNotRegistered(tournament_id=tournament_id)
        if tournament.state != TournamentState.REGISTERING:
            raise TournamentAlreadyStarted(tournament_id=tournament_id, state=tournament.state)
        data = {"entry_id": entry.pk, "player_id": player_id, "buy_in": entry.buy_in, "fee": entry.fee,
                "at": iso(now)}  # fmt: skip
        _move(tournament, to_pool=False, player_id=player_id, event_type=et.TOURNAMENT_UNREGISTERED, data=data,
              key=f"{idempotency_key}:ledger", now=now, entries=[entry])  # fmt: skip
        return RegistrationResult(tournament.pk, entry.pk, entry.state, entry.buy_in, entry.fee,
                                  registered_count(tournament))  # fmt: skip

    with transaction.atomic():
        return once(idempotency_key, "poker.tournament_unregister", request, run, RegistrationResult)


@dataclass(frozen=True)
class CancelResult:
    tournament_id: int
    state: str  # cancelled
    refunded: int  # entries refunded
    buy_ins: int  # total returned from the prize pool
    fees: int  # total returned from the house's fee account


def cancel_tournament(*, tournament_id: int, operator: Any, reason: str, now: datetime) -> CancelResult:
    """Cancel a tournament (docs/poker.md, "Tournaments: cancel"), recorded as
    ``operator.action`` ``tournament.cancel`` with the operator and the reason.

    Before the start every active entry is refunded exactly: its buy-in from the
    prize pool and its fee from the house's ``rake`` account, back to the
    wallet, all caused by the one ``poker_tournament.cancelled`` event; entries
    become ``unregistered`` (refunded). Running or paused: the tournament's
    ``cancel_policy`` (``cancel_running``: refund, or pay by chip count). The
    pool ends at zero. Refusals (nothing changes): ``reason_required``,
    ``tournament_not_found``, ``tournament_not_cancellable`` (finished or
    already cancelled)."""
    reason = required_reason(reason)
    actor = operator_actor(operator)
    with transaction.atomic():
        tournament = lock_tournament(tournament_id)
        if tournament.state in (TournamentState.RUNNING, TournamentState.PAUSED):
            running = cancel_running(tournament, actor=actor, reason=reason, now=now)
            result = CancelResult(tournament.pk, tournament.state, running.refunded, running.buy_ins, running.fees)
            details: dict[str, Any] = {"policy": running.policy, "paid": running.paid}
        elif tournament.state == TournamentState.REGISTERING:
            result = _cancel_registering(tournament, actor=actor, reason=reason, now=now)
            details = {"policy": "refund"}
        else:
            raise TournamentNotCancellable(tournament_id=tournament_id, state=tournament.state)
        record_operator_action(
            operator=operator, action="tournament.cancel", target=f"poker-tournament:{tournament.pk}", reason=reason,
            details={"tournament": tournament.name, "refunded": result.refunded, "buy_ins": result.buy_ins,
                     "fees": result.fees, **details},
            metadata={"tournament_id": tournament.pk},
        )  # fmt: skip
        return result


def _cancel_registering(tournament: Tournament, *, actor: str, reason: str, now: datetime) -> CancelResult:
    """Refund every active entry of a tournament that has not started (locked)."""
    entries = list(
        TournamentEntry.objects.select_for_update()
        .filter(tournament=tournament, state__in=ACTIVE)
        .order_by("registered_at", "id")
    )
    currency = tournament.currency
    pool = pool_account(tournament_id=tournament.pk, currency=currency)
    fees = fee_account(tournament_id=tournament.pk, currency=currency)
    refunds = [{"entry_id": e.pk, "player_id": e.player_id, "buy_in": e.buy_in, "fee": e.fee} for e in entries]
    buy_ins, fees_back = sum(e.buy_in for e in entries), sum(e.fee for e in entries)
    data = {"reason": reason, "actor": actor, "at": iso(now), "policy": "refund", "refunds": refunds,
            "buy_ins": buy_ins, "fees": fees_back}  # fmt: skip
    append = StreamAppend(et.tournament_stream(tournament.pk), None, [NewEvent(et.TOURNAMENT_CANCELLED, data)],
                          {"actor": actor})  # fmt: skip
    key = f"poker:tournament:{tournament.pk}:cancel"
    moves = []
    for entry in entries:
        wallet = player_accounts(player_id=entry.player_id, currency=currency).wallet
        for source, amount in ((pool, entry.buy_in), (fees, entry.fee)):
            if amount > 0:
                moves.append(Move(source, wallet, amount, "tourney_refund"))
    if moves:  # every refund a leg of the one cancellation event
        transfer_many(moves=moves, currency=currency, idempotency_key=f"{key}:refunds", cause=append)
    else:  # nobody to refund: the event alone
        append_events(stream_id=append.stream_id, expected_version=None, events=append.events,
                      metadata=append.metadata)  # fmt: skip
    if balance_of(account_id=pool) != 0:
        raise AssertionError(f"tournament {tournament.pk}: the prize pool is not zero after the refunds")
    # The entries unregistered, the tournament cancelled: the projectors'.
    _project(tournament, append, now=now, entries=entries)
    return CancelResult(tournament.pk, tournament.state, len(entries), buy_ins, fees_back)


def start_or_cancel_scheduled(*, tournament_id: int, now: datetime) -> int:
    """A scheduled tournament whose start time has come starts with two or more
    entries (1 returned); with fewer it is cancelled and refunded
    (``not_enough_players``, by the system). 0 when it is not due any more."""
    with transaction.atomic():
        tournament = lock_tournament(tournament_id)
        if tournament.state != TournamentState.REGISTERING or tournament.start_at is None or tournament.start_at > now:
            return 0
        if registered_count(tournament) >= 2:
            start_tournament(tournament, now=now)
            return 1
        _cancel_registering(tournament, actor=SYSTEM, reason="not_enough_players", now=now)
        return 0


def sweep_tournaments(*, now: datetime) -> dict[str, int]:
    """Beat backstop: scheduled tournaments due start (or, with fewer than two
    players, are cancelled and refunded); running tournaments with a table
    waiting or idle, or a level due, take their step (``advance_tournament``)."""
    done = {"started": 0, "stepped": 0}
    due = Tournament.objects.filter(state=TournamentState.REGISTERING, start_at__lte=now).values_list("pk", flat=True)
    for tournament_id in list(due):
        done["started"] += start_or_cancel_scheduled(tournament_id=tournament_id, now=now)
    for tournament in Tournament.objects.filter(state=TournamentState.RUNNING).order_by("pk"):
        waiting = PokerTable.objects.filter(tournament=tournament, is_open=True, phase__in=(WAITING, IDLE)).exists()
        due_level = level_now(tournament, now)[0] != tournament.current_level
        if (waiting or due_level) and advance_tournament(tournament_id=tournament.pk, now=now) is not None:
            done["stepped"] += 1
    return done
