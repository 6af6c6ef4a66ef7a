"""The one HTML page of the player's web client (thin: the app is static ES modules).

Everything the client shows comes from the public REST and websocket API; this
view only hands the browser the page that loads ``client/js/main.js``. The page
is the same for every path the client routes (``#/lobby``, ``#/house/<id>``...:
hash routes, so the server never sees them)."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe


@require_safe
def client_page(request: HttpRequest) -> HttpResponse:
    """``GET /``: the client's page; its scripts and styles come from ``static/client/``."""
    return render(request, "client/index.html", {"version": settings.CASINO_VERSION})
