"""The play throttle on Redis (``casino.throttling.SlidingWindowThrottle``)
answers exactly as DRF's own throttle does on a memory cache: the same
requests allowed and refused over a sliding window, the same ``wait``, and a
request that falls out of the window frees its place."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
from rest_framework.throttling import UserRateThrottle

from casino.throttling import PlayThrottle


class _User:
    pk = 424242
    is_authenticated = True


class _Request:
    user = _User()


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _throttles(clock: Clock) -> tuple[Any, Any]:
    class Shared(PlayThrottle):
        rate = "3/min"
        timer = clock

    class Drf(UserRateThrottle):
        scope = "play"
        rate = "3/min"
        timer = clock
        cache = LocMemCache("drf-reference", {})

    return Shared(), Drf()


@pytest.mark.skipif(not isinstance(caches["throttles"], RedisCache), reason="the Redis history needs REDIS_URL")
def test_the_redis_history_refuses_and_waits_exactly_as_drf() -> None:
    clock = Clock()
    answers: list[tuple[Any, Any]] = []
    for step in (0, 1, 1, 1, 10, 57.5, 0.1, 0, 1.0):  # seconds between requests
        clock.now += step
        shared, drf = _throttles(clock)
        allowed = (shared.allow_request(_Request(), None), drf.allow_request(_Request(), None))
        waits = (shared.wait() if not allowed[0] else None, drf.wait() if not allowed[1] else None)
        answers.append((allowed, waits))
    assert [a for a, _ in answers] == [(x, x) for x in (True, True, True, False, False, True, True, True, False)]
    for _, (shared_wait, drf_wait) in answers:
        assert shared_wait == pytest.approx(drf_wait) if drf_wait is not None else shared_wait is None
