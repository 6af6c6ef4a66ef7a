"""The unbiased Fisher-Yates shuffle and the random sources that drive it.

Production uses ``SecureRandomSource`` (the operating system's CSPRNG through
``secrets.SystemRandom``); tests and simulations inject a
``SeededRandomSource`` so a run can be repeated. The domain never creates
randomness of its own beyond this injectable default.

``randbelow(n)`` must return each of ``0 .. n-1`` with equal probability;
both sources here use CPython's rejection sampling on ``getrandbits`` (no modulo
bias), and the shuffle draws exactly one ``randbelow(i + 1)`` per position.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import MutableSequence, Sequence
from typing import Protocol, TypeVar, runtime_checkable

from .cards import FULL_DECK, Card

T = TypeVar("T")


@runtime_checkable
class RandomSource(Protocol):
    """A source of uniform integers: ``randbelow(n)`` is uniform on ``0 .. n-1`` (n >= 1)."""

    def randbelow(self, n: int) -> int: ...


class SecureRandomSource:
    """The production source: ``secrets.SystemRandom`` (os.urandom), never seedable."""

    __slots__ = ("_system",)

    def __init__(self) -> None:
        self._system = secrets.SystemRandom()

    def randbelow(self, n: int) -> int:
        if n <= 0:
            raise ValueError("randbelow needs n >= 1")
        # SystemRandom.randrange -> _randbelow: rejection sampling on getrandbits, no modulo bias.
        return self._system.randrange(n)


class SeededRandomSource:
    """A repeatable source for tests and simulations (Mersenne Twister). Never for live play."""

    __slots__ = ("_random", "seed")

    def __init__(self, seed: int | str | bytes) -> None:
        self.seed = seed
        self._random = random.Random(seed)

    def randbelow(self, n: int) -> int:
        if n <= 0:
            raise ValueError("randbelow needs n >= 1")
        return self._random.randrange(n)

    def getrandbits(self, k: int) -> int:
        """Raw bits, for vectorised simulations that seed their own array generator from this source."""
        return self._random.getrandbits(k)


_DEFAULT_SOURCE: RandomSource | None = None


def default_source() -> RandomSource:
    """The process-wide secure source (created on first use)."""
    global _DEFAULT_SOURCE
    if _DEFAULT_SOURCE is None:
        _DEFAULT_SOURCE = SecureRandomSource()
    return _DEFAULT_SOURCE


def fisher_yates(items: MutableSequence[T], rng: RandomSource) -> None:
    """Shuffle ``items`` in place: for i from the last position down to 1, swap with a uniform j in 0..i.

    Every one of the n! orders is equally likely when ``rng`` is uniform.
    """
    randbelow = rng.randbelow
    for i in range(len(items) - 1, 0, -1):
        j = randbelow(i + 1)
        items[i], items[j] = items[j], items[i]


def shuffled(items: Sequence[T], rng: RandomSource | None = None) -> list[T]:
    """A new list with ``items`` in uniformly random order."""
    result = list(items)
    fisher_yates(result, rng if rng is not None else default_source())
    return result


def shuffled_deck(rng: RandomSource | None = None) -> list[Card]:
    """A freshly shuffled 52-card deck; the secure source unless ``rng`` is given."""
    return shuffled(FULL_DECK, rng)
