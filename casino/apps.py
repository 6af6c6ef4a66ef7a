from django.apps import AppConfig


class CasinoConfig(AppConfig):
    name = "casino"
    verbose_name = "Casino platform"

    def ready(self) -> None:
        from casino import auth, checks, log_filters  # noqa: F401  (auth: the password-change signal; checks)
        from casino.celery import app  # noqa: F401  (the app shared tasks are bound to, in every process)

        log_filters.install()  # no websocket ticket in uvicorn's log lines
