"""ASGI entry point: HTTP through Django, websockets through Channels."""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
# Django must be set up before anything imports models (the websocket routes do).
django.setup(set_prefix=False)

if os.environ.get("CASINO_GC_PROBE"):  # a benchmark's instrument (games.benchmarks.gc_probe)
    from games.benchmarks.gc_probe import install

    install(os.environ["CASINO_GC_PROBE"])

from casino.http import ThreadPoolHTTPHandler  # noqa: E402

django_http_app = ThreadPoolHTTPHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from casino.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_http_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

from django.conf import settings  # noqa: E402

if settings.CASINO_GC_FREEZE:
    # Last, so that what the imports and the application made is frozen with the rest.
    from casino.collector import LongLivedFrozen

    LongLivedFrozen(due_for_at_most=settings.CASINO_GC_WALK_DUE_MAX_SECONDS).install()
