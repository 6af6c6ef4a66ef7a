"""The shape of a house-banked game as data, and its pure settlement (RULES.md decides every point).

A ``GameDefinition`` lists the game's wagers (required, automatic, optional, and the
decision wager ``call``/``play``), its decision points per street with their
options, multipliers and timeout defaults, the dealer qualification rule, the main
wagers' settlement rules, its pay tables, its default strategy's name and a rules
version. ``settle_round`` turns cards, stakes and decisions into per-wager results;
the simulator reads the same rule tables.

The games themselves are data in one module each (``uth.py``, ``casino_holdem.py``,
``xtreme.py``); ``registry.py`` is where every other layer looks a game up.

Not implemented, as RULES.md decides: seed 000's "any side bets are lost" when the
dealer wins, and seed 004's "blind returned if the dealer has less than a pair" and
"ante returned if the dealer has less than a straight".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from functools import cache
from types import MappingProxyType
from typing import Any

from casino.errors import DomainError
from games.cards.cards import Card, parse_cards
from games.cards.evaluator import HandValue, evaluate, rank_of
from games.house.rules.bonus_spin import WheelSegment, fixed_award_units, wager_units
from games.house.rules.outcomes import outcome_of
from games.house.rules.paytables import Basis, PayKind, Payout, PayTable, UnknownPayTable

RULES_VERSION = "2026.11.1"


# --- errors -------------------------------------------------------------------------------------


class UnknownGame(DomainError, code="unknown_game", http_status=404):
    """No such game."""


class UnknownWager(DomainError, code="unknown_wager"):
    """The game has no wager of that name."""


class MissingRequiredWager(DomainError, code="missing_required_wager"):
    """A required wager (the Ante) has no stake."""


class InvalidStake(DomainError, code="invalid_stake"):
    """A stake must be a positive whole number of minor units; automatic wagers equal their base."""


class OptionNotOffered(DomainError, code="option_not_offered"):
    """That option is not offered at that decision point."""


class DecisionAfterCall(DomainError, code="decision_after_call"):
    """One call (play) per round: no decision is taken after it or after a fold."""


class MissingPayTable(DomainError, code="missing_pay_table"):
    """The round has no pay table in force for a wager that needs one."""


class WheelSpinRequired(DomainError, code="wheel_spin_required"):
    """A triggered Bonus Spin Xtreme wager needs the wheel spin to settle."""


class InvalidCards(DomainError, code="invalid_cards"):
    """Settlement needs 2 player cards, 2 dealer cards and 5 board cards, all distinct."""


# --- definitions --------------------------------------------------------------------------------


class WagerKind(StrEnum):
    REQUIRED = "required"
    AUTOMATIC = "automatic"  # placed by the system, equal to ``equals``
    OPTIONAL = "optional"
    DECISION = "decision"  # the call/play, made by a decision


class Action(StrEnum):
    """What a main wager does in one situation."""

    EVEN = "even"  # pays 1 to 1
    TABLE = "table"  # pays its pay table on the player's hand
    PUSH = "push"
    LOSE = "lose"


@dataclass(frozen=True)
class MainRule:
    """A main wager's action for each (result, dealer qualified?) and on a fold."""

    win_qualified: Action
    win_unqualified: Action
    tie_qualified: Action
    tie_unqualified: Action
    lose_qualified: Action
    lose_unqualified: Action
    fold: Action = Action.LOSE

    def action(self, result: str, qualified: bool) -> Action:
        if result == "fold":
            return self.fold
        action: Action = getattr(self, f"{result}_{'qualified' if qualified else 'unqualified'}")
        return action


@dataclass(frozen=True)
class Wager:
    name: str
    kind: WagerKind
    main_rule: MainRule | None = None  # main wagers; side bets use their pay table alone
    equals: str | None = None  # automatic wagers: the wager they equal
    needs_pay_table: bool = False
    pools: tuple[str, ...] = ()  # progressive pools its pay tables pay from (STAX); () for none


@dataclass(frozen=True)
class DecisionOption:
    name: str
    multiplier: int  # call/play = multiplier x ante; 0 for check and fold
    folds: bool = False


@dataclass(frozen=True)
class DecisionPoint:
    street: str  # preflop, flop, river
    options: tuple[DecisionOption, ...]
    timeout_default: str

    def option(self, name: str) -> DecisionOption:
        for option in self.options:
            if option.name == name:
                return option
        raise OptionNotOffered(
            f"{name!r} is not offered {self.street}",
            street=self.street,
            option=name,
            offered=[o.name for o in self.options],
        )


