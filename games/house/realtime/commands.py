"""A player's commands over the table websocket (``ws/tables/<id>/``; protocol:
docs/websocket.md, "Client to server"). Interface layer.

A frame ``{"type": <kind>, "id": <client id>, ...fields}`` runs exactly what
the REST endpoint of the same command runs (``games.house.api.play.run_command``:
the same parsing, service, refusal codes and extra steps), with ``id`` as the
idempotency key, namespaced as REST's header is (``play:<player id>:<id>``):
a REST retry with ``Idempotency-Key: <id>`` is the same command. The answer is
``{"type": "ack", "id", "request": <kind>, "result": <the REST answer body>}``
or ``{"type": "error", "id", "request": <kind>, "code", "message", "details"?}``
with the REST code.

The actor is always the connection's player and the table the connection's
table: a ``player_id`` or ``table_id`` in the frame is ignored, as REST ignores
body fields it does not read.

Where it runs: bets and decisions go through the table's group commit
(``games.house.realtime.batcher``: the commands that arrive together at a
table are written in one database round trip, each with its own answer);
``join`` and ``leave``, and the seat checks around a command, run on a command
thread (``games.tables.ws_commands``). Neither is Channels' one shared database thread.

Order: a client may pipeline commands (send several without waiting for the
answers). A connection's frames are handled one at a time, in the order sent
(Channels dispatches a consumer's messages one after the other and the
consumer awaits each command), so its commands run and are answered in that
order: a pipelined "chip, then undo" undoes that chip. The ``id`` in each
answer is still the way to match them. Commands of one player sent on several
connections (or over REST at the same time) never interleave inside the
database: every service locks the player's row first, so they commit one
after the other, each on the state the previous one left.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from casino.errors import DomainError
from games.house.api import play
from games.house.realtime import batcher
from games.house.services import seats as seating
from games.house.services.bets import DecisionResult
from games.tables import ws_commands
from games.tables.api import player_key, result_json

#: The frame types that are player commands.
COMMANDS = frozenset(play.STATUS)


async def _grouped(*, table_id: int, player_id: int, kind: str, fields: dict[str, Any], client_id: object) -> Any:
    """A keyed command (``play.BET_COMMANDS``) through the table's group commit
    (``games.house.realtime.batcher``), with REST's steps around it
    (``play.command_of`` and ``play.answer_of``): the same refusals in the same
    order. A chip's key and fields are checked on the event loop (no database);
    the seat checks and the dealer's early advance run on a command thread."""
    if kind in play.SEAT_FIRST:
        await ws_commands.on_thread(seating.require_seat, table_id=table_id, player_id=player_id)
    try:
        command = play.command_of(kind=kind, player_id=player_id, raw_key=client_id, fields=lambda: fields)
    except DomainError:
        await ws_commands.on_thread(seating.require_seat, table_id=table_id, player_id=player_id)
        raise
    result = await batcher.submit(table_id, command)
    if isinstance(result, DomainError | DecisionResult):
        answer = await ws_commands.on_thread(play.answer_of, table_id=table_id, player_id=player_id, result=result)
    else:
        answer = result_json(result)
    play.log_accepted(kind=kind, table_id=table_id, command=command, result=result)
    return answer


def _seat_command(*, table_id: int, player_id: int, kind: str, fields: dict[str, Any], client_id: object) -> Any:
    # REST's join and leave take no key; over the websocket every command
    # carries an id (its answer repeats it), checked as a key is.
    player_key(player_id, client_id)
    return play.run_command(
        kind=kind, table_id=table_id, player_id=player_id, raw_key=client_id, fields=lambda: fields,
        now=timezone.now(),
    )  # fmt: skip


async def execute_command(
    *, table_id: int, player_id: int, kind: str, fields: dict[str, Any], client_id: object
) -> dict[str, Any]:
    """Run command ``kind`` (one of ``COMMANDS``) for the connection's player
    at its table; the frame to answer with: ``ack`` (``result`` = the REST
    answer body) or ``error`` (the REST refusal code; nothing changed).
    ``fields`` is the whole frame, ``client_id`` its ``id`` as sent."""
    if kind in play.SEAT_COMMANDS:
        return await ws_commands.answer(
            kind, client_id, _seat_command, family="house",
            table_id=table_id, player_id=player_id, kind=kind, fields=fields, client_id=client_id,
        )  # fmt: skip
    command = _grouped(table_id=table_id, player_id=player_id, kind=kind, fields=fields, client_id=client_id)
    return await ws_commands.answer_awaiting(kind, client_id, command, family="house")
