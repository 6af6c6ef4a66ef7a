"""The player-projection rows (``PlayerRound``): their state document, what is
derived from the state (``project_player``, the one place), and the bulk SQL
that reads and writes them.

Shared by the commit of every round step (``games.house.store.commit``), the
player-round projector (``games.house.projectors.PlayerRoundProjector``: its
``fold`` derives the rows, its ``write`` saves them) and the player commands'
portable path. Contracts: the reads take no lock (the dealer's step reads
under its lock on the table and round rows; the projector reads what its
caller holds); ``save_rows`` runs inside the caller's transaction, on rows the
caller holds locked (the dealer's round lock, or the command's ``FOR UPDATE``
on its own row), and writes only the projected fields.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from games.house.models import HouseRound, PlayerRound
from games.house.round.state import Chip, PlayerState
from games.house.rules.definitions import DecisionTaken
from games.house.rules.registry import game as game_definition


def state_to_json(state: PlayerState) -> dict[str, Any]:
    return {"chips": state.chip_rows(), **_fields_but_chips(state)}


def _fields_but_chips(state: PlayerState) -> dict[str, Any]:
    return {
        "doubled": state.doubled,
        "decisions": [[d.street, d.option, d.auto] for d in state.decisions],
        "call_amount": state.call_amount,
        "call_hold_id": state.call_hold_id,
        "folded": state.folded,
        "settled": state.settled,
        "voided": state.voided,
        "returned": state.returned,
        "version": state.version,
        "declined": state.declined,
    }


def state_text(state: PlayerState) -> str:
    """``json.dumps(state_to_json(state))``'s JSON value, the chips' text kept by
    the state (``PlayerState.chip_texts``): a player's hundredth chip is not
    the hundredth encoding of their first."""
    return '{"chips":[' + ",".join(state.chip_texts()) + "]," + json.dumps(_fields_but_chips(state))[1:]


def state_from_json(player_id: int, data: Mapping[str, Any]) -> PlayerState:
    if not data:
        return PlayerState(player_id)
    return PlayerState(
        player_id=player_id,
        chips=tuple(Chip(s, a, h, dict(auto)) for s, a, h, auto in data["chips"]),
        doubled=data["doubled"],
        decisions=tuple(DecisionTaken(s, o, a) for s, o, a in data["decisions"]),
        call_amount=data["call_amount"],
        call_hold_id=data["call_hold_id"],
        folded=data["folded"],
        settled=data["settled"],
        voided=data["voided"],
        returned=data["returned"],
        version=data["version"],
        declined=data.get("declined", False),
    )


@dataclass(slots=True)
class PlayerRow:
    """A round's player-projection row as the dealer's steps read and write it:
    plain values, not an ORM instance (a showdown loads thousands). ``loaded_state``
    is ``state`` as read, so a bulk write sends only what changed in it; ``totals``
    is not read (empty) until ``project_player`` derives it from the state."""

    pk: int
    player_id: int
    game: str
    stream_version: int
    state: dict[str, Any]
    totals: dict[str, Any]
    staked: int
    last_street: str
    done_deciding: bool
    returned: int
    net: int
    status: str
    settled_at: datetime | None
    balance_before: int | None
    balance_after: int | None
    loaded_state: dict[str, Any]


Row = PlayerRound | PlayerRow

# Not ``totals``: ``project_player`` recomputes them from the state before any write.
_ROW_COLUMNS = (
    "id, player_id, game, stream_version, state, staked, last_street, done_deciding, returned, net, "
    "status, settled_at, balance_before, balance_after"
)


def load_players(round_row: HouseRound) -> dict[int, PlayerRow]:
    """Every player row of the round, by player id, in one query."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {_ROW_COLUMNS} FROM games_playerround WHERE round_id = %s", [round_row.pk])
        return _player_rows(cursor.fetchall())


