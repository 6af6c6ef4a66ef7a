"""Builders for poker-table tests: tables, tournaments, funded players, rigged decks, ledger checks."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from casino.errors import DomainError
from games.poker import event_types as et
from games.poker import services
from games.poker.models import PokerTable
from games.poker.projectors import project_tournament
from games.poker.tournament.models import Tournament, TournamentEntry
from ledger.services import NewEvent, append_events, balance_of, deposit, player_accounts
from tests.db import rows

T0 = datetime(2026, 11, 22, 13, 45, 1, tzinfo=UTC)
RANKS = "23456789TJQKA"
# The tables an act at a poker table may write (a refused act writes none of them).
CHANGED_BY_ACT = (
    "ledger_event",
    "ledger_account",
    "ledger_transfer",
    "ledger_idempotency",
    "games_pokerhand",
    "games_pokerseat",
)
_keys = itertools.count()


def key(prefix: str = "k") -> str:
    return f"{prefix}-{next(_keys)}"


def make_table(**changes: Any) -> PokerTable:
    fields: dict[str, Any] = {
        "code": f"P{next(_keys)}", "name": "test poker", "variant": "no_limit", "max_seats": 6, "currency": "EUR",
        "small_blind": 5, "big_blind": 10, "buy_in_min": 200, "buy_in_max": 2000, "turn_seconds": 5,
        "time_bank_seconds": 0, "reservation_seconds": 60, "between_hands_seconds": 2, "is_open": True,
    }  # fmt: skip
    fields.update(changes)
    return PokerTable.objects.create(**fields)


LEVELS = [
    {"small_blind": 10, "big_blind": 20, "ante": 0, "duration_seconds": 600},
    {"small_blind": 20, "big_blind": 40, "ante": 5, "duration_seconds": 600},
    {"small_blind": 50, "big_blind": 100, "ante": 10, "duration_seconds": 600},
]
PAYOUTS = [{"max_entrants": 6, "shares_bp": [6500, 3500]}, {"max_entrants": None, "shares_bp": [5000, 3000, 2000]}]
BUY_IN, FEE = 1_000, 100


def make_tournament(**changes: Any) -> Tournament:
    fields: dict[str, Any] = {
        "kind": "sit_and_go", "name": "SNG 6", "currency": "EUR", "buy_in": BUY_IN, "fee": FEE,
        "starting_chips": 1_500, "max_players": 6, "table_seats": 6, "levels": LEVELS, "payouts": PAYOUTS,
    }  # fmt: skip
    fields.update(changes)
    tournament = Tournament(**fields)  # validated as the admin will: levels and payouts by the domain
    tournament.full_clean()
    tournament.save()
    return tournament


def log_tournament_state(tournament: Tournament, *, state: str, level: int = 1) -> None:
    """A test's shortcut to a tournament ``running`` at ``level``, ``finished`` (its
    first entry the winner) or ``cancelled`` (nobody refunded): through its log, the
    events that state implies applied by the projectors (a row written beside the
    log would differ from its rebuild, which the test plugin checks)."""
    at = datetime.now(UTC).isoformat()
    entries = TournamentEntry.objects.filter(tournament=tournament).order_by("pk")
    new: list[NewEvent] = []
    if state == "running":
        new.append(NewEvent(et.TOURNAMENT_STARTED, {"at": at, "entrants": entries.count(), "level": 1, "tables": {},
                                                     "starting_chips": tournament.starting_chips}))  # fmt: skip
        if level != 1:
            new.append(NewEvent(et.TOURNAMENT_LEVEL, {"level": level, "small_blind": 0, "big_blind": 0, "ante": 0,
                                                      "at": at}))  # fmt: skip
    elif state == "finished":
        winner = entries.first()
        assert winner is not None
        new.append(NewEvent(et.TOURNAMENT_FINISHED, {"winner": winner.player_id, "entry_id": winner.pk, "at": at,
                                                      "entrants": entries.count()}))  # fmt: skip
    else:
        assert state == "cancelled"
        new.append(NewEvent(et.TOURNAMENT_CANCELLED, {"reason": "test", "actor": "test", "at": at, "policy": "refund",
                                                       "refunds": [], "buy_ins": 0, "fees": 0}))  # fmt: skip
    recorded = append_events(stream_id=et.tournament_stream(tournament.pk), expected_version=None, events=new,
                             metadata={"actor": "test"})  # fmt: skip
    project_tournament(recorded)
    tournament.refresh_from_db()


def make_player(funds: int = 100_000) -> int:
    user = get_user_model().objects.create(username=key("pp"))
    wallet_id = player_accounts(player_id=user.pk, currency="EUR").wallet
    deposit(wallet=wallet_id, amount=funds, currency="EUR", external_reference=key("ref"),
            idempotency_key=key("dep"), actor="test")  # fmt: skip
    return int(user.pk)


def wallet(player: int) -> int:
    return balance_of(account_id=player_accounts(player_id=player, currency="EUR").wallet)


def seat_balance(table: PokerTable, player: int) -> int:
    return balance_of(account_id=services.seat_account(table_id=table.pk, player_id=player, currency="EUR"))


def sit(table: PokerTable, player: int, seat: int, buy_in: int = 1000, *, at: datetime | None = None) -> None:
    services.sit_down(table_id=table.pk, player_id=player, seat_number=seat, buy_in=buy_in,
                      idempotency_key=key("sit"), now=at or T0)  # fmt: skip


def deck(*cards: str) -> list[str]:
    """A full 52-card deck starting with ``cards`` (the rest in a fixed order)."""
    rest = [r + s for r in RANKS for s in "shdc" if r + s not in cards]
    return [*cards, *rest]


def advance(table: PokerTable, *, cards: Sequence[str] | None = None) -> PokerTable:
    """One dealer step at the table's deadline."""
    table.refresh_from_db()
    assert table.deadline is not None, table.phase
    moved = services.advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=table.deadline, deck=cards)
    assert moved is not None
    table.refresh_from_db()
    return table


