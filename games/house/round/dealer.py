"""The dealer's steps of a house-banked round: open, close betting (deal),
advance decision windows (timeout defaults), showdown and settlement, pause,
resume and void. Each ``decide_*`` validates and returns the events to append
(``Event``; ``stream`` "round" or a player id) or raises a ``RoundError`` and
returns nothing. Pure: ``now`` (ISO text), the shuffled deck and the wheel draw
are inputs.

The deck is shuffled when the round opens, before any bet, and recorded in
``house_round.shuffled`` with its public commitment and the salt and deck
sealed (docs/fairness.md; the sealing is the services', opaque here). All cards
of a round are dealt from that deck when betting closes (player hands face up,
dealer and board face down), in deck order, and board/dealer cards are
*revealed* street by street. ``cards_dealt`` records a face-down card by its
deck position only: the events never hold a card before its
``cards_revealed``, so a state folded from them has none either. The steps
that show face-down cards (the deal, a street's reveal, the showdown) take the
round's opened ``deck`` from the dealer service, the only code that opens it;
the steps that end the round take the ``DeckRevealed`` event to record, just
before ``house_round.closed`` (every card of a house round is public once it
is over).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from games.cards.cards import Card, parse_card
from games.cards.deal import DealtCard
from games.house.round.commands import missing_mandatory
from games.house.round.errors import RoundNotPaused, RoundOver, RoundPaused, TableFull, WrongPhase
from games.house.round.events import (
    BettingWindowClosed,
    CardAt,
    CardsDealt,
    CardsRevealed,
    DealtAt,
    DecisionMade,
    DecisionWindowOpened,
    DeckRevealed,
    DeckShuffled,
    Event,
    JackpotMeter,
    Paused,
    PlayerDeclined,
    PlayerSettled,
    PlayerVoided,
    PoolAmount,
    ProgressiveContributed,
    ProgressiveHit,
    Resumed,
    RoundClosed,
    RoundSettled,
    RoundVoided,
    SettledWager,
    SpinAward,
    WheelSpun,
)
from games.house.round.state import (
    BETTING,
    PER_SEAT_MAX,
    PlayerState,
    RoundConfig,
    RoundState,
    apply_player,
    apply_round,
    config_of,
    ms_between,
    plus_seconds,
)
from games.house.rules.bonus_spin import WheelSegment
from games.house.rules.definitions import (
    GameDefinition,
    InvalidCards,
    Play,
    RoundSettlement,
    WheelSpinRequired,
    bonus_spin_results,
    bonus_spin_triggered,
    settle_round,
)
from games.house.rules.outcomes import outcome_of
from games.house.rules.paytables import BONUS_SPIN_WAGER_UNITS, Basis
from games.house.rules.registry import pay_table


def decide_open(
    config: RoundConfig,
    *,
    now: str,
    commitment: str,
    sealed_deck: Mapping[str, Any],
    seeded_pools: Mapping[str, int] | None = None,
) -> list[Event]:
    """Open a round: betting window from ``now`` for ``betting_seconds``, and the
    deck it will be dealt from, already shuffled: ``commitment`` public from now
    on, ``sealed_deck`` (salt and deck, sealed by the caller) kept for the deal.
    ``seeded_pools``: every STAX pool's amount when the caller seeded one of them
    as the round opens (the meter changed: ``house_round.jackpot``), else ``None``."""
    opened = config.opened(
        opened_at=now,
        betting_deadline=plus_seconds(now, config.betting_seconds),
        warning_at=plus_seconds(now, config.betting_seconds - config.warning_seconds),
    )
    events = [opened.event(), DeckShuffled(commitment, sealed_deck).event()]
    if seeded_pools:
        events.append(jackpot_meter(config, seeded_pools).event())
    return events


def jackpot_meter(config: RoundConfig, amounts: Mapping[str, int]) -> JackpotMeter:
    """The meter event of ``amounts`` (pool -> minor units), in the game's pool order."""
    pools = tuple(
        PoolAmount(pool, int(amounts[pool])) for pool in config.definition.progressive_pools if pool in amounts
    )
    return JackpotMeter(config.currency, pools)


