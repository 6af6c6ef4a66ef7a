"""Random legal hands played through our engine and pokerkit side by side.

Each hand gets random stakes (no-limit, pot-limit or fixed-limit; 2-10
players; antes, big-blind antes and straddles sometimes), random stacks (many
short, so all-ins and side pots are common), a shuffled deck and the seed's
rake, and a random legal action at every turn. At each turn the two engines
must agree on who acts, the amount to call and the raise bounds; at the end
on the final stacks, the pots and the rake. Where a rule differs on purpose
(see docs/poker.md) the driver picks an action both allow and counts the
difference by name; any other disagreement is a failure. Half the hands are
played under pokerkit's own rules (its default fixed-limit cap and its
short all-in reopening rule, its split of tied pots), where no rule
difference is tolerated; the other half under our table defaults. A table
splits each pot on its own (``PotSplit.PER_POT``), pokerkit merges the pots
left with the same players first; a table-rules hand is also settled by
pokerkit's split (the same commands under ``PotSplit.POKERKIT``), and that
settlement must give pokerkit's stacks exactly.

Two more checks live here: ``SCRIPTED_HANDS``, short all-in hands (issue
#23) played action by action in both engines, and ``run_pokerkit_replay``,
hands pokerkit plays by itself under its default ``NoLimitTexasHoldem`` and
``FixedLimitTexasHoldem`` definitions, written as PHH and replayed through
``replay_phh``, which must reach pokerkit's finishing stacks exactly.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from games.poker.engine import errors
from games.poker.engine.events import Event
from games.poker.engine.hand import (
    Act,
    Action,
    Command,
    DealBoard,
    DealHoleCards,
    HandState,
    LegalActions,
    Phase,
    SeatSpec,
    StartHand,
    Strength,
    apply,
    decide,
    default_strength,
    legal_actions,
    next_deal,
)
from games.poker.engine.rules import (
    POKERKIT_CAP,
    TABLE_DEFAULT_CAP,
    HandConfig,
    PotSplit,
    RakeRule,
    Reopening,
    Variant,
    seed_rake_rule,
)
from games.poker.tooling.pokerkit_bridge import SeedRake, create_state, deal_hole, taken

DECK = tuple(r + s for r in "23456789TJQKA" for s in "shdc")
KNOWN_DIFFERENCES = {
    "fixed_limit_preflop_cap": "fixed limit preflop: the big blind is the bet, so three raises cap it (pokerkit: four)",
    "short_all_in_reopen": "a short all-in does not reopen betting to a player who acted (pokerkit reopens in "
    "some cases: an opening short all-in under the minimum bet, or short all-ins adding up after a call)",
    "short_all_ins_add_up": "a player who acted may raise when the short all-ins since then add up to a full "
    "raise (pokerkit counts them only since its last full-raise total, so it can refuse)",
    "lone_player_check": "pokerkit asks the only player with chips left to check; we skip that no-op turn",
}


class DifferentialMismatch(AssertionError):
    pass


@dataclass
class Spec:
    config: HandConfig
    stacks: tuple[int, ...]
    deck: tuple[str, ...]


@dataclass
class DiffReport:
    hands: int = 0
    by_variant: Counter[str] = field(default_factory=Counter)
    pokerkit_rules: int = 0  # hands under pokerkit's cap, reopening rule and pot split
    # Table-rules hands whose per-pot split paid odd chips elsewhere than
    # pokerkit's merged split; settled by pokerkit's split they matched it.
    per_pot_odd_chips: int = 0
    known: Counter[str] = field(default_factory=Counter)
    showdowns: int = 0
    side_pots: int = 0
    all_ins: int = 0
    raked: int = 0


def random_spec(rng: random.Random) -> Spec:
    variant = rng.choice(list(Variant))
    n = rng.randint(2, 10)
    big = rng.choice([2, 4, 10, 20, 50, 100, 200, 1000])
    small = rng.choice([big // 2, big // 2, big // 4, 0]) if big >= 4 else 1
    blinds: tuple[int, ...] = (small, big)
    ante = 0
    antes: tuple[int, ...] = ()
    roll = rng.random()
    if roll < 0.15:
        ante = max(1, big // rng.choice([5, 10]))
    elif roll < 0.22:
        antes = (0, big)  # big-blind ante
    if n >= 4 and rng.random() < 0.12:
        blinds = (small, big, 2 * big)
    stacks = tuple(_stack(rng, big) for _ in range(n))
    rake: RakeRule | None = None
    if rng.random() < 0.7:
        rule = seed_rake_rule(variant, players=n, small_blind=small)
        rake = RakeRule(rule.percent_bp, rule.minimum, rule.cap, rng.random() < 0.8)
    # Half the hands under pokerkit's own rules (its default fixed-limit cap,
    # reopening rule and pot split: no difference allowed), half under our
    # table defaults.
    pokerkit_rules = rng.random() < 0.5
    cap = POKERKIT_CAP if pokerkit_rules else TABLE_DEFAULT_CAP
    config = HandConfig(
        variant=variant,
        blinds_or_straddles=blinds,
        antes=antes,
        ante=ante,
        rake=rake,
        raise_cap=cap.bets,
        blind_is_bet=cap.blind_is_bet,
        reopening=Reopening.POKERKIT if pokerkit_rules else Reopening.ACTED,
        pot_split=PotSplit.POKERKIT if pokerkit_rules else PotSplit.PER_POT,
    )
    deck = list(DECK)
    rng.shuffle(deck)
    return Spec(config, stacks, tuple(deck))


def _stack(rng: random.Random, big: int) -> int:
    roll = rng.random()
    if roll < 0.25:
        return rng.randint(1, 3 * big)
    if roll < 0.6:
        return rng.randint(3 * big, 30 * big)
    return rng.randint(30 * big, 250 * big)


def play(
    spec: Spec,
    rng: random.Random,
    *,
    strength: Strength = default_strength,
    report: DiffReport | None = None,
    events: list[Event] | None = None,
) -> HandState:
    """Play one random hand through both engines; raise on disagreement.
    Our events are appended to ``events`` when given."""
    report = report if report is not None else DiffReport()
    config = spec.config
    n = len(spec.stacks)
    seats = tuple(SeatSpec(seat, f"p{seat}", stack) for seat, stack in enumerate(spec.stacks, start=1))
    button = n  # position order is then seat order: p1 is left of the button
    pk_pots: list[int] = []
    hook = SeedRake(config.rake or RakeRule(0, 0, 0, False), pk_pots)
    pk = create_state(config, spec.stacks, rake=hook)

    state: HandState | None = None
    commands: list[Command] = []

    def run(command: StartHand | DealHoleCards | DealBoard | Act) -> HandState:
        nonlocal state
        commands.append(command)
        new = decide(state, command, strength=strength)
        for event in new:
            state = apply(state, event)
        if events is not None:
            events.extend(new)
        assert state is not None
        return state

    st = run(StartHand("diff", config, seats, button))
    while st.phase is not Phase.COMPLETE:
        if st.phase in (Phase.DEALING, Phase.BOARD):
            _pk_catch_up(pk, report, pk_pots)
            deal = next_deal(st, spec.deck)
            assert deal is not None
            if isinstance(deal, DealHoleCards):
                deal_hole(pk, [deal.cards[p.seat] for p in st.players])  # type: ignore[misc]
            else:
                burn = spec.deck[2 * n + {0: 0, 1: 4, 2: 6}[st.street]]
                pk.burn_card(burn)
                pk.deal_board("".join(deal.cards))
            st = run(deal)
            continue
        assert st.phase is Phase.BETTING
        st = run(_choose(st, pk, rng, report))
    _pk_catch_up(pk, report, pk_pots)
    if pk.status:
        raise DifferentialMismatch(f"pokerkit hand still running after ours ended: {pk.operations[-3:]}")
    _compare_end(st, pk, hook, spec, pk_pots, report, _pokerkit_split(st, commands, strength))
    report.hands += 1
    report.by_variant[config.variant.value] += 1
    report.pokerkit_rules += config.reopening is Reopening.POKERKIT
    report.showdowns += int(sum(1 for p in st.players if not p.folded) > 1)
    report.side_pots += int(len(st.pots) > 1)
    report.all_ins += int(any(p.stack == 0 for p in st.players if not p.folded) or len(st.pots) > 1)
    report.raked += int(st.rake > 0)
    return st


def _pk_catch_up(pk: object, report: DiffReport, pots: list[int] | None = None) -> None:
    """Let pokerkit do the turns our engine skips or automates; ``pots``
    gets pokerkit's pots as they stand before it kills losing hands (killing
    merges pots that keep the same eligible players)."""
    from pokerkit import State

    assert isinstance(pk, State)
    killed = False
    while True:
        if pots is not None and pk.status and pk._pots is None and not killed:
            pots[:] = [pot.amount for pot in pk.pots]
        if pk.actor_index is not None:
            if pk.checking_or_calling_amount != 0:
                raise DifferentialMismatch(f"pokerkit expects player {pk.actor_index} to act; we do not")
            pk.check_or_call()
            report.known["lone_player_check"] += 1
        elif pk.can_show_or_muck_hole_cards():
            pk.show_or_muck_hole_cards(True)
        elif pk.can_kill_hand():
            pk.kill_hand()
            killed = True
        else:
            return


def _choose(st: HandState, pk: object, rng: random.Random, report: DiffReport) -> Act:
    from pokerkit import State

    assert isinstance(pk, State)
    legal = legal_actions(st)
    assert legal is not None
    if pk.actor_index != st.to_act:
        raise DifferentialMismatch(f"actor: ours position {st.to_act}, pokerkit {pk.actor_index}")
    if pk.checking_or_calling_amount != legal.call_amount:
        raise DifferentialMismatch(f"call amount: ours {legal.call_amount}, pokerkit {pk.checking_or_calling_amount}")
    pk_raise = pk.can_complete_bet_or_raise_to()
    can_raise = legal.can_raise
    if pk_raise and can_raise:
        bounds = (pk.min_completion_betting_or_raising_to_amount, pk.max_completion_betting_or_raising_to_amount)
        if bounds != (legal.min_to, legal.max_to):
            raise DifferentialMismatch(f"raise bounds: ours {(legal.min_to, legal.max_to)}, pokerkit {bounds}")
    elif pk_raise != can_raise:
        if st.config.reopening is Reopening.POKERKIT:  # pokerkit's own rules: no difference is deliberate
            raise DifferentialMismatch(f"may raise: ours {can_raise} ({legal.refusal}), pokerkit {pk_raise}")
        fixed_preflop = st.config.variant is Variant.FIXED_LIMIT and st.street == 0
        if legal.refusal is errors.RaiseCapReached and fixed_preflop and pk_raise:
            report.known["fixed_limit_preflop_cap"] += 1
        elif legal.refusal is errors.BettingNotReopened and pk_raise:
            report.known["short_all_in_reopen"] += 1
        elif can_raise and _pokerkit_short_all_in_refusal(pk):
            report.known["short_all_ins_add_up"] += 1
        else:
            raise DifferentialMismatch(f"may raise: ours {can_raise} ({legal.refusal}), pokerkit {pk_raise}")
        can_raise = False
    seat = legal.seat
    roll = rng.random()
    if legal.call_amount > 0 and roll < 0.18:
        pk.fold()
        return Act(seat, Action.FOLD)
    if can_raise and roll > 0.62:
        pick = rng.random()
        if pick < 0.45:
            to = legal.min_to
        elif pick < 0.65:
            to = legal.max_to
        else:
            to = rng.randint(legal.min_to, legal.max_to)
        pk.complete_bet_or_raise_to(to)
        if to == st.players[st.to_act].stack + st.players[st.to_act].bet and rng.random() < 0.5:
            return Act(seat, Action.ALL_IN)
        return Act(seat, Action.BET if st.max_bet == 0 else Action.RAISE, to)
    pk.check_or_call()
    return Act(seat, Action.CALL if legal.call_amount > 0 else Action.CHECK)


def _pokerkit_split(st: HandState, commands: list[Command], strength: Strength) -> HandState:
    """The hand settled by pokerkit's split of tied pots: ``st`` when it was
    played under it, else the same commands replayed under it."""
    if st.config.pot_split is PotSplit.POKERKIT:
        return st
    state: HandState | None = None
    for command in commands:
        if isinstance(command, StartHand):
            command = replace(command, config=replace(command.config, pot_split=PotSplit.POKERKIT))
        for event in decide(state, command, strength=strength):
            state = apply(state, event)
    assert state is not None
    return state


def _pokerkit_short_all_in_refusal(pk: object) -> bool:
    """pokerkit refuses because the actor acted before short all-ins that,
    counted since its last reset, fall short of a full raise."""
    from pokerkit import State

    assert isinstance(pk, State)
    shorts = pk.consecutive_short_all_in_amounts
    return (
        pk.actor_index in pk.acted_player_indices
        and bool(shorts)
        and sum(shorts) < pk.completion_betting_or_raising_amount
    )


def _compare_end(
    st: HandState,
    pk: object,
    hook: SeedRake,
    spec: Spec,
    pk_pots: list[int],
    report: DiffReport,
    settled: HandState,
) -> None:
    """``settled``: the hand settled by pokerkit's split of tied pots
    (``_pokerkit_split``); its stacks must be pokerkit's exactly."""
    from pokerkit import State

    assert isinstance(pk, State)
    theirs = tuple(pk.stacks)
    if settled.stacks != theirs:
        raise DifferentialMismatch(f"final stacks: ours {settled.stacks}, pokerkit {theirs}")
    if settled is not st and st.stacks != settled.stacks:
        # The table's per-pot split: only the odd chips of pots pokerkit merged may differ.
        if not (len(settled.pots) < len(st.pots) and st.split_pots and st.rake == settled.rake):
            raise DifferentialMismatch(f"per-pot split {st.stacks} against pokerkit's split {settled.stacks}")
        report.per_pot_odd_chips += 1
    if sum(st.stacks) + st.rake != sum(spec.stacks):
        raise DifferentialMismatch("chips not conserved")
    if st.rake != taken(pk):
        raise DifferentialMismatch(f"rake: ours {st.rake}, pokerkit {taken(pk)}")
    alive = sum(1 for p in st.players if not p.folded)
    if alive > 1:
        natural = list(st.pots) if st.config.pot_split is PotSplit.PER_POT else pk_pots
        awarded = _awarded_pots(pk)
        if natural != pk_pots or list(settled.pots) != awarded:
            raise DifferentialMismatch(
                f"pots: ours {st.pots} (pokerkit's split {settled.pots}), pokerkit {pk_pots} (after killing {awarded})"
            )
    if alive == 1 and sum(st.pots) != hook.total:
        raise DifferentialMismatch(f"pot: ours {st.pots}, pokerkit {hook.pots} + the winner's matched bet")


