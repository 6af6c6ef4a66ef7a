"""An admin page that acts on one table of either family (``<object_id>/<route>/<action>/``,
e.g. a house table's open and close, a poker hand's pause, resume and void):
its URL and the guard that finds the row. Interface layer."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, TypeVar

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db import models
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path

RowT = TypeVar("RowT", bound=models.Model)


def control_url(
    model_admin: admin.ModelAdmin[Any], route: str, view: Callable[..., HttpResponse], name: str
) -> URLPattern:
    """The control page's URL, ``<object_id>/<route>/<action>/``, behind the admin's login."""
    return path(f"<path:object_id>/{route}/<str:action>/", model_admin.admin_site.admin_view(view), name=name)


def controlled(model_admin: admin.ModelAdmin[Any], request: HttpRequest, model: type[RowT], object_id: str,
               action: str, actions: Collection[str]) -> RowT:  # fmt: skip
    """The row the page acts on; ``PermissionDenied`` unless ``action`` is one of
    ``actions``, the row exists and the user may change it."""
    row = model._default_manager.filter(pk=object_id).first()
    if action not in actions or row is None or not model_admin.has_change_permission(request, row):
        raise PermissionDenied
    return row
