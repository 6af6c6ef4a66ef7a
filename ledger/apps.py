from django.apps import AppConfig


class LedgerConfig(AppConfig):
    name = "ledger"
    verbose_name = "Audit ledger"

    def ready(self) -> None:
        from ledger import event_types  # noqa: F401  (registers the ledger's event types and upcasters)
