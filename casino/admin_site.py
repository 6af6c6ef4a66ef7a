"""The project's admin site (``casino.apps.CasinoAdminConfig`` makes it Django's
default ``admin.site``): every model admin registered on it, Django's own and
third parties' (auth, axes, knox) included, takes URL lookups only as
``casino.admin_base.SafeLookups`` allows them, so no querystring answers 500."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib import admin
from django.db.models.base import ModelBase

from casino.admin_base import SafeLookups


class CasinoAdminSite(admin.AdminSite):
    def register(
        self,
        model_or_iterable: ModelBase | Iterable[ModelBase],
        admin_class: type[admin.ModelAdmin[Any]] | None = None,
        **options: Any,
    ) -> None:
        admin_class = admin_class or admin.ModelAdmin
        if not issubclass(admin_class, SafeLookups):
            admin_class = type(admin_class.__name__, (SafeLookups, admin_class), {"__module__": admin_class.__module__})
        super().register(model_or_iterable, admin_class, **options)
