"""Permissions of the compliance role that belong to no table."""

from __future__ import annotations

from django.db import models


class ComplianceAccess(models.Model):
    """Carrier of the compliance permissions (no table of its own)."""

    class Meta:
        managed = False
        # Django would make the plural "compliance accesss" in the admin's menu.
        verbose_name = verbose_name_plural = "compliance access"
        default_permissions = ()
        permissions = [
            ("export_audit", "Can export and verify audit data"),
            ("view_reports", "Can view regulator reports"),
        ]

    def __str__(self) -> str:
        return "compliance access"