def _awarded_pots(pk: object) -> list[int]:
    """pokerkit's pots as it awarded them (after killing the losing hands),
    before rake: each pot's rake plus the chips it pushed."""
    from pokerkit import ChipsPushing, State

    assert isinstance(pk, State)
    pushed: Counter[int] = Counter()
    for operation in pk.operations:
        if isinstance(operation, ChipsPushing):
            pushed[operation.pot_index] += sum(operation.amounts)
    return [pot.raked_amount + pushed[k] for k, pot in enumerate(pk._pots or ())]


def run_differential(
    hands: int,
    *,
    seed: int = 0,
    strength: Strength = default_strength,
    progress: Callable[[int], None] | None = None,
) -> DiffReport:
    """Play ``hands`` random hands (reproducible from ``seed``)."""
    rng = random.Random(seed)
    report = DiffReport()
    for index in range(hands):
        spec = random_spec(rng)
        try:
            play(spec, rng, strength=strength, report=report)
        except DifferentialMismatch as exc:
            raise DifferentialMismatch(f"hand {index} (seed {seed}): {exc}; spec {spec}") from exc
        if progress is not None and (index + 1) % 1000 == 0:
            progress(index + 1)
    return report


# ------------------------------------------------ scripted short all-in hands


@dataclass(frozen=True)
class Scripted:
    """A hand played action by action in both engines. ``actions`` are PHH
    style (``"p2 cbr 590"``, ``"p1 cc"``, ``"p3 f"``; ``d`` for the next board
    cards from ``deck``; ``streets`` writes them a betting round a line);
    ``refused`` maps an action's index to the error code our engine must raise
    there (pokerkit must refuse it too), after which the script goes on with
    the next action."""

    name: str
    stacks: tuple[int, ...]
    actions: tuple[str, ...]
    refused: dict[int, str] = field(default_factory=dict)
    blinds: tuple[int, ...] = (1, 2)
    variant: Variant = Variant.NO_LIMIT
    rules: tuple[Reopening, ...] = (Reopening.ACTED, Reopening.POKERKIT)
    pokerkit_agrees: bool = True  # False: our table rule differs from pokerkit's here on purpose


