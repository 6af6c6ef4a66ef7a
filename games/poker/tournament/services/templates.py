"""Tournaments made from templates (docs/compliance.md, "Tournaments: operator").

``create_from_template`` copies a ``TournamentTemplate``'s terms into a new
tournament that is ``registering``, with its ``template`` set, validated as the
admin's create form is (the level schedule and the payout structure through the
pure domain, then the model's ``full_clean``), and records the operator's
``operator.action`` ``tournament.create`` in the same transaction. A refusal
creates nothing.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from casino.audit import operator_actor, record_operator_action
from games.poker.errors import TournamentInvalid, TournamentStartRequired, TournamentTemplateNotFound
from games.poker.tournament.models import (
    Tournament,
    TournamentKind,
    TournamentTemplate,
    payouts_from_json,
    schedule_from_json,
)

__all__ = ["TEMPLATE_FIELDS", "create_from_template"]

# What a tournament takes from its template (the name may be given instead).
TEMPLATE_FIELDS = (
    "kind", "currency", "buy_in", "fee", "starting_chips", "max_players", "table_seats", "late_registration_level",
    "levels", "payouts", "guarantee", "cancel_policy", "turn_seconds", "time_bank_seconds", "between_hands_seconds",
    "hand_for_hand_margin",
)  # fmt: skip


def create_from_template(
    *, template_id: int, operator: Any, name: str = "", start_at: datetime | None = None, now: datetime
) -> Tournament:
    """A new ``registering`` tournament with the template's terms (``name``: the
    template's when blank; ``start_at``: a scheduled template's start, ignored
    for a Sit & Go, which starts when full).

    Refusals, nothing created: ``tournament_template_not_found`` (404);
    ``tournament_start_required`` (a scheduled template without a ``start_at``
    after ``now``); the domain's refusals of the template's levels and payouts
    (e.g. ``tournament_payouts_not_100``, ``tournament_level_invalid_blinds``);
    ``tournament_invalid`` for anything else the model refuses (``details``:
    the messages by field, e.g. a name over 80 characters)."""
    operator_actor(operator)  # an authenticated operator, before anything
    with transaction.atomic():
        template = TournamentTemplate.objects.filter(pk=template_id).first() if isinstance(template_id, int) else None
        if template is None:
            raise TournamentTemplateNotFound(template_id=template_id)
        terms = {field: copy.deepcopy(getattr(template, field)) for field in TEMPLATE_FIELDS}
        # The domain's own refusals, with their codes (a template saved without the admin's validation).
        schedule_from_json(terms["levels"])
        payouts_from_json(terms["payouts"])
        if terms["kind"] == TournamentKind.SCHEDULED:
            if start_at is None or start_at <= now:
                raise TournamentStartRequired(template_id=template.pk)
        else:
            start_at = None
        tournament = Tournament(**terms, name=(name or "").strip() or template.name, start_at=start_at,
                                template=template)  # fmt: skip
        try:
            tournament.full_clean()
        except ValidationError as problems:
            raise TournamentInvalid(template_id=template.pk, fields=problems.message_dict) from None
        tournament.save()
        record_operator_action(
            operator=operator, action="tournament.create", target=f"poker-tournament:{tournament.pk}",
            details={"tournament": tournament.name, "template_id": template.pk, "template": template.name,
                     "kind": tournament.kind, "start_at": start_at.isoformat() if start_at else None},
            metadata={"tournament_id": tournament.pk},
        )  # fmt: skip
        return tournament
