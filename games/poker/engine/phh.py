"""Poker Hand History (PHH, https://phh.readthedocs.io): read and write.

A PHH file is TOML. We read and write the Texas hold'em variants ``NT``
(no-limit) and ``FT`` (fixed-limit), antes and straddles included, and,
as a local extension that is *not* in the PHH specification (which has no
pot-limit hold'em code), ``PT`` for pot-limit hold'em; pokerkit cannot load
``PT`` files. Player ``p1`` is the first player left of the button, the last
is the button (heads-up: ``p1`` is the big blind), which is our position
order.

Reading turns a file into the commands that replay it through the engine;
actions are checked by the engine as if they were played live. Cards shown
at the showdown (``pN sm CARDS``) fill hole cards that were dealt as
``????``. pokerkit asks the only player who still has chips to check when
everyone else is all-in; our engine skips that turn, so such a ``pN cc`` is
read as a no-op and written when pokerkit would expect it.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from games.poker.engine.errors import PokerError
from games.poker.engine.events import (
    ActionTaken,
    BettingRoundEnded,
    BoardDealt,
    Event,
    HandMucked,
    HandShown,
    HandStarted,
    HoleCardsDealt,
)
from games.poker.engine.hand import (
    Act,
    Action,
    Command,
    DealBoard,
    DealHoleCards,
    HandState,
    Phase,
    SeatSpec,
    StartHand,
    Strength,
    antes_are_contributions,
    apply,
    decide,
    default_strength,
)
from games.poker.engine.rules import POKERKIT_CAP, HandConfig, PotSplit, RaiseCap, RakeRule, Reopening, Variant

VARIANT_CODES = {Variant.NO_LIMIT: "NT", Variant.FIXED_LIMIT: "FT", Variant.POT_LIMIT: "PT"}
CODE_VARIANTS = {code: variant for variant, code in VARIANT_CODES.items()}


class PhhError(PokerError, code="phh_invalid"):
    """The PHH file is not a Texas hold'em history we can replay."""


@dataclass
class PhhHand:
    """A parsed PHH hand: stakes, stacks and the engine commands."""

    config: HandConfig
    starting_stacks: tuple[int, ...]
    players: tuple[str, ...]
    commands: list[Command] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)


def _cards(text: str) -> tuple[str | None, ...]:
    if len(text) % 2:
        raise PhhError(f"bad cards {text!r}")
    out: list[str | None] = []
    for k in range(0, len(text), 2):
        card = text[k : k + 2]
        out.append(None if card == "??" else card[0].upper() + card[1].lower())
    return tuple(out)


def _player(label: str, n: int) -> int:
    if not label.startswith("p") or not label[1:].isdigit() or not 1 <= int(label[1:]) <= n:
        raise PhhError(f"bad player {label!r}")
    return int(label[1:]) - 1


def _int_list(data: dict[str, Any], key: str) -> tuple[int, ...]:
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise PhhError(f"{key} must be a list of integers")
    return tuple(value)


