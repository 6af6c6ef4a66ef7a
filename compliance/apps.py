from __future__ import annotations

from django.apps import AppConfig


class ComplianceConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "compliance"
    verbose_name = "Compliance"

    def ready(self) -> None:
        from django.contrib.admin.models import LogEntry
        from django.db.models.signals import post_save

        from casino.audit import record_admin_log_entry

        # Every admin change is also an event with the operator's identity.
        post_save.connect(record_admin_log_entry, sender=LogEntry, dispatch_uid="compliance.admin_log_event")
