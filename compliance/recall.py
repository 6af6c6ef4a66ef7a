"""Game recall for support: a round exactly as a player saw it, and the deal
as staff may see it now (docs/compliance.md, "Game recall")."""

from __future__ import annotations

from typing import Any

from casino.errors import NotFound
from games.house.models import HouseRound
from games.house.realtime.presenters import game_history
from games.house.round.events import CARDS_DEALT
from games.house.store import round_stream
from ledger.confidential import staff_reader
from ledger.services import read_stream


def recall(*, game_number: str, player_id: int | None) -> dict[str, Any]:
    """``as_seen``: the player's game history (the presenters' redaction, the
    same code that rendered it to the player; with no player, a spectator's);
    ``dealt``: the round's ``house_round.cards_dealt`` as staff may see it now
    (``ledger.confidential.staff_reader``): while the round is in play what a
    spectator at the table was shown (no dealer card before the reveal, no
    board card before it is shown), once it is closed the event as stored."""
    round_row = HouseRound.objects.filter(game_number=game_number).first()
    if round_row is None:
        raise NotFound(f"no round {game_number}", game_number=game_number)
    stream = round_stream(round_row.round_id)
    shown = staff_reader(stream)
    dealt = [shown(e.type, e.data) for e in read_stream(stream_id=stream) if e.type == CARDS_DEALT]
    return {
        "game_number": game_number,
        "player_id": player_id,
        "as_seen": game_history(game_number=game_number, player_id=player_id),
        "dealt": dealt[0] if dealt else None,
    }