@dataclass(frozen=True)
class Qualifier:
    """Dealer qualifies with a pair of ``min_pair_rank`` or better (any pair: 2)."""

    min_pair_rank: int = 2

    @property
    def description(self) -> str:
        return "pair or better" if self.min_pair_rank == 2 else f"pair of {self.min_pair_rank}s or better"

    def threshold_rank(self) -> int:
        """The evaluator rank of the weakest qualifying hand."""
        return _weakest_pair_rank(self.min_pair_rank)

    def qualifies(self, value: HandValue) -> bool:
        return value.rank >= self.threshold_rank()


@cache
def _weakest_pair_rank(pair_rank: int) -> int:
    # A pair has four distinct ranks, so no straight; the suits below are mixed, so no
    # flush: the weakest such pair is the pair plus the three lowest other ranks.
    kickers = [r for r in range(2, 15) if r != pair_rank][:3]
    ranks = [pair_rank, pair_rank, *kickers]
    text = " ".join(f"{_RANK_CHARS[r]}{suit}" for r, suit in zip(ranks, "shdcs", strict=True))
    return rank_of(parse_cards(text))


_RANK_CHARS = {
    2: "2",
    3: "3",
    4: "4",
    5: "5",
    6: "6",
    7: "7",
    8: "8",
    9: "9",
    10: "T",
    11: "J",
    12: "Q",
    13: "K",
    14: "A",
}


@dataclass(frozen=True)
class GameDefinition:
    """One house-banked game. ``code`` is stored on tables and rounds; ``title`` is
    what people read (and the model's choice label). ``pay_tables`` are every table
    of every priced wager, numbered per wager (table 1 is the default);
    ``strategies`` name the simulator's strategies that fit the game's decisions,
    ``strategies[0]`` the default; ``aliases`` are short names for commands.
    Inconsistent data is refused when the definition is built (``ValueError``)."""

    code: str
    title: str
    wagers: tuple[Wager, ...]
    decision_points: tuple[DecisionPoint, ...]
    decision_wager: str  # ``call`` or ``play``
    qualifier: Qualifier
    pay_tables: tuple[PayTable, ...] = ()
    strategies: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    rules_version: str = RULES_VERSION
    _wager_index: Mapping[str, Wager] = field(init=False, repr=False, compare=False)
    _table_index: Mapping[tuple[str, int], PayTable] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_wager_index", MappingProxyType({w.name: w for w in self.wagers}))
        object.__setattr__(self, "_table_index", MappingProxyType({(t.wager, t.number): t for t in self.pay_tables}))
        self._check()

    def _check(self) -> None:
        decision = self._wager_index.get(self.decision_wager)
        if decision is None or decision.kind is not WagerKind.DECISION:
            raise ValueError(f"{self.code}: decision wager {self.decision_wager!r} is not a decision wager")
        for table in self.pay_tables:
            wager = self._wager_index.get(table.wager)
            if table.game != self.code or wager is None or not wager.needs_pay_table:
                raise ValueError(f"{self.code}: pay table {table.name} is not for a priced wager of this game")
            pools = {pay.pool for _, pay in table.lines if pay.kind is PayKind.PROGRESSIVE}
            if not pools <= set(wager.pools):
                raise ValueError(f"{self.code}: {table.name} pays from pools {wager.name} does not have")
        for wager in self.wagers:
            if wager.needs_pay_table and (wager.name, 1) not in self._table_index:
                raise ValueError(f"{self.code}: {wager.name} needs a pay table 1")

    @property
    def strategy(self) -> str:
        """The simulator's default strategy for this game ('' when it has none)."""
        return self.strategies[0] if self.strategies else ""

    @property
    def forced_multiplier(self) -> int:
        """The smallest decision wager (x Ante) the round can force on a player
        who does not fold: decision points are passed in order, checking where
        a check is offered; at the first point without one the player must
        take one of its wagers or fold, and the smallest of those wagers is
        the answer (UTH and Xtreme: the river's 1x; Casino Hold'em: the
        flop's 2x call). 0 when every point can be checked."""
        for point in self.decision_points:
            if any(o.multiplier == 0 and not o.folds for o in point.options):
                continue
            wagers = [o.multiplier for o in point.options if o.multiplier > 0 and not o.folds]
            return min(wagers) if wagers else 0
        return 0

    @property
    def progressive_wager(self) -> str | None:
        """The wager that feeds and wins the progressive pools (STAX), if the game has one."""
        return next((w.name for w in self.wagers if w.pools), None)

    @property
    def progressive_pools(self) -> tuple[str, ...]:
        """The progressive pools a table of this game has when its progressive wager is offered."""
        return next((w.pools for w in self.wagers if w.pools), ())

    def pay_table(self, wager: str, number: int = 1) -> PayTable:
        """Pay table ``number`` of ``wager``; ``UnknownPayTable`` if none."""
        try:
            return self._table_index[(wager, number)]
        except KeyError:
            raise UnknownPayTable(
                f"no pay table {number} for {self.code} {wager}",
                game=self.code,
                wager=wager,
                available=self.table_numbers(wager),
            ) from None

    def table_numbers(self, wager: str) -> list[int]:
        return sorted(n for w, n in self._table_index if w == wager)

    def wager(self, name: str) -> Wager:
        try:
            return self._wager_index[name]
        except KeyError:
            raise UnknownWager(f"{self.code} has no wager {name!r}", game=self.code, wager=name) from None

    def decision_point(self, street: str) -> DecisionPoint:
        for point in self.decision_points:
            if point.street == street:
                return point
        raise OptionNotOffered(f"{self.code} has no decision {street!r}", street=street)

    def default_pay_tables(self) -> dict[str, PayTable]:
        """Pay table 1 of every wager that needs one."""
        return {w.name: self.pay_table(w.name, 1) for w in self.wagers if w.needs_pay_table}

    def as_dict(self) -> dict[str, Any]:
        return {
            "game": self.code,
            "rules_version": self.rules_version,
            "wagers": [{"name": w.name, "kind": w.kind.value, "equals": w.equals} for w in self.wagers],
            "decisions": [
                {
                    "street": p.street,
                    "options": [{"name": o.name, "multiplier": o.multiplier} for o in p.options],
                    "timeout_default": p.timeout_default,
                }
                for p in self.decision_points
            ],
            "dealer_qualifies": self.qualifier.description,
        }


