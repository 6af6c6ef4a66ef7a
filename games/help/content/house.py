"""A house-banked game's help page as data (pure): its rules from the game
definition (wagers, decision points, dealer qualification, main-wager settlement),
every pay table from the registry, and the return figures from the project's math.

``game_page(code)`` is the game's page: every pay table it has. ``table_page(...)``
is a table's: only the wagers the table offers, the pay tables in force, its
limits, chips and mandatory wagers, and the Bonus Spin return with its own wheel.
What the text says follows RULES.md where the seeds disagree (docs/help.md lists
the differences from seed 004)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from games.help.content import figures
from games.help.content.common import OUTCOME_NAMES, hand_rankings, malfunction, pay_text, ranking_notes
from games.help.content.text import Msg, Percent, _
from games.house.math.rtp import RtpReport
from games.house.rules.bonus_spin import Wheel
from games.house.rules.definitions import Action, GameDefinition, MainRule, WagerKind
from games.house.rules.paytables import BONUS_SPIN_FIXED_AWARDS, BONUS_SPIN_WAGER_UNITS, PayTable
from games.house.rules.registry import game

# --- names --------------------------------------------------------------------------------------

WAGER_NAMES: dict[str, dict[str, Msg]] = {
    "uth": {
        "ante": _("Ante"),
        "ante_plus": _("Ante Plus (Blind)"),
        "best_five": _("Best Five (Trips)"),
        "call": _("Call"),
    },
    "casino_holdem": {"ante": _("Ante"), "bonus": _("AA Bonus"), "call": _("Call bet")},
    "xtreme": {
        "ante": _("Ante"),
        "xtra_bonus": _("X-tra Bonus"),
        "player_bonus": _("Player Bonus"),
        "hole_card_bonus": _("Hole Card Bonus"),
        "stax": _("STAX"),
        "bonus_spin": _("Bonus Spin Xtreme"),
        "play": _("Play"),
    },
}

OPTION_NAMES: dict[str, Msg] = {
    "call4x": _("Call 4x"),
    "call3x": _("Call 3x"),
    "call2x": _("Call 2x"),
    "call1x": _("Call 1x"),
    "play4x": _("Play 4x"),
    "play3x": _("Play 3x"),
    "play2x": _("Play 2x"),
    "play1x": _("Play 1x"),
    "call": _("Call"),
    "check": _("Check"),
    "fold": _("Fold"),
}

STREETS: dict[str, Msg] = {
    "preflop": _("Before the flop (your two cards dealt)"),
    "flop": _("After the flop (three community cards)"),
    "river": _("After the turn and the river (all five community cards)"),
}

SITUATIONS: dict[str, Msg] = {
    "win_qualified": _("You beat the dealer, who qualifies"),
    "win_unqualified": _("You beat the dealer, who does not qualify"),
    "tie_qualified": _("Tie, the dealer qualifies"),
    "tie_unqualified": _("Tie, the dealer does not qualify"),
    "lose_qualified": _("The dealer beats you and qualifies"),
    "lose_unqualified": _("The dealer beats you but does not qualify"),
    "fold": _("You fold"),
}

ACTIONS: dict[Action, Msg] = {
    Action.EVEN: _("wins 1 to 1"),
    Action.TABLE: _("is paid by its pay table"),
    Action.PUSH: _("pushes (returned)"),
    Action.LOSE: _("loses"),
}

BASES: dict[str, Msg] = {
    "player_seven": _("the best five of your two cards and the five community cards"),
    "first_five": _("your two cards and the flop (the first five cards dealt)"),
    "hole_cards": _("your two cards"),
    "stax_five": _("your two cards and the flop"),
    "community_five": _("the five community cards"),
}


def wager_name(code: str, wager: str) -> Msg:
    return WAGER_NAMES[code][wager]


# --- what a table adds --------------------------------------------------------------------------


@dataclass(frozen=True)
class TableTerms:
    """What a table sets (read by the service from the table): its spots' limits,
    the pay tables in force, its Bonus Spin wheel, its STAX contribution rate,
    chips, mandatory wagers and multi-play."""

    code: str
    name: str
    currency: str
    limits: Mapping[str, Mapping[str, int]]
    pay_tables: Mapping[str, int]
    wheel: Wheel | None = None
    stax_contribution: Fraction | None = None
    chips: Sequence[int] = ()
    mandatory_wagers: Sequence[str] = ()
    multi_play: bool | None = None
    decision_seconds: int | None = None
    betting_seconds: int | None = None


# --- the sections -------------------------------------------------------------------------------


def _section(section_id: str, title: Msg, *paragraphs: Msg) -> dict[str, Any]:
    return {"id": section_id, "title": title, "paragraphs": list(paragraphs)}


def _multipliers(definition: GameDefinition, street: str) -> list[int]:
    return [o.multiplier for o in definition.decision_point(street).options if o.multiplier > 0]


def _uth_like_sections(definition: GameDefinition) -> list[dict[str, Any]]:
    """UTH and Xtreme Hold'em: the same main game under different wager names."""
    code = definition.code
    names = WAGER_NAMES[code]
    ante, decision = names["ante"], names[definition.decision_wager]
    blind = next(names[w.name] for w in definition.wagers if w.kind is WagerKind.AUTOMATIC)
    pre, flop, river = (_multipliers(definition, s) for s in ("preflop", "flop", "river"))
    timeouts = {p.street: OPTION_NAMES[p.timeout_default] for p in definition.decision_points}
    qualifier = definition.qualifier
    return [
        _section(
            "objective",
            _("Object of the game"),
            _(
                "You play against the dealer, not against the other players. You and the dealer each make the "
                "best five-card hand from two own cards and five community cards; your aim is a better hand "
                "than the dealer's. The earlier you put your hand in play, the more you can wager and win."
            ),
            _("One standard 52-card deck, without jokers, freshly shuffled for every round."),
        ),
        _section(
            "how_to_play",
            _("How to play"),
            _(
                "While betting is open (green light, then yellow for its last seconds; red: closed) place the "
                "%(ante)s. The %(blind)s wager, equal to the %(ante)s, is placed with it automatically: the two "
                "are always equal.",
                ante=ante,
                blind=blind,
            ),
            _(
                "You and the dealer get two cards each; the dealer's are face down. The community cards follow: "
                "three (the flop), then two more (the turn and the river)."
            ),
            _(
                "Before the flop you may make a %(decision)s wager of %(high)sx or %(low)sx the %(ante)s, or check.",
                decision=decision,
                high=max(pre),
                low=min(pre),
                ante=ante,
            ),
            _(
                "If you checked, after the flop you may make a %(decision)s wager of %(flop)sx the %(ante)s, "
                "or check again.",
                decision=decision,
                flop=flop[0],
                ante=ante,
            ),
            _(
                "If you checked twice, after the turn and the river you must make a %(decision)s wager of "
                "%(river)sx the %(ante)s or fold. Folding gives up the %(ante)s and the %(blind)s.",
                decision=decision,
                river=river[0],
                ante=ante,
                blind=blind,
            ),
            _(
                "You make one %(decision)s wager per round at most: once you have made it, no more decisions "
                "are offered and the remaining cards are dealt before your hand is compared with the dealer's.",
                decision=decision,
            ),
            _(
                "If you do not decide in time: %(preflop)s before the flop, %(flop)s after the flop, "
                "%(river)s after the river.",
                preflop=timeouts["preflop"],
                flop=timeouts["flop"],
                river=timeouts["river"],
            ),
        ),
        _section(
            "dealer_qualification",
            _("Dealer qualification"),
            _("The dealer qualifies (opens) with a pair or better.")
            if qualifier.min_pair_rank == 2
            else _("The dealer qualifies with a pair of %(rank)ss or better.", rank=qualifier.min_pair_rank),
        ),
        _section(
            "settlement",
            _("Winning and losing"),
            _(
                "You beat the dealer: the %(decision)s pays 1 to 1; the %(ante)s pays 1 to 1 if the dealer "
                "qualifies and is returned if not; the %(blind)s pays its pay table.",
                decision=decision,
                ante=ante,
                blind=blind,
            ),
            _(
                "The dealer beats you: the %(decision)s and the %(blind)s lose; the %(ante)s loses if the "
                "dealer qualifies and is returned if not.",
                decision=decision,
                ante=ante,
                blind=blind,
            ),
            _(
                "Tie: the %(ante)s, the %(blind)s and the %(decision)s are returned.",
                ante=ante,
                blind=blind,
                decision=decision,
            ),
            _(
                "The %(blind)s pays only on a straight or better; with three of a kind or less it is returned.",
                blind=blind,
            ),
        ),
    ]