def streets(*rounds: str) -> tuple[str, ...]:
    """A script's actions written one betting round a line (``"p1 cc, p2 cbr 4"``),
    the board dealt (``d``) between two rounds."""
    actions: list[str] = []
    for number, line in enumerate(rounds):
        actions += (["d"] if number else []) + [part.strip() for part in line.split(",")]
    return tuple(actions)


SCRIPTED_HANDS: tuple[Scripted, ...] = (
    Scripted(  # issue #23's hand
        "short all-in bet after three checks; a checker raises",
        (600, 600, 600, 3),
        streets(
            "p3 cc, p4 cc, p1 cc, p2 cc",
            "p1 cc, p2 cc, p3 cc, p4 cbr 1, p1 cc, p2 cbr 590, p3 f, p1 cc",
            "p1 cc, p2 cc",
            "p1 cc, p2 cc",
        ),
    ),
    Scripted(
        "short all-in bet after a check; the checker raises, the caller re-raises",
        (300, 3, 300, 300),
        streets(
            "p3 cc, p4 cc, p1 cc, p2 cc",
            "p1 cc, p2 cbr 1, p3 cc, p4 cc, p1 cbr 3, p3 cbr 5, p4 f, p1 cc",
            "p1 cc, p3 cc",
            "p1 cc, p3 cc",
        ),
    ),
    Scripted(
        "short all-in raise after a call: bettor and caller may only call; a player yet to act may raise",
        (300, 300, 17, 300),
        streets(
            "p3 cc, p4 cc, p1 cc, p2 cc",
            "p1 cbr 10, p2 cc, p3 cbr 15, p4 cc, p1 cbr 40, p1 cc, p2 cbr 40, p2 cc",
            "p1 cc, p2 cc, p4 cc",
            "p1 cc, p2 cc, p4 cc",
        ),
        refused={9: "poker_betting_not_reopened", 11: "poker_betting_not_reopened"},
    ),
    Scripted(
        "short all-in raise after a call, the one yet to act raises",
        (300, 300, 17, 300),
        streets(
            "p3 cc, p4 cc, p1 cc, p2 cc",
            "p1 cbr 10, p2 cc, p3 cbr 15, p4 cbr 25, p1 cbr 35, p2 f, p4 cc",
            "p1 cc, p4 cc",
            "p1 cc, p4 cc",
        ),
    ),
    Scripted(
        "two short all-ins adding up to a full raise reopen the betting to the bettor and the caller",
        (300, 300, 17, 22, 300),
        streets(
            "p3 cc, p4 cc, p5 cc, p1 cc, p2 cc",
            "p1 cbr 10, p2 cc, p3 cbr 15, p4 cbr 20, p5 cc, p1 cbr 30, p2 cbr 40, p5 f, p1 cc",
            "p1 cc, p2 cc",
            "p1 cc, p2 cc",
        ),
    ),
    Scripted(
        "preflop: a limper facing a short all-in raise (ours: call or fold; pokerkit: the first raise is full)",
        (300, 300, 300, 3),
        streets(
            "p3 cc, p4 cbr 3, p1 cc, p2 cc, p3 cbr 7, p1 cc, p2 cc",
            "p1 cc, p2 cc, p3 cc",
            "p1 cc, p2 cc, p3 cc",
            "p1 cc, p2 cc, p3 cc",
        ),
        rules=(Reopening.POKERKIT,),
    ),
    Scripted(
        "preflop: a limper facing a short all-in raise may not re-raise (our rule)",
        (300, 300, 300, 3),
        streets(
            "p3 cc, p4 cbr 3, p1 cc, p2 cc, p3 cbr 7, p3 cc",
            "p1 cc, p2 cc, p3 cc",
            "p1 cc, p2 cc, p3 cc",
            "p1 cc, p2 cc, p3 cc",
        ),
        refused={4: "poker_betting_not_reopened"},
        rules=(Reopening.ACTED,),
        pokerkit_agrees=False,
    ),
)