A = Action
# UTH Ante / Xtreme Ante: 1:1 only if the dealer qualified (opened), else push; tie pushes.
ANTE_IF_QUALIFIED = MainRule(A.EVEN, A.PUSH, A.PUSH, A.PUSH, A.LOSE, A.PUSH)
# UTH Ante Plus / Xtreme X-tra Bonus: table on a win whatever the dealer holds; tie pushes.
BLIND = MainRule(A.TABLE, A.TABLE, A.PUSH, A.PUSH, A.LOSE, A.LOSE)
# UTH Call / Xtreme Play: 1:1, push on tie, lose.
CALL_EVEN = MainRule(A.EVEN, A.EVEN, A.PUSH, A.PUSH, A.LOSE, A.LOSE)

CHECK = DecisionOption("check", 0)
FOLD = DecisionOption("fold", 0, folds=True)


def three_streets(prefix: str) -> tuple[DecisionPoint, ...]:
    """UTH's decisions (Xtreme's too): 4x or 3x preflop, 2x on the flop, 1x or fold on the river."""
    return (
        DecisionPoint("preflop", (DecisionOption(f"{prefix}4x", 4), DecisionOption(f"{prefix}3x", 3), CHECK), "check"),
        DecisionPoint("flop", (DecisionOption(f"{prefix}2x", 2), CHECK), "check"),
        DecisionPoint("river", (DecisionOption(f"{prefix}1x", 1), FOLD), "fold"),
    )


# --- decisions ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecisionTaken:
    street: str
    option: str
    auto: bool  # the timeout default took it


@dataclass(frozen=True)
class Play:
    """The decisions of a round: ``multiplier`` x ante was called (0: none), or folded."""

    decisions: tuple[DecisionTaken, ...]
    multiplier: int
    folded: bool


def resolve_decisions(definition: GameDefinition, decisions: Mapping[str, str]) -> Play:
    """Validate ``street -> option`` and fill the missing ones with the timeout default.

    Decision points come in order; a call (or fold) ends them, and a decision given
    for a later street is refused (``DecisionAfterCall``)."""
    known = {p.street for p in definition.decision_points}
    for street in decisions:
        if street not in known:
            raise OptionNotOffered(f"{definition.code} has no decision {street!r}", street=street)
    taken: list[DecisionTaken] = []
    for point in definition.decision_points:
        if taken and (taken[-1].option != "check"):
            if point.street in decisions:
                raise DecisionAfterCall(street=point.street, option=decisions[point.street])
            continue
        given = decisions.get(point.street)
        option = point.option(given if given is not None else point.timeout_default)
        taken.append(DecisionTaken(point.street, option.name, given is None))
    last = definition.decision_point(taken[-1].street).option(taken[-1].option)
    return Play(tuple(taken), last.multiplier, last.folds)


