"""``verify_ledger``'s check of the house rounds (registered by ``games.apps``):
the pending ledger holds of every round in play are exactly the wagers its
player projections say are in play (docs/rounds.md, "Money")."""

from __future__ import annotations

from collections import defaultdict
from uuid import UUID

from games.house.store.reads import PendingHold, wagers_and_pending_holds
from games.house.store.streams import player_stream
from ledger.services.verify import Problem


def _first_difference(wagers: dict[UUID, int], pending: dict[UUID, PendingHold]) -> str | None:
    for hold_id in sorted(wagers.keys() | pending.keys()):
        wager, hold = wagers.get(hold_id), pending.get(hold_id)
        if hold is None:
            return f"the wager of hold {hold_id} ({wager}) has no pending hold"
        if wager is None:
            return f"hold {hold_id} ({hold.amount}, opened by event {hold.opened_event_id}) is pending for no wager"
        if wager != hold.amount:
            return f"hold {hold_id} is pending for {hold.amount}, its wager is {wager}"
    return None


def check_round_holds() -> list[Problem]:
    """One problem per player round in play whose pending holds differ from its
    wagers (naming the first differing hold), in player round id order, then one
    per pending hold of a player stream with no player round in play (settled,
    voided or missing)."""
    wagers, holds = wagers_and_pending_holds()
    pending: dict[str, dict[UUID, PendingHold]] = defaultdict(dict)
    for hold in holds:
        pending[hold.stream_id][hold.hold_id] = hold
    problems: list[Problem] = []
    for row in wagers:
        player = row.player.player_id
        in_play = {UUID(hold_id): amount for hold_id, amount in row.player.holds_in_play().items()}
        difference = _first_difference(in_play, pending.pop(player_stream(row.round_id, player), {}))
        if difference is not None:
            where = f"house player round {row.player_round_id} (round {row.round_id}, player {player})"
            problems.append(Problem("house_hold", f"{where}: {difference}"))
    for stream_id, stray in sorted(pending.items()):
        for hold in stray.values():
            problems.append(
                Problem("house_hold", f"hold {hold.hold_id} ({hold.amount}) is pending in {stream_id}, "
                                      "which has no wagers in play (settled, voided or no player round)")
            )  # fmt: skip
    return problems
