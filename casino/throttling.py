"""Request-rate throttles whose counts every ASGI process shares.

DRF's throttles keep their request history in Django's ``default`` cache,
which is each process's own memory here: with two ASGI processes behind the
balancer a player would get twice the rate. These throttles keep it in the
``throttles`` cache instead: Redis when ``REDIS_URL`` is set (one history for
the whole deployment), the process's memory on the embedded default, which
runs one ASGI process.
"""

from __future__ import annotations

from django.core.cache import caches
from rest_framework.request import Request
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

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


class PlayThrottle(UserRateThrottle):
    """6,000 play requests (bets, decisions, poker actions) a minute per player."""

    scope = "play"
    rate = "6000/min"

    def __init__(self) -> None:
        super().__init__()
        self.cache = caches["throttles"]
