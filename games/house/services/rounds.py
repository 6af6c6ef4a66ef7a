"""Dealer-side services: open, advance, pause, resume and void house-banked rounds.

Every function is keyword-only, runs in one transaction, and locks the table
row (then the round row) so two dealer tasks never interleave. ``advance_table``
is idempotent by ``expected_seq``: a stale or duplicated task changes nothing
and returns ``None``. The dealer loop (issue 6) schedules the next call at
``TableTick.deadline``.

Cards at rest (issue 33, docs/fairness.md): a round gets its deal key
(``games.tables.dealkeys``, ``house-round:<round id>``) when it opens, and its deck is
committed per position (``merkle-sha256``) and sealed under that key. This
module is the only code that opens a house deck (``_opened_deck``), once per
step that shows cards (the deal, a street's reveal, the showdown) or ends the
round, and hands the cards to the pure decisions. Every step that ends a round
(settled, closed without bets, voided by an operator or by the sweeper)
records the whole deck (``house_round.deck_revealed``) and shreds the deal key
in the same transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction

from casino.collector import collector_paused
from casino.errors import DomainError
from games.cards.cards import Card, parse_card
from games.cards.shuffle import RandomSource, SecureRandomSource, shuffled_deck
from games.cards.vault import CardKeyError
from games.house.event_types import POOL_SEEDED
from games.house.models import HouseRound, HouseTable, TableSeat
from games.house.round.dealer import (
    all_decided,
    decide_advance,
    decide_close_betting,
    decide_decline,
    decide_open,
    decide_pause,
    decide_resume,
    decide_showdown,
    decide_void,
    incomplete_bettors,
    needs_showdown,
)
from games.house.round.events import DeckRevealed, Event
from games.house.round.state import BETTING, PER_SEAT_MAX, PlayerState, RoundConfig, RoundState, apply_player
from games.house.rules.bonus_spin import Wheel, WheelSegment
from games.house.rules.definitions import WagerKind
from games.house.rules.registry import game, pay_table
from games.house.store.commit import Money, commit
from games.house.store.reads import player_heads_read_meanwhile, pool_balances, pool_owner, wallets
from games.house.store.rows import PlayerRow, load_players, state_from_json
from games.house.store.streams import iso, load_round
from games.tables import pacing, presence
from games.tables.dealkeys import DealKeyMissing, deal_key, new_deal_key, shred_deal_key
from games.tables.fairness import DeckMismatch, OpenedDeck, is_plain, open_committed_deck, shuffle_and_commit
from ledger.currencies import MINOR_UNITS
from ledger.models import AccountKind
from ledger.services import balance_of, ensure_account, house_account
from tools.verify_deal import MERKLE_ALGORITHM

log = logging.getLogger(__name__)

IDLE = "idle"
BETWEEN = "between"
PAUSED = "paused"
SHOE_UNUSED = "a scripted shoe is the deck of the round a call opens (its deck is committed then); this call opens none"


@dataclass(frozen=True)
class TableTick:
    """What the dealer loop needs to schedule the next step."""

    table_id: int
    round_id: str
    game_number: str
    phase: str
    phase_seq: int
    deadline: datetime | None


def tick_of(table: HouseTable) -> TableTick:
    game_number = table.current_round_id
    return TableTick(table.pk, table.current_round_id, game_number, table.phase, table.phase_seq, table.deadline)


def pool_account(*, table_id: int, game_code: str, pool: str, currency: str) -> int:
    """The ledger account of one progressive pool (STAX's) of a table of ``game_code``.

    The owner is ``table:{id}:{progressive wager}:{pool}`` (``table:7:stax:star``):
    accounts exist under these names, so the format never changes."""
    owner = pool_owner(table_id=table_id, game_code=game_code, pool=pool)
    return ensure_account(kind=AccountKind.POOL, owner=owner, currency=currency)


class TableMisconfigured(DomainError, code="table_misconfigured"):
    """The table's configuration cannot run a round (pay table, wheel or limits missing)."""


def check_table_config(table: HouseTable) -> None:
    """Refuse a configuration a round could not settle: every offered spot is a
    placeable wager with ``0 < min <= max``, every wager that needs a pay table has
    an existing one, and Bonus Spin Xtreme has a wheel."""
    definition = game(table.game)
    if "ante" not in table.limits:
        raise TableMisconfigured("the Ante must be offered", table=table.code)
    for spot, limit in table.limits.items():
        wager = definition.wager(spot)
        if wager.kind not in (WagerKind.REQUIRED, WagerKind.OPTIONAL):
            raise TableMisconfigured(f"{spot} is not a betting spot", table=table.code, spot=spot)
        if not 0 < int(limit["min"]) <= int(limit["max"]):
            raise TableMisconfigured(f"{spot} limits must satisfy 0 < min <= max", table=table.code, spot=spot)
    needed = [w for w in definition.wagers if w.needs_pay_table and (w.name in table.limits or w.equals == "ante")]
    for wager in needed:
        number = table.pay_tables.get(wager.name)
        if number is None:
            raise TableMisconfigured(f"no pay table chosen for {wager.name}", table=table.code, wager=wager.name)
        pay_table(table.game, wager.name, int(number))
    if "bonus_spin" in table.limits and not table.wheel.get("segments"):
        raise TableMisconfigured("Bonus Spin Xtreme needs a wheel", table=table.code)


def _priced(table: HouseTable) -> set[str]:
    """Wagers of the table that have a pay table in force (offered spots and automatic wagers)."""
    definition = game(table.game)
    return {w.name for w in definition.wagers if w.needs_pay_table and (w.name in table.limits or w.equals)}


def _config(table: HouseTable, game_number: str) -> RoundConfig:
    check_table_config(table)
    return RoundConfig(
        round_id=game_number,
        table_id=table.pk,
        table_code=table.code,
        game_number=game_number,
        game=table.game,
        hand_mode=table.hand_mode,
        currency=table.currency,
        currency_unit=10 ** MINOR_UNITS[table.currency],
        limits=table.limits,
        pay_tables={w: int(n) for w, n in table.pay_tables.items() if w in _priced(table)},
        wheel=table.wheel,
        progressives=table.progressives,
        betting_seconds=table.betting_seconds,
        warning_seconds=table.warning_seconds,
        decision_seconds=table.decision_seconds,
        deal_pause_seconds=table.deal_pause_seconds,
        between_rounds_seconds=table.between_rounds_seconds,
        max_seats=min(table.max_seats or PER_SEAT_MAX, PER_SEAT_MAX),
        config_version=table.config_version,
        chips=tuple(int(chip) for chip in table.chips),
        mandatory_wagers=tuple(spot for spot in table.mandatory_wagers if spot in table.limits),
    )


def _lock_table(table_id: int) -> HouseTable:
    return pacing.lock_table(HouseTable, table_id)


def _set_table(table: HouseTable, *, phase: str, deadline: datetime | None, round_id: str | None = None) -> None:
    table.phase = phase
    table.phase_seq += 1
    table.deadline = deadline
    if round_id is not None:
        table.current_round_id = round_id
    HouseTable.objects.filter(pk=table.pk).update(
        phase=phase, phase_seq=table.phase_seq, deadline=deadline, current_round_id=table.current_round_id
    )


def _open_round(table: HouseTable, now: datetime, rng: RandomSource, shoe: Sequence[Card] | None) -> None:
    """Open the next round: shuffled (``shoe`` instead: a scripted deck) and
    committed before any bet can be placed."""
    game_number = pacing.game_number(table_code=table.code, now=now)
    config = _config(table, game_number)
    seeded = _ensure_pools(table, config, now)
    # Created by its projector from the round's opening event (``store.commit.commit``).
    round_row = HouseRound(round_id=game_number, table=table, currency=table.currency)
    deal_id = deal_id_of(game_number)
    key = new_deal_key(deal_id=deal_id)
    scripted = None if shoe is None else [str(card) for card in shoe]
    deck = shuffle_and_commit(rng=rng, key=key, deal_id=deal_id, deck=scripted)
    events = decide_open(config, now=iso(now), commitment=deck.commitment, sealed_deck=deck.sealed_deck,
                         seeded_pools=seeded)  # fmt: skip
    state, _ = commit(
        round_row=round_row, state=RoundState(), players={}, events=events, money=Money(),
        idempotency_key=f"round:{game_number}:open", actor="dealer", now=now,
    )  # fmt: skip
    _set_table(table, phase=BETTING, deadline=_dt(state.deadline), round_id=game_number)


def _ensure_pools(table: HouseTable, config: RoundConfig, now: datetime) -> dict[str, int] | None:
    """Seed each configured STAX pool from the house to its reset amount when empty.
    Returns every pool's amount after seeding when one was seeded (the meter
    changed), else ``None``. The table row is locked: only its dealer's steps
    move its pools."""
    from ledger.services import NewEvent, StreamAppend, transfer

    wager = config.definition.progressive_wager
    if wager is None or wager not in config.limits:
        return None
    amounts = dict(pool_balances([table]).get(table.pk, {}))
    seeded = False
    house = house_account(table_id=table.pk, currency=table.currency)
    for pool, reset in sorted(config.progressives.get("reset", {}).items()):
        if int(reset) > 0 and amounts.get(pool, 0) == 0:
            account = pool_account(table_id=table.pk, game_code=table.game, pool=pool, currency=table.currency)
            seeded = True
            amounts[pool] = int(reset)
            transfer(
                debit_account=house,
                credit_account=account,
                amount=int(reset),
                currency=table.currency,
                kind="pool_seed",
                idempotency_key=f"pool-seed:{table.pk}:{pool}:{config.game_number}",
                cause=StreamAppend(
                    f"table-{table.pk}-{wager}-{pool}",
                    None,
                    [NewEvent(POOL_SEEDED, {"pool": pool, "amount": int(reset), "at": iso(now)})],
                    {"actor": "dealer"},
                ),
            )
    return amounts if seeded else None


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def start_table(
    *, table_id: int, now: datetime, shoe: Sequence[Card] | None = None, rng: RandomSource | None = None
) -> TableTick:
    """Open the first betting window if the table is open and idle. ``shoe``
    (tests and certification only) replaces the shuffle of the round it opens;
    ``rng`` defaults to the secure generator."""
    with transaction.atomic():
        table = _lock_table(table_id)
        if table.is_open and table.phase in (IDLE, ""):
            _open_round(table, now, rng or SecureRandomSource(), shoe)
        elif shoe is not None:
            raise ValueError(SHOE_UNUSED)
        return tick_of(table)


def _players(round_row: HouseRound) -> tuple[dict[int, PlayerRow], dict[int, PlayerState]]:
    rows = load_players(round_row)
    return rows, {pid: state_from_json(pid, row.state) for pid, row in rows.items()}


def advance_table(
    *,
    table_id: int,
    expected_seq: int,
    now: datetime,
    shoe: Sequence[Card] | None = None,
    rng: RandomSource | None = None,
) -> TableTick | None:
    """Run the step whose deadline passed (or a decision window everyone has
    answered). ``None`` and no change when ``expected_seq`` is stale or the
    deadline is not yet due. ``shoe`` (tests and certification only) replaces
    the shuffle of the round this step opens: a round's deck is fixed and
    committed when it opens, so a shoe for any other step is refused
    (``ValueError``). ``rng`` defaults to the secure generator (shuffle and wheel)."""
    rng = rng or SecureRandomSource()
    with transaction.atomic(), collector_paused():
        table = _lock_table(table_id)
        if table.phase_seq != expected_seq or table.phase in (IDLE, PAUSED, ""):
            return None
        due = table.deadline is None or table.deadline <= now
        if due:
            pacing.phase_ended(family="house", phase=table.phase, deadline=table.deadline, now=now)
        if table.phase == BETWEEN:
            if not due:
                return None
            if table.is_open:
                _open_round(table, now, rng, shoe)
            elif shoe is None:
                _set_table(table, phase=IDLE, deadline=None)
            else:
                raise ValueError(SHOE_UNUSED)
            return tick_of(table)
        if shoe is not None:
            raise ValueError(SHOE_UNUSED)
        round_row = HouseRound.objects.select_for_update().get(round_id=table.current_round_id)
        state = load_round(round_row.round_id)
        rows, players = _players(round_row)
        if not due and not (state.phase != BETTING and all_decided(state, players)):
            return None
        key = f"round:{round_row.round_id}:seq:{state.phase_seq}"
        money = Money()
        if state.phase == BETTING:
            declined = _decline_absent(table, state, players, money, now)
            playing = _after(players, declined)
            # Seed 002:13: bets without a mandatory side wager do not play the round (docs/rounds.md).
            incomplete = _decline(state, playing, incomplete_bettors(state, playing), money, iso(now),
                                  reason="mandatory_wager_missing")  # fmt: skip
            playing = _after(playing, incomplete)
            declined += incomplete
            opened = _opened_deck(state)
            deck = shuffled_deck(rng) if opened is None else [parse_card(card) for card in opened.deck]
            seats = dict(TableSeat.objects.filter(table=table).values_list("player_id", "seat_number"))
            events = declined + decide_close_betting(
                state, playing, now=iso(now), deck=deck, seats=seats, reveal=_deck_revealed(opened),
                face_down_in_clear=opened is None,
            )  # fmt: skip
        else:
            opened = _opened_deck(state)
            events = decide_advance(state, players, now=iso(now), deck=_cards(opened))
        state, changed = commit(
            round_row=round_row, state=state, players=rows, events=events, money=money,
            idempotency_key=key, actor="dealer", now=now, states=players,
        )  # fmt: skip
        players |= changed
        if needs_showdown(state, players):
            state = _showdown(table, round_row, state, rows, players, now, rng, opened)
        if state.closed:
            shred_deal_key(deal_id=deal_id_of(round_row.round_id))
            _set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=table.between_rounds_seconds))
        else:
            _set_table(table, phase=state.phase, deadline=_dt(state.deadline))
        return tick_of(table)


