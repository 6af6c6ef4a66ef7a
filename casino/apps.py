from django.apps import AppConfig


class CasinoConfig(AppConfig):
    name = "casino"
    verbose_name = "Casino platform"

    def ready(self) -> None:
        from casino import auth, checks, log_filters  # noqa: F401  (auth: the password-change signal; checks)
        from casino.celery import app  # noqa: F401  (the app shared tasks are bound to, in every process)
        from casino.projectors import CASINO_PROJECTORS
        from ledger.services.projectors import register_projector

        log_filters.install()  # no websocket ticket in uvicorn's log lines
        for projector in CASINO_PROJECTORS:  # the cashier's read model (rebuild_projections, verify_ledger)
            register_projector(projector)