def _casino_holdem_sections(definition: GameDefinition) -> list[dict[str, Any]]:
    names = WAGER_NAMES["casino_holdem"]
    main = {"ante": names["ante"], "call": names["call"]}
    call = _multipliers(definition, "flop")[0]
    timeout = OPTION_NAMES[definition.decision_point("flop").timeout_default]
    return [
        _section(
            "objective",
            _("Object of the game"),
            _(
                "You play against the dealer. The aim is a better five-card hand than the dealer's, made from "
                "your two cards and five community cards."
            ),
            _("One standard 52-card deck, without jokers, freshly shuffled for every round."),
        ),
        _section(
            "how_to_play",
            _("How to play"),
            _(
                "While betting is open place the %(ante)s; you may also place the optional %(bonus)s.",
                ante=names["ante"],
                bonus=names["bonus"],
            ),
            _("You get two cards face up, the dealer two face down, and three community cards are dealt (the flop)."),
            _(
                "Then call, with a %(call)s of %(times)sx your %(ante)s, or fold and lose the %(ante)s. "
                "If you do not decide in time: %(timeout)s.",
                call=names["call"],
                times=call,
                ante=names["ante"],
                timeout=timeout,
            ),
            _("If you call, the turn and the river are dealt and the dealer's cards are shown."),
        ),
        _section(
            "dealer_qualification",
            _("Dealer qualification"),
            _(
                "The dealer qualifies with a pair of %(rank)ss or better.",
                rank=definition.qualifier.min_pair_rank,
            ),
        ),
        _section(
            "settlement",
            _("Winning and losing"),
            _("The dealer does not qualify: the %(ante)s pays its pay table and the %(call)s is returned.", **main),
            _(
                "The dealer qualifies and you win: the %(ante)s pays its pay table and the %(call)s pays 1 to 1.",
                **main,
            ),
            _("The dealer qualifies and wins: the %(ante)s and the %(call)s lose.", **main),
            _("Tie against a qualifying dealer: the %(ante)s and the %(call)s are returned.", **main),
        ),
    ]


