"""What every hold'em help page shares (pure): hand rankings with their tie rules
(RULES.md "Common to all games", seeds 000, 001 and 004), pay-table outcome and
pay labels, and the malfunction rule."""

from __future__ import annotations

from typing import Any

from games.help.content.text import Msg, _
from games.house.rules.paytables import CATEGORIES, Pay, PayKind

# One name per outcome a pay table can list: the ten categories (evaluator order) and the special ones.
OUTCOME_NAMES: dict[str, Msg] = {
    "royal_flush": _("Royal Flush"),
    "straight_flush": _("Straight Flush"),
    "four_of_a_kind": _("Four of a Kind"),
    "full_house": _("Full House"),
    "flush": _("Flush"),
    "straight": _("Straight"),
    "three_of_a_kind": _("Three of a Kind"),
    "two_pair": _("Two Pair"),
    "pair": _("Pair"),
    "high_card": _("High Card"),
    "pair_of_aces": _("Pair of Aces"),
    "ace_face_suited": _("Ace and Face Card, Suited"),
    "ace_face": _("Ace and Face Card"),
    "royal_flush_diamonds": _("Royal Flush in Diamonds"),
    "royal_flush_other": _("Royal Flush in another suit"),
}

CATEGORY_DESCRIPTIONS: dict[str, Msg] = {
    "royal_flush": _("Ace, King, Queen, Jack and 10, all of the same suit. It cannot be beaten."),
    "straight_flush": _(
        "Five cards in sequence, all of the same suit. Between two, the higher top card wins; 5-4-3-2-A is the lowest."
    ),
    "four_of_a_kind": _(
        "Four cards of the same rank and one other card. The higher four win; if equal, the higher fifth card."
    ),
    "full_house": _("Three cards of one rank and two of another. The higher three win; if equal, the higher pair."),
    "flush": _("Five cards of the same suit, not in sequence. Compared card by card from the highest."),
    "straight": _(
        "Five cards in sequence, not all of the same suit. The higher top card wins; the Ace is high "
        "(A-K-Q-J-10) or low (5-4-3-2-A)."
    ),
    "three_of_a_kind": _(
        "Three cards of the same rank and two other cards. The higher three win; if equal, the two "
        "other cards from the highest."
    ),
    "two_pair": _(
        "Two cards of one rank, two of another and one other card. The higher pair wins, then the "
        "lower pair, then the fifth card."
    ),
    "pair": _(
        "Two cards of the same rank and three other cards. The higher pair wins; if equal, the three "
        "other cards from the highest."
    ),
    "high_card": _("Any hand that is none of the above. Compared card by card from the highest."),
}


def hand_rankings() -> list[dict[str, Any]]:
    """The ten categories, best first (the evaluator's order), each with its name and tie rule."""
    return [
        {"category": category, "name": OUTCOME_NAMES[category], "description": CATEGORY_DESCRIPTIONS[category]}
        for category in CATEGORIES
    ]


def ranking_notes() -> list[Msg]:
    return [
        _(
            "Cards rank from highest to lowest: Ace, King, Queen, Jack, 10, 9, 8, 7, 6, 5, 4, 3, 2. "
            "Suits are all equal and never break a tie."
        ),
        _(
            "A hand is the best five of seven cards: the two cards dealt to the hand and the five community "
            "cards. Only the hand's best ranking counts (a straight flush is both a straight and a flush but "
            "counts as a straight flush). Hands of identical five-card value tie; the result shows which five "
            "cards made each hand."
        ),
    ]


POOL_NAMES: dict[str, Msg] = {
    "star": _("Star Progressive"),
    "spade": _("Spade Progressive"),
    "heart": _("Heart Progressive"),
    "diamond": _("Diamond Progressive"),
    "club": _("Club Progressive"),
}


def pay_text(pay: Pay) -> Msg:
    """A pay-table line's pay as players read it ("3 to 2", "50 for 1", "Push")."""
    if pay.kind is PayKind.TO_ONE:
        if pay.ratio.denominator == 1:
            return _("%(ratio)s to 1", ratio=pay.ratio.numerator)
        return _("%(numerator)s to %(denominator)s", numerator=pay.ratio.numerator, denominator=pay.ratio.denominator)
    if pay.kind is PayKind.FOR_ONE:
        return _("%(ratio)s for 1", ratio=pay.ratio.numerator)
    if pay.kind is PayKind.PROGRESSIVE:
        return POOL_NAMES[pay.pool or ""]
    if pay.kind is PayKind.PUSH:
        return _("Push (the wager is returned)")
    return _("Loses")


def malfunction() -> dict[str, Any]:
    return {
        "id": "malfunction",
        "title": _("Malfunction and disconnection"),
        "paragraphs": [
            _("Malfunction voids all pays and play."),
            _(
                "If anything goes wrong, the round is paused while the operator looks into it. It then either "
                "continues as normal or is cancelled: a cancelled round returns every wager placed in it "
                "(calls included) and pays nothing. A round whose dealer cannot continue is cancelled the same "
                "way, automatically, and you are told why."
            ),
            _(
                "Once betting has closed the round goes on whether or not you stay connected: a decision you "
                "do not make in time takes that decision's default, and your wagers are settled as the cards "
                "fall. Bets placed before betting closed stand; check your balance and history when you "
                "reconnect."
            ),
        ],
    }
