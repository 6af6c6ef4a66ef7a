"""The names of a house round's streams, the time every append records, and
the round's state replayed from its stream.

Streams: ``round-{round_id}`` (the dealer's events) and
``round-{round_id}-player-{player_id}`` (each player's). Neither function here
writes; ``load_round`` reads the round stream in whatever transaction the
caller is in (no lock: events never change once appended).
"""

from __future__ import annotations

from datetime import datetime

from games.house.round.state import RoundState, replay_round
from ledger.services import read_stream


def round_stream(round_id: str) -> str:
    return f"round-{round_id}"


def player_stream(round_id: str, player_id: int) -> str:
    return f"{player_stream_prefix(round_id)}{player_id}"


def player_stream_prefix(round_id: str) -> str:
    """What every player stream of the round starts with (the player id follows)."""
    return f"round-{round_id}-player-"


def iso(moment: datetime) -> str:
    """A step's time as its events and metadata record it (``at``)."""
    return moment.isoformat()


def load_round(round_id: str) -> RoundState:
    """Replay the round stream (a dozen events at most)."""
    return replay_round(read_stream(stream_id=round_stream(round_id)))