def play_scripted(script: Scripted, reopening: Reopening) -> HandState:
    """Play ``script`` through our engine (under ``reopening``) and, unless
    the script says our rule differs on purpose, through pokerkit with its default definitions: at
    every turn both must agree on who acts, what it costs to call, whether
    they may raise and the raise bounds; each refused action must be refused
    by both with nothing changed; the final stacks must be equal."""
    from pokerkit import State

    check_pokerkit = script.pokerkit_agrees
    n = len(script.stacks)
    cap = POKERKIT_CAP if reopening is Reopening.POKERKIT else TABLE_DEFAULT_CAP
    config = HandConfig(
        variant=script.variant,
        blinds_or_straddles=script.blinds,
        raise_cap=cap.bets,
        blind_is_bet=cap.blind_is_bet,
        reopening=reopening,
        pot_split=PotSplit.POKERKIT if reopening is Reopening.POKERKIT else PotSplit.PER_POT,
    )
    deck = list(DECK)
    pk: State | None = create_state(config, script.stacks) if check_pokerkit else None
    seats = tuple(SeatSpec(seat, f"p{seat}", stack) for seat, stack in enumerate(script.stacks, start=1))
    state: HandState | None = None

    def run(command: StartHand | DealHoleCards | DealBoard | Act) -> HandState:
        nonlocal state
        for event in decide(state, command):
            state = apply(state, event)
        assert state is not None
        return state

    st = run(StartHand(script.name, config, seats, n))
    deal = next_deal(st, deck)
    assert isinstance(deal, DealHoleCards)
    if pk is not None:
        deal_hole(pk, [deal.cards[p.seat] for p in st.players])  # type: ignore[misc]
    st = run(deal)
    for index, text in enumerate(script.actions):
        if pk is not None and st.phase is not Phase.BETTING:
            _pk_catch_up(pk, DiffReport())
        if text == "d":
            board = next_deal(st, deck)
            if not isinstance(board, DealBoard):
                raise DifferentialMismatch(f"{script.name}: step {index}: no board is due ({st.phase})")
            if pk is not None:
                pk.burn_card(deck[2 * n + {0: 0, 1: 4, 2: 6}[st.street]])
                pk.deal_board("".join(board.cards))
            st = run(board)
            continue
        label, verb, *rest = text.split()
        seat = int(label[1:])
        legal = legal_actions(st)
        if legal is None or legal.seat != seat:
            raise DifferentialMismatch(f"{script.name}: step {index} {text!r}: ours to act {st.acting_seat}")
        if pk is not None:
            _agree(script.name, index, st, pk, legal)
        if verb == "f":
            command = Act(seat, Action.FOLD)
        elif verb == "cc":
            command = Act(seat, Action.CALL if legal.call_amount else Action.CHECK)
        else:
            command = Act(seat, Action.BET if st.max_bet == 0 else Action.RAISE, int(rest[0]))
        if index in script.refused:
            try:
                run(command)
            except errors.PokerError as exc:
                if exc.code != script.refused[index]:
                    raise DifferentialMismatch(f"{script.name}: step {index}: refused with {exc.code}") from exc
            else:
                raise DifferentialMismatch(f"{script.name}: step {index} {text!r} accepted")
            if state is not st:
                raise DifferentialMismatch(f"{script.name}: a refused action changed the state")
            if pk is not None and pk.can_complete_bet_or_raise_to(int(rest[0]) if rest else None):
                raise DifferentialMismatch(f"{script.name}: step {index} {text!r}: pokerkit accepts it")
            continue
        try:
            st = run(command)
        except errors.PokerError as exc:
            raise DifferentialMismatch(f"{script.name}: step {index} {text!r} refused: {exc.code}") from exc
        if pk is not None:
            if verb == "f":
                pk.fold()
            elif verb == "cc":
                pk.check_or_call()
            else:
                pk.complete_bet_or_raise_to(int(rest[0]))
    if st.phase is not Phase.COMPLETE:
        raise DifferentialMismatch(f"{script.name}: the script ends before the hand ({st.phase})")
    if pk is not None:
        _pk_catch_up(pk, DiffReport())
        if pk.status or tuple(pk.stacks) != st.stacks:
            raise DifferentialMismatch(f"{script.name}: final stacks: ours {st.stacks}, pokerkit {tuple(pk.stacks)}")
    return st


