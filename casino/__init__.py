"""The Django project: settings, URLs, ASGI, the Celery app and platform pieces."""

from casino.celery import app as celery_app

__all__ = ["celery_app"]
