"""The Django project: settings, URLs, ASGI, the Celery app and platform pieces.

The Celery app (``casino.celery``) is loaded by ``CasinoConfig.ready`` rather than
here, so that importing a pure module such as ``casino.errors`` loads neither
Celery nor Django; ``celery -A casino`` finds ``casino.celery`` by itself.
"""