def heads_up_dealt(**changes: Any) -> PokerTable:
    """A new table (``changes``: its fields) where two new players sat down in seats
    1 and 2 at ``T0``, its first hand dealt at the table's deadline."""
    table = make_table(**changes)
    for seat in (1, 2):
        sit(table, make_player(), seat)
    return advance(table)


def act(table: PokerTable, player: int, action: str, amount: int | None = None, *, at: datetime | None = None) -> Any:
    table.refresh_from_db()
    return services.act(table_id=table.pk, player_id=player, action=action, amount=amount,
                        idempotency_key=key("act"), now=at or T0)  # fmt: skip


# The tables a player's act may write to (a refused act must leave them as they were).
CHANGED_BY_ACT = ("ledger_event", "ledger_account", "ledger_transfer", "ledger_idempotency", "games_pokerhand",
                  "games_pokerseat")  # fmt: skip


def snapshot() -> dict[str, Any]:
    """Everything the ledger and the poker projections store (before/after a refusal)."""
    return rows("ledger_event", "ledger_transfer", "ledger_account", "ledger_statement_line", "ledger_idempotency",
                "games_pokertable", "games_pokerseat", "games_pokerhand", "games_pokerhandplayer")  # fmt: skip


def refused(code: str, call: Callable[[], object]) -> None:
    """``call`` is refused with ``code`` and changes nothing."""
    before = snapshot()
    with pytest.raises(DomainError) as refusal:
        call()
    assert refusal.value.code == code
    assert snapshot() == before


def play_the_raked_hand(table: PokerTable, p1: int, p2: int, p3: int) -> None:
    """The three-handed hand of ``test_a_full_hand_with_seed_001_rake`` after the
    deal: raise 30, two calls, flop bet 60 called by seat 1, seat 2 folds, turn and
    river checked: a 210 pot, 5 raked (seed 001), seat 3 (the kings) wins."""
    act(table, p1, "raise", 30)
    act(table, p2, "call")
    act(table, p3, "call")
    act(table, p2, "check")  # flop: the small blind acts first
    act(table, p3, "bet", 60)
    act(table, p1, "call")
    act(table, p2, "fold")
    for player in (p3, p1, p3, p1):  # turn and river checked
        act(table, player, "check")
