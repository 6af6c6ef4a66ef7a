"""Game recall for support: a round exactly as a player saw it, plus the cards
that stayed hidden from them (docs/compliance.md, "Game recall")."""

from __future__ import annotations

from typing import Any

from casino.errors import NotFound
from games.house.models import HouseRound
from games.house.realtime.presenters import game_history
from games.house.round.events import CARDS_DEALT
from games.house.store import round_stream
from ledger.services import read_stream


def recall(*, game_number: str, player_id: int | None) -> dict[str, Any]:
    """``as_seen``: the player's game history (the presenters' redaction, the
    same code that rendered it to the player); ``dealt``: every card dealt in
    the round, unredacted, from its ``house_round.cards_dealt`` event."""
    round_row = HouseRound.objects.filter(game_number=game_number).first()
    if round_row is None:
        raise NotFound(f"no round {game_number}", game_number=game_number)
    dealt = [e.data for e in read_stream(stream_id=round_stream(round_row.round_id)) if e.type == CARDS_DEALT]
    return {
        "game_number": game_number,
        "player_id": player_id,
        "as_seen": game_history(game_number=game_number, player_id=player_id),
        "dealt": dealt[0] if dealt else None,
    }
