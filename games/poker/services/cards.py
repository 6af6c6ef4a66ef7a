"""The dealer's custody of a poker hand's cards (docs/fairness.md, "Poker hands";
docs/poker.md, "Cards at rest").

Each hand has a deal key (``games.tables.dealkeys``, deal id ``poker-hand:<hand id>``)
under which its shuffled deck is sealed (``poker_hand.shuffled``, scheme
``merkle-sha256``). The cards are in the event log only as follows:

- ``poker.hole_cards_dealt`` (schema 2): ``cards`` is ``[null, null]`` and
  ``sealed`` holds that seat's two cards, with their deck positions, per-position
  salts and Merkle proofs, sealed for the seat's player (``seal_for_player``,
  associated data ``poker-hand:<hand id>:seat:<n>``): only that player's key
  opens it, for their own views and history;
- ``poker.board_dealt`` and ``poker.hand_shown``: in the clear (the table saw them);
- ``poker_hand.cards_revealed``, written when the hand ends (every way it ends:
  showdown, everyone folded, voided): the leaves of every card the table saw
  (board, shown hands) with their proofs. In the same transaction the deal key
  is shredded (``shred_deal_key``): the undealt deck, the burn cards and the
  folded and mucked hands are then readable by nobody (a folded or mucked hand
  only through its player's own sealed copy, opened only for that player).

While the hand runs only the dealer service opens the deck (``open_deck``) and
through it every seat's hole cards (the engine needs them for the showdown).
Replays after the end work from the events alone: hole cards that were not
shown are unknown (``None``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.cards.vault import CardKeyError, is_sealed, open_for_player, seal_for_player
from games.poker.engine.hand import HandState
from games.tables.dealkeys import DealKeyMissing, card_keyring, deal_key, shred_deal_key
from games.tables.fairness import MERKLE_ALGORITHM, OpenedDeck, open_committed_deck
from tools.verify_deal import leaf_of, proofs_of

# The field of ``poker.hole_cards_dealt`` holding the seat's cards sealed for its player.
SEALED_HOLE = "sealed"
BOARD = "board"


def deal_id(hand_id: str) -> str:
    """The hand's deal id (its deal key's name, the sealed deck's associated data)."""
    return f"poker-hand:{hand_id}"


def hole_aad(hand_id: str, seat: int) -> str:
    """What binds a seat's sealed hole cards to this hand and seat."""
    return f"{deal_id(hand_id)}:seat:{seat}"


def hole_positions(players: int, index: int) -> tuple[int, int]:
    """The deck positions of the hole cards of the player at ``index`` (position
    order) of ``players``: one card at a time round the table, twice (``next_deal``)."""
    return index, players + index


def board_positions(players: int) -> tuple[int, ...]:
    """The deck positions of the five board cards (a burn card before the flop, the turn and the river)."""
    base = 2 * players
    return base + 1, base + 2, base + 3, base + 5, base + 7


def open_deck(*, hand_id: str, commitment: str | None, sealed_deck: Mapping[str, Any]) -> OpenedDeck | None:
    """The dealer's deck of a hand (checked against its commitment): a legacy
    ``plain`` deck as recorded; a sealed one opened with the deal key, ``None``
    once that key is shredded (the hand is over)."""
    try:
        key = None if sealed_deck.get("scheme") == "plain" else deal_key(deal_id=deal_id(hand_id))
    except DealKeyMissing:
        return None
    return open_committed_deck(commitment=commitment, sealed_deck=sealed_deck, key=key, deal_id=deal_id(hand_id))


def is_sealed_deck(opened: OpenedDeck | None) -> bool:
    return opened is not None and opened.scheme == MERKLE_ALGORITHM


