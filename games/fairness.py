"""Provably-fair deals (docs/fairness.md), shared by both game families.

Every house round and poker hand is shuffled before any bet or blind is taken
(``shuffle_and_commit``), and its commitment is public from that moment:
SHA-256 (hex) of the UTF-8 text ``"<salt>:<deck>"``, a fresh salt of 64
lowercase hex digits from the secure generator and the 52 cards top first as
two-character codes joined by single spaces (``tools.verify_deal.commitment_of``:
the formula has one home, the standalone checker players run). Once the round
or hand has ended, or was voided, ``fairness_answer`` reveals the salt, the
deck and which deck position went to whom.

``seal_deck`` / ``open_deck`` are the only place a deal's salt and deck are
written and read. Each round or hand keeps them in one event field,
``sealed_deck`` (``house_round.shuffled``, ``poker_hand.shuffled``), while its
``commitment`` field is always readable. Today the seal keeps them as they are
(scheme ``plain``); sealing them with a key kept outside the database is a
change to this pair alone, which reads every scheme it ever wrote. Readers for
staff never display a ``sealed_deck`` (``ledger.confidential``), and the
players' presenters show only the commitment.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from casino.errors import Conflict
from games.cards.cards import FULL_DECK
from games.cards.deal import DealtCard
from games.cards.shuffle import RandomSource, shuffled_deck
from tools.verify_deal import ALGORITHM, commitment_of

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


def new_salt() -> str:
    """64 lowercase hex digits from the operating system's secure generator."""
    return secrets.token_hex(32)


def shuffle_and_commit(*, rng: RandomSource, deck: Sequence[str] | None = None) -> CommittedDeck:
    """A fresh shuffle of the 52 cards by ``rng`` (``deck`` instead: a scripted
    deck, for tests and certification only), a new salt, the commitment and the
    sealed salt and deck. A scripted deck gets its salt and commitment too."""
    cards = [str(card) for card in shuffled_deck(rng)] if deck is None else [str(card) for card in deck]
    if len(cards) != len(_CARD_CODES) or set(cards) != _CARD_CODES:
        raise ValueError("a deck is the 52 cards, each once")
    salt = new_salt()
    return CommittedDeck(commitment_of(salt, cards), seal_deck(salt=salt, deck=cards))


def seal_deck(*, salt: str, deck: Sequence[str]) -> dict[str, Any]:
    """The ``sealed_deck`` field of a shuffle: its salt and deck as stored."""
    return _plain(salt, deck)


def sealed_in_clear(deck: Sequence[str]) -> dict[str, Any]:
    """The ``sealed_deck`` of a deck recorded in the clear before deals were
    committed (``poker_hand.shuffled`` schema 1): no salt."""
    return _plain(None, deck)


def _plain(salt: str | None, deck: Sequence[str]) -> dict[str, Any]:
    return {"scheme": PLAIN, "salt": salt, "deck": list(deck)}


def open_deck(sealed_deck: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    """(salt, deck) of a ``sealed_deck`` (salt ``None`` for a deck recorded before commitments)."""
    scheme = sealed_deck.get("scheme")
    if scheme != PLAIN:
        raise ValueError(f"unknown deck seal scheme {scheme!r}")
    return sealed_deck["salt"], list(sealed_deck["deck"])


def committed_deck(*, commitment: str | None, sealed_deck: Mapping[str, Any]) -> list[str]:
    """The deck to deal from, checked against the published ``commitment``
    (``deck_mismatch`` if it is not the deck committed). A deck recorded before
    commitments (``commitment`` ``None``) is dealt as recorded."""
    return _checked(commitment, sealed_deck)[1]


def _checked(commitment: str | None, sealed_deck: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    salt, deck = open_deck(sealed_deck)
    if commitment is not None and (salt is None or commitment_of(salt, deck) != commitment):
        raise DeckMismatch(commitment=commitment)
    return salt, deck


def fairness_answer(
    *,
    game_number: str,
    commitment: str | None,
    sealed_deck: Mapping[str, Any] | None,
    ended: bool,
    deal_order: Callable[[Sequence[str]], Sequence[DealtCard]],
) -> dict[str, Any]:
    """What anyone may know of a deal: the commitment; once ``ended`` (over or
    voided) also the salt, the deck and ``deal_order(deck)``, each deck position
    dealt and who got it. ``deal_not_committed`` for a deal recorded before
    commitments existed."""
    if commitment is None or sealed_deck is None:
        raise DealNotCommitted(game_number=game_number)
    answer: dict[str, Any] = {"game_number": game_number, "algorithm": ALGORITHM, "commitment": commitment}
    if ended:
        salt, deck = _checked(commitment, sealed_deck)
        answer |= {"salt": salt, "deck": deck, "deal_order": [dealt.as_json() for dealt in deal_order(deck)]}
    return answer
