"""This process's memory of round and player states, so the bet and decision
paths neither replay the round nor parse the player's row on every command.

Nothing here writes to the database. ``load_round_at`` replays (no lock) when
it has not seen the version; ``remember_player(s)`` store only when the
caller's transaction commits (``transaction.on_commit``), so a rolled-back
state is never served. The caches are shared by the HTTP pool's threads.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from games.house.round.state import PlayerState, RoundState
from games.house.store.streams import load_round

# Round states by (round id, stream version, database incarnation): events
# never change, so a state replayed at a version is that version's state for
# good. The bet and decision paths read the version from the (share-locked)
# round row and replay only when this process has not seen it yet: once per
# round phase, not per bet. The incarnation (PostgreSQL's
# ``pg_postmaster_start_time()``, read by the same query) guards against a
# database that lost commits this process saw: a failover to a replica behind,
# a restore or a crash both start another server, where a remembered version
# could be written again with other content.
_ROUND_CACHE: dict[tuple[str, int, object], RoundState] = {}
_ROUND_CACHE_SIZE = 64
# Both caches are shared by the HTTP pool's threads (casino.http): evicting and
# adding happen under this lock; reads need none.
_CACHES_LOCK = threading.Lock()


def _put(cache: dict[Any, Any], key: Any, value: Any, size: int) -> None:
    with _CACHES_LOCK:
        if key not in cache and len(cache) >= size:
            cache.pop(next(iter(cache)))
        cache[key] = value


def load_round_at(round_id: str, version: int, incarnation: object = None) -> RoundState:
    """The round's state at ``version`` (the round row's ``stream_version``), from
    this process's cache or replayed. A replay that finds another version (the row
    and the stream disagree) is returned as read and not cached. ``incarnation``:
    the database server's start time when the caller read it (see above)."""
    key = (round_id, version, incarnation)
    state = _ROUND_CACHE.get(key)
    if state is None:
        state = load_round(round_id)
        if state.version == version:
            _put(_ROUND_CACHE, key, state, _ROUND_CACHE_SIZE)
    return state


@dataclass(frozen=True)
class KnownPlayer:
    """A player's state as this process last committed it at a table."""

    round_id: str
    version: int
    incarnation: object  # the database server's start time (see ``_ROUND_CACHE``)
    state: PlayerState


# Player states by (table id, player id), as committed. ``remember_player``
# stores on commit only, so a rolled-back state is never served, and a
# version's state never changes once committed (in the same incarnation). The
# bet and decision paths skip reading and parsing the player's projected state
# when this process has its current version: a player who clicks 25 chips onto
# a spot no longer has each chip re-read every chip before it.
_PLAYER_CACHE: dict[tuple[int, int], KnownPlayer] = {}
_PLAYER_CACHE_SIZE = 4096


def known_player(table_id: int, player_id: int) -> KnownPlayer | None:
    """This process's last committed state of the player at the table."""
    return _PLAYER_CACHE.get((table_id, player_id))


def remember_player(table_id: int, round_id: str, state: PlayerState, incarnation: object) -> None:
    """Remember ``state`` (at ``state.version``) once the current transaction commits."""
    known = KnownPlayer(round_id, state.version, incarnation, state)

    def remember() -> None:
        _put(_PLAYER_CACHE, (table_id, state.player_id), known, _PLAYER_CACHE_SIZE)

    transaction.on_commit(remember)


def remember_players(table_id: int, round_id: str, states: Sequence[tuple[PlayerState, object]]) -> None:
    """``remember_player`` for many ``(state, incarnation)``: one commit hook, not one per player."""
    known = [KnownPlayer(round_id, state.version, incarnation, state) for state, incarnation in states]

    def remember() -> None:
        for entry in known:
            _put(_PLAYER_CACHE, (table_id, entry.state.player_id), entry, _PLAYER_CACHE_SIZE)

    if known:
        transaction.on_commit(remember)
