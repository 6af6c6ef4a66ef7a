"""Admin building blocks shared by the apps."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters, InlineModelAdmin
from django.contrib.admin.views.main import ERROR_FLAG, ChangeList
from django.core.exceptions import FieldDoesNotExist
from django.db import DatabaseError, models, router, transaction
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from casino.errors import DomainError
from ledger.currencies import display_money


def reads_json(model: type[models.Model], lookup: str) -> bool:
    """Whether the URL lookup ``lookup`` (``field__sub__...``) reads a JSON column of
    ``model`` or of a model it reaches through relations."""
    for part in lookup.split(LOOKUP_SEP):
        try:
            field = model._meta.get_field(part)
        except FieldDoesNotExist:
            return False
        if isinstance(field, models.JSONField):
            return True
        if not field.is_relation or field.related_model is None:
            return False
        model = field.related_model
    return False


class CheckedChangeList(ChangeList):
    """A changelist whose URL parameters the database cannot take (an invalid
    regular expression in ``?stream_id__regex=(``, ``?id__range=1``, NUL in a
    search, ``?ip_address=abc`` on an ``inet`` column) is refused as Django
    refuses a lookup on a field that does not exist: ``IncorrectLookupParameters``,
    which the changelist answers with a redirect to ``?e=1`` (and, should that
    fail too, its "Database error" page), never a 500. The count runs in a
    savepoint, so the request's transaction stays usable. A changelist without
    parameters that fails still fails: that is a bug, not input."""

    def get_results(self, request: HttpRequest) -> None:
        try:
            with transaction.atomic(using=router.db_for_read(self.model)):
                super().get_results(request)
        except (DatabaseError, ValueError, TypeError, IndexError) as exc:
            if not self.params and not self.query:
                raise
            raise IncorrectLookupParameters(exc) from exc


class SafeLookups:
    """The changelist's URL lookups (``?field__lookup=value``) on named, safe
    fields only. A lookup that reads a JSON column (an event's data or metadata,
    a round's state: they can hold cards, and ``?data__icontains="Jc"`` is an
    oracle on them; ``?data__contains=`` is not even valid JSON) is refused for
    everyone, as is, when ``lookup_fields`` names fields, a lookup on any other
    field, and a value with NUL (which no PostgreSQL text holds). Django answers
    a refused lookup with 400 (``DisallowedModelAdminLookup``, a
    ``SuspiciousOperation``). Parameters the database cannot take
    otherwise are ``CheckedChangeList``'s. ``search_fields`` must not name a JSON
    column either (tests/compliance/test_admin_lookups.py checks every admin).
    ``casino.admin_site.CasinoAdminSite`` mixes this into every admin registered,
    Django's and third parties' included."""

    lookup_fields: tuple[str, ...] | None = None
    model: type[models.Model]

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        if reads_json(self.model, lookup):
            return False
        if self.lookup_fields is not None and lookup.split(LOOKUP_SEP)[0] not in self.lookup_fields:
            return False
        if "\x00" in str(value):
            return False
        return bool(super().lookup_allowed(lookup, value, request))  # type: ignore[misc]

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return CheckedChangeList

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        # Django sends a changelist it could not filter back to ``?e=1`` and shows the
        # whole list without a word: say so, or staff read it as the filtered answer.
        if request.GET.get(ERROR_FLAG) == "1":
            messages.warning(
                request,
                "The filter or search in that address could not be run (a value the database does not take): "
                "the whole list is shown.",
            )
        return super().changelist_view(request, extra_context)  # type: ignore[misc]


class NoWrites:
    """Nothing added, changed or deleted through this admin page or inline."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyAdmin(SafeLookups, NoWrites, admin.ModelAdmin):
    """View and search only, for everyone (superusers included); no bulk
    actions unless a subclass names its own (which then go through services)."""

    actions: Any = None

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in self.model._meta.fields] + list(self.readonly_fields)


class ServiceSavedAdmin(SafeLookups, admin.ModelAdmin):
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


# --- money --------------------------------------------------------------------------------------

#: Where an admin row's currency is: an attribute path from the row (``"currency"``,
#: ``"account.currency"``, ``"tournament.currency"``) or a function of the row.
CurrencyOf = str | Callable[[Any], str | None]

MONEY_SUFFIX = "_money"


def currency_of(obj: Any, where: CurrencyOf) -> str | None:
    """The currency code of ``obj`` found as ``where`` says (``None``: none)."""
    if callable(where):
        return where(obj)
    value: Any = obj
    for part in where.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return str(value)