def _agree(name: str, index: int, st: HandState, pk: object, legal: LegalActions) -> None:
    from pokerkit import State

    assert isinstance(pk, State)
    where = f"{name}: step {index}"
    if pk.actor_index != st.to_act:
        raise DifferentialMismatch(f"{where}: actor: ours position {st.to_act}, pokerkit {pk.actor_index}")
    if pk.checking_or_calling_amount != legal.call_amount:
        raise DifferentialMismatch(f"{where}: call: ours {legal.call_amount}, pokerkit {pk.checking_or_calling_amount}")
    pk_raise = pk.can_complete_bet_or_raise_to()
    if pk_raise != legal.can_raise:
        raise DifferentialMismatch(f"{where}: may raise: ours {legal.can_raise} ({legal.refusal}), pokerkit {pk_raise}")
    if pk_raise:
        bounds = (pk.min_completion_betting_or_raising_to_amount, pk.max_completion_betting_or_raising_to_amount)
        if bounds != (legal.min_to, legal.max_to):
            raise DifferentialMismatch(f"{where}: raise bounds: ours {(legal.min_to, legal.max_to)}, pokerkit {bounds}")


# ------------------------------------------- hands pokerkit plays, replayed


PHH_CODES = {Variant.NO_LIMIT: "NT", Variant.FIXED_LIMIT: "FT"}


