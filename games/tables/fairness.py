"""Provably-fair deals (docs/fairness.md), shared by both game families.

Every house round and poker hand is shuffled before any bet or blind is taken
(``shuffle_and_commit``), and its commitment is public from that moment.

**Scheme ``merkle-sha256``** (every deal since issue #33): each deck position i
has its own salt (``games.cards.vault.position_salts``: HMAC of a master salt
and i) and leaf ``SHA-256("<salt_i>:<i>:<card>")``; the commitment is the
Merkle root over the 52 leaves (``tools.verify_deal``: the formulas have one
home, the standalone checker players run). One position can be revealed with
its salt and proof (``reveal``) without giving away any other card: poker
reveals only what the table saw, and each player's own cards to that player.
The master salt and the deck are sealed (AES-256-GCM) under the deal's data key
(``games.tables.dealkeys``), bound to the deal id; only the dealer service opens them
(``open_committed_deck``), and the key is shredded when the deal is over.

**Scheme ``plain``** (deals recorded before): the commitment is SHA-256 of
``"<salt>:<deck>"`` and the salt and deck are stored in the clear; they are
still read (``open_deck``) and answered in the old shape.

Readers for staff never display a ``sealed_deck`` (``ledger.confidential``),
and the players' presenters show only the commitment.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from casino.errors import Conflict
from games.cards.cards import FULL_DECK
from games.cards.deal import DealtCard
from games.cards.shuffle import RandomSource, shuffled_deck
from games.cards.vault import is_sealed, open_json, position_salts, seal_json
from tools.verify_deal import (
    ALGORITHM,
    DECK_SIZE,
    MERKLE_ALGORITHM,
    commitment_of,
    leaf_of,
    merkle_root_of,
    proof_of,
)

SEALED_FIELD = "sealed_deck"
PLAIN = "plain"
_CARD_CODES = frozenset(str(card) for card in FULL_DECK)


class DeckMismatch(Conflict, code="deck_mismatch"):
    """The sealed deck does not match the commitment published for it: nothing was dealt from it."""


class DealNotCommitted(Conflict, code="deal_not_committed"):
    """This round was dealt before deals were committed: it has no commitment to verify."""


@dataclass(frozen=True)
class CommittedDeck:
    """A shuffle ready to record: the public ``commitment`` and the sealed salt and deck."""

    commitment: str
    sealed_deck: dict[str, Any]


@dataclass(frozen=True)
class OpenedDeck:
    """A deal's deck as the dealer service holds it while the deal runs: the
    cards top first and the master salt (``None``: a legacy deck recorded
    before commitments), and which scheme committed it."""

    deck: list[str]
    salt: str | None
    scheme: str

    def salts(self) -> list[str]:
        """Each position's own salt (``merkle-sha256`` decks only)."""
        if self.salt is None or self.scheme != MERKLE_ALGORITHM:
            raise ValueError("only a merkle-sha256 deck has position salts")
        return position_salts(self.salt, len(self.deck))

    def leaves(self) -> list[str]:
        return [leaf_of(salt, i, card) for i, (salt, card) in enumerate(zip(self.salts(), self.deck, strict=True))]


def new_salt() -> str:
    """64 lowercase hex digits from the operating system's secure generator."""
    return secrets.token_hex(32)


def _checked_cards(rng: RandomSource, deck: Sequence[str] | None) -> list[str]:
    cards = [str(card) for card in shuffled_deck(rng)] if deck is None else [str(card) for card in deck]
    if len(cards) != DECK_SIZE or set(cards) != _CARD_CODES:
        raise ValueError("a deck is the 52 cards, each once")
    return cards


def shuffle_and_commit(
    *, rng: RandomSource, key: bytes, deal_id: str, deck: Sequence[str] | None = None
) -> CommittedDeck:
    """A fresh shuffle of the 52 cards by ``rng`` (``deck`` instead: a scripted
    deck, for tests and certification only), a new master salt, the Merkle
    commitment, and the salt and deck sealed under the deal's data ``key``
    (bound to ``deal_id``). New deals are never written in the legacy
    ``plain`` scheme."""
    cards = _checked_cards(rng, deck)
    salt = new_salt()
    opened = OpenedDeck(cards, salt, MERKLE_ALGORITHM)
    sealed = seal_json(key, {"salt": salt, "deck": cards}, aad=f"deck:{deal_id}")
    return CommittedDeck(merkle_root_of(opened.leaves()), sealed)


def seal_deck(*, salt: str, deck: Sequence[str]) -> dict[str, Any]:
    """The legacy ``plain`` ``sealed_deck`` (salt and deck in the clear): only
    for rounds recorded before the Merkle scheme (tests of the old shape)."""
    return _plain(salt, deck)


def sealed_in_clear(deck: Sequence[str]) -> dict[str, Any]:
    """The ``sealed_deck`` of a deck recorded in the clear before deals were
    committed (``poker_hand.shuffled`` schema 1): no salt."""
    return _plain(None, deck)


def _plain(salt: str | None, deck: Sequence[str]) -> dict[str, Any]:
    return {"scheme": PLAIN, "salt": salt, "deck": list(deck)}