def _decline_absent(
    table: HouseTable, state: RoundState, players: dict[int, PlayerState], money: Money, now: datetime
) -> list[Event]:
    """Seed 003 at "No More Bets": the bets of the players who were not present
    at the table then (``games.tables.presence``; the moment is the betting deadline,
    or ``now`` if earlier) are declined, each of their holds released in full to
    their wallet (``money``). Returns the ``house_player.declined`` events."""
    deadline = _dt(state.deadline)
    moment = min(now, deadline) if deadline is not None else now
    betting = [pid for pid, player in players.items() if player.chips]
    away = presence.absent(family=presence.HOUSE, table_id=table.pk, player_ids=betting, at=moment)
    return _decline(state, players, away, money, iso(moment), reason="absent")


def _after(players: dict[int, PlayerState], events: list[Event]) -> dict[int, PlayerState]:
    """The players' states once ``events`` (on their streams) apply."""
    after = dict(players)
    for event in events:
        pid = int(event.stream)
        after[pid] = apply_player(after[pid], event)
    return after


def _decline(
    state: RoundState, players: dict[int, PlayerState], who: Collection[int], money: Money, at: str,
    *, reason: str,
) -> list[Event]:  # fmt: skip
    """``decide_decline`` for ``who``, each of their holds released in full to their wallet (``money``)."""
    events = decide_decline(state, players, who, at=at, reason=reason)
    for event in events:
        for chip in players[int(event.stream)].chips:
            money.settle_holds.append((chip.hold_id, 0, event))
    return events


