"""What the operator REST controls of both families share (``games.house.api.operator_views``,
``games.poker.api.operator_views``): the permission check by a model permission, the
reason the operator gives, its schemas."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from casino.errors import MAX_REASON, required_reason


class HasModelPermission(BasePermission):
    """Allowed to users holding ``permission`` (the operator role, superusers): a
    subclass names the permission and the refusal's message."""

    message = "Only operators may do this."
    permission = ""

    def has_permission(self, request: Request, view: Any) -> bool:
        return bool(request.user and request.user.has_perm(self.permission))


class ReasonSchema(serializers.Serializer):
    reason = serializers.CharField(max_length=MAX_REASON)


class OptionalReasonSchema(serializers.Serializer):
    reason = serializers.CharField(max_length=MAX_REASON, required=False, allow_blank=True)


def reason_of(request: Request) -> str:
    """The reason the request's body gives (``reason_required`` when missing, blank or too long)."""
    data = request.data
    return required_reason(data.get("reason") if isinstance(data, dict) else None)


def optional_reason_of(request: Request) -> str:
    """A reason the operator may give (resume): blank or absent is ``""``, else as ``reason_of``."""
    data = request.data
    value = data.get("reason") if isinstance(data, dict) else None
    if value is None or (isinstance(value, str) and not value.strip()):
        return ""
    return required_reason(value)
