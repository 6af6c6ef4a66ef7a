from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = "Games and tables"

    def ready(self) -> None:
        from games.house import event_types  # noqa: F401  (registers the round event types)
