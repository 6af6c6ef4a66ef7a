"""The player's web client: a static single-page app served at ``/`` (docs/client.md)."""

from __future__ import annotations

from django.apps import AppConfig


class ClientConfig(AppConfig):
    name = "client"
    verbose_name = "Player web client"