def open_deck(sealed_deck: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    """(salt, deck) of a legacy ``plain`` ``sealed_deck`` (salt ``None`` for a
    deck recorded before commitments). A sealed deck needs ``open_committed_deck``."""
    scheme = sealed_deck.get("scheme")
    if scheme != PLAIN:
        raise ValueError(f"deck seal scheme {scheme!r} is not plain: open it with its deal key")
    return sealed_deck["salt"], list(sealed_deck["deck"])


def is_plain(sealed_deck: Mapping[str, Any]) -> bool:
    return sealed_deck.get("scheme") == PLAIN


def open_committed_deck(
    *, commitment: str | None, sealed_deck: Mapping[str, Any], key: bytes | None, deal_id: str
) -> OpenedDeck:
    """The deck to deal from, checked against the published ``commitment``
    (``deck_mismatch`` if it is not the deck committed). A sealed deck is
    opened with the deal's data ``key``; a legacy ``plain`` one needs none (a
    deck recorded before commitments, ``commitment`` ``None``, is dealt as
    recorded)."""
    if is_plain(sealed_deck):
        salt, deck = open_deck(sealed_deck)
        if commitment is not None and (salt is None or commitment_of(salt, deck) != commitment):
            raise DeckMismatch(commitment=commitment)
        return OpenedDeck(deck, salt, PLAIN)
    if key is None or not is_sealed(sealed_deck):
        raise DeckMismatch(commitment=commitment)
    opened_value = open_json(key, sealed_deck, aad=f"deck:{deal_id}")
    opened = OpenedDeck(list(opened_value["deck"]), str(opened_value["salt"]), MERKLE_ALGORITHM)
    if commitment is None or merkle_root_of(opened.leaves()) != commitment:
        raise DeckMismatch(commitment=commitment)
    return opened


def committed_deck(*, commitment: str | None, sealed_deck: Mapping[str, Any]) -> list[str]:
    """The cards of a legacy ``plain`` deck, checked against its commitment."""
    return open_committed_deck(commitment=commitment, sealed_deck=sealed_deck, key=None, deal_id="").deck


def reveal(opened: OpenedDeck, positions: Iterable[int]) -> list[dict[str, Any]]:
    """The leaves of ``positions`` with what proves each against the commitment:
    ``{"position", "card", "salt", "proof"}`` (``proof``: the sibling hashes up
    to the root, ``tools.verify_deal.root_from_proof``)."""
    salts, leaves = opened.salts(), opened.leaves()
    return [
        {"position": p, "card": opened.deck[p], "salt": salts[p], "proof": proof_of(leaves, p)}
        for p in sorted(set(positions))
    ]


def opened_from_reveal(*, commitment: str, salt: str, deck: Sequence[str]) -> OpenedDeck:
    """A deck revealed in the clear at a deal's end (master salt and cards),
    checked against the ``commitment`` (``deck_mismatch`` otherwise)."""
    opened = OpenedDeck(list(deck), salt, MERKLE_ALGORITHM)
    if len(opened.deck) != DECK_SIZE or merkle_root_of(opened.leaves()) != commitment:
        raise DeckMismatch(commitment=commitment)
    return opened


def full_reveal(opened: OpenedDeck) -> list[dict[str, Any]]:
    """Every position's leaf (card and salt), top first: what a house round
    shows once it is over (the verifier rebuilds the root from all 52)."""
    return [
        {"position": p, "card": card, "salt": salt}
        for p, (card, salt) in enumerate(zip(opened.deck, opened.salts(), strict=True))
    ]


def fairness_answer(
    *,
    game_number: str,
    commitment: str | None,
    sealed_deck: Mapping[str, Any] | None,
    ended: bool,
    deal_order: Callable[[Sequence[str]], Sequence[DealtCard]],
    revealed_deck: OpenedDeck | None = None,
) -> dict[str, Any]:
    """What anyone may know of a house deal: the commitment; once ``ended``
    (over or voided) also every leaf and ``deal_order(deck)``, each deck
    position dealt and who got it. ``revealed_deck``: the deck as the round's
    end revealed it (``merkle-sha256``); a legacy ``plain`` deck is read from
    ``sealed_deck`` and answered in its old shape (salt and deck).
    ``deal_not_committed`` for a deal recorded before commitments existed."""
    if commitment is None or sealed_deck is None:
        raise DealNotCommitted(game_number=game_number)
    if is_plain(sealed_deck):
        answer: dict[str, Any] = {"game_number": game_number, "algorithm": ALGORITHM, "commitment": commitment}
        if ended:
            opened = open_committed_deck(commitment=commitment, sealed_deck=sealed_deck, key=None, deal_id="")
            deck = opened.deck
            answer |= {"salt": opened.salt, "deck": deck, "deal_order": [d.as_json() for d in deal_order(deck)]}
        return answer
    answer = {
        "game_number": game_number,
        "algorithm": MERKLE_ALGORITHM,
        "commitment": commitment,
        "deck_size": DECK_SIZE,
    }
    if ended and revealed_deck is not None:
        answer |= {
            "leaves": full_reveal(revealed_deck),
            "deal_order": [d.as_json() for d in deal_order(revealed_deck.deck)],
        }
    return answer
