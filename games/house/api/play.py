"""A player's commands at a house table, defined once for both interfaces:
the REST views (``games.house.api.views``) and the websocket
(``games.house.realtime.commands``) call ``run_command``, so the parsing of
the fields, the idempotency key, the order of the refusals and the steps
around the service (the seat check on a refusal, the dealer's early advance
after the last decision) cannot drift apart. Interface layer: no game rule
lives here, only which service a command calls and with what.

Commands (``kind``): ``bet`` (REST ``bets/chip/``, fields ``spot``, ``amount``),
``undo``, ``clear``, ``repeat``, ``double``, ``decision`` (field ``option``),
``join`` and ``leave``. All but ``join`` and ``leave`` need an idempotency key
(REST has none for the seat: a second ``join`` is ``already_seated``, a second
``leave`` ``not_seated``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from casino import log_context
from casino.errors import DomainError
from games.house.api.group_commit import run_grouped
from games.house.services import dealer
from games.house.services import seats as seating
from games.house.services.bets import BetResult, DecisionResult
from games.house.services.group import (
    ClearBets,
    CommandResult,
    DoubleBets,
    MakeDecision,
    PlaceChip,
    PlayerCommand,
    RepeatBets,
    UndoBet,
)
from games.tables.api import player_key, positive_int, result_json, text_field

log = logging.getLogger(__name__)

#: The fields of a command (REST: the JSON body, parsed lazily, only by the
#: commands that read one; websocket: the frame).
Fields = Callable[[], dict[str, Any]]


def command_of(*, kind: str, player_id: int, raw_key: object, fields: Fields) -> PlayerCommand:
    """The service command for ``kind`` (one of ``BET_COMMANDS``): its key
    namespaced (``games.tables.api.player_key``), then its fields parsed; both refused
    with REST's codes. No database access."""
    key = player_key(player_id, raw_key)
    match kind:
        case "bet":
            data = fields()
            return PlaceChip(player_id, key, text_field(data, "spot"), positive_int(data.get("amount")))
        case "decision":
            return MakeDecision(player_id, key, text_field(fields(), "option"))
        case _:
            return SIMPLE_COMMANDS[kind](player_id, key)


def answer_of(*, table_id: int, player_id: int, result: CommandResult) -> Any:
    """What a command's ``result`` answers: a refusal is raised, reported as
    ``table_not_found`` or ``not_seated`` when one of those holds (an unknown
    table or a missing seat comes before anything else about the request);
    after the last decision outstanding the dealer moves on at once; else the
    REST answer body."""
    if isinstance(result, DomainError):
        seating.require_seat(table_id=table_id, player_id=player_id)
        raise result
    if isinstance(result, DecisionResult) and result.all_decided and result.tick is not None:
        # The last decision outstanding: the dealer need not wait for the deadline.
        dealer.advance_now(table_id=table_id, expected_seq=result.tick.phase_seq)
    return result_json(result)


SIMPLE_COMMANDS: dict[str, type[UndoBet | ClearBets | RepeatBets | DoubleBets]] = {
    "undo": UndoBet,
    "clear": ClearBets,
    "repeat": RepeatBets,
    "double": DoubleBets,
}
#: The keyed commands; ``decision`` checks the seat before anything else (a
#: player who gave up the seat keeps their wagers in play but decides no more).
BET_COMMANDS = {"bet", *SIMPLE_COMMANDS, "decision"}
SEAT_FIRST = {"decision"}
SEAT_COMMANDS = {"join": 201, "leave": 204}
#: Every command's kind and the HTTP status of its REST answer.
STATUS = {**dict.fromkeys(sorted(BET_COMMANDS), 200), **SEAT_COMMANDS}


def run_command(*, kind: str, table_id: int, player_id: int, raw_key: object, fields: Fields, now: datetime) -> Any:
    """Run ``kind`` for ``player_id`` at ``table_id``; the REST answer body
    (``result_json`` of the service's result; ``leave``: ``None``).

    ``raw_key`` is the client's idempotency key as sent (namespaced here by
    ``games.tables.api.player_key``; ignored by ``join`` and ``leave``). Refusals are
    the service's ``DomainError``s, in REST's order: ``decision`` checks the
    seat first; a bet command checks the key, then its fields, then runs the
    service, and any refusal is reported as ``table_not_found`` or
    ``not_seated`` when one of those holds, else as itself. Each service is
    one transaction: a refusal changes nothing."""
    if kind == "join":
        seat = seating.take_seat(table_id=table_id, player_id=player_id)
        return {"table_id": seat.table_id, "seat_number": seat.seat_number}
    if kind == "leave":
        seating.leave_table(table_id=table_id, player_id=player_id, now=now)
        return None
    if kind in SEAT_FIRST:
        seating.require_seat(table_id=table_id, player_id=player_id)
    try:
        command = command_of(kind=kind, player_id=player_id, raw_key=raw_key, fields=fields)
    except DomainError:
        seating.require_seat(table_id=table_id, player_id=player_id)
        raise
    # Together with the commands other request threads bring to this table meanwhile.
    result = run_grouped(table_id=table_id, command=command)
    answer = answer_of(table_id=table_id, player_id=player_id, result=result)
    log_accepted(kind=kind, table_id=table_id, command=command, result=result)
    return answer


def log_accepted(*, kind: str, table_id: int, command: PlayerCommand, result: CommandResult) -> None:
    """One INFO line per accepted bet command or decision (REST and websocket),
    with its table and game number (the round id is the game number) in the log context."""
    if not isinstance(result, BetResult | DecisionResult):
        return
    log_context.bind(table=table_id, game_number=result.round_id)
    if isinstance(command, PlaceChip):
        log.info("bet accepted", extra={"command": kind, "spot": command.spot, "amount": command.amount})
    elif isinstance(result, DecisionResult):
        log.info("decision accepted", extra={"command": kind, "option": result.option, "amount": result.amount})
    else:
        log.info("bet command accepted", extra={"command": kind})
