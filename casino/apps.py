from django.apps import AppConfig


class CasinoConfig(AppConfig):
    name = "casino"
    verbose_name = "Casino platform"

    def ready(self) -> None:
        from casino import checks  # noqa: F401  (registers the system checks)
        from casino.celery import app  # noqa: F401  (the app shared tasks are bound to, in every process)