@dataclass
class ReplayReport:
    """Hands pokerkit played by its own rules (default definitions), written
    as PHH and replayed through ``replay_phh`` with PHH's defaults."""

    played: Counter[str] = field(default_factory=Counter)  # by PHH variant code
    exact: Counter[str] = field(default_factory=Counter)  # replayed to pokerkit's finishing stacks
    raises_over_table_cap: int = 0  # fixed-limit hands with more bets a street than the table default allows


def pokerkit_hand(rng: random.Random, variant: Variant) -> tuple[str, tuple[int, ...], bool]:
    """One hand pokerkit plays with random legal actions under its default
    definition for ``variant`` (``NoLimitTexasHoldem`` or
    ``FixedLimitTexasHoldem``): its PHH text, its finishing stacks, and
    whether a street saw more bets and raises than our table default."""
    from pokerkit import FixedLimitTexasHoldem, HandHistory, NoLimitTexasHoldem

    from games.poker.tooling.pokerkit_bridge import FULL_AUTOMATIONS

    n = rng.randint(2, 9)
    big = rng.choice([2, 4, 10])
    antes = rng.choice([0, 0, 1])
    blinds = (big // 2, big, 2 * big) if n >= 4 and rng.random() < 0.2 else (big // 2, big)
    game: FixedLimitTexasHoldem | NoLimitTexasHoldem
    if variant is Variant.FIXED_LIMIT:
        game = FixedLimitTexasHoldem(FULL_AUTOMATIONS, True, antes, blinds, big, 2 * big)
    else:
        game = NoLimitTexasHoldem(FULL_AUTOMATIONS, True, antes, blinds, big)
    stacks = tuple(_stack(rng, big) for _ in range(n))  # many short: short all-ins are common
    state = game(stacks, n)
    over_cap = False
    while state.status:
        roll = rng.random()
        if state.can_complete_bet_or_raise_to() and roll > 0.55:
            low = state.min_completion_betting_or_raising_to_amount
            high = state.max_completion_betting_or_raising_to_amount
            assert low is not None
            assert high is not None
            state.complete_bet_or_raise_to(rng.choice([low, high, rng.randint(low, high)]))
            preflop = state.street_index == 0
            over_cap |= variant is Variant.FIXED_LIMIT and state.completion_betting_or_raising_count + (
                1 if preflop else 0
            ) > (TABLE_DEFAULT_CAP.bets or 0)
        elif state.checking_or_calling_amount and roll < 0.2:
            state.fold()
        else:
            state.check_or_call()
    return HandHistory.from_game_state(game, state).dumps(), tuple(state.stacks), over_cap


def run_pokerkit_replay(hands: int, *, seed: int = 0) -> ReplayReport:
    """``hands`` pokerkit hands per PHH variant (NT, FT), each replayed
    through ``replay_phh``; raises on a refused hand or any stack difference."""
    from games.poker.engine.phh import replay_phh

    rng = random.Random(seed)
    report = ReplayReport()
    for variant, code in PHH_CODES.items():
        for index in range(hands):
            text, stacks, over_cap = pokerkit_hand(rng, variant)
            report.played[code] += 1
            report.raises_over_table_cap += over_cap
            try:
                _, st = replay_phh(text)
            except errors.PokerError as exc:
                raise DifferentialMismatch(f"{code} hand {index} (seed {seed}) refused: {exc.code}\n{text}") from exc
            if st.stacks != stacks:
                raise DifferentialMismatch(f"{code} hand {index}: ours {st.stacks}, pokerkit {stacks}\n{text}")
            report.exact[code] += 1
    return report