def deal_id_of(round_id: str) -> str:
    """The deal id of a house round's deal key (``games.tables.dealkeys``)."""
    return f"house-round:{round_id}"


def _opened_deck(state: RoundState) -> OpenedDeck | None:
    """The round's committed deck, opened with its deal key and checked against
    the commitment: ``deck_mismatch`` (and nothing dealt, the step rolled back)
    for a sealed deck that does not open with the round's key (a wrong key, a
    tampered seal, a key already shredded) or is not the deck committed. A
    legacy ``plain`` deck opens without a key. ``None``: a round opened before
    deals were committed (it is shuffled at the deal, as it always was).

    The only place a house round's deck is decrypted; each step opens it once
    (no cache: the plaintext deck lives only as long as the step)."""
    if state.sealed_deck is None:
        return None
    assert state.config is not None
    deal_id = deal_id_of(state.config.round_id)
    try:
        key = None if is_plain(state.sealed_deck) else deal_key(deal_id=deal_id)
        return open_committed_deck(commitment=state.commitment, sealed_deck=state.sealed_deck, key=key, deal_id=deal_id)
    except DealKeyMissing as exc:
        gone = "the round's deal key is gone: its deck cannot be opened"
        raise DeckMismatch(gone, commitment=state.commitment) from exc
    except CardKeyError as exc:
        wrong = "the round's sealed deck does not open with its deal key"
        raise DeckMismatch(wrong, commitment=state.commitment) from exc


