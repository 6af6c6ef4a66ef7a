"""Operator actions as events: every change made from the admin (or any
operator tool) is recorded in the ledger's event store with who did it.

Call ``record_operator_action`` inside the transaction that makes the change,
so the change and its record commit together or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from ledger.services import NewEvent, RecordedEvent, append_events
from ledger.upcasting import register_event_type

OPERATOR_ACTION = "operator.action"
register_event_type(OPERATOR_ACTION, 1)


def operator_actor(user: AbstractBaseUser | AnonymousUser) -> str:
    """The actor string of a staff user, e.g. ``user:3``."""
    if not user.is_authenticated:
        raise ValueError("an operator action needs an authenticated operator")
    return f"user:{user.pk}"


def record_operator_action(
    *,
    operator: AbstractBaseUser | AnonymousUser,
    action: str,
    target: str,
    reason: str = "",
    details: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> RecordedEvent:
    """Append ``operator.action`` to the operator's stream ``operator-{id}``.

    ``action`` names what was done (``cashier.approve``, ``round.void`` ...),
    ``target`` what it was done to (``cashier:<id>``, ``round:<game number>``).
    Data: ``{action, target, reason, details, operator_id, operator_username}``;
    metadata ``actor`` is the operator, plus ``metadata`` (e.g. ``table_id``, which
    the audit export's ``--table`` filter selects on).
    """
    actor = operator_actor(operator)
    username = operator.get_username() if hasattr(operator, "get_username") else ""
    [event] = append_events(
        stream_id=f"operator-{operator.pk}",
        expected_version=None,
        events=[
            NewEvent(
                OPERATOR_ACTION,
                {
                    "action": action,
                    "target": target,
                    "reason": reason,
                    "details": dict(details or {}),
                    "operator_id": operator.pk,
                    "operator_username": username,
                },
            )
        ],
        metadata={**(metadata or {}), "actor": actor},
    )
    return event


_ADMIN_ACTIONS = {1: "admin.add", 2: "admin.change", 3: "admin.delete"}
# Set on a ``LogEntry`` before saving it when the service behind the admin page has
# already recorded its own, more precise ``operator.action`` (e.g. ``table.configure``
# with the configuration version): the change is then one event, not two.
RECORDED_BY_SERVICE = "casino_operator_action_recorded"


def record_admin_log_entry(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    """``post_save`` receiver for Django admin's ``LogEntry``: every add, change
    or delete made through any ModelAdmin also becomes an ``operator.action``
    event, in the admin view's transaction. (Django writes one ``LogEntry`` per
    object with ``save()``; only multi-object bulk actions use ``bulk_create``,
    which sends no signal: no role here may bulk-delete.)"""
    if not created or getattr(instance, RECORDED_BY_SERVICE, False):
        return
    content_type = instance.content_type
    target = f"{content_type.app_label}.{content_type.model}:{instance.object_id}" if content_type else "?"
    record_operator_action(
        operator=instance.user,
        action=_ADMIN_ACTIONS.get(instance.action_flag, f"admin.{instance.action_flag}"),
        target=target,
        details={"object": instance.object_repr, "change": instance.get_change_message()},
    )