# --- settlement ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class WagerResult:
    """One wager's settlement. ``returned``: 0 on a loss, the stake on a push, stake +
    winnings on a win (a STAX progressive hit: the pool award given to settlement)."""

    wager: str
    stake: int
    outcome: str  # win | lose | push
    returned: int
    rounding_kept: Fraction = Fraction(0)
    hand: str | None = None  # the pay-table outcome that applied (e.g. "flush")
    progressive: str | None = None  # STAX pool hit
    wheel: str | None = None  # Bonus Spin segment label


@dataclass(frozen=True)
class RoundSettlement:
    player: HandValue
    dealer: HandValue
    dealer_qualifies: bool
    result: str  # win | tie | lose | fold (the player's main result)
    wagers: tuple[WagerResult, ...]

    @property
    def staked(self) -> int:
        return sum(w.stake for w in self.wagers)

    @property
    def returned(self) -> int:
        return sum(w.returned for w in self.wagers)

    @property
    def net(self) -> int:
        return self.returned - self.staked

    def wager(self, name: str) -> WagerResult:
        for result in self.wagers:
            if result.wager == name:
                return result
        raise KeyError(name)


def full_stakes(definition: GameDefinition, stakes: Mapping[str, int], play: Play) -> dict[str, int]:
    """Every wager's stake: the placed ones, automatic ones equal to their base, the
    call/play as multiplier x ante. Refuses unknown wagers and bad amounts."""
    result: dict[str, int] = {}
    for name, stake in stakes.items():
        wager = definition.wager(name)
        if not isinstance(stake, int) or isinstance(stake, bool) or stake <= 0:
            raise InvalidStake(f"{name} stake {stake!r} must be a positive integer", wager=name)
        if wager.kind is WagerKind.DECISION:
            raise InvalidStake(f"{name} is made by a decision, not placed", wager=name)
        result[name] = stake
    for wager in definition.wagers:
        if wager.kind is WagerKind.REQUIRED and wager.name not in result:
            raise MissingRequiredWager(f"{wager.name} is required", wager=wager.name)
        if wager.kind is WagerKind.AUTOMATIC:
            assert wager.equals is not None
            base = result[wager.equals]
            if result.setdefault(wager.name, base) != base:
                raise InvalidStake(f"{wager.name} must equal {wager.equals}", wager=wager.name)
    if play.multiplier:
        result[definition.decision_wager] = play.multiplier * result["ante"]
    return result


def settle_round(
    definition: GameDefinition,
    *,
    tables: Mapping[str, PayTable],
    player: Sequence[Card],
    dealer: Sequence[Card],
    board: Sequence[Card],
    stakes: Mapping[str, int],
    decisions: Mapping[str, str] | Play,
    progressive_awards: Mapping[str, int] | None = None,
    wheel_spin: WheelSegment | None = None,
    currency_unit: int = 100,
) -> RoundSettlement:
    """Settle one player's hand (pure).

    ``tables`` are the pay tables in force by wager name; ``stakes`` the placed
    wagers in minor units (automatic ones may be omitted); ``decisions`` street ->
    option (missing ones take the timeout default) or a resolved ``Play``.
    ``progressive_awards`` gives, per STAX pool this hand hit, the amount the pool
    pays it (the round computes shares when several hands hit one pool);
    ``wheel_spin`` is the Bonus Spin segment drawn for a triggered wager;
    ``currency_unit`` is the minor units per currency unit (Bonus Spin sizes).
    Side bets depend on the cards alone, never on decisions or the main result."""
    cards = [*player, *dealer, *board]
    if len(player) != 2 or len(dealer) != 2 or len(board) != 5 or len({c.index for c in cards}) != 9:
        raise InvalidCards()
    play = decisions if isinstance(decisions, Play) else resolve_decisions(definition, decisions)
    all_stakes = full_stakes(definition, stakes, play)
    player_value = evaluate([*player, *board])
    dealer_value = evaluate([*dealer, *board])
    qualified = definition.qualifier.qualifies(dealer_value)
    if play.folded:
        result = "fold"
    elif player_value.rank > dealer_value.rank:
        result = "win"
    elif player_value.rank < dealer_value.rank:
        result = "lose"
    else:
        result = "tie"

    results: list[WagerResult] = []
    for wager in definition.wagers:
        stake = all_stakes.get(wager.name)
        if stake is None:
            continue
        if wager.main_rule is not None:
            results.append(_settle_main(wager, stake, result, qualified, tables, player, board))
        elif wager.name == "bonus_spin":
            results.append(_settle_bonus_spin(stake, board, wheel_spin, currency_unit))
        else:
            table = _table(tables, wager.name)
            results.append(_settle_side(wager.name, stake, table, player, board, progressive_awards or {}))
    return RoundSettlement(player_value, dealer_value, qualified, result, tuple(results))