SIDE_BET_TEXT: dict[tuple[str, str], Msg] = {
    ("uth", "best_five"): _(
        "Optional, placed with the Ante. Pays on your final five-card hand, three of a kind or better, "
        "whatever the dealer holds and whatever you decide: it pays even if you fold."
    ),
    ("casino_holdem", "bonus"): _(
        "Optional, placed after the Ante. Pays on the first five cards (your two cards and the flop): a "
        "pair of aces or better. Your decision to call or fold does not change it."
    ),
    ("xtreme", "player_bonus"): _(
        "Optional. Pays on your best five of seven cards, three of a kind or better, whatever the dealer "
        "holds and even if you fold."
    ),
    ("xtreme", "hole_card_bonus"): _(
        "Optional. Pays on your two cards alone, the highest qualifying outcome only. A face card is a King, "
        "Queen or Jack."
    ),
    ("xtreme", "stax"): _(
        'Optional. Uses your two cards and the flop and pays "for 1" (the stake included in the pay). '
        "The best hands win a progressive pool: a hit pays the whole pool, which then starts again from its "
        "reset amount; several hits of one pool in the same round share it equally. Part of every STAX "
        "wager goes to the pools."
    ),
    ("xtreme", "bonus_spin"): _(
        "Optional; the wager is exactly 1, 2 or 5 units of the table's currency. Three of a kind or better "
        "on the five community cards spins the wheel: you get your stake back, the fixed award for the "
        "hand and the wheel's award (a multiple of your wager). Anything else loses."
    ),
}


def _side_bets_section(definition: GameDefinition, offered: Sequence[str]) -> dict[str, Any]:
    code = definition.code
    paragraphs = [
        _("Side bets are settled on the cards alone: folding, checking or losing the main game never changes them.")
    ]
    for wager in offered:
        paragraphs.append(_("%(name)s: %(text)s", name=wager_name(code, wager), text=SIDE_BET_TEXT[(code, wager)]))
    return _section("side_bets", _("Side bets"), *paragraphs)


# --- pay tables and returns ---------------------------------------------------------------------


def pay_table_data(definition: GameDefinition, table: PayTable) -> dict[str, Any]:
    """One pay table: every line with its outcome's name and pay, and, for a side bet,
    its exact return (``figures.side_bet_return``)."""
    data: dict[str, Any] = {
        "wager": table.wager,
        "number": table.number,
        "name": table.name,
        "wager_name": wager_name(definition.code, table.wager),
        "cards": BASES[table.basis.value],
        "lines": [
            {
                "outcome": outcome,
                "hand": OUTCOME_NAMES[outcome],
                "kind": pay.kind.value,
                "ratio": str(pay.ratio),
                "pool": pay.pool,
                "pay": pay_text(pay),
            }
            for outcome, pay in table.lines
        ],
        "rtp": None,
    }
    if definition.wager(table.wager).main_rule is None:
        report = figures.side_bet_return(definition.code, table.wager, table.number)
        data["rtp"] = _side_bet_figure(definition, report, bool(definition.wager(table.wager).pools))
    return data