class _Tree:
    """A deck's salts, leaves and Merkle levels, computed once for all the proofs of one step
    (``games.tables.fairness.reveal`` computes them per call: 18 proofs of a nine-handed deal would
    build the tree 18 times)."""

    def __init__(self, opened: OpenedDeck) -> None:
        self.opened, self.salts = opened, opened.salts()
        self.leaves = [leaf_of(salt, i, card) for i, (salt, card) in enumerate(zip(self.salts, opened.deck,
                                                                                   strict=True))]  # fmt: skip
        self.proofs: dict[int, list[str]] | None = None

    def entries(self, places: Sequence[tuple[int, str, int]]) -> list[dict[str, Any]]:
        """The leaves of ``places`` (position, card, salt, proof) with where each went (``to``, ``slot``),
        by position: ``reveal``'s entries."""
        if self.proofs is None:
            self.proofs = proofs_of(self.leaves, range(len(self.leaves)))
        proofs = self.proofs
        return sorted(
            ({"position": position, "card": self.opened.deck[position], "salt": self.salts[position],
              "proof": proofs[position], "to": to, "slot": slot} for position, to, slot in places),
            key=lambda entry: entry["position"],
        )  # fmt: skip


def sealed_hole_cards(*, hand_id: str, state: HandState, opened: OpenedDeck) -> dict[int, dict[str, Any]]:
    """Each seat's ``poker.hole_cards_dealt`` data once the hole cards are dealt
    (``state``: just after): ``cards`` unknown and ``sealed``, the seat's
    ``{"cards", "leaves"}`` sealed for its player (``leaves``: position, card,
    salt, proof, to, slot of each card: the player's proof of their own hand)."""
    ring = card_keyring()
    n = len(state.players)
    tree = _Tree(opened)
    dealt: dict[int, dict[str, Any]] = {}
    for index, player in enumerate(state.players):
        places = [(position, f"seat:{player.seat}", slot)
                  for slot, position in enumerate(hole_positions(n, index))]  # fmt: skip
        leaves = tree.entries(places)
        value = {"cards": [leaf["card"] for leaf in sorted(leaves, key=lambda e: e["slot"])], "leaves": leaves}
        sealed = seal_for_player(ring, player.player_id, value, aad=hole_aad(hand_id, player.seat))
        dealt[player.seat] = {"seat": player.seat, "cards": [None, None], SEALED_HOLE: sealed}
    return dealt


def dealer_hole_cards(state: HandState, seat: int, opened: OpenedDeck) -> tuple[str, str]:
    """A seat's hole cards as the dealer knows them from the open deck (``state``: any state after the start)."""
    first, second = hole_positions(len(state.players), state.positions[seat])
    return opened.deck[first], opened.deck[second]


def own_copy(*, hand_id: str, seat: int, player_id: int | str, data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The player's own sealed copy of a seat's hole cards (``{"cards", "leaves"}``),
    opened with their key; ``None`` when it is not theirs or there is none."""
    sealed = data.get(SEALED_HOLE)
    if sealed is None or not is_sealed(sealed):
        return None
    try:
        value: dict[str, Any] = open_for_player(card_keyring(), player_id, sealed, aad=hole_aad(hand_id, seat))
    except CardKeyError:
        return None
    return value


def revealed_leaves(*, state: HandState, opened: OpenedDeck) -> list[dict[str, Any]]:
    """The leaves the table saw by the end of the hand (``state``: the final or
    voided one): the board dealt and the hands shown at showdown, with their
    proofs. Never a burn card, a folded or mucked hand, or the undealt rest."""
    n = len(state.players)
    places = [(position, BOARD, slot) for slot, position in enumerate(board_positions(n)[: len(state.board)])]
    for index, player in enumerate(state.players):
        if player.shown:
            places += [(position, f"seat:{player.seat}", slot)
                       for slot, position in enumerate(hole_positions(n, index))]  # fmt: skip
    entries = _Tree(opened).entries(places)
    shown = {(p, c) for p, c in ((e["position"], e["card"]) for e in entries)}
    expected = {(position, card) for position, card in _seen_cards(state, n)}
    if shown != expected:  # the deck dealt is not what the events say the table saw
        raise ValueError("the revealed leaves are not the cards the table saw")
    return entries


def _seen_cards(state: HandState, n: int) -> list[tuple[int, str]]:
    seen = list(zip(board_positions(n), state.board, strict=False))
    for index, player in enumerate(state.players):
        if player.shown:
            seen += [(position, str(card)) for position, card in zip(hole_positions(n, index), player.hole,
                                                                      strict=True)]  # fmt: skip
    return seen


def shred(hand_id: str) -> bool:
    """Destroy the hand's deal key (in the caller's transaction)."""
    return shred_deal_key(deal_id=deal_id(hand_id))
