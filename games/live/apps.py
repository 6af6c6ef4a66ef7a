from django.apps import AppConfig


class LiveConfig(AppConfig):
    name = "games.live"
    label = "live"
    verbose_name = "Live tables: chat"
