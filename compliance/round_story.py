"""A house round told for the operator's admin page (docs/compliance.md,
"Rounds in the admin"): the cards on the table as cards, one line in words per
event of the round's stream and of its players' streams (bets, decisions,
settlements) in the order they were recorded, each with its data behind a
toggle, the deal's commitment and, once the round is over, its proof.

Everything shown is read through ``ledger.confidential.staff_reader``: a round
in play as a spectator at its table sees it (a face-down card has no face
here: it is drawn as a card back), the whole round once it is closed. The raw
events are replayed only for the round's flags (paused, over), never shown.
A read-side presenter for the admin (an interface), no writes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from casino.admin_story import cards_html, clock, raw_json
from casino.errors import DomainError
from games.house.models import HouseRound, PlayerRound
from games.house.realtime.presenters import round_fairness
from games.house.round import events as ev
from games.house.round.dealer import operator_controls
from games.house.round.state import RoundState, replay_round
from games.house.store import player_stream, round_stream
from ledger.confidential import NOT_SHOWN, SEALED, staff_reader
from ledger.currencies import display_money
from ledger.services import read_stream

# A round's story reads at most this many players' streams (a demo round has a few;
# a 10,000-player round is read player by player through game recall).
MAX_PLAYERS_TOLD = 50

STREETS = {"preflop": "Pre-flop", "flop": "Flop", "turn": "Turn", "river": "River", "showdown": "Showdown"}
_RAISE = re.compile(r"([a-z]+?)(\d+)x")
TIMES = "\u00d7"  # the multiplication sign: "raised 4 times" reads "raised 4" and this sign
VERBS = {"raise": "raised", "play": "played", "bet": "bet", "call": "called", "check": "checked", "fold": "folded"}
# A decision with a multiple of the Ante ("call4x" in UTH, "play2x" in Xtreme) raises by it.
MULTIPLE_VERBS = {"call": "raised", "raise": "raised", "play": "played", "bet": "bet"}


def words(name: str) -> str:
    """A wager or hand name as people read it: ``ante_plus`` -> ``Ante Plus``."""
    return str(name).replace("_", " ").title()


@dataclass(frozen=True)
class StoryLine:
    """One event told in words: ``at`` (HH:MM:SS, UTC), who (``round`` or a
    player's name), the words (cards drawn), and the data as staff may see it."""

    at: str
    who: str
    text: SafeString
    event_type: str
    raw: str
    player: bool


@dataclass(frozen=True)
class Hand:
    label: str
    cards: tuple[str | None, ...]

    def html(self) -> SafeString:
        return cards_html(self.cards)


@dataclass(frozen=True)
class PlayerPart:
    name: str
    player_id: int
    staked: str
    returned: str
    net: str
    status: str
    recall_url: str


@dataclass(frozen=True)
class Proof:
    """The round's deal proven after its end: the revealed deck and master salt,
    checked against the commitment here (``verified``), or why there is none."""

    deck: tuple[str, ...] = ()
    salt: str = ""
    algorithm: str = ""
    verified: bool = False
    problem: str = ""

    def deck_html(self) -> SafeString:
        return cards_html(self.deck)


@dataclass
class RoundStory:
    lines: list[StoryLine] = field(default_factory=list)
    hands: list[Hand] = field(default_factory=list)
    players: list[PlayerPart] = field(default_factory=list)
    players_not_told: int = 0
    commitment: str | None = None
    proof: Proof | None = None
    controls: tuple[str, ...] = ()
    paused: bool = False
    over: bool = False


class _Teller:
    """Turns each event, as staff may see it, into words."""

    def __init__(self, round_row: HouseRound, names: Mapping[int, str]) -> None:
        self.currency = round_row.currency
        self.names = names

    def money(self, amount: Any) -> str:
        return display_money(int(amount), self.currency) if isinstance(amount, int) else str(amount)

    def place(self, to: str) -> str:
        if to == "shared":
            return "Player hand"
        if to.startswith("player:"):
            pid = to.removeprefix("player:")
            return f"{self.names.get(int(pid), 'player ' + pid) if pid.isdigit() else pid}'s hand"
        return {"dealer": "Dealer", "board": "Board"}.get(to, to)

    def grouped(self, cards: Sequence[Mapping[str, Any]]) -> dict[str, list[str | None]]:
        by_place: dict[str, list[str | None]] = {}
        for card in cards:
            if isinstance(card, Mapping):
                by_place.setdefault(str(card.get("to")), []).append(card.get("card"))
        return by_place

    def round_line(self, kind: str, data: Mapping[str, Any]) -> SafeString:
        text = self._round_words.get(kind)
        return text(self, data) if text else format_html("{}", kind)

    def _opened(self, d: Mapping[str, Any]) -> SafeString:
        return format_html("Betting opened, closes {}", clock(d.get("betting_deadline")))

    def _shuffled(self, d: Mapping[str, Any]) -> SafeString:
        return format_html("Deck shuffled and committed (commitment {}…)", str(d.get("commitment", ""))[:16])

    def _betting_closed(self, d: Mapping[str, Any]) -> SafeString:
        count = len(d.get("participants") or ())
        return format_html("No more bets: {} player{} in the round", count, "" if count == 1 else "s")

    def _dealt(self, d: Mapping[str, Any]) -> SafeString:
        parts = self.grouped(d.get("cards") or ())
        told = format_html_join(" · ", "{} {}", ((self.place(p), cards_html(c)) for p, c in parts.items()))
        return format_html("Cards dealt: {}", told)

    def _window(self, d: Mapping[str, Any]) -> SafeString:
        street = STREETS.get(str(d.get("street")), str(d.get("street")))
        return format_html("{} decisions open until {}", street, clock(d.get("deadline")))

    def _revealed(self, d: Mapping[str, Any]) -> SafeString:
        street = str(d.get("street"))
        parts = self.grouped(d.get("cards") or ())
        told = []
        for place, cards in parts.items():
            if place == "board":
                name = {"river": "Turn and river" if len(cards) == 2 else "River", "showdown": "Board"}.get(
                    street, STREETS.get(street, street)
                )
                told.append(format_html("{} dealt: {}", name, cards_html(cards)))
            elif place == "dealer":
                told.append(format_html("Dealer shows {}", cards_html(cards)))
            else:
                told.append(format_html("{} shown: {}", self.place(place), cards_html(cards)))
        return format_html_join(" · ", "{}", ((t,) for t in told)) if told else format_html("Cards revealed")

    def _wheel(self, d: Mapping[str, Any]) -> SafeString:
        return format_html("Bonus wheel stopped on {} ({}{})", d.get("label"), d.get("multiple"), TIMES)

    def _contributed(self, d: Mapping[str, Any]) -> SafeString:
        pools = d.get("pools") or {}
        return format_html(
            "Progressive contributions: {}",
            format_html_join(", ", "{} {}", ((words(p), self.money(a)) for p, a in pools.items())),
        )

    def _hit(self, d: Mapping[str, Any]) -> SafeString:
        hits = [(self.who(h.get("player_id")), self.money(h.get("share"))) for h in d.get("hits") or []
                if isinstance(h, Mapping)]  # fmt: skip
        pool = words(str(d.get("pool")))
        return format_html("Progressive {} hit: {}", pool, format_html_join(", ", "{} wins {}", hits))

    def _jackpot(self, d: Mapping[str, Any]) -> SafeString:
        pools = [(words(str(p.get("pool"))), self.money(p.get("amount"))) for p in d.get("pools") or []
                 if isinstance(p, Mapping)]  # fmt: skip
        return format_html("Progressive pools now: {}", format_html_join(", ", "{} {}", pools))

    def _settled(self, d: Mapping[str, Any]) -> SafeString:
        dealer = d.get("dealer") or {}
        qualifies = dealer.get("qualifies")
        said = "" if qualifies is None else (", qualifies" if qualifies else ", does not qualify")
        return format_html(
            "Round settled: dealer {}{}; staked {}, returned {}",
            words(str(dealer.get("category", "—"))), said, self.money(d.get("staked")), self.money(d.get("returned")),
        )  # fmt: skip

    def _paused(self, d: Mapping[str, Any]) -> SafeString:
        seconds = int(d.get("remaining_ms") or 0) // 1000
        return format_html("Paused by {}: “{}” ({} s left on the clock)", self.actor(d.get("actor")), d.get("reason"),
                           seconds)  # fmt: skip

    def _resumed(self, d: Mapping[str, Any]) -> SafeString:
        return format_html("Resumed by {}, next deadline {}", self.actor(d.get("actor")), clock(d.get("deadline")))

    def _voided(self, d: Mapping[str, Any]) -> SafeString:
        how = " (automatically)" if d.get("automatic") else ""
        return format_html("Voided by {}{}: “{}”", self.actor(d.get("actor")), how, d.get("reason"))

    def _deck_revealed(self, d: Mapping[str, Any]) -> SafeString:
        return format_html("Deck revealed ({} cards): the proof is below", len(d.get("deck") or ()))

    def _closed(self, d: Mapping[str, Any]) -> SafeString:
        reason = {"no_bets": "no bets", "settled": "settled", "voided": "voided"}.get(str(d.get("reason")))
        return format_html("Round closed ({})", reason or d.get("reason"))

    _round_words: dict[str, Callable[[_Teller, Mapping[str, Any]], SafeString]] = {
        ev.OPENED: _opened,
        ev.SHUFFLED: _shuffled,
        ev.BETTING_CLOSED: _betting_closed,
        ev.CARDS_DEALT: _dealt,
        ev.WINDOW_OPENED: _window,
        ev.CARDS_REVEALED: _revealed,
        ev.WHEEL_SPUN: _wheel,
        ev.PROGRESSIVE_CONTRIBUTED: _contributed,
        ev.PROGRESSIVE_HIT: _hit,
        ev.JACKPOT: _jackpot,
        ev.SETTLED: _settled,
        ev.PAUSED: _paused,
        ev.RESUMED: _resumed,
        ev.VOIDED_EVENT: _voided,
        ev.DECK_REVEALED: _deck_revealed,
        ev.ROUND_CLOSED: _closed,
    }

    def who(self, player_id: Any) -> str:
        return self.names.get(player_id, f"player {player_id}") if isinstance(player_id, int) else str(player_id)

    def actor(self, actor: Any) -> str:
        """``user:<id>`` as the staff member's name; ``dealer`` and the like as they are."""
        text = str(actor)
        if text.startswith("user:") and text[5:].isdigit():
            user = get_user_model().objects.filter(pk=int(text[5:])).values_list("username", flat=True).first()
            return str(user) if user else text
        return text

    def player_line(self, name: str, kind: str, d: Mapping[str, Any]) -> SafeString:
        money = self.money
        if kind == ev.BET_PLACED:
            extra = d.get("automatic") or {}
            also = format_html_join("", " and {} {}", ((words(w), money(a)) for w, a in extra.items()))
            how = {"repeat": " (repeat)", "double": " (double)"}.get(str(d.get("source")), "")
            return format_html("{} bet {} {}{}{}", name, words(str(d.get("spot"))), money(d.get("amount")), also, how)
        if kind == ev.BET_REMOVED:
            if d.get("spot") is not None:
                return format_html("{} took back {} {}", name, words(str(d["spot"])), money(d.get("amount")))
            totals = format_html_join(", ", "{} {}", ((words(w), money(a)) for w, a in (d.get("totals") or {}).items()))
            return format_html("{} took back every bet ({}): {}", name, d.get("reason"), totals)
        if kind == ev.DECISION_MADE:
            return self._decision(name, d)
        if kind == ev.PLAYER_SETTLED:
            return self._player_settled(name, d)
        if kind == ev.WAGER_SETTLED:
            return format_html("{}: {} {}, returned {}", name, words(str(d.get("wager"))), d.get("outcome"),
                               money(d.get("returned")))  # fmt: skip
        if kind == ev.PLAYER_VOIDED:
            return format_html("{} refunded {} (round voided: “{}”)", name, money(d.get("returned")), d.get("reason"))
        if kind == ev.PLAYER_DECLINED:
            return format_html("{} was not at the table at No More Bets: bets returned, {}", name,
                               money(d.get("returned")))  # fmt: skip
        return format_html("{}: {}", name, kind)

    def _decision(self, name: str, d: Mapping[str, Any]) -> SafeString:
        option = str(d.get("option"))
        street = STREETS.get(str(d.get("street")), str(d.get("street")))
        auto = " — automatically, time ran out" if d.get("auto") else ""
        multiple = _RAISE.fullmatch(option)
        if multiple:
            verb = MULTIPLE_VERBS.get(multiple.group(1), multiple.group(1))
            return format_html("{} {} {}{} ({}) at the {}{}", name, verb, multiple.group(2), TIMES,
                               self.money(d.get("amount")), street.lower(), auto)  # fmt: skip
        amount = d.get("amount")
        paid = format_html(" ({})", self.money(amount)) if amount else ""
        return format_html("{} {}{} at the {}{}", name, VERBS.get(option, option), paid, street.lower(), auto)

    def _player_settled(self, name: str, d: Mapping[str, Any]) -> SafeString:
        wagers = [w for w in d.get("wagers") or () if isinstance(w, Mapping)]
        told = format_html_join(
            ", ", "{} {}{}{}",
            ((words(str(w.get("wager"))), w.get("outcome"),
              format_html(" {}", self.money(w.get("returned"))) if w.get("returned") else "",
              format_html(" ({})", words(str(w["hand"]))) if w.get("hand") else "")
             for w in wagers),
        )  # fmt: skip
        hand = (d.get("player") or {}).get("category") if isinstance(d.get("player"), Mapping) else None
        with_hand = format_html(" with {}", words(str(hand))) if hand else ""
        return format_html(
            "{} paid {} for {} staked (net {}, {}{}){}",
            name, self.money(d.get("returned")), self.money(d.get("staked")), self.money(d.get("net")),
            d.get("result"), with_hand, format_html(": {}", told) if wagers else "",
        )  # fmt: skip


def _shown_cards(hands: dict[str, dict[int, str | None]], data: Mapping[str, Any] | str) -> None:
    """Fold the cards of a dealt or revealed event, as staff may see it, into ``hands``."""
    if not isinstance(data, Mapping) or not isinstance(data.get("cards"), list):
        return
    for card in data["cards"]:
        if isinstance(card, Mapping) and isinstance(card.get("position"), int):
            shown = card.get("card")
            hands.setdefault(str(card.get("to")), {})[card["position"]] = shown if isinstance(shown, str) else None


def _when(event: Any, data: Mapping[str, Any] | str) -> str:
    """The moment of the step that recorded the event (its metadata's ``at``, else
    the data's), else when it was stored; HH:MM:SS UTC."""
    for source in (event.metadata, data):
        if isinstance(source, Mapping):
            for name in ("at", "opened_at", "opens_at"):
                if isinstance(source.get(name), str):
                    return clock(source[name])
    return str(event.recorded_at.strftime("%H:%M:%S"))


def _proof(round_row: HouseRound, master_salt: str) -> Proof:
    try:
        answer = round_fairness(game_number=round_row.game_number)
    except DomainError as refused:  # deal_not_committed, deck_mismatch
        return Proof(problem=f"{refused.code}: {refused.message}")
    leaves = answer.get("leaves")
    if leaves:
        return Proof(deck=tuple(leaf["card"] for leaf in leaves), salt=master_salt, algorithm=str(answer["algorithm"]),
                     verified=True)  # fmt: skip
    if answer.get("deck"):  # a legacy ``plain`` deal: salt and deck
        return Proof(deck=tuple(answer["deck"]), salt=str(answer.get("salt", "")), algorithm=str(answer["algorithm"]),
                     verified=True)  # fmt: skip
    return Proof(problem="the round ended without revealing its deck (it did not open): the commitment alone stands")


def round_story(round_row: HouseRound) -> RoundStory:
    """The round as staff may see it now (see the module docstring)."""
    stream = round_stream(round_row.round_id)
    events = read_stream(stream_id=stream)
    state: RoundState = replay_round(events)
    rows = list(PlayerRound.objects.filter(round=round_row).select_related("player").order_by("created_at", "pk"))
    names = {row.player_id: row.player.get_username() for row in rows}
    teller = _Teller(round_row, names)
    story = RoundStory(controls=operator_controls(state), paused=state.paused, over=state.closed or state.voided)
    hands: dict[str, dict[int, str | None]] = {}
    shown = staff_reader(stream)
    told: list[tuple[int, StoryLine]] = []
    master_salt = ""
    for event in events:
        data = shown(event.type, event.data)
        if event.type in (ev.CARDS_DEALT, ev.CARDS_REVEALED):
            _shown_cards(hands, data)
        if event.type == ev.SHUFFLED and isinstance(data, Mapping) and data.get("commitment") not in (None, SEALED):
            story.commitment = str(data["commitment"])
        if event.type == ev.DECK_REVEALED and isinstance(data, Mapping):
            master_salt = str(data.get("salt", ""))
        text = teller.round_line(event.type, data) if isinstance(data, Mapping) else format_html("{}", NOT_SHOWN)
        told.append((event.position, StoryLine(_when(event, data), "round", text, event.type, raw_json(data), False)))
    for row in rows[:MAX_PLAYERS_TOLD]:
        name = names[row.player_id]
        player_events = player_stream(round_row.round_id, row.player_id)
        shown_player = staff_reader(player_events)
        for event in read_stream(stream_id=player_events):
            data = shown_player(event.type, event.data)
            text = teller.player_line(name, event.type, data) if isinstance(data, Mapping) else format_html("{}", data)
            told.append((event.position, StoryLine(_when(event, data), name, text, event.type, raw_json(data), True)))
    story.lines = [line for _, line in sorted(told, key=lambda item: item[0])]
    story.players_not_told = max(0, len(rows) - MAX_PLAYERS_TOLD)
    order = sorted(hands, key=lambda place: ({"dealer": 0, "board": 1}.get(place, 2), place))
    story.hands = [Hand(teller.place(p) if p != "board" else "Community cards",
                        tuple(hands[p][i] for i in sorted(hands[p]))) for p in order]  # fmt: skip
    story.players = [
        PlayerPart(names[row.player_id], row.player_id, teller.money(row.staked), teller.money(row.returned),
                   teller.money(row.net), row.status,
                   f"/api/compliance/game-recall/{round_row.game_number}/?player={row.player_id}")
        for row in rows
    ]  # fmt: skip
    if state.closed:
        story.proof = _proof(round_row, master_salt)
    return story
