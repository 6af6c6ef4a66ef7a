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

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from casino.errors import DomainError
from games.api import player_key, positive_int, result_json, text_field
from games.house import services
from games.house.services import dealer
from games.house.services import seats as seating

#: The fields of a command (REST: the JSON body, parsed lazily, only by the
#: commands that read one; websocket: the frame).
Fields = Callable[[], dict[str, Any]]


def _bet(*, table_id: int, player_id: int, fields: Fields, key: str, now: datetime) -> Any:
    data = fields()
    spot = text_field(data, "spot")
    amount = positive_int(data.get("amount"))
    return services.place_chip(
        table_id=table_id, player_id=player_id, spot=spot, amount=amount, idempotency_key=key, now=now
    )


def _undo(*, table_id: int, player_id: int, fields: Fields, key: str, now: datetime) -> Any:
    return services.undo_bet(table_id=table_id, player_id=player_id, idempotency_key=key, now=now)


def _clear(*, table_id: int, player_id: int, fields: Fields, key: str, now: datetime) -> Any:
    return services.clear_bets(table_id=table_id, player_id=player_id, idempotency_key=key, now=now)


def _repeat(*, table_id: int, player_id: int, fields: Fields, key: str, now: datetime) -> Any:
    return services.repeat_bets(table_id=table_id, player_id=player_id, idempotency_key=key, now=now)


def _double(*, table_id: int, player_id: int, fields: Fields, key: str, now: datetime) -> Any:
    return services.double_bets(table_id=table_id, player_id=player_id, idempotency_key=key, now=now)


def _decision(*, table_id: int, player_id: int, fields: Fields, key: str, now: datetime) -> Any:
    option = text_field(fields(), "option")
    result = services.make_decision(table_id=table_id, player_id=player_id, option=option, idempotency_key=key, now=now)
    # The last decision outstanding: the dealer need not wait for the deadline.
    if result.all_decided and result.tick is not None:
        dealer.advance_now(table_id=table_id, expected_seq=result.tick.phase_seq)
    return result


@dataclass(frozen=True)
class Command:
    """How one command runs: ``service`` (keyed commands), the HTTP ``status``
    of its REST answer, and whether the seat is checked before anything else."""

    service: Callable[..., Any]
    status: int = 200
    seat_first: bool = False


BET_COMMANDS: dict[str, Command] = {
    "bet": Command(_bet),
    "undo": Command(_undo),
    "clear": Command(_clear),
    "repeat": Command(_repeat),
    "double": Command(_double),
    # A player who gave up the seat keeps their wagers in play but decides no more.
    "decision": Command(_decision, seat_first=True),
}
SEAT_COMMANDS = {"join": 201, "leave": 204}
#: Every command's kind and the HTTP status of its REST answer.
STATUS = {**{kind: command.status for kind, command in BET_COMMANDS.items()}, **SEAT_COMMANDS}


def run_command(*, kind: str, table_id: int, player_id: int, raw_key: object, fields: Fields, now: datetime) -> Any:
    """Run ``kind`` for ``player_id`` at ``table_id``; the REST answer body
    (``result_json`` of the service's result; ``leave``: ``None``).

    ``raw_key`` is the client's idempotency key as sent (namespaced here by
    ``games.api.player_key``; ignored by ``join`` and ``leave``). Refusals are
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
    command = BET_COMMANDS[kind]
    if command.seat_first:
        seating.require_seat(table_id=table_id, player_id=player_id)
    try:
        key = player_key(player_id, raw_key)
        result = command.service(table_id=table_id, player_id=player_id, fields=fields, key=key, now=now)
    except DomainError:
        # Refusals only (off the hot path): an unknown table or a missing
        # seat is reported as such before anything else about the request.
        seating.require_seat(table_id=table_id, player_id=player_id)
        raise
    return result_json(result)