def money(field: str, currency: CurrencyOf = "currency", *, description: str | None = None) -> Any:
    """An admin display (list column or read-only field) of the amount in minor
    units ``field`` with its currency: ``ledger.currencies.display_money``
    ("1,500.00 EUR"), sorted by the amount. Declared once per admin through
    ``MoneyFields.money_fields``, or alone as ``<name> = money("amount")``."""

    def shown(admin_: Any, obj: Any) -> str:
        return display_money(getattr(obj, field, None), currency_of(obj, currency))

    shown.__name__ = field + MONEY_SUFFIX
    return admin.display(description=description or field.replace("_", " "), ordering=field)(shown)


def signed_money(amount: int, currency: str | None) -> str:
    """A movement of money: ``display_money`` with a ``+`` on credits ("+12.00 EUR", "-5.00 EUR")."""
    shown = display_money(amount, currency)
    return f"+{shown}" if amount > 0 else shown


def money_table(rows: Sequence[Sequence[Any]], header: Sequence[str], *, html_id: str = "") -> SafeString:
    """A small read-only table (``header``, then ``rows`` of already formatted
    cells, e.g. ``display_money``'s), for a page that shows amounts kept in JSON."""
    head = format_html_join("", "<th>{}</th>", ((title,) for title in header))
    body = format_html_join(
        "", "<tr>{}</tr>", ((format_html_join("", "<td>{}</td>", ((cell,) for cell in row)),) for row in rows)
    )
    return format_html('<table id="{}"><tr>{}</tr>{}</table>', html_id, head, body) if rows else format_html("none")


def _swap(names: Sequence[Any], swapped: Callable[[str], bool]) -> list[Any]:
    """``names`` (a fieldset's fields: names, or tuples of names on one line) with each
    name ``swapped`` says is shown as money replaced by its money display's name."""
    out: list[Any] = []
    for name in names:
        if isinstance(name, list | tuple):
            out.append(tuple(_swap(name, swapped)))
        else:
            out.append(name + MONEY_SUFFIX if isinstance(name, str) and swapped(name) else name)
    return out


class MoneyFields:
    """Every amount an admin shows, in lists and on read-only pages, with its
    currency and decimals (``display_money``), declared in one line:
    ``money_fields = {"amount": "currency", "balance_after": "account.currency"}``
    (field -> where its currency is, ``CurrencyOf``). A money field that is
    editable on the page stays a form field (the integer in minor units, as the
    services take it); wherever it is read-only (the list, a view-only page, a
    field read-only once set) it is shown as money. Put it first among the bases:
    it maps the names the other bases' ``get_list_display``,
    ``get_readonly_fields`` and ``get_fieldsets`` give."""

    money_fields: ClassVar[Mapping[str, CurrencyOf]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for field, currency in cls.money_fields.items():
            setattr(cls, field + MONEY_SUFFIX, money(field, currency))

    def _as_money(self, names: Sequence[Any]) -> list[Any]:
        return _swap(names, lambda name: name in self.money_fields)

    def get_list_display(self, request: HttpRequest) -> Any:
        return self._as_money(super().get_list_display(request))  # type: ignore[misc]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return self._as_money(super().get_readonly_fields(request, obj))  # type: ignore[misc]

    def get_exclude(self, request: HttpRequest, obj: Any = None) -> list[str] | None:
        # A money field shown read-only (as money) is no form field.
        readonly = set(self.get_readonly_fields(request, obj))
        shown = [name for name in self.money_fields if name + MONEY_SUFFIX in readonly]
        excluded = super().get_exclude(request, obj)  # type: ignore[misc]
        return [*(excluded or ()), *shown] if shown or excluded is not None else None

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        sets = super().get_fieldsets(request, obj)  # type: ignore[misc]
        if isinstance(self, InlineModelAdmin):  # ``obj``: the parent row
            editable = self.has_add_permission(request, obj) or self.has_change_permission(request, obj)
        elif obj is None:
            editable = self.has_add_permission(request)  # type: ignore[attr-defined]
        else:
            editable = self.has_change_permission(request, obj)  # type: ignore[attr-defined]
        readonly = set(self.get_readonly_fields(request, obj))

        def swapped(name: str) -> bool:
            return name in self.money_fields and (not editable or name + MONEY_SUFFIX in readonly)

        return [(title, {**options, "fields": _swap(options.get("fields", ()), swapped)}) for title, options in sets]