def read_phh(
    text: str,
    *,
    rake: RakeRule | None = None,
    cap: RaiseCap | None = None,
    reopening: Reopening | None = None,
    pot_split: PotSplit | None = None,
) -> PhhHand:
    """Parse PHH text (one hand) into stakes and engine commands. A PHH
    file means pokerkit's rules for its variant unless told otherwise:
    ``FT`` is capped as pokerkit's ``FixedLimitTexasHoldem``
    (``POKERKIT_CAP``) and short all-ins reopen the betting as in pokerkit
    (``Reopening.POKERKIT``) and tied hands share the pots as in pokerkit
    (``PotSplit.POKERKIT``). The file tells otherwise with our user-defined
    fields (``_raise_cap``, ``_blind_is_bet``, ``_heads_up_uncapped``,
    ``_reopening``, ``_pot_split``, which ``write_phh`` writes for a table's
    own rules); the caller with ``cap``, ``reopening`` and ``pot_split``,
    which win over the file."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PhhError(f"not TOML: {exc}") from exc
    code = data.get("variant")
    if code not in CODE_VARIANTS:
        raise PhhError(f"variant {code!r} is not one we read (NT, FT, PT)", code="phh_variant_unsupported")
    variant = CODE_VARIANTS[code]
    stacks = _int_list(data, "starting_stacks")
    n = len(stacks)
    antes = _int_list(data, "antes") if "antes" in data else ()
    blinds = _int_list(data, "blinds_or_straddles")
    if any(b < 0 for b in blinds):
        raise PhhError("negative blinds (blinds that are not bets) are not supported")
    kwargs: dict[str, Any] = {}
    if variant is Variant.FIXED_LIMIT:
        rule = cap or _file_cap(data)
        kwargs = {
            "small_bet": data.get("small_bet"),
            "big_bet": data.get("big_bet"),
            "raise_cap": rule.bets,
            "blind_is_bet": rule.blind_is_bet,
            "heads_up_uncapped": rule.heads_up_uncapped,
        }
    else:
        kwargs = {"min_bet": data.get("min_bet")}
    config = HandConfig(
        variant=variant,
        blinds_or_straddles=blinds,
        antes=antes,
        rake=rake,
        reopening=reopening or _file_reopening(data),
        pot_split=pot_split or _file_pot_split(data),
        **kwargs,
    )
    players = tuple(str(p) for p in data.get("players") or [f"p{i + 1}" for i in range(n)])
    if len(players) != n:
        raise PhhError("players and starting_stacks differ in length")
    actions = data.get("actions")
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        raise PhhError("actions must be a list of strings")
    hand = PhhHand(config, stacks, players, fields=data)
    words_list = [a.split("#", 1)[0].split() for a in actions]
    shown: dict[int, tuple[str | None, ...]] = {}
    for words in words_list:
        if len(words) == 3 and words[1] == "sm" and words[2] != "-":
            shown[_player(words[0], n)] = _cards(words[2])
    hole: dict[int, list[str | None]] = {}
    commands = hand.commands
    commands.append(StartHand(str(data.get("hand", "phh")), config, _seats(players, stacks), n))
    for words in words_list:
        if not words:
            continue
        if words[0] == "d" and len(words) == 4 and words[1] == "dh":
            hole.setdefault(_player(words[2], n), []).extend(_cards(words[3]))
            continue
        if hole and not isinstance(commands[-1], DealHoleCards) and len(commands) == 1:
            commands.append(_deal_hole(hole, shown, n))
        if words[0] == "d" and len(words) == 3 and words[1] == "db":
            cards = _cards(words[2])
            if any(c is None for c in cards):
                raise PhhError("unknown board cards cannot be replayed")
            commands.append(DealBoard(tuple(c for c in cards if c is not None)))
        elif len(words) >= 2 and words[1] in ("f", "cc", "cbr"):
            seat = _player(words[0], n) + 1
            if words[1] == "f":
                commands.append(Act(seat, Action.FOLD))
            elif words[1] == "cc":
                commands.append(Act(seat, Action.CALL))  # check or call: resolved when replayed
            else:
                if len(words) != 3 or not words[2].isdigit():
                    raise PhhError(f"bad amount in {' '.join(words)!r}")
                commands.append(Act(seat, Action.RAISE, int(words[2])))
        elif len(words) >= 2 and words[1] == "sm":
            continue  # the engine shows and mucks by itself
        else:
            raise PhhError(f"unsupported action {' '.join(words)!r}")
    if len(commands) == 1 and hole:
        commands.append(_deal_hole(hole, shown, n))
    return hand


def _file_cap(data: dict[str, Any]) -> RaiseCap:
    bets = data.get("_raise_cap", POKERKIT_CAP.bets)
    if bets == "none":
        bets = None
    blind_is_bet = data.get("_blind_is_bet", POKERKIT_CAP.blind_is_bet)
    heads_up = data.get("_heads_up_uncapped", POKERKIT_CAP.heads_up_uncapped)
    if (
        not (bets is None or (isinstance(bets, int) and not isinstance(bets, bool) and bets >= 1))
        or not isinstance(blind_is_bet, bool)
        or not isinstance(heads_up, bool)
    ):
        raise PhhError("bad _raise_cap, _blind_is_bet or _heads_up_uncapped", code="phh_invalid_rules")
    return RaiseCap(bets, blind_is_bet=blind_is_bet, heads_up_uncapped=heads_up)


def _file_reopening(data: dict[str, Any]) -> Reopening:
    try:
        return Reopening(data.get("_reopening", Reopening.POKERKIT.value))
    except ValueError:
        raise PhhError("bad _reopening (acted or pokerkit)", code="phh_invalid_rules") from None


def _file_pot_split(data: dict[str, Any]) -> PotSplit:
    try:
        return PotSplit(data.get("_pot_split", PotSplit.POKERKIT.value))
    except ValueError:
        raise PhhError("bad _pot_split (per_pot or pokerkit)", code="phh_invalid_rules") from None


def _seats(players: Sequence[str], stacks: Sequence[int]) -> tuple[SeatSpec, ...]:
    ids = [p if players.count(p) == 1 else f"{p}#{i + 1}" for i, p in enumerate(players)]
    return tuple(SeatSpec(i + 1, ids[i], stack) for i, stack in enumerate(stacks))


def _deal_hole(hole: dict[int, list[str | None]], shown: dict[int, tuple[str | None, ...]], n: int) -> DealHoleCards:
    cards: dict[int, tuple[str | None, ...]] = {}
    for i in range(n):
        dealt = list(hole.get(i, [None, None]))
        if len(dealt) != 2:
            raise PhhError(f"p{i + 1} must be dealt two hole cards")
        for k, card in enumerate(shown.get(i, ())):
            if k < 2 and dealt[k] is None:
                dealt[k] = card
        cards[i + 1] = tuple(dealt)
    return DealHoleCards(cards)


class PhhRules(TypedDict, total=False):
    """The rules a caller sets over a PHH file's (``read_phh``'s keywords)."""

    rake: RakeRule | None
    cap: RaiseCap | None
    reopening: Reopening | None
    pot_split: PotSplit | None


def replay_phh(
    text: str, *, strength: Strength = default_strength, **rules: Unpack[PhhRules]
) -> tuple[list[Event], HandState]:
    """Replay a PHH hand through the engine; the events and the final state
    (``rake``, ``cap``, ``reopening``, ``pot_split``: as ``read_phh``)."""
    hand = read_phh(text, **rules)
    state: HandState | None = None
    events: list[Event] = []
    for command in hand.commands:
        if isinstance(command, Act) and command.action is Action.CALL:
            resolved = _resolve_cc(state, command)
            if resolved is None:
                continue
            command = resolved
        if isinstance(command, Act) and command.action is Action.RAISE and state is not None and state.max_bet == 0:
            command = Act(command.seat, Action.BET, command.amount)
        new = decide(state, command, strength=strength)
        for event in new:
            state = apply(state, event)
        events.extend(new)
    if state is None or state.phase is not Phase.COMPLETE:
        raise PhhError("the history ends before the hand is over", code="phh_incomplete")
    return events, state


def _resolve_cc(state: HandState | None, command: Act) -> Act | None:
    if state is None:
        return command
    if state.phase is not Phase.BETTING or state.to_act < 0:
        return None  # pokerkit's check by the only player left with chips
    p = state.players[state.to_act]
    return Act(command.seat, Action.CALL if state.max_bet > p.bet else Action.CHECK)


def write_phh(events: Sequence[Event], *, extra: dict[str, Any] | None = None) -> str:
    """PHH text for a hand's events (as far as they go). ``extra`` adds
    optional PHH fields (e.g. ``venue``, ``currency``, ``time``)."""
    if not events or not isinstance(events[0], HandStarted):
        raise PhhError("a hand history starts with HandStarted")
    started = events[0]
    variant = Variant(started.variant)
    position = {seat: i for i, (seat, _, _) in enumerate(started.seats)}
    showdown: list[str] = []
    for event in events:
        if isinstance(event, HandShown):
            cards = "".join(c if c is not None else "??" for c in event.cards)
            showdown.append(f"p{position[event.seat] + 1} sm {cards}")
        elif isinstance(event, HandMucked):
            showdown.append(f"p{position[event.seat] + 1} sm")
    lines: list[str] = []
    state: HandState | None = None
    queue: set[int] = set()  # who pokerkit still expects to act this round
    for event in events:
        if isinstance(event, HoleCardsDealt):
            cards = "".join(c if c is not None else "??" for c in event.cards)
            lines.append(f"d dh p{position[event.seat] + 1} {cards}")
        elif isinstance(event, ActionTaken):
            assert state is not None
            i = position[event.seat]
            label = f"p{i + 1}"
            if event.action == "fold":
                lines.append(f"{label} f")
            elif event.total > state.max_bet:
                lines.append(f"{label} cbr {event.total}")
                queue = {j for j, p in enumerate(state.players) if j != i and not p.folded and p.stack > 0}
            else:
                lines.append(f"{label} cc")
            queue.discard(i)
        elif isinstance(event, BettingRoundEnded):
            assert state is not None
            lines.extend(f"p{j + 1} cc" for j in sorted(queue) if _idle(state, j))
            alive = [p for p in state.players if not p.folded]
            if len(alive) > 1 and (event.street == 3 or sum(1 for p in alive if p.stack > 0) <= 1):
                lines.extend(showdown)
                showdown = []
        elif isinstance(event, BoardDealt):
            lines.append("d db " + "".join(event.cards))
        state = apply(state, event)
        if isinstance(event, HoleCardsDealt | BoardDealt) and state.phase is Phase.BETTING:
            queue = _round_actors(state)
    assert state is not None
    fields: dict[str, Any] = {
        "variant": VARIANT_CODES[variant],
        "ante_trimming_status": antes_are_contributions(state.config, len(started.seats)),
        "antes": _antes(started),
        "blinds_or_straddles": list(started.blinds_or_straddles),
    }
    config = state.config
    if variant is Variant.FIXED_LIMIT:
        fields["small_bet"] = config.street_min_bet(0)
        fields["big_bet"] = config.street_min_bet(2)
    else:
        fields["min_bet"] = config.street_min_bet(0)
    # The table's own rules where they are not pokerkit's (user-defined PHH fields).
    if variant is Variant.FIXED_LIMIT and (
        RaiseCap(config.raise_cap, config.blind_is_bet, config.heads_up_uncapped) != POKERKIT_CAP
    ):
        fields["_raise_cap"] = "none" if config.raise_cap is None else config.raise_cap
        fields["_blind_is_bet"] = config.blind_is_bet
        fields["_heads_up_uncapped"] = config.heads_up_uncapped
    if config.reopening is not Reopening.POKERKIT:
        fields["_reopening"] = config.reopening.value
    if config.pot_split is not PotSplit.POKERKIT:
        fields["_pot_split"] = config.pot_split.value
    fields["starting_stacks"] = [stack for _, _, stack in started.seats]
    fields["actions"] = lines
    fields["hand"] = started.hand_id
    fields["seats"] = [seat for seat, _, _ in started.seats]
    fields["players"] = [player for _, player, _ in started.seats]
    if state.phase is Phase.COMPLETE:
        fields["finishing_stacks"] = list(state.stacks)
    fields.update(extra or {})
    return "".join(f"{key} = {_toml(value)}\n" for key, value in fields.items())


def _antes(started: HandStarted) -> list[int]:
    n = len(started.seats)
    if started.antes:
        return list(started.antes)
    return [started.ante] * n


def _round_actors(state: HandState) -> set[int]:
    """pokerkit's actors at the start of a round: players not folded with
    chips that someone can still bet against; none if only one of them is
    left and nothing is owed."""
    players = state.players
    actors = set()
    for i, p in enumerate(players):
        if p.folded or p.stack == 0:
            continue
        others = max((q.stack + q.bet for j, q in enumerate(players) if j != i and not q.folded), default=0)
        if min(p.stack, others - p.bet) > 0:
            actors.add(i)
    if len(actors) == 1 and players[next(iter(actors))].bet >= state.max_bet:
        return set()
    return actors


def _idle(state: HandState, i: int) -> bool:
    """A player pokerkit still asks to act when our round is over: the only
    one left with chips, owing nothing (the check we skip)."""
    p = state.players[i]
    return not p.folded and p.stack > 0 and p.bet >= state.max_bet


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    raise PhhError(f"cannot write {value!r} to PHH")
