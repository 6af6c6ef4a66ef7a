"""Request-rate throttles whose counts every ASGI process shares.

DRF's throttles keep their request history in Django's ``default`` cache,
which is each process's own memory here: with two ASGI processes behind the
balancer a player would get twice the rate. These throttles keep it in the
``throttles`` cache instead: Redis when ``REDIS_URL`` is set (one history for
the whole deployment), the process's memory on the embedded default, which
runs one ASGI process.
"""

from __future__ import annotations

import os
from typing import Any

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from redis.commands.core import Script
from rest_framework.request import Request
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

from casino.auth import client_ip


class LoginThrottle(AnonRateThrottle):
    """20 login requests a minute per client address (``casino.auth.client_ip``:
    never an untrusted ``X-Forwarded-For``), on top of django-axes' lockout."""

    rate = "20/min"

    def __init__(self) -> None:
        super().__init__()
        self.cache = caches["throttles"]

    def get_ident(self, request: Request) -> str:
        return client_ip(request._request)


# DRF's sliding window in one Redis call: drop the requests older than the
# window, refuse at the limit (answering the count and the oldest request's
# time, for ``wait``), else record this one. ARGV: now, duration, limit, a
# unique member for this request.
_SLIDING_WINDOW = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
local count = redis.call('ZCARD', KEYS[1])
if count >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, count, oldest[2] or ARGV[1]}
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])))
return {1, count + 1, ARGV[1]}
"""


def _script(cache: RedisCache) -> Script:
    """``_SLIDING_WINDOW`` bound to ``cache``'s write server, made once per cache
    client (Django's ``get_client`` builds a new ``Redis`` object on every
    call): sent by its SHA1 (``EVALSHA``; loaded again if the server lost it),
    not as its whole text on every request."""
    client = cache._cache
    script: Script | None = getattr(client, "_sliding_window", None)
    if script is None:
        script = client.get_client(write=True).register_script(_SLIDING_WINDOW)
        setattr(client, "_sliding_window", script)  # noqa: B010  (not an attribute Django declares)
    return script


class SlidingWindowThrottle(SimpleRateThrottle):
    """DRF's throttle (the same sliding window, limit and ``wait``) whose history,
    on Redis, is a sorted set kept by one script: one round trip a request, and
    no read-modify-write of a pickled list that grows with the rate (two round
    trips and up to ``num_requests`` timestamps re-encoded on every request of
    a hot path, and two processes' requests racing between the read and the
    write). Elsewhere (the embedded default's memory) DRF's own way."""

    cache: Any
    duration: int
    num_requests: int

    def allow_request(self, request: Request, view: Any) -> bool:
        if not isinstance(self.cache, RedisCache) or self.rate is None:
            return super().allow_request(request, view)
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        key = self.cache.make_and_validate_key(self.key)
        self.now = self.timer()
        allowed, count, oldest = _script(self.cache)(
            keys=[key], args=[repr(self.now), self.duration, self.num_requests, f"{self.now!r}:{os.urandom(6).hex()}"]
        )
        # ``wait`` reads the history's length and its oldest time, as DRF keeps them.
        self.history = [float(oldest)] * int(count)
        return bool(allowed)


class PlayThrottle(SlidingWindowThrottle, UserRateThrottle):
    """6,000 play requests (bets, decisions, poker actions) a minute per player."""

    scope = "play"
    rate = "6000/min"

    def __init__(self) -> None:
        super().__init__()
        self.cache = caches["throttles"]