def _table(tables: Mapping[str, PayTable], wager: str) -> PayTable:
    try:
        return tables[wager]
    except KeyError:
        raise MissingPayTable(f"no pay table in force for {wager}", wager=wager) from None


def _settle_main(
    wager: Wager,
    stake: int,
    result: str,
    qualified: bool,
    tables: Mapping[str, PayTable],
    player: Sequence[Card],
    board: Sequence[Card],
) -> WagerResult:
    assert wager.main_rule is not None
    action = wager.main_rule.action(result, qualified)
    if action is Action.EVEN:
        return WagerResult(wager.name, stake, "win", 2 * stake)
    if action is Action.PUSH:
        return WagerResult(wager.name, stake, "push", stake)
    if action is Action.LOSE:
        return WagerResult(wager.name, stake, "lose", 0)
    table = _table(tables, wager.name)
    hand = outcome_of(table.basis, [*player, *board])
    pay = table.pay_for(hand) if hand is not None else table.pay_for("")
    payout = pay.pay(stake)
    return WagerResult(wager.name, stake, pay.outcome, payout.returned, payout.rounding_kept, hand)


def side_cards(table: PayTable, player: Sequence[Card], board: Sequence[Card]) -> list[Card]:
    """The cards a side bet's pay table looks at."""
    if table.basis is Basis.PLAYER_SEVEN:
        return [*player, *board]
    if table.basis in (Basis.FIRST_FIVE, Basis.STAX_FIVE):
        return [*player, *board[:3]]
    if table.basis is Basis.HOLE_CARDS:
        return list(player)
    return list(board)


def _settle_side(
    name: str,
    stake: int,
    table: PayTable,
    player: Sequence[Card],
    board: Sequence[Card],
    progressive_awards: Mapping[str, int],
) -> WagerResult:
    hand = outcome_of(table.basis, side_cards(table, player, board))
    pay = table.pay_for(hand) if hand is not None else table.pay_for("")
    if pay.kind is PayKind.PROGRESSIVE:
        award = progressive_awards.get(pay.pool or "", 0)
        return WagerResult(name, stake, "win", award, Fraction(0), hand, progressive=pay.pool)
    payout: Payout = pay.pay(stake)
    return WagerResult(name, stake, pay.outcome, payout.returned, payout.rounding_kept, hand)


def _settle_bonus_spin(
    stake: int, board: Sequence[Card], wheel_spin: WheelSegment | None, currency_unit: int
) -> WagerResult:
    units = wager_units(stake, currency_unit)
    hand = outcome_of(Basis.COMMUNITY_FIVE, list(board))
    fixed = fixed_award_units(units, hand)
    if fixed is None:
        return WagerResult("bonus_spin", stake, "lose", 0, hand=hand)
    if wheel_spin is None:
        raise WheelSpinRequired(hand=hand)
    returned = stake + fixed * currency_unit + wheel_spin.multiple * stake
    return WagerResult("bonus_spin", stake, "win", returned, hand=hand, wheel=wheel_spin.label)


def bonus_spin_results(
    stakes: Sequence[int], board: Sequence[Card], wheel_spin: WheelSegment, currency_unit: int
) -> list[WagerResult]:
    """How a Bonus Spin Xtreme wager of each of ``stakes`` settles on ``board``
    and ``wheel_spin``: the settlement itself, for the round's public award
    (what each wager size returns, with no player's stake in it)."""
    return [_settle_bonus_spin(stake, board, wheel_spin, currency_unit) for stake in stakes]


def bonus_spin_triggered(board: Sequence[Card]) -> bool:
    """Whether the five community cards trigger a Bonus Spin Xtreme wheel spin."""
    return fixed_award_units(1, outcome_of(Basis.COMMUNITY_FIVE, list(board))) is not None
