"""A URL configuration for tests/platform/test_error_tracking.py: one view that
fails with the secrets it is given (a card, a token, a password, a ticket)
in its exception's message and its log lines, as a bug might."""

from __future__ import annotations

import json
import logging

from django.http import HttpRequest, HttpResponse
from django.urls import path

log = logging.getLogger("casino.tests.sentry")


def explode(request: HttpRequest) -> HttpResponse:
    given = json.loads(request.body)
    cards, token, password, ticket = given["cards"], given["token"], given["password"], given["ticket"]
    log.info("player logged in with password=%s, websocket ticket %s", password, ticket)
    log.warning("dealing %s to the player holding token %s", " ".join(cards), token)
    raise RuntimeError(f"dealing failed: hole cards {' '.join(cards)}, token {token}, password={password}")


urlpatterns = [path("explode/", explode)]
