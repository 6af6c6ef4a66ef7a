"""Admin building blocks shared by the apps."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from casino.errors import DomainError


class NoWrites:
    """Nothing added, changed or deleted through this admin page or inline."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyAdmin(NoWrites, admin.ModelAdmin):
    """View and search only, for everyone (superusers included); no bulk
    actions unless a subclass names its own (which then go through services)."""

    actions: Any = None

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in self.model._meta.fields] + list(self.readonly_fields)


class ServiceSavedAdmin(admin.ModelAdmin):
    """A model page whose saves go through a service that locks the row and
    checks again: a refusal after the form validated (a change meanwhile) is
    shown as "code: message" and the page reloaded; nothing was written."""

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except DomainError as exc:
            self.message_user(request, f"{exc.code}: {exc.message}", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())


class MalfunctionControlForm(forms.Form):
    """Pause, resume or void (RULES.md, "Malfunction voids all pays and play"):
    pause and void need a reason, void also the operator's confirmation."""

    reason = forms.CharField(max_length=200, required=False)
    confirm = forms.BooleanField(required=False, label="I confirm: void this round and refund every stake")

    def __init__(self, *args: Any, action: str, confirm_label: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.action = action
        if action == "resume":
            del self.fields["confirm"]
        else:
            self.fields["reason"].required = True
        if action == "pause":
            del self.fields["confirm"]
        if confirm_label is not None and "confirm" in self.fields:
            self.fields["confirm"].label = confirm_label

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.action == "void" and not data.get("confirm"):
            raise forms.ValidationError("Voiding needs your confirmation.")
        return data
