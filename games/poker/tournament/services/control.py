"""The operator's pause and resume of a running tournament (docs/compliance.md,
"Tournaments: operator"; docs/poker.md, "Tournaments: play").

Each command is keyword-only and one transaction: the tournament row locked
first, then its open tables in id order (the step's order); the tournament's
event, its projection and the ``operator.action`` are recorded together, and a
refusal changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction

from casino.audit import operator_actor, record_operator_action
from casino.errors import required_reason
from games.poker import event_types as et
from games.poker.errors import TournamentNotPaused, TournamentNotRunning
from games.poker.models import PokerTable
from games.poker.services.operator import pause_hand, resume_hand
from games.poker.services.tables import BETWEEN, HAND, PAUSED, current_hand, iso, set_table
from games.poker.tournament.clock import clock_seconds, next_level_at, schedule_tournament
from games.poker.tournament.models import Tournament, TournamentState
from games.poker.tournament.services.core import lock_tournament
from games.poker.tournament.services.stream import Batch, commit_batch
from ledger.currencies import CHIPS


@dataclass(frozen=True)
class TournamentControlResult:
    tournament_id: int
    state: str
    tables: int  # tables paused or resumed


def _recorded_control(tournament: Tournament, event_type: str, data: dict[str, Any], *, action: str,
                      operator: Any, tables: int, now: datetime) -> TournamentControlResult:  # fmt: skip
    """Record a pause or resume: the tournament's event (with the level clock's
    seconds, ``clock_seconds``), the tournament row (its projector's), and the
    ``operator.action`` (``tournament.pause`` or ``tournament.resume``) with
    the actor and the reason."""
    batch = Batch(CHIPS)
    batch.event(event_type, data)
    commit_batch(tournament, batch, key=f"poker:tournament:{tournament.pk}:{action}:{data['at']}", actor=data["actor"],
                 now=now)  # fmt: skip
    record_operator_action(
        operator=operator, action=f"tournament.{action}", target=f"poker-tournament:{tournament.pk}",
        reason=data["reason"], details={"tournament": tournament.name, "tables": tables},
        metadata={"tournament_id": tournament.pk},
    )  # fmt: skip
    return TournamentControlResult(tournament.pk, tournament.state, tables)


def pause_tournament(*, tournament_id: int, operator: Any, reason: str, now: datetime) -> TournamentControlResult:
    """Operator pause (malfunction): the level clock stops, every hand in play is
    paused (``pause_hand``: the actor's clock stops) and every table between
    hands waits; no table deals until ``resume_tournament``. Recorded as
    ``poker_tournament.paused`` and ``operator.action`` ``tournament.pause``.
    Refusals (nothing changes): ``reason_required``, ``tournament_not_found``,
    ``tournament_not_running``."""
    reason = required_reason(reason)
    actor = operator_actor(operator)
    with transaction.atomic():
        tournament = lock_tournament(tournament_id)
        if tournament.state != TournamentState.RUNNING:
            raise TournamentNotRunning(tournament_id=tournament_id, state=tournament.state)
        seconds = clock_seconds(tournament, now)  # the clock stops there (the projector)
        tables = list(PokerTable.objects.select_for_update().filter(tournament=tournament, is_open=True).order_by("pk"))
        paused = 0
        for table in tables:
            if table.phase == HAND:
                pause_hand(table_id=table.pk, actor=actor, reason=reason, now=now)
                paused += 1
            elif table.phase == BETWEEN:
                set_table(table, phase=PAUSED, deadline=None)
                paused += 1
        data = {"reason": reason, "actor": actor, "at": iso(now), "level": tournament.current_level,
                "clock_seconds": seconds}  # fmt: skip
        return _recorded_control(tournament, et.TOURNAMENT_PAUSED, data, action="pause", operator=operator,
                                 tables=paused, now=now)  # fmt: skip


def resume_tournament(*, tournament_id: int, operator: Any, reason: str = "", now: datetime) -> TournamentControlResult:
    """Resume a paused tournament: the level clock runs again from where it
    stopped, paused hands resume with the time their actor had left, the other
    tables deal after the pause between hands, and the step runs for the tables
    that were waiting. Refusals: ``tournament_not_found``, ``tournament_not_paused``."""
    actor = operator_actor(operator)
    with transaction.atomic():
        tournament = lock_tournament(tournament_id)
        if tournament.state != TournamentState.PAUSED:
            raise TournamentNotPaused(tournament_id=tournament_id, state=tournament.state)
        tables = list(PokerTable.objects.select_for_update().filter(tournament=tournament, is_open=True).order_by("pk"))
        resumed = 0
        for table in tables:
            if table.phase != PAUSED:
                continue
            if current_hand(table) is not None:
                resume_hand(table_id=table.pk, actor=actor, now=now)
            else:
                set_table(table, phase=BETWEEN, deadline=now + timedelta(seconds=tournament.between_hands_seconds))
            resumed += 1
        data = {"actor": actor, "reason": reason, "at": iso(now), "clock_seconds": int(tournament.clock_elapsed)}
        # Running again, the clock from now: the projector's.
        result = _recorded_control(tournament, et.TOURNAMENT_RESUMED, data, action="resume", operator=operator,
                                   tables=resumed, now=now)  # fmt: skip
        schedule_tournament(tournament.pk)
        at = next_level_at(tournament, now)
        if at is not None:
            schedule_tournament(tournament.pk, at=at)
        return result