def _cards(opened: OpenedDeck | None) -> list[str] | None:
    return None if opened is None else opened.deck


def _deck_revealed(opened: OpenedDeck | None) -> DeckRevealed | None:
    """The event revealing the whole deck at the round's end (``merkle-sha256``
    decks; a legacy ``plain`` deck is answered from its own event)."""
    if opened is None or opened.scheme != MERKLE_ALGORITHM or opened.salt is None:
        return None
    return DeckRevealed(opened.salt, tuple(opened.deck))


def _showdown(
    table: HouseTable,
    round_row: HouseRound,
    state: RoundState,
    rows: dict[int, PlayerRow],
    players: dict[int, PlayerState],
    now: datetime,
    rng: RandomSource,
    opened: OpenedDeck | None,
) -> RoundState:
    assert state.config is not None
    config = state.config
    currency = config.currency
    progressive = config.definition.progressive_wager
    pools = {
        pool: pool_account(table_id=table.pk, game_code=table.game, pool=pool, currency=currency)
        for pool in config.definition.progressive_pools
    } if progressive in config.limits else {}  # fmt: skip
    balances = {pool: balance_of(account_id=account) for pool, account in pools.items()}
    wheel_segment: WheelSegment | None = None
    if config.wheel.get("segments"):
        wheel = Wheel(
            config.wheel.get("name", ""),
            str(config.wheel.get("version", "")),
            tuple(WheelSegment(s["label"], int(s["multiple"]), int(s["weight"])) for s in config.wheel["segments"]),
        )
        wheel_segment = wheel.spin(rng)
    with player_heads_read_meanwhile(round_row) as heads:
        showdown = decide_showdown(state, players, now=iso(now), pool_balances=balances, wheel_segment=wheel_segment,
                                   deck=_cards(opened), reveal=_deck_revealed(opened))  # fmt: skip
    # The heads are read after the step's first commit, whose appends the rows'
    # versions include. A head at another version (a command that committed
    # since the rows were read) is left out: read again when appending, it is
    # refused as stale, as before.
    head_hashes = {
        pid: digest for pid, (version, digest) in heads.items() if pid in rows and rows[pid].stream_version == version
    }
    house = house_account(table_id=table.pk, currency=currency)
    money = Money()
    settled_events = {int(e.stream): e for e in showdown.events if e.type == "house_player.settled"}
    accounts = wallets(list(showdown.settlements), currency) if showdown.settlements else {}
    round_closed = showdown.events[-1]
    for pid, settlement in showdown.settlements.items():
        player = players[pid]
        cause = settled_events[pid]
        for chip in player.chips:
            money.settle_holds.append((chip.hold_id, chip.held, cause))
        if player.call_hold_id:
            money.settle_holds.append((player.call_hold_id, player.call_amount, cause))
        shares = sum(showdown.hits.get(pool, {}).get(pid, 0) for pool in showdown.hits)
        wallet, balance = accounts[pid]
        before = balance + player.staked
        rows[pid].balance_before = before
        from_house = settlement.returned - shares
        if from_house:
            money.transfers.append((house, wallet, from_house, "payout", cause))
        for pool, hits in showdown.hits.items():
            if hits.get(pid):
                money.transfers.append((pools[pool], wallet, hits[pid], "jackpot", cause))
        rows[pid].balance_after = before - player.staked + settlement.returned
    for pool, amount in showdown.contributions.items():
        money.transfers.append((house, pools[pool], amount, "contribution", round_closed))
    for pool, amount in showdown.resets.items():
        if amount:
            money.transfers.append((house, pools[pool], amount, "pool_reset", round_closed))
    state, _ = commit(
        round_row=round_row, state=state, players=rows, events=showdown.events, money=money,
        idempotency_key=f"round:{round_row.round_id}:settle", actor="dealer", now=now, states=players,
        head_hashes=head_hashes,
    )  # fmt: skip
    return state


