"""``manage.py poker_replay FILE.phh [--rake ...] [rules]``: replay a PHH hand
through the engine. A PHH file is played under pokerkit's rules for its
variant (``FT``: four bet/raise actions a street, the blinds not counted;
pokerkit's reopening rule for short all-ins; pokerkit's split of tied
pots) unless the file's user-defined fields (``_raise_cap`` ...) or the
options ``--raise-cap``, ``--blind-is-bet``, ``--heads-up-uncapped``,
``--reopening`` and ``--pot-split`` say otherwise. The last line is JSON ``{"finishing_stacks", "pots", "rake"}``
(stacks in PHH player order, pots main first before rake)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from casino.errors import DomainError
from games.poker.engine.phh import read_phh, replay_phh
from games.poker.engine.rules import PotSplit, RaiseCap, RakeRule, Reopening, seed_rake_rule


def parse_rake(spec: str, *, text: str, currency: str) -> RakeRule:
    """``seed001`` (seed 001's table for the hand's pot type, player count
    and small blind) or ``percent_bp=250,min=0,cap=300[,no_flop_no_drop=0]``
    (amounts in the file's chips = minor units)."""
    if spec == "seed001":
        hand = read_phh(text)
        return seed_rake_rule(
            hand.config.variant,
            players=len(hand.starting_stacks),
            small_blind=hand.config.small_blind,
            currency=currency,
        )
    values: dict[str, int] = {}
    for part in spec.split(","):
        key, sep, value = part.partition("=")
        if not sep or key.strip() not in {"percent_bp", "min", "cap", "no_flop_no_drop"}:
            raise CommandError(f"bad --rake part {part!r}")
        try:
            values[key.strip()] = int(value)
        except ValueError as exc:
            raise CommandError(f"bad --rake value {part!r}") from exc
    return RakeRule(
        percent_bp=values.get("percent_bp", 250),
        minimum=values.get("min", 0),
        cap=values.get("cap", 300),
        no_flop_no_drop=bool(values.get("no_flop_no_drop", 1)),
    )


class Command(BaseCommand):
    help = "Replay a PHH (Poker Hand History) file through the hold'em engine."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="a .phh file (one hand)")
        parser.add_argument(
            "--rake",
            default=None,
            help="rake the hand: 'seed001' or 'percent_bp=250,min=0,cap=300,no_flop_no_drop=1' (default: none)",
        )
        parser.add_argument("--currency", default="EUR", help="currency of the chips for --rake seed001")
        parser.add_argument("--events", action="store_true", help="print every event before the result")
        parser.add_argument(
            "--raise-cap",
            default=None,
            help="fixed limit: bets and raises allowed a street, or 'none' (default: the file's, else pokerkit's 4)",
        )
        parser.add_argument(
            "--blind-is-bet",
            choices=("yes", "no"),
            default=None,
            help="fixed limit: the big blind counts as the preflop bet towards the cap (default: the file's, else no)",
        )
        parser.add_argument(
            "--heads-up-uncapped",
            choices=("yes", "no"),
            default=None,
            help="fixed limit: no cap while two players are in the hand (default: the file's, else no)",
        )
        parser.add_argument(
            "--reopening",
            choices=[r.value for r in Reopening],
            default=None,
            help="short all-in reopening rule: 'acted' (our tables) or 'pokerkit' (default: the file's, else pokerkit)",
        )
        parser.add_argument(
            "--pot-split",
            choices=[s.value for s in PotSplit],
            default=None,
            help="tied pots: 'per_pot' (our tables: each pot split on its own) or 'pokerkit' (pots left with the "
            "same players after the losing hands are killed merge, split once) (default: the file's, else pokerkit)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc}") from exc
        try:
            rake = parse_rake(options["rake"], text=text, currency=options["currency"]) if options["rake"] else None
            cap = _cap(options, read_phh(text).config) if _cap_given(options) else None
            reopening = Reopening(options["reopening"]) if options["reopening"] else None
            pot_split = PotSplit(options["pot_split"]) if options["pot_split"] else None
            events, state = replay_phh(text, rake=rake, cap=cap, reopening=reopening, pot_split=pot_split)
        except DomainError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc
        if options["events"]:
            for event in events:
                self.stdout.write(json.dumps(event.to_dict()))
        self.stdout.write(f"board: {' '.join(state.board) or '-'}")
        for player in state.players:
            self.stdout.write(f"{player.player_id}: {player.stack} (won {player.won})")
        result = {"finishing_stacks": list(state.stacks), "pots": list(state.pots), "rake": state.rake}
        self.stdout.write(json.dumps(result))


def _cap_given(options: dict[str, Any]) -> bool:
    return any(options[key] is not None for key in ("raise_cap", "blind_is_bet", "heads_up_uncapped"))


def _cap(options: dict[str, Any], config: Any) -> RaiseCap:
    """The options over the file's (or pokerkit's) cap."""
    bets = config.raise_cap
    if options["raise_cap"] is not None:
        if options["raise_cap"] == "none":
            bets = None
        else:
            try:
                bets = int(options["raise_cap"])
            except ValueError as exc:
                raise CommandError(f"bad --raise-cap {options['raise_cap']!r}") from exc
            if bets < 1:
                raise CommandError("--raise-cap allows at least one bet a street")
    blind = config.blind_is_bet if options["blind_is_bet"] is None else options["blind_is_bet"] == "yes"
    heads_up = config.heads_up_uncapped
    if options["heads_up_uncapped"] is not None:
        heads_up = options["heads_up_uncapped"] == "yes"
    return RaiseCap(bets, blind_is_bet=blind, heads_up_uncapped=heads_up)
