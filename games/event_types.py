"""House-banked round event types (catalogue: docs/events.md, "House-banked round")."""

from __future__ import annotations

from games.domain.house_round import PLAYER_EVENT_TYPES, ROUND_EVENT_TYPES
from ledger.upcasting import register_event_type

POOL_SEEDED = "house_pool.seeded"

for _type in (*ROUND_EVENT_TYPES, *PLAYER_EVENT_TYPES, POOL_SEEDED):
    register_event_type(_type, 1)
