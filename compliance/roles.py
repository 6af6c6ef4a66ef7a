"""Roles with least privilege, as Django groups (docs/compliance.md, "Roles").

- ``operator``: tables, rounds (pause, resume, void) and every other model of
  the ``games`` app (add, change, view; never delete); players (view users,
  view and change profiles, view responsible-gaming settings); cashier
  transactions (view, approve, reject); ledger rows view only.
- ``compliance``: view everything, exports and reports; changes nothing.
- superuser: Django's flag; even superusers cannot change ledger rows in the
  admin (the ledger's admin refuses add, change and delete for everyone).

``setup_roles()`` is idempotent: it sets each group's permissions to exactly
the list, so rerunning after a new model appears grants its permissions.
"""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission
from django.db import transaction
from django.db.models import Q

OPERATOR = "operator"
COMPLIANCE = "compliance"

# (app label, codename prefix) pairs each role gets on every model of the app.
_OPERATOR_APP_VERBS = {"games": ("add_", "change_", "view_")}
_OPERATOR_EXTRA = [
    ("ledger", "view_"),
    ("casino", "view_"),
    ("auth", "view_user"),
]
_OPERATOR_CODENAMES = [
    ("casino", "change_playerprofile"),
    ("casino", "decide_cashiertransaction"),
]


#: The table chat is the players' own words, kept as written for moderation: no operator adds,
#: changes or reads it through the admin (it lived in its own app before it joined the games app).
_OPERATOR_EXCLUDED_MODELS = (("games", "chatmessage"),)


def operator_permissions() -> list[Permission]:
    query = Q(pk__in=[])
    for app, verbs in _OPERATOR_APP_VERBS.items():
        for verb in verbs:
            query |= Q(content_type__app_label=app, codename__startswith=verb)
        # Custom permissions of the games app (pause, resume, void ...) too.
        query |= Q(content_type__app_label=app) & ~Q(codename__startswith="delete_")
    for app, prefix in _OPERATOR_EXTRA:
        query |= Q(content_type__app_label=app, codename__startswith=prefix)
    for app, codename in _OPERATOR_CODENAMES:
        query |= Q(content_type__app_label=app, codename=codename)
    excluded = Q(pk__in=[])
    for app, model in _OPERATOR_EXCLUDED_MODELS:
        excluded |= Q(content_type__app_label=app, content_type__model=model)
    return list(Permission.objects.filter(query).exclude(excluded))


# Credentials are not "everything" a reviewer reads: API tokens and sessions would let them act as others.
_SECRET_APPS = ("authtoken", "knox", "sessions")


def compliance_permissions() -> list[Permission]:
    return list(
        Permission.objects.filter(
            Q(codename__startswith="view_") | Q(content_type__app_label="compliance", codename__in=["export_audit",
                                                                                                   "view_reports"])
        ).exclude(content_type__app_label__in=_SECRET_APPS)
    )  # fmt: skip


@transaction.atomic
def setup_roles() -> dict[str, int]:
    """Create or update the role groups; returns each group's permission count."""
    counts = {}
    for name, perms in ((OPERATOR, operator_permissions()), (COMPLIANCE, compliance_permissions())):
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.set(perms)
        counts[name] = len(perms)
    return counts