def load_player_rows(round_row: HouseRound, player_ids: Sequence[int]) -> dict[int, PlayerRow]:
    """The rows of ``player_ids`` in the round (those that exist), by player id, in one query."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"SELECT {_ROW_COLUMNS} FROM games_playerround WHERE round_id = %s AND player_id = ANY(%s)",
                           [round_row.pk, list(player_ids)])  # fmt: skip
        else:
            marks = ", ".join(["%s"] * len(player_ids))
            cursor.execute(f"SELECT {_ROW_COLUMNS} FROM games_playerround WHERE round_id = %s "
                           f"AND player_id IN ({marks})", [round_row.pk, *player_ids])  # fmt: skip
        return _player_rows(cursor.fetchall())


def _player_rows(fetched: Sequence[Sequence[Any]]) -> dict[int, PlayerRow]:
    rows = {}
    for pk, player, game, version, state, *scalars in fetched:
        # PostgreSQL's jsonb arrives decoded; SQLite's JSON as text.
        state = state if isinstance(state, dict) else json.loads(state)
        staked, street, done, returned, net, status, settled_at, before, after = scalars
        rows[player] = PlayerRow(pk, player, game, version, state, {}, staked, street, done, returned, net,
                                 status, settled_at, before, after, loaded_state=state)  # fmt: skip
    return rows


PROJECTED_FIELDS = [
    "state",
    "stream_version",
    "totals",
    "staked",
    "last_street",
    "done_deciding",
    "returned",
    "net",
    "status",
    "settled_at",
    "balance_before",
    "balance_after",
]


def project_player(row: Row, player: PlayerState, now: datetime) -> Row:
    row.state = state_to_json(player)
    row.stream_version = player.version
    totals = player.totals()
    if player.call_amount:
        totals[game_definition(row.game).decision_wager] = player.call_amount
    row.totals = totals
    row.staked = player.staked
    row.last_street = player.decisions[-1].street if player.decisions else ""
    row.done_deciding = player.done_deciding
    if player.declined:
        row.status = "declined"
        row.settled_at = now
    if player.settled or player.voided:
        row.returned = player.returned
        row.net = player.returned - player.staked
        row.status = "voided" if player.voided else "settled"
        row.settled_at = now
    return row


_JSON_FIELDS = {"state", "totals"}


def save_rows(rows: Sequence[Row]) -> None:
    """Write the projected fields of ``rows``: one pipelined ``executemany``
    (Django's ``bulk_update`` builds a CASE per field and row, far slower)."""
    if not rows:
        return
    if connection.vendor == "postgresql" and len(rows) > 1:
        _save_rows_recordset(rows)
        return
    cast = "::jsonb" if connection.vendor == "postgresql" else ""
    assignments = ", ".join(f"{name} = %s{cast if name in _JSON_FIELDS else ''}" for name in PROJECTED_FIELDS)
    params = [
        [
            *(
                json.dumps(getattr(row, name)) if name in _JSON_FIELDS else _adapt(getattr(row, name))
                for name in PROJECTED_FIELDS
            ),
            row.pk,
        ]
        for row in rows
    ]
    with connection.cursor() as cursor:
        cursor.executemany(f"UPDATE games_playerround SET {assignments} WHERE id = %s", params)


_PG_TYPES = {
    "state": "jsonb",
    "stream_version": "int",
    "totals": "jsonb",
    "staked": "bigint",
    "last_street": "text",
    "done_deciding": "bool",
    "returned": "bigint",
    "net": "bigint",
    "status": "text",
    "settled_at": "timestamptz",
    "balance_before": "bigint",
    "balance_after": "bigint",
}


def _save_rows_recordset(rows: Sequence[Row]) -> None:
    """PostgreSQL: every row in one ``UPDATE ... FROM jsonb_to_recordset(...)``: the
    rows travel as one JSON document (Python's C encoder, PostgreSQL's C parser),
    far cheaper for thousands of rows than per-row statements or text arrays.
    ``state`` travels as the keys that changed since the row was loaded, merged
    into the stored document (``state_to_json`` always writes the same keys)."""
    assignments = ", ".join(
        "state = p.state || v.state" if name == "state" else f"{name} = v.{name}" for name in PROJECTED_FIELDS
    )
    columns = ", ".join(f"{name} {_PG_TYPES[name]}" for name in PROJECTED_FIELDS)
    document = json.dumps(
        [
            {
                "id": row.pk,
                **{name: getattr(row, name) for name in PROJECTED_FIELDS if name not in ("settled_at", "state")},
                "state": _changed(row),
                "settled_at": row.settled_at.isoformat() if row.settled_at else None,
            }
            for row in rows
        ]
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE games_playerround p SET {assignments} "
            f"FROM jsonb_to_recordset(%s::jsonb) AS v(id bigint, {columns}) WHERE p.id = v.id",
            [document],
        )


def _changed(row: Row) -> dict[str, Any]:
    """The top-level keys of ``row.state`` that differ from the state as loaded
    (all of them for an ORM row, which keeps no copy)."""
    if not isinstance(row, PlayerRow):
        return row.state
    loaded = row.loaded_state
    return {key: value for key, value in row.state.items() if loaded.get(key) != value}


def _adapt(value: Any) -> Any:
    return connection.ops.adapt_datetimefield_value(value) if isinstance(value, datetime) else value
