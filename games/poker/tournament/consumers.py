"""``ws/poker/tournaments/<id>/``: a tournament's state, pushed (docs/websocket.md,
"Poker tournaments").

Thin: authenticate, join the tournament's feed (``games.tables.feed``, family
``poker_tournament``, keyed by the tournament id), send the snapshot (exactly
``GET /api/poker/tournaments/<id>/state/``, ``presenters.tournament_state``),
then one ``state`` frame per event of the tournament's stream
(``poker-tournament-{id}``: registrations, the start, levels, eliminations,
moves, broken tables, the final table, hand-for-hand, pause and resume, the
finish and its payouts, a cancel), each with the public state as it is when
the frame is built. A player the event concerns (moved, eliminated, seated,
paid, refunded, ...) gets the frame with their own ``me`` instead.

From the client: ``{"type": "snapshot"}``, ``{"type": "ping", "nonce"}``.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from channels.db import database_sync_to_async
from django.db.models import Max
from django.utils import timezone

from games.poker import event_types as et
from games.poker.realtime import presenters
from games.poker.realtime.socket import PokerSocket
from games.poker.tournament.models import Tournament
from games.tables.feed import Delta, consistent_read, encode, register_translator
from games.tables.realtime import authenticate_scope
from ledger.legs import LEGS_KEY
from ledger.models import Event
from ledger.services.events import RecordedEvent

log = logging.getLogger(__name__)

FAMILY = "poker_tournament"
PREFIX = "poker-tournament-"
LANE = "tournament"
# Never in a frame: who operated (an operator's user id) is for the audit, not the players.
PRIVATE_FIELDS = frozenset({"actor"})


def concerned(event: RecordedEvent) -> set[int]:
    """The players whose own part (``me``) the event changes."""
    data = event.data
    players: set[int] = set()
    for name in ("player_id", "winner"):
        if isinstance(data.get(name), int):
            players.add(int(data[name]))
    for name in ("players", "standings", "refunds", "paid"):  # lists of rows (``players`` is a count elsewhere)
        rows = data.get(name)
        for row in rows if isinstance(rows, list) else ():
            if isinstance(row, dict) and isinstance(row.get("player_id"), int):
                players.add(int(row["player_id"]))
    if event.type == et.TOURNAMENT_STARTED:
        for seats in (data.get("tables") or {}).values():
            players.update(int(player) for player in seats.values())
    if event.type == et.TOURNAMENT_TABLES_CLOSED:
        players.update(int(player) for player in (data.get("stacks") or {}))
    return players


def public_event(event: RecordedEvent) -> dict[str, Any]:
    hidden = (*PRIVATE_FIELDS, LEGS_KEY)  # the money legs: the ledger's record, not the lobby's news
    return {"type": event.type, **{k: v for k, v in event.data.items() if k not in hidden}}


def deltas(events: Sequence[RecordedEvent], tables: Collection[int] | None = None) -> list[tuple[str, int, Delta]]:
    """The feed's translator for tournaments (``tables``: the tournament ids
    watched): one ``state`` frame per event of a watched tournament's stream,
    sequenced by the stream's version (lane ``tournament``). The state is read
    once per tournament and batch (the latest: a client always ends with the
    state after the batch's last event)."""
    out: list[tuple[str, int, Delta]] = []
    states: dict[int, tuple[Tournament, dict[str, Any]] | None] = {}
    for event in events:
        if not event.stream_id.startswith(PREFIX):
            continue
        tournament_id = int(event.stream_id[len(PREFIX) :])
        if tables is not None and tournament_id not in tables:
            continue
        if tournament_id not in states:
            found = Tournament.objects.filter(pk=tournament_id).first()
            states[tournament_id] = None if found is None else (found, presenters.tournament_public_state(
                found, timezone.now()))  # fmt: skip
        known = states[tournament_id]
        if known is None:
            continue
        tournament, state = known
        frame = {"type": "state", "version": event.version, "event": public_event(event), "state": state}
        try:
            private = {
                player: encode({**frame, "state": {**state, "me": presenters.tournament_me(tournament, player)}})
                for player in concerned(event)
            }
        except Exception:  # an event of an unexpected shape: its public frame still goes (never stall the reader)
            log.exception("tournament feed: the players concerned by %s %s", event.stream_id, event.version)
            private = {}
        out.append((FAMILY, tournament_id, Delta(public=encode(frame), private=private, instead=True, lane=LANE,
                                                 position=event.version)))  # fmt: skip
    return out


register_translator(FAMILY, deltas)


def stream_version(tournament_id: int) -> int:
    found = Event.objects.filter(stream_id=et.tournament_stream(tournament_id)).aggregate(v=Max("version"))["v"]
    return int(found or 0)


def snapshot(tournament_id: int, viewer_id: int) -> tuple[dict[str, Any], dict[str, int]]:
    """The snapshot (the REST state and the stream version it reflects), read
    in one consistent transaction, and its mark in lane ``tournament``."""
    with consistent_read():
        version = stream_version(tournament_id)
        state = presenters.tournament_state(tournament_id=tournament_id, viewer_id=viewer_id)
    return {"type": "snapshot", "version": version, "state": state}, {LANE: version}


class TournamentConsumer(PokerSocket):
    """One websocket: one player following one tournament's state (the frames
    from the client: ``PokerSocket.receive_json``)."""

    feed_family = FAMILY
    model = Tournament
    url_key = "tournament_id"
    table_id: int  # the feed's key: the tournament id
    player_id: int

    async def connect(self) -> None:
        if await self.open(await authenticate_scope(self.scope)):
            await self.send_snapshot()

    async def disconnect(self, code: int) -> None:
        await self.stop_feed()

    async def read_snapshot(self) -> tuple[dict[str, Any], Mapping[str, int]]:
        return await database_sync_to_async(snapshot)(self.table_id, self.player_id)
