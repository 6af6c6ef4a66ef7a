from django.apps import AppConfig


class CasinoConfig(AppConfig):
    name = "casino"
    verbose_name = "Casino platform"

    def ready(self) -> None:
        from casino import checks  # noqa: F401  (registers the system checks)