def pools_after(
    before: Mapping[str, int],
    contributions: Mapping[str, int],
    hits: Mapping[str, Mapping[int, int]],
    resets: Mapping[str, int],
) -> dict[str, int]:
    """Each pool's amount after a settlement: before + this round's contribution
    - the shares paid on a hit + the reset added after it (the ledger's legs)."""
    return {
        pool: amount + contributions.get(pool, 0) - sum(hits.get(pool, {}).values()) + resets.get(pool, 0)
        for pool, amount in before.items()
    }


def spin_awards(config: RoundConfig, board: Sequence[Card], segment: WheelSegment) -> tuple[SpinAward, ...]:
    """What a Bonus Spin wager of each size the table's limits allow returns on this spin."""
    limit = config.limits.get("bonus_spin", {})
    unit = config.currency_unit
    stakes = [
        u * unit for u in BONUS_SPIN_WAGER_UNITS if int(limit.get("min", 0)) <= u * unit <= int(limit.get("max", 0))
    ]
    results = bonus_spin_results(stakes, board, segment, unit)
    return tuple(SpinAward(r.stake // unit, r.stake, r.returned) for r in results)


def decide_decline(
    state: RoundState,
    players: Mapping[int, PlayerState],
    absent: Collection[int],
    *,
    at: str,
    reason: str = "absent",
) -> list[Event]:
    """Seed 003: a player who was not present at "No More Bets" (``absent``,
    moment ``at``) has their bets declined: one ``house_player.declined`` per
    such player with bets, on their stream. Their holds go back to the wallet
    (the caller's money legs) and, their chips gone, they are no participant
    of ``decide_close_betting``. ``reason``: ``absent``, or
    ``mandatory_wager_missing`` for the players ``incomplete_bettors`` names."""
    _require(state, BETTING)
    return [
        PlayerDeclined(players[pid].staked, players[pid].totals(), reason, at).event(stream=pid)
        for pid in sorted(absent)
        if pid in players and players[pid].chips
    ]


def incomplete_bettors(state: RoundState, players: Mapping[int, PlayerState]) -> list[int]:
    """Seed 002:13 (the property may require STAX and/or Bonus Spin as a mandatory
    wager): the players with bets that leave out one of the round's mandatory side
    wagers at "No More Bets". They do not play the round: ``decide_decline``
    with reason ``mandatory_wager_missing`` returns every chip."""
    config = config_of(state)
    if not config.mandatory_wagers:
        return []
    return sorted(pid for pid, p in players.items() if p.chips and missing_mandatory(config, p.totals()))


def decide_close_betting(
    state: RoundState,
    players: Mapping[int, PlayerState],
    *,
    now: str,
    deck: Sequence[Card],
    seats: Mapping[int, int | None] | None = None,
    reveal: DeckRevealed | None = None,
    face_down_in_clear: bool = False,
) -> list[Event]:
    """Betting window over: record the participants (players with bets), deal every
    card of the round from the top of ``deck`` (the round's committed deck), and
    open the first decision window (or close an empty round, recording
    ``reveal`` before its close). ``cards_dealt`` lists the cards in the order
    they leave the deck (each with its ``deck_position``, ``deal_order``): the
    players' cards face up, the dealer's and the board's as positions only.
    ``face_down_in_clear``: a round opened before deals were committed has no
    deck to open later, so its face-down cards are recorded as they always were."""
    _require(state, BETTING)
    config = config_of(state)
    participants = sorted(pid for pid, p in players.items() if p.chips)
    seat_numbers = {str(pid): (seats or {}).get(pid) for pid in participants}
    events = [BettingWindowClosed(now, tuple(participants), seat_numbers).event()]
    if not participants:
        return [*events, *_revealed(reveal), RoundClosed(now, "no_bets").event()]
    if config.hand_mode == "per_seat" and len(participants) > PER_SEAT_MAX:
        # Unreachable through the services: a first chip beyond the round's hands is
        # refused (``commands.check_room``) and a seat given up before betting closes
        # takes its bets back (``commands.decide_leave``). Kept as the deck's guard.
        raise TableFull(participants=len(participants))
    if len({c.index for c in deck}) != len(deck):
        raise InvalidCards("the deck has duplicate cards")
    cards = [str(card) for card in deck]
    dealt: list[DealtAt] = []
    owners = ["shared"] if config.hand_mode == "shared" else [f"player:{pid}" for pid in participants]
    for owner in owners:
        for position in range(2):
            dealt.append(DealtAt(owner, position, len(dealt), True, cards[len(dealt)]))
    for owner, count in (("dealer", 2), ("board", 5)):
        for position in range(count):
            clear = cards[len(dealt)] if face_down_in_clear else None
            dealt.append(DealtAt(owner, position, len(dealt), False, clear))
    events.append(CardsDealt(tuple(dealt)).event())
    interim = state
    for event in events:
        interim = apply_round(interim, event)
    return events + _next_street(interim, players, now=now, after=None, pause=config.deal_pause_seconds, deck=cards)


def deal_order(dealt: CardsDealt, deck: Sequence[str]) -> list[DealtCard]:
    """Which deck position went to whom, with the card the (revealed) ``deck``
    holds there: ``decide_close_betting`` deals the deck from the top in the
    order ``cards_dealt`` lists its positions."""
    return [DealtCard(c.deck_position, deck[c.deck_position], c.to, c.position) for c in dealt.cards]


def face_down_card(shown: str | None, position: int, deck: Sequence[str] | None) -> str:
    """A dealer or board card: from the round's opened ``deck`` at its deck
    ``position``, or as the events already show it (``shown``: revealed, or a
    round dealt before commitments). ``ValueError`` when neither has it (a
    step that shows a face-down card needs the deck)."""
    if deck is not None:
        return str(deck[position])
    if shown is None:
        raise ValueError("a face-down card is shown from the round's deck: the dealer service passes it")
    return shown


def _revealed(reveal: DeckRevealed | None) -> list[Event]:
    return [] if reveal is None else [reveal.event()]


# Board cards visible when a street's decision is taken (all three games).
STREET_REVEALS = {"preflop": 0, "flop": 3, "river": 5}


def _next_street(
    state: RoundState,
    players: Mapping[int, PlayerState],
    *,
    now: str,
    after: str | None,
    pause: int,
    deck: Sequence[str] | None,
) -> list[Event]:
    """Open the next decision window someone still needs, revealing its board
    cards (from ``deck``); with none left, reveal everything (showdown follows in
    ``decide_showdown``)."""
    config = config_of(state)
    definition = config.definition
    streets = [p.street for p in definition.decision_points]
    start = 0 if after is None else streets.index(after) + 1
    active = [pid for pid in state.participants if not players[pid].done_deciding]
    events: list[Event] = []
    revealed = state.board_revealed
    for street in streets[start:]:
        if not active:
            break
        show = STREET_REVEALS[street]
        if show > revealed:
            events.append(_reveal_board(state, revealed, show, street, deck))
            revealed = show
        deadline = plus_seconds(now, pause + config.decision_seconds)
        events.append(DecisionWindowOpened(street, now, deadline).event())
        return events
    if revealed < 5:
        events.append(_reveal_board(state, revealed, 5, "showdown", deck))
    return events


def _reveal_board(state: RoundState, start: int, end: int, street: str, deck: Sequence[str] | None) -> Event:
    cards = tuple(
        CardAt("board", i, face_down_card(state.board[i], state.board_positions[i], deck)) for i in range(start, end)
    )
    return CardsRevealed(street, cards).event()


def auto_decisions(state: RoundState, players: Mapping[int, PlayerState], *, now: str) -> list[Event]:
    """The timeout default for every participant who has not decided on the open street."""
    config = config_of(state)
    point = config.definition.decision_point(state.phase)
    option = point.option(point.timeout_default)
    # Every timeout default of a street is the same event: one data mapping,
    # shared by every player's envelope (event data is never changed once made).
    made = DecisionMade(point.street, option.name, True, 0, option.folds, None, now)
    data = made.to_data()
    return [
        Event(made.type, data, stream=pid)
        for pid in state.participants
        if not players[pid].done_deciding and not players[pid].decided(point.street)
    ]


def decide_advance(
    state: RoundState, players: Mapping[int, PlayerState], *, now: str, deck: Sequence[str] | None = None
) -> list[Event]:
    """The open decision window is over (deadline passed, or everyone decided):
    timeout defaults for the rest, then the next window or the showdown reveal
    (board cards from the round's opened ``deck``)."""
    if state.closed or state.voided:
        raise WrongPhase(phase=state.phase)
    if state.paused:
        raise RoundPaused()
    config = config_of(state)
    if state.phase not in {p.street for p in config.definition.decision_points}:
        raise WrongPhase(phase=state.phase)
    events = auto_decisions(state, players, now=now)
    after = dict(players)
    for event in events:
        pid = int(event.stream)
        after[pid] = apply_player(after[pid], event)
    return events + _next_street(state, after, now=now, after=state.phase, pause=0, deck=deck)


def needs_showdown(state: RoundState, players: Mapping[int, PlayerState]) -> bool:
    """Every board card revealed and no decision window still waiting for anyone: settle next."""
    if not state.participants or state.board_revealed < 5 or state.settled or state.voided or state.paused:
        return False
    return all_decided(state, players)


@dataclass(frozen=True)
class Showdown:
    events: list[Event]
    settlements: Mapping[int, RoundSettlement]
    contributions: Mapping[str, int]  # pool -> amount moved from the house this round
    hits: Mapping[str, Mapping[int, int]]  # pool -> player -> share
    resets: Mapping[str, int]  # pool -> reset amount added after a hit


def progressive_contributions(config: RoundConfig, players: Mapping[int, PlayerState]) -> dict[str, int]:
    """Per pool: floor(sum of STAX stakes x rate in basis points / 10 000)."""
    rates = config.progressives.get("contribution_bp", {})
    wager = config.definition.progressive_wager
    stax_total = sum(players[pid].totals().get(wager, 0) for pid in players) if wager else 0
    result = {}
    for pool in config.definition.progressive_pools:
        amount = stax_total * int(rates.get(pool, 0)) // 10_000
        if amount:
            result[pool] = amount
    return result


def decide_showdown(
    state: RoundState,
    players: Mapping[int, PlayerState],
    *,
    now: str,
    pool_balances: Mapping[str, int],
    wheel_segment: WheelSegment | None,
    deck: Sequence[str] | None = None,
    reveal: DeckRevealed | None = None,
) -> Showdown:
    """Reveal the dealer (from the round's opened ``deck``), settle every
    participant's wagers, contribute to and pay the STAX pools, record
    ``reveal`` (the whole deck) and close. ``pool_balances`` are the pools
    before this round's contributions (every pool of a table offering STAX, else
    empty); when contributions or hits change them, ``house_round.jackpot``
    records every pool's amount after the settlement's money legs (the meter's
    delta). ``wheel_segment`` the secure draw when
    the board triggers Bonus Spin Xtreme (one spin per round: the board is
    common to everyone)."""
    config = config_of(state)
    if state.settled or state.voided or state.board_revealed < 5:
        raise WrongPhase(phase=state.phase)
    definition = config.definition
    dealer_cards = [face_down_card(c, p, deck) for c, p in zip(state.dealer, state.dealer_positions, strict=True)]
    board_cards = tuple(face_down_card(c, p, deck) for c, p in zip(state.board, state.board_positions, strict=True))
    dealer = [parse_card(c) for c in dealer_cards]
    board = [parse_card(c) for c in board_cards]
    events: list[Event] = [
        CardsRevealed("showdown", tuple(CardAt("dealer", i, c) for i, c in enumerate(dealer_cards))).event()
    ]
    any_spin = any(players[pid].totals().get("bonus_spin") for pid in state.participants)
    if any_spin and bonus_spin_triggered(board):
        if wheel_segment is None:
            raise WheelSpinRequired()
        wheel = config.wheel
        hand = outcome_of(Basis.COMMUNITY_FIVE, board)
        spun = WheelSpun(wheel.get("name", ""), wheel.get("version", ""), wheel_segment.label,
                         wheel_segment.multiple, wheel_segment.weight, hand,
                         spin_awards(config, board, wheel_segment))  # fmt: skip
        events.append(spun.event())
    else:
        wheel_segment = None
    contributions = progressive_contributions(config, {p: players[p] for p in state.participants})
    if contributions:
        events.append(ProgressiveContributed(contributions).event())
    tables = {w: pay_table(config.game, w, n) for w, n in config.pay_tables.items()}
    # First pass finds the progressive hits, so each pool can be shared out.
    provisional: dict[int, RoundSettlement] = {}
    memo: dict[Any, RoundSettlement] = {}
    for pid in state.participants:
        provisional[pid] = _settle(
            definition, tables, state, players[pid], dealer, board, {}, wheel_segment, config, memo
        )
    hitters: dict[str, list[int]] = {}
    for pid, settlement in provisional.items():
        for result in settlement.wagers:
            if result.progressive:
                hitters.setdefault(result.progressive, []).append(pid)
    hits: dict[str, dict[int, int]] = {}
    resets: dict[str, int] = {}
    reset_amounts = config.progressives.get("reset", {})
    for pool, pids in sorted(hitters.items()):
        balance = pool_balances.get(pool, 0) + contributions.get(pool, 0)
        share, remainder = divmod(balance, len(pids))
        hits[pool] = dict.fromkeys(pids, share)
        resets[pool] = int(reset_amounts.get(pool, 0))
        shares = tuple((pid, share) for pid in pids)
        events.append(ProgressiveHit(pool, balance, shares, remainder, resets[pool]).event())
    if pool_balances and (contributions or hits):
        events.append(jackpot_meter(config, pools_after(pool_balances, contributions, hits, resets)).event())
    settlements: dict[int, RoundSettlement] = {}
    settled_data: dict[int, dict[str, Any]] = {}
    for pid in state.participants:
        awards = {pool: hits[pool][pid] for pool in hits if pid in hits[pool]}
        settlement = (
            _settle(definition, tables, state, players[pid], dealer, board, awards, wheel_segment, config, memo)
            if awards
            else provisional[pid]
        )
        settlements[pid] = settlement
        # Players who share cards, stakes and decisions share one settlement
        # object (the memo above), so their events share one data mapping, built
        # once (event data is never changed once made; the ledger then encodes
        # it once too): one typed event per distinct settlement, not per player.
        data = settled_data.get(id(settlement))
        if data is None:
            data = settled_data[id(settlement)] = player_settled(settlement, at=now).to_data()
        events.append(Event(PlayerSettled.type, data, stream=pid))
    first = next(iter(settlements.values()))
    settled = RoundSettled(
        dealer={**_hand(first.dealer), "qualifies": first.dealer_qualifies},
        board=board_cards,
        players=len(settlements),
        staked=sum(s.staked for s in settlements.values()),
        returned=sum(s.returned for s in settlements.values()),
        at=now,
    )
    events.append(settled.event())
    events += _revealed(reveal)
    events.append(RoundClosed(now, "settled").event())
    return Showdown(events, settlements, contributions, hits, resets)


def player_settled(settlement: RoundSettlement, *, at: str) -> PlayerSettled:
    """``house_player.settled`` (schema 2): the player's result with every wager's
    settlement inside (schema 1 had one ``house_wager.settled`` event per wager
    before it; see ``games.house.event_types``)."""
    wagers = tuple(
        SettledWager(r.wager, r.stake, r.outcome, r.returned, str(r.rounding_kept), r.hand, r.progressive, r.wheel)
        for r in settlement.wagers
    )
    return PlayerSettled(settlement.result, settlement.staked, settlement.returned, settlement.net,
                         _hand(settlement.player), wagers, at)  # fmt: skip


def _hand(value: Any) -> dict[str, Any]:
    return {"category": value.category.value, "best_five": [str(c) for c in value.best_five]}


def _settle(
    definition: GameDefinition,
    tables: Mapping[str, Any],
    state: RoundState,
    player: PlayerState,
    dealer: list[Card],
    board: list[Card],
    awards: Mapping[str, int],
    wheel_segment: WheelSegment | None,
    config: RoundConfig,
    memo: dict[Any, RoundSettlement] | None = None,
) -> RoundSettlement:
    cards = state.hand_of(player.player_id)
    multiplier = player.call_amount // player.totals()["ante"] if player.call_amount else 0
    stakes = player.placed_stakes()
    # Settlement is a pure function of these: in shared-hand mode thousands of
    # players share the cards and most share their stakes and decisions, so
    # each distinct combination is evaluated once per showdown.
    key = (cards, tuple(sorted(stakes.items())), player.decisions, multiplier, player.folded,
           tuple(sorted(awards.items())))  # fmt: skip
    if memo is not None and key in memo:
        return memo[key]
    hand = [parse_card(c) for c in cards]
    play = Play(player.decisions, multiplier, player.folded)
    settlement = settle_round(
        definition,
        tables=tables,
        player=hand,
        dealer=dealer,
        board=board,
        stakes=stakes,
        decisions=play,
        progressive_awards=awards,
        wheel_spin=wheel_segment,
        currency_unit=config.currency_unit,
    )
    if memo is not None:
        memo[key] = settlement
    return settlement


OPERATOR_CONTROLS = ("pause", "resume", "void")


def check_operator_control(state: RoundState, action: str) -> None:
    """Refuse an operator control the round's state does not admit, with its own
    code: ``round_over`` (settled, voided or closed: nothing applies),
    ``round_paused`` (pause on a paused round), ``round_not_paused`` (resume on
    a round in play). Void applies to any round not over, paused or not."""
    if action not in OPERATOR_CONTROLS:
        raise ValueError(f"unknown round control {action!r}")
    if state.closed or state.voided or state.settled:
        raise RoundOver(phase=state.phase)
    if action == "pause" and state.paused:
        raise RoundPaused()
    if action == "resume" and not state.paused:
        raise RoundNotPaused(phase=state.phase)


def operator_controls(state: RoundState) -> tuple[str, ...]:
    """The operator controls that apply to the round now (``check_operator_control`` admits them)."""
    if state.closed or state.voided or state.settled:
        return ()
    return ("resume", "void") if state.paused else ("pause", "void")


def decide_pause(state: RoundState, *, actor: str, reason: str, now: str) -> list[Event]:
    if state.closed or state.voided or state.settled:
        raise WrongPhase(phase=state.phase)
    if state.paused:
        raise RoundPaused()
    remaining = max(0, ms_between(now, state.deadline)) if state.deadline else 0
    return [Paused(actor, reason, now, state.phase, remaining).event()]


def decide_resume(state: RoundState, *, actor: str, now: str) -> list[Event]:
    if not state.paused or state.closed or state.voided:
        raise WrongPhase(phase=state.phase, paused=state.paused)
    deadline = plus_seconds(now, (state.paused_remaining_ms or 0) / 1000)
    return [Resumed(actor, now, deadline).event()]


def decide_void(
    state: RoundState,
    players: Mapping[int, PlayerState],
    *,
    actor: str,
    reason: str,
    now: str,
    automatic: bool,
    reveal: DeckRevealed | None = None,
) -> list[Event]:
    """Void: every wager of the round (calls/plays included) goes back, nothing
    is paid; ``reveal`` (the whole deck) is recorded before the close."""
    if state.closed or state.voided or state.settled:
        raise WrongPhase(phase=state.phase)
    events = [RoundVoided(actor, reason, automatic, now).event()]
    for pid, player in sorted(players.items()):
        if player.staked:
            events.append(PlayerVoided(player.staked, reason, now).event(pid))
    events += _revealed(reveal)
    events.append(RoundClosed(now, "voided").event())
    return events


def all_decided(state: RoundState, players: Mapping[int, PlayerState]) -> bool:
    """Every participant has decided on the open street (or is done): advance early."""
    return all(players[pid].done_deciding or players[pid].decided(state.phase) for pid in state.participants)


def _require(state: RoundState, phase: str) -> None:
    if state.paused:
        raise RoundPaused()
    if state.phase != phase or state.closed:
        raise WrongPhase(phase=state.phase, expected=phase)