def pause_round(*, table_id: int, actor: str, reason: str, now: datetime) -> TableTick:
    """Operator pause ("malfunction"): the deadline stops; resume or void follows."""
    with transaction.atomic():
        table = _lock_table(table_id)
        round_row = HouseRound.objects.select_for_update().get(round_id=table.current_round_id)
        state = load_round(round_row.round_id)
        events = decide_pause(state, actor=actor, reason=reason, now=iso(now))
        commit(
            round_row=round_row, state=state, players={}, events=events, money=Money(),
            idempotency_key=f"round:{round_row.round_id}:pause:{state.version}", actor=actor, now=now,
        )  # fmt: skip
        _set_table(table, phase=PAUSED, deadline=None)
        return tick_of(table)


def resume_round(*, table_id: int, actor: str, now: datetime) -> TableTick:
    """Resume a paused round with the time that was left on its deadline."""
    with transaction.atomic():
        table = _lock_table(table_id)
        round_row = HouseRound.objects.select_for_update().get(round_id=table.current_round_id)
        state = load_round(round_row.round_id)
        events = decide_resume(state, actor=actor, now=iso(now))
        state, _ = commit(
            round_row=round_row, state=state, players={}, events=events, money=Money(),
            idempotency_key=f"round:{round_row.round_id}:resume:{state.version}", actor=actor, now=now,
        )  # fmt: skip
        _set_table(table, phase=state.phase, deadline=_dt(state.deadline))
        return tick_of(table)


