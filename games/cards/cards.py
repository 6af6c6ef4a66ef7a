"""Playing cards of the standard 52-card deck and their two-character notation.

Notation: a rank character ``2``-``9``, ``T``, ``J``, ``Q``, ``K``, ``A``
followed by a suit character ``s`` (spades), ``h`` (hearts), ``d`` (diamonds)
or ``c`` (clubs), e.g. ``As``, ``Td``, ``9c``. Parsing accepts either case for
the rank and the suit (``as``, ``AS``) and ``10`` for ``T``; printing is always
canonical.

A card's ``index`` is ``(rank - 2) * 4 + suit position`` with suits in the
order s, h, d, c, so ``2s`` = 0, ``2c`` = 3 and ``Ac`` = 51. ``FULL_DECK`` is in
index order. The suit order also serves the button draw (RULES.md: Spades >
Hearts > Diamonds > Clubs); it never affects hand strength.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Final

from casino.errors import DomainError

RANK_CHARS: Final = "23456789TJQKA"
SUITS: Final = ("s", "h", "d", "c")
SUIT_NAMES: Final = {"s": "spades", "h": "hearts", "d": "diamonds", "c": "clubs"}


class CardError(DomainError, code="invalid_card"):
    """The cards given are not valid."""


class InvalidCard(CardError, code="invalid_card"):
    """Not a card in the two-character notation (e.g. ``As``, ``Td``, ``9c``)."""


class DuplicateCard(CardError, code="duplicate_card"):
    """The same card appears more than once."""


class Card:
    """One card: ``rank`` 2..14 (ace = 14), ``suit`` in ``s h d c``, ``index`` 0..51.

    Immutable and hashable; there are exactly 52 instances (``Card(rank, suit)``
    returns the shared one), so identity, equality and hashing agree.
    Ordering (``<``) is by index, i.e. rank first, then suit s < h < d < c; it is
    only a stable sort order, not hand strength.
    """

    __slots__ = ("_index", "_rank", "_suit")
    _rank: int
    _suit: str
    _index: int

    def __new__(cls, rank: int, suit: str) -> Card:
        if not isinstance(rank, int) or not 2 <= rank <= 14 or suit not in SUITS:
            raise InvalidCard(f"No card with rank {rank!r} and suit {suit!r}.", rank=repr(rank), suit=repr(suit))
        return _DECK[(rank - 2) * 4 + SUITS.index(suit)]

    @classmethod
    def _make(cls, index: int) -> Card:
        card = object.__new__(cls)
        object.__setattr__(card, "_index", index)
        object.__setattr__(card, "_rank", index // 4 + 2)
        object.__setattr__(card, "_suit", SUITS[index % 4])
        return card

    @classmethod
    def from_index(cls, index: int) -> Card:
        """The card with ``index`` 0..51."""
        if not isinstance(index, int) or not 0 <= index < 52:
            raise InvalidCard(f"No card with index {index!r}.", index=repr(index))
        return _DECK[index]

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def suit(self) -> str:
        return self._suit

    @property
    def index(self) -> int:
        return self._index

    @property
    def rank_char(self) -> str:
        return RANK_CHARS[self._rank - 2]

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Card is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Card is immutable")

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return (Card.from_index, (self._index,))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self

    def __str__(self) -> str:
        return RANK_CHARS[self._rank - 2] + self._suit

    def __repr__(self) -> str:
        return f"Card('{self}')"

    def __hash__(self) -> int:
        return self._index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Card):
            return self._index == other._index
        return NotImplemented

    def __lt__(self, other: Card) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self._index < other._index

    def __le__(self, other: Card) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self._index <= other._index

    def __gt__(self, other: Card) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self._index > other._index

    def __ge__(self, other: Card) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self._index >= other._index


_DECK: tuple[Card, ...] = tuple(Card._make(i) for i in range(52))
FULL_DECK: Final[tuple[Card, ...]] = _DECK

_BY_TEXT: dict[str, Card] = {}
for _card in _DECK:
    for _r in {_card.rank_char, _card.rank_char.lower()} | ({"10"} if _card.rank == 10 else set()):
        for _s in (_card.suit, _card.suit.upper()):
            _BY_TEXT[_r + _s] = _card
del _card, _r, _s


def parse_card(text: str | Card) -> Card:
    """The card written ``text`` (e.g. ``"As"``); ``InvalidCard`` otherwise."""
    if isinstance(text, Card):
        return text
    if not isinstance(text, str):
        raise InvalidCard(f"Not a card: {text!r}.", card=repr(text))
    card = _BY_TEXT.get(text.strip())
    if card is None:
        raise InvalidCard(
            f"Not a card: {text!r}. Write a rank (2-9, T, J, Q, K, A) then a suit (s, h, d, c), e.g. 'As', 'Td'.",
            card=text,
        )
    return card


def parse_cards(cards: str | Iterable[str | Card]) -> tuple[Card, ...]:
    """Distinct cards from ``"As Kd"`` (spaces or commas) or an iterable of card texts/cards.

    Raises ``InvalidCard`` for bad notation and ``DuplicateCard`` when a card repeats.
    """
    items: Iterable[str | Card] = cards.replace(",", " ").split() if isinstance(cards, str) else cards
    parsed = tuple(parse_card(item) for item in items)
    if len(set(parsed)) != len(parsed):
        repeated = [str(card) for card, count in sorted(Counter(parsed).items()) if count > 1]
        raise DuplicateCard(f"Duplicate card(s): {', '.join(repeated)}.", cards=repeated)
    return parsed


def format_cards(cards: Iterable[Card]) -> str:
    """``"As Kd"``: the inverse of ``parse_cards`` for a string."""
    return " ".join(str(card) for card in cards)
