"""Round fixtures: tables, funded seated players, a scripted shoe and a ledger snapshot."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction

from casino.errors import DomainError
from games.cards.cards import Card, parse_cards
from games.house.models import HouseTable
from games.house.services import TableTick, advance_table, assign_seat, place_chip, start_table
from ledger.services import balance_of, deposit, player_accounts
from tests.db import rows

T0 = datetime(2026, 11, 22, 13, 45, 1, tzinfo=UTC)
_keys = itertools.count()


def key(prefix: str = "k") -> str:
    return f"{prefix}-{next(_keys)}"


WIDE = {"min": 100, "max": 1_000_000}
TEST_WHEEL = {"name": "test-wheel", "version": "1", "segments": [{"label": "2x", "multiple": 2, "weight": 1}]}


def make_table(
    game: str,
    *,
    code: str | None = None,
    hand_mode: str = "shared",
    limits: dict[str, dict[str, int]] | None = None,
    pay_tables: dict[str, int] | None = None,
    wheel: dict[str, Any] | None = None,
    progressives: dict[str, Any] | None = None,
    chips: list[int] | None = None,
    mandatory_wagers: list[str] | None = None,
    multi_play: bool = True,
) -> HouseTable:
    """An open test table (written directly, as a fixture: ``chips`` left out is
    no chip set, i.e. any positive whole amount is a chip)."""
    spots = {"uth": ["ante", "best_five"], "casino_holdem": ["ante", "bonus"],
             "xtreme": ["ante", "player_bonus", "hole_card_bonus", "stax", "bonus_spin"]}[game]  # fmt: skip
    default_limits = {s: dict(WIDE) for s in spots}
    if "bonus_spin" in default_limits:
        default_limits["bonus_spin"] = {"min": 100, "max": 500}
    tables = {"uth": {"ante_plus": 1, "best_five": 1}, "casino_holdem": {"ante": 1, "bonus": 1},
              "xtreme": {"xtra_bonus": 1, "player_bonus": 1, "hole_card_bonus": 1, "stax": 1}}[game]  # fmt: skip
    return HouseTable.objects.create(
        code=code or f"T{next(_keys)}",
        name=f"test {game}",
        game=game,
        hand_mode=hand_mode,
        currency="EUR",
        limits=limits or default_limits,
        pay_tables=pay_tables or tables,
        wheel=wheel if wheel is not None else (TEST_WHEEL if "bonus_spin" in (limits or default_limits) else {}),
        progressives=progressives or {},
        chips=chips or [],
        mandatory_wagers=mandatory_wagers or [],
        multi_play=multi_play,
        is_open=True,
    )


def make_player(table: HouseTable | None = None, funds: int = 100_000, name: str | None = None) -> int:
    user = get_user_model().objects.create(username=name or key("player"))
    if funds:
        accounts = player_accounts(player_id=user.pk, currency="EUR")
        deposit(wallet=accounts.wallet, amount=funds, currency="EUR", external_reference=key("ref"),
                idempotency_key=key("dep"), actor="test")  # fmt: skip
    if table is not None:
        assign_seat(table_id=table.pk, player_id=user.pk)
    return int(user.pk)


def wallet(player: int) -> int:
    return balance_of(account_id=player_accounts(player_id=player, currency="EUR").wallet)


def shoe(*hands: str, dealer: str, board: str) -> list[Card]:
    """A full deck: the given cards first (player hands in player-id order, dealer, board), the rest after."""
    head = [c for text in (*hands, dealer, board) for c in parse_cards(text)]
    rest = [Card.from_index(i) for i in range(52) if i not in {c.index for c in head}]
    return head + rest


def step(table: HouseTable, tick: TableTick, *, shoe_cards: Sequence[Card] | None = None) -> TableTick:
    """Advance once at the current deadline (``shoe_cards``: the deck of the round this step opens)."""
    assert tick.deadline is not None
    result = advance_table(table_id=table.pk, expected_seq=tick.phase_seq, now=tick.deadline, shoe=shoe_cards)
    assert result is not None
    return result


def play_out(table: HouseTable, tick: TableTick) -> TableTick:
    """Advance (timeouts) until the round is over."""
    while tick.phase not in ("between", "idle"):
        tick = step(table, tick)
    return tick


def snapshot() -> dict[str, Any]:
    """Everything the ledger and projections store, to compare before/after a refusal."""
    return rows("ledger_event", "ledger_transfer", "ledger_hold", "ledger_account", "games_playerround",
                "games_houseround", "ledger_statement_line")  # fmt: skip


def refused(code: str, call: Callable[..., Any], **kwargs: Any) -> None:
    """``call(**kwargs)`` is refused with ``code`` and the database is exactly as before."""
    before = snapshot()
    with pytest.raises(DomainError) as info, transaction.atomic():
        call(**kwargs)
    assert info.value.code == code
    assert snapshot() == before


@pytest.fixture
def now() -> datetime:
    return T0


Factory = Callable[..., HouseTable]


def open_round(table: HouseTable, *, shoe_cards: Sequence[Card] | None = None) -> TableTick:
    """Open the table's first round at ``T0``: dealt from ``shoe_cards`` when given
    (a round's deck is fixed and committed when it opens)."""
    return start_table(table_id=table.pk, now=T0, shoe=shoe_cards)


def later(tick: TableTick, seconds: float = -1) -> datetime:
    """A moment relative to the tick's deadline (default: one second before it)."""
    assert tick.deadline is not None
    return tick.deadline + timedelta(seconds=seconds)


def betting_round(game: str, *, funds: int = 100_000, bets: Mapping[str, int] | None = None,
                  shoe_cards: Sequence[Card] | None = None,
                  **table: Any) -> tuple[HouseTable, int, TableTick]:  # fmt: skip
    """A new ``game`` table (``table``: its other fields) with one seated player
    holding ``funds``, its first round open (dealt from ``shoe_cards`` if given)
    and the player's ``bets`` in (spot -> amount, in placing order): the table,
    the player and the tick of the betting window."""
    made = make_table(game, **table)
    player = make_player(made, funds=funds)
    tick = open_round(made, shoe_cards=shoe_cards)
    for spot, amount in (bets or {}).items():
        place_chip(table_id=made.pk, player_id=player, spot=spot, amount=amount, idempotency_key=key(), now=later(tick))
    return made, player, tick


def dealt_round(game: str, hand: str, *, dealer: str, board: str, bets: Mapping[str, int] | None = None,
                **table: Any) -> tuple[HouseTable, int, TableTick]:  # fmt: skip
    """``betting_round`` dealt from the cards given (``bets``: an ante of 100 by
    default): the table, the player and the tick of the first decision's window."""
    made, player, tick = betting_round(game, bets=bets or {"ante": 100},
                                       shoe_cards=shoe(hand, dealer=dealer, board=board), **table)  # fmt: skip
    return made, player, step(made, tick)


@dataclass(frozen=True)
class Played:
    """One scripted round's outcome, read back from the player's events and the ledger."""

    game_number: str
    wagers: dict[str, tuple[int, str, int]]  # wager -> (stake, outcome, returned)
    rounding: dict[str, str]
    net: int
    wallet_change: int
    dealer_qualifies: bool | None


def play_round(
    game: str,
    *,
    hand: str,
    dealer: str,
    board: str,
    wagers: dict[str, int],
    decisions: dict[str, str] | None = None,
    pay_tables: dict[str, int] | None = None,
    wheel: dict[str, Any] | None = None,
    progressives: dict[str, Any] | None = None,
) -> Played:
    """Play one shared-mode round with one player through the real services."""
    from games.house.rules.registry import game as game_definition
    from games.house.services import make_decision, place_chip
    from ledger.services import read_stream

    definition = game_definition(game)
    tables = {w.name: 1 for w in definition.wagers if w.needs_pay_table} | (pay_tables or {})
    limits = {w: {"min": 1, "max": 10**9} for w in wagers}
    if "bonus_spin" in limits:
        limits["bonus_spin"] = {"min": 100, "max": 500}
    table = make_table(game, limits=limits, pay_tables=tables, wheel=wheel, progressives=progressives)
    player = make_player(table, funds=10**9)
    before = wallet(player)
    tick = open_round(table, shoe_cards=shoe(hand, dealer=dealer, board=board))
    for name in [w.name for w in definition.wagers if w.name in wagers]:
        place_chip(table_id=table.pk, player_id=player, spot=name, amount=wagers[name], idempotency_key=key(),
                   now=later(tick))  # fmt: skip
    tick = step(table, tick)
    while tick.phase not in ("between", "idle"):
        option = (decisions or {}).get(tick.phase)
        if option:
            make_decision(table_id=table.pk, player_id=player, option=option, idempotency_key=key(), now=later(tick))
        tick = step(table, tick)
    events = read_stream(stream_id=f"round-{tick.round_id}-player-{player}")
    [result] = [e for e in events if e.type == "house_player.settled"]
    assert result.schema_version == 2  # the wagers inside the player's one settlement event
    assert not [e for e in events if e.type == "house_wager.settled"]  # schema 1's per-wager events are gone
    settled = {w["wager"]: w for w in result.data["wagers"]}
    round_events = read_stream(stream_id=f"round-{tick.round_id}")
    summary = [e.data for e in round_events if e.type == "house_round.settled"]
    return Played(
        game_number=tick.game_number,
        wagers={w: (d["stake"], d["outcome"], d["returned"]) for w, d in settled.items()},
        rounding={w: d["rounding_kept"] for w, d in settled.items()},
        net=sum(d["returned"] - d["stake"] for d in settled.values()),
        wallet_change=wallet(player) - before,
        dealer_qualifies=summary[0]["dealer"]["qualifies"] if summary else None,
    )