def void_round(*, table_id: int, actor: str, reason: str, now: datetime, automatic: bool = False) -> TableTick:
    """Void the current round: every hold (bets, calls, plays) goes back to its
    wallet, the whole deck is revealed and the deal key shredded. A deck that no
    longer opens (``deck_mismatch``) does not stop the void: the round is voided
    without the reveal (its answer then shows the commitment alone)."""
    with transaction.atomic(), collector_paused():
        table = _lock_table(table_id)
        round_row = HouseRound.objects.select_for_update().get(round_id=table.current_round_id)
        state = load_round(round_row.round_id)
        rows, players = _players(round_row)
        try:
            reveal = _deck_revealed(_opened_deck(state))
        except DeckMismatch:
            log.warning("round %s: voided without revealing its deck: it does not open", round_row.round_id)
            reveal = None
        events = decide_void(
            state, players, actor=actor, reason=reason, now=iso(now), automatic=automatic, reveal=reveal
        )
        money = Money()
        for event in events:
            if event.type == "house_player.voided":
                player = players[int(event.stream)]
                for chip in player.chips:
                    money.settle_holds.append((chip.hold_id, 0, event))
                if player.call_hold_id:
                    money.settle_holds.append((player.call_hold_id, 0, event))
        commit(
            round_row=round_row, state=state, players=rows, events=events, money=money,
            idempotency_key=f"round:{round_row.round_id}:void", actor=actor, now=now,
        )  # fmt: skip
        shred_deal_key(deal_id=deal_id_of(round_row.round_id))
        _set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=table.between_rounds_seconds))
        return tick_of(table)


def void_overdue_rounds(*, now: datetime, grace_seconds: float | None = None) -> list[TableTick]:
    """RULES.md: a round that cannot continue (its dealer process gone past a grace
    period) is voided automatically, players told why. Voids the round of every
    table whose deadline passed more than ``grace_seconds`` ago (default
    ``CASINO_DEALER_GONE_VOID_SECONDS``) while a round is in play."""
    from django.conf import settings

    grace = settings.CASINO_DEALER_GONE_VOID_SECONDS if grace_seconds is None else grace_seconds
    cutoff = now - timedelta(seconds=grace)
    overdue = HouseTable.objects.filter(deadline__lt=cutoff).exclude(phase__in=[IDLE, BETWEEN, PAUSED, ""])
    ticks = []
    for table_id in overdue.values_list("pk", flat=True):
        ticks.append(void_round(table_id=table_id, actor="system", reason="dealer_gone", now=now, automatic=True))
    return ticks