def _side_bet_figure(definition: GameDefinition, report: RtpReport, progressive: bool) -> dict[str, Any]:
    name = wager_name(definition.code, report.wager)
    text = (
        _("%(wager)s: return to player %(rtp)s from its fixed pays; the progressive pools add to it.",
          wager=name, rtp=Percent(report.rtp))
        if progressive
        else _("%(wager)s: return to player %(rtp)s.", wager=name, rtp=Percent(report.rtp))
    )  # fmt: skip
    return {"rtp": float(report.rtp), "rtp_exact": _exact(report.rtp), "text": text}


def _exact(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def main_returns(definition: GameDefinition) -> dict[str, Any] | None:
    result = figures.main_game_return(definition.code)
    if result is None:
        return None
    ante = wager_name(definition.code, "ante")
    return {
        "rtp_per_ante": float(result.rtp_per_ante),
        "rtp_per_ante_exact": _exact(result.rtp_per_ante),
        "rtp_per_total": float(result.rtp_per_total),
        "rtp_per_total_exact": _exact(result.rtp_per_total),
        "house_edge": float(result.house_edge),
        "element_of_risk": float(result.element_of_risk),
        "text": [
            _(
                "Theoretical return to player under perfect play: %(per_total)s of the total wagered, "
                "%(per_ante)s of the %(ante)s.",
                per_total=Percent(result.rtp_per_total),
                per_ante=Percent(result.rtp_per_ante),
                ante=ante,
            ),
            _(
                "House edge %(edge)s of the %(ante)s; element of risk %(risk)s of the total wagered.",
                edge=Percent(result.house_edge),
                ante=ante,
                risk=Percent(result.element_of_risk),
            ),
        ],
    }


def bonus_spin_data(definition: GameDefinition, wheel: Wheel | None) -> dict[str, Any]:
    """Bonus Spin Xtreme's triggers and fixed awards per wager size and, with a
    table's wheel, its segments and the exact return per wager size."""
    awards = [
        {
            "outcome": outcome,
            "hand": OUTCOME_NAMES[outcome],
            "fixed_award_units": {
                str(units): BONUS_SPIN_FIXED_AWARDS[units][outcome] for units in BONUS_SPIN_WAGER_UNITS
            },
        }
        for outcome in BONUS_SPIN_FIXED_AWARDS[BONUS_SPIN_WAGER_UNITS[0]]
    ]
    data: dict[str, Any] = {"wager_units": list(BONUS_SPIN_WAGER_UNITS), "triggers": awards, "wheel": None, "rtp": []}
    if wheel is None:
        data["note"] = _("The wheel's segments are set by each table; its page gives the wheel and the return.")
        return data
    data["wheel"] = wheel.as_dict()
    for units in BONUS_SPIN_WAGER_UNITS:
        report = figures.bonus_spin_return(definition.code, wheel, units)
        data["rtp"].append(
            {
                "wager_units": units,
                "rtp": float(report.rtp),
                "rtp_exact": _exact(report.rtp),
                "text": _("%(units)s unit wager: return to player %(rtp)s.", units=units, rtp=Percent(report.rtp)),
            }
        )
    return data


# --- settlement and decisions as data -----------------------------------------------------------


def settlement(definition: GameDefinition) -> list[dict[str, Any]]:
    """Each main wager's result in every situation, read from its ``MainRule``."""
    rows = []
    for wager in definition.wagers:
        rule: MainRule | None = wager.main_rule
        if rule is None:
            continue
        situations = [s for s in SITUATIONS if not (s == "fold" and wager.kind is WagerKind.DECISION)]
        rows.append(
            {
                "wager": wager.name,
                "name": wager_name(definition.code, wager.name),
                "results": [
                    {
                        "situation": s,
                        "situation_text": SITUATIONS[s],
                        "action": rule.action(*_split(s)).value,
                        "text": ACTIONS[rule.action(*_split(s))],
                    }
                    for s in situations
                ],
            }
        )
    return rows


def _split(situation: str) -> tuple[str, bool]:
    if situation == "fold":
        return "fold", True
    result, qualified = situation.split("_")
    return result, qualified == "qualified"


def decisions(definition: GameDefinition) -> list[dict[str, Any]]:
    return [
        {
            "street": point.street,
            "title": STREETS[point.street],
            "options": [
                {"option": o.name, "name": OPTION_NAMES[o.name], "multiplier": o.multiplier, "folds": o.folds}
                for o in point.options
            ],
            "timeout_default": point.timeout_default,
            "timeout_text": _("If you do not decide in time: %(option)s.", option=OPTION_NAMES[point.timeout_default]),
        }
        for point in definition.decision_points
    ]


def wagers(definition: GameDefinition, offered: Sequence[str] | None) -> list[dict[str, Any]]:
    return [
        {"wager": w.name, "name": wager_name(definition.code, w.name), "kind": w.kind.value, "equals": w.equals}
        for w in definition.wagers
        if offered is None or w.kind is not WagerKind.OPTIONAL or w.name in offered
    ]


# --- the page -----------------------------------------------------------------------------------


def game_page(code: str, terms: TableTerms | None = None) -> dict[str, Any]:
    """The help page of game ``code`` (``UnknownGame`` if none); with ``terms``, of that table."""
    definition = game(code)
    optional = [w.name for w in definition.wagers if w.kind is WagerKind.OPTIONAL]
    offered = optional if terms is None else [w for w in optional if w in terms.limits]
    sections = _casino_holdem_sections(definition) if code == "casino_holdem" else _uth_like_sections(definition)
    if offered:
        sections.append(_side_bets_section(definition, offered))
    sections.append(malfunction())
    if terms is None:
        tables = list(definition.pay_tables)
    else:
        # In the game's wager order (a JSON column does not keep the operator's).
        tables = [definition.pay_table(w.name, terms.pay_tables[w.name]) for w in definition.wagers
                  if w.name in terms.pay_tables]  # fmt: skip
    page: dict[str, Any] = {
        "kind": "house",
        "game": code,
        "title": definition.title,
        "rules_version": definition.rules_version,
        "sections": sections,
        "hand_rankings": hand_rankings(),
        "ranking_notes": ranking_notes(),
        "wagers": wagers(definition, None if terms is None else offered),
        "decisions": decisions(definition),
        "settlement": settlement(definition),
        "pay_tables": [pay_table_data(definition, t) for t in tables],
        "main_game_return": main_returns(definition),
        "bonus_spin": None,
    }
    if "bonus_spin" in offered:
        page["bonus_spin"] = bonus_spin_data(definition, None if terms is None else terms.wheel)
    if terms is not None:
        page["table"] = table_section(definition, terms, offered)
    return page


def table_section(definition: GameDefinition, terms: TableTerms, offered: Sequence[str]) -> dict[str, Any]:
    code = definition.code
    spots = [w.name for w in definition.wagers if w.name in terms.limits]
    limits = [
        {
            "wager": spot,
            "name": wager_name(code, spot),
            "min": terms.limits[spot]["min"],
            "max": terms.limits[spot]["max"],
        }
        for spot in spots
    ]
    paragraphs = [
        _(
            "Bet limits are per betting spot, in minor units of %(currency)s; your balance must cover a wager "
            "when you place it.",
            currency=terms.currency,
        ),
        _(
            "A bet is made of the table's chips. Only chips your balance covers are offered; each click adds "
            "a chip, up to the spot's maximum."
        ),
    ]
    if terms.mandatory_wagers:
        paragraphs.append(
            _(
                "At this table every player's bets must include these wagers: %(wagers)s; "
                "bets without them are returned at No More Bets and the player sits the round out.",
                wagers=[wager_name(code, w) for w in terms.mandatory_wagers],
            )
        )
    if terms.multi_play is False:
        paragraphs.append(_("This table is not available for multi-game play."))
    section: dict[str, Any] = {
        "code": terms.code,
        "name": terms.name,
        "currency": terms.currency,
        "limits": limits,
        "chips": list(terms.chips),
        "mandatory_wagers": [{"wager": w, "name": wager_name(code, w)} for w in terms.mandatory_wagers],
        "multi_play": terms.multi_play,
        "pay_tables": dict(terms.pay_tables),
        "betting_seconds": terms.betting_seconds,
        "decision_seconds": terms.decision_seconds,
        "paragraphs": paragraphs,
    }
    if "stax" in offered and terms.stax_contribution is not None:
        stax = figures.side_bet_return(code, "stax", terms.pay_tables["stax"])
        section["stax_contribution"] = float(terms.stax_contribution)
        section["stax_long_run_rtp"] = float(stax.rtp + terms.stax_contribution)
        paragraphs.append(
            _(
                "STAX: %(share)s of every wager goes to the progressive pools; over the long run the wager "
                "returns %(rtp)s (fixed pays and pools).",
                share=Percent(terms.stax_contribution),
                rtp=Percent(stax.rtp + terms.stax_contribution),
            )
        )
    return section
