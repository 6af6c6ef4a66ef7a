"""The games app's models: each wing defines its own, this module gathers them for Django."""

from __future__ import annotations

from games.house.models import HandMode, HouseRound, HouseTable, PlayerRound, TableConfigVersion, TableSeat
from games.poker.models import PokerHand, PokerHandPlayer, PokerSeat, PokerTable, PokerVariant, RakeMode
from games.poker.tournament.models import (
    CancelPolicy,
    EntryState,
    Tournament,
    TournamentEntry,
    TournamentKind,
    TournamentState,
    TournamentTemplate,
)
from games.tables.chat import ChatMessage
from games.tables.dealkeys import DealKey
from games.tables.presence import TablePresence

__all__ = [
    "CancelPolicy",
    "ChatMessage",
    "DealKey",
    "EntryState",
    "HandMode",
    "HouseRound",
    "HouseTable",
    "PlayerRound",
    "PokerHand",
    "PokerHandPlayer",
    "PokerSeat",
    "PokerTable",
    "PokerVariant",
    "RakeMode",
    "TableConfigVersion",
    "TablePresence",
    "TableSeat",
    "Tournament",
    "TournamentEntry",
    "TournamentKind",
    "TournamentState",
    "TournamentTemplate",
]
