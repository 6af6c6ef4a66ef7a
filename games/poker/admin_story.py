"""A poker hand told for the operator's admin page (docs/compliance.md, "Poker
hands in the admin"): the board and each seat's hole cards drawn as cards
(``casino.admin_story``; a card the table has not seen is a card back), one
line in words per event of the hand's stream with its data behind a toggle,
pot and rake with their currency, the deal's commitment and, once the hand is
over, the leaves the table saw, each checked against the commitment here
(``tools.verify_deal.check_answer``).

Everything shown is read through ``ledger.confidential.staff_reader``: a hand
in play as a spectator at the table sees it (no hole card), the stored events
once it is over (where folded and mucked hands stay sealed). A read-side
presenter for the admin, no writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from casino.admin_story import cards_html, clock, raw_json
from games.poker import event_types as et
from games.poker.models import PokerHand
from ledger.confidential import NOT_SHOWN, staff_reader
from ledger.currencies import display_money
from ledger.services import read_stream
from tools.verify_deal import MERKLE_ALGORITHM, check_answer

STREETS = ("pre-flop", "flop", "turn", "river")
BOARD_STREETS = {1: "Flop", 2: "Turn", 3: "River"}
ACTIONS = {"fold": "folds", "check": "checks", "call": "calls", "bet": "bets", "raise": "raises to"}


@dataclass(frozen=True)
class HandLine:
    at: str
    who: str
    text: SafeString
    event_type: str
    raw: str


@dataclass(frozen=True)
class SeatCards:
    label: str
    cards: tuple[str | None, ...]

    def html(self) -> SafeString:
        return cards_html(self.cards)


@dataclass
class HandStory:
    lines: list[HandLine] = field(default_factory=list)
    board: tuple[str, ...] = ()
    seats: list[SeatCards] = field(default_factory=list)
    commitment: str | None = None
    revealed: tuple[str, ...] = ()
    proof_problems: list[str] = field(default_factory=list)
    over: bool = False

    def board_html(self) -> SafeString:
        return cards_html(self.board)

    def revealed_html(self) -> SafeString:
        return cards_html(self.revealed)


class _Teller:
    def __init__(self, hand: PokerHand, names: Mapping[int, str]) -> None:
        self.currency, self.names = hand.currency, names

    def money(self, amount: Any) -> str:
        return display_money(amount, self.currency) if isinstance(amount, int) else str(amount)

    def seat(self, seat: Any) -> str:
        return self.names.get(seat, f"seat {seat}") if isinstance(seat, int) else str(seat)

    def line(self, kind: str, d: Mapping[str, Any]) -> SafeString:
        who = self.seat(d.get("seat"))
        all_in = " (all in)" if d.get("all_in") else ""
        if kind == et.SHUFFLED:
            return format_html("Deck shuffled and committed (commitment {}…)", str(d.get("commitment", ""))[:16])
        if kind == et.BUTTON_DRAWN:
            draws = d.get("draws") or {}
            told = format_html_join(", ", "{} {}", ((self.seat(int(s)), cards_html([c])) for s, c in draws.items()
                                                    if str(s).isdigit()))  # fmt: skip
            return format_html("Button drawn: {} ({})", self.seat(d.get("button")), told)
        if kind == "poker.hand_started":
            blinds = " / ".join(self.money(b) for b in d.get("blinds_or_straddles") or ())
            return format_html("Hand started: button {}, blinds {}, {} players", self.seat(d.get("button")), blinds,
                               len(d.get("seats") or ()))  # fmt: skip
        if kind == "poker.ante_posted":
            return format_html("{} posts the ante {}{}", who, self.money(d.get("amount")), all_in)
        if kind == "poker.blind_posted":
            return format_html("{} posts the {} blind {}{}", who, d.get("kind"), self.money(d.get("amount")), all_in)
        if kind == "poker.hole_cards_dealt":
            return format_html("{} is dealt {}", who, cards_html(_cards(d.get("cards"))))
        if kind == et.TURN:
            return format_html("{} to act, until {}", who, clock(d.get("deadline")))
        if kind == et.TIMED_OUT:
            return format_html("{} ran out of time", who)
        if kind == "poker.action_taken":
            action = str(d.get("action"))
            amount = d.get("total") if action == "raise" else d.get("amount")
            paid = format_html(" {}", self.money(amount)) if action in ("call", "bet", "raise") else ""
            return format_html("{} {}{}{}", who, ACTIONS.get(action, action), paid, all_in)
        if kind == "poker.uncalled_bet_returned":
            return format_html("{} gets back the uncalled {}", who, self.money(d.get("amount")))
        if kind == "poker.betting_round_ended":
            street = d.get("street")
            name = STREETS[street] if isinstance(street, int) and 0 <= street < len(STREETS) else street
            return format_html("Betting on the {} is over", name)
        if kind == "poker.board_dealt":
            name = BOARD_STREETS.get(d.get("street"), "Board")  # type: ignore[arg-type]
            return format_html("{} dealt: {}", name, cards_html(_cards(d.get("cards"))))
        if kind == "poker.hand_shown":
            return format_html("{} shows {}", who, cards_html(_cards(d.get("cards"))))
        if kind == "poker.hand_mucked":
            return format_html("{} mucks", who)
        if kind == "poker.rake_taken":
            return format_html("Rake taken: {}", self.money(d.get("amount")))
        if kind == "poker.pot_awarded":
            won = [(self.seat(w[0]), self.money(w[1])) for w in d.get("winners") or () if len(w) == 2]
            winners = format_html_join(", ", "{} wins {}", won)
            return format_html("Pot {} ({}, rake {}): {}", int(d.get("index") or 0) + 1, self.money(d.get("amount")),
                               self.money(d.get("rake")), winners)  # fmt: skip
        if kind == "poker.hand_ended":
            return format_html("Hand over (rake {})", self.money(d.get("rake")))
        if kind == et.CARDS_REVEALED:
            return format_html("The cards the table saw revealed with their proofs ({})", len(d.get("revealed") or ()))
        if kind in (et.PAUSED, et.RESUMED, et.VOIDED):
            verb = {et.PAUSED: "Paused", et.RESUMED: "Resumed", et.VOIDED: "Voided"}[kind]
            reason = format_html(": “{}”", d["reason"]) if d.get("reason") else ""
            return format_html("{} by {}{}", verb, d.get("actor", "the operator"), reason)
        return format_html("{}", kind)


def _cards(value: Any) -> list[str | None]:
    return [c if isinstance(c, str) else None for c in value] if isinstance(value, list) else []


def hand_story(hand: PokerHand) -> HandStory:
    """The hand as staff may see it now (see the module docstring)."""
    stream = et.hand_stream(hand.hand_id)
    names = {p.seat_number: p.player.get_username() for p in hand.participants.select_related("player")}
    teller = _Teller(hand, names)
    shown = staff_reader(stream)
    story = HandStory()
    hole: dict[int, list[str | None]] = {}
    board: list[str] = []
    revealed: list[Mapping[str, Any]] = []
    for event in read_stream(stream_id=stream):
        data = shown(event.type, event.data)
        if not isinstance(data, Mapping):
            text = format_html("{}", NOT_SHOWN)
        else:
            text = teller.line(event.type, data)
            seat = data.get("seat")
            if event.type in ("poker.hole_cards_dealt", "poker.hand_shown") and isinstance(seat, int):
                hole[seat] = _cards(data.get("cards"))
            elif event.type == "poker.board_dealt":
                board += [c for c in _cards(data.get("cards")) if c is not None]
            elif event.type == et.SHUFFLED and isinstance(data.get("commitment"), str):
                story.commitment = data["commitment"]
            elif event.type == et.CARDS_REVEALED and isinstance(data.get("revealed"), list):
                revealed = [e for e in data["revealed"] if isinstance(e, Mapping)]
            elif event.type in ("poker.hand_ended", et.VOIDED):
                story.over = True
        at = event.metadata.get("at") if isinstance(event.metadata, Mapping) else None
        who = teller.seat(data.get("seat")) if isinstance(data, Mapping) and "seat" in data else "table"
        story.lines.append(HandLine(clock(at) if at else event.recorded_at.strftime("%H:%M:%S"), who, text,
                                    event.type, raw_json(data)))  # fmt: skip
    story.board = tuple(board)
    story.seats = [
        SeatCards(f"{teller.seat(seat)} (seat {seat})", tuple(cards)) for seat, cards in sorted(hole.items())
    ]
    if story.over and revealed and story.commitment:
        story.revealed = tuple(str(e.get("card")) for e in revealed)
        answer = {"algorithm": MERKLE_ALGORITHM, "commitment": story.commitment, "deck_size": 52, "revealed": revealed}
        story.proof_problems = check_answer(answer)
    return story
