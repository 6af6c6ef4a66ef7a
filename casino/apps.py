from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class CasinoConfig(AppConfig):
    name = "casino"
    verbose_name = "Casino platform"

    def ready(self) -> None:
        from casino import auth, checks, log_filters, metrics  # noqa: F401  (auth: the password-change signal; checks)
        from casino.celery import app  # noqa: F401  (the app shared tasks are bound to, in every process)
        from casino.projectors import CASINO_PROJECTORS
        from ledger.services.projectors import register_projector

        log_filters.install()  # no websocket ticket in uvicorn's log lines
        metrics.connect_celery_signals()  # task queue lag, in every process that publishes or runs tasks
        for projector in CASINO_PROJECTORS:  # the cashier's read model (rebuild_projections, verify_ledger)
            register_projector(projector)


class CasinoAdminConfig(admin_apps.AdminConfig):
    """``django.contrib.admin`` with ``casino.admin_site.CasinoAdminSite`` as ``admin.site``."""

    default = False  # casino's own config is CasinoConfig
    default_site = "casino.admin_site.CasinoAdminSite"
