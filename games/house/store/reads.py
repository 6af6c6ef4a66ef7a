"""Bulk reads beside the rounds' writes: the wallets a settlement pays, the
player streams' heads it appends onto, the tables' progressive pools (the
jackpot meter; the dealer's seeding), the wagers in play with their pending
holds (``verify_ledger``'s house check), and the forced decisions a player
still has pending (responsible gaming's ``in_play``).

None of these takes a lock or writes. ``wallets`` and
``player_heads_read_meanwhile`` run inside the dealer's settlement transaction
(the table and round rows locked for update: ``games.house.services.rounds``);
``wagers_and_pending_holds`` reads one snapshot in any transaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from uuid import UUID

from django.db import connection

from games.house.models import HouseRound, HouseTable
from games.house.round.state import PlayerState
from games.house.rules.registry import game
from games.house.store.rows import state_from_json
from games.house.store.streams import player_stream_prefix
from ledger.models import Account, AccountKind
from ledger.services.money import account_key
from ledger.services.postings import pipelined

# Each player row's stream head: the event at the row's stream version.
_PLAYER_HEADS = (
    "SELECT p.player_id, e.version, e.hash FROM games_playerround p JOIN ledger_event e "
    "ON e.stream_id = %s::text || p.player_id::text AND e.version = p.stream_version "
    "WHERE p.round_id = %s AND p.stream_version > 0"
)


@contextmanager
def player_heads_read_meanwhile(round_row: HouseRound) -> Iterator[dict[int, tuple[int, str]]]:
    """Each player stream's head of the round, ``{player: (version, hash)}``,
    read on the server while the block runs (PostgreSQL pipeline mode: the
    block must not query) and filled in when it ends, so a settlement appends
    without reading 10,000 heads after it (``StreamAppend.head_hash``). A head
    stands only for a row still at that version. Elsewhere it stays empty
    (heads are then read when appending)."""
    heads: dict[int, tuple[int, str]] = {}
    if connection.vendor != "postgresql":
        yield heads
        return
    with pipelined(), connection.cursor() as cursor:
        cursor.execute(_PLAYER_HEADS, [player_stream_prefix(round_row.round_id), round_row.pk])
        yield heads
        heads.update({int(player): (int(version), digest) for player, version, digest in cursor.fetchall()})


def wallets(player_ids: Sequence[int], currency: str) -> dict[int, tuple[int, int]]:
    """Each player's wallet account id and balance, in one query (accounts exist once they bet)."""
    keys = {f"wallet:player:{pid}:{currency}": pid for pid in player_ids}
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One array parameter: an IN list of 10,000 placeholders costs more to parse and plan than to run.
            cursor.execute("SELECT key, id, balance FROM ledger_account WHERE key = ANY(%s)", [list(keys)])
        else:
            cursor.execute(
                "SELECT key, id, balance FROM ledger_account WHERE key IN (%s)" % ", ".join(["%s"] * len(keys)),  # noqa: UP031
                list(keys),
            )
        return {keys[key]: (int(account), int(balance)) for key, account, balance in cursor.fetchall()}


def pool_owner(*, table_id: int, game_code: str, pool: str) -> str:
    """The owner of one progressive pool's ledger account (kind ``pool``) of a
    table of ``game_code``: ``table:{id}:{progressive wager}:{pool}``
    (``table:7:stax:star``). Accounts exist under these names, so the format
    never changes. Pools are the table's own: no two tables share one."""
    wager = game(game_code).progressive_wager
    if wager is None:
        raise ValueError(f"{game_code} has no progressive pools")
    return f"table:{table_id}:{wager}:{pool}"


def pool_balances(tables: Sequence[HouseTable]) -> dict[int, dict[str, int]]:
    """Table id -> {pool: balance} in the game's pool order, for each of
    ``tables`` that offers its game's progressive wager (STAX); the others are
    absent. One query for every table (a pool never funded reads 0); creates
    nothing, so it serves reads (the lobby, the table view)."""
    keys: dict[str, tuple[int, str]] = {}
    found: dict[int, dict[str, int]] = {}
    for table in tables:
        definition = game(table.game)
        if definition.progressive_wager is None or definition.progressive_wager not in table.limits:
            continue
        found[table.pk] = dict.fromkeys(definition.progressive_pools, 0)
        for pool in definition.progressive_pools:
            owner = pool_owner(table_id=table.pk, game_code=table.game, pool=pool)
            keys[account_key(AccountKind.POOL.value, owner, table.currency)] = (table.pk, pool)
    if keys:
        for key, balance in Account.objects.filter(key__in=list(keys)).values_list("key", "balance"):
            table_id, pool = keys[key]
            found[table_id][pool] = int(balance)
    return found


# verify_ledger's check of the wagers in play (games.house.services.verify): the
# player rounds not yet settled or voided and the pending holds opened in a
# round's player stream, in one statement, so one snapshot (a bet committing
# meanwhile cannot show its hold without its chip).
_WAGERS_AND_HOLDS = (
    "SELECT 'wager', p.id, r.round_id, p.player_id, CAST(p.state AS TEXT), NULL FROM games_playerround p "
    "JOIN games_houseround r ON r.id = p.round_id WHERE p.status = %s "
    "UNION ALL "
    "SELECT 'hold', h.opened_event_id, e.stream_id, NULL, CAST(h.id AS TEXT), h.amount FROM ledger_hold h "
    "JOIN ledger_event e ON e.id = h.opened_event_id WHERE h.status = %s AND e.stream_id LIKE %s"
)


@dataclass(frozen=True)
class WagerRow:
    """A player round whose wagers are in play (``PlayerRound`` status ``betting``)."""

    player_round_id: int
    round_id: str
    player: PlayerState


@dataclass(frozen=True)
class PendingHold:
    """A pending ledger hold opened by an event of a round's player stream."""

    hold_id: UUID
    amount: int
    stream_id: str
    opened_event_id: int


def wagers_and_pending_holds() -> tuple[list[WagerRow], list[PendingHold]]:
    """Every player round in play and every pending hold of a player stream, read
    in one snapshot; wagers in player round id order, holds in stream and id order."""
    with connection.cursor() as cursor:
        cursor.execute(_WAGERS_AND_HOLDS, ["betting", "pending", player_stream_prefix("%") + "%"])
        rows = cursor.fetchall()
    wagers = [
        WagerRow(row_id, round_id, state_from_json(player_id, json.loads(state)))
        for kind, row_id, round_id, player_id, state, _ in rows
        if kind == "wager"
    ]
    holds = [
        PendingHold(UUID(hold_id), int(amount), stream_id, event_id)
        for kind, event_id, stream_id, _, hold_id, amount in rows
        if kind == "hold"
    ]
    wagers.sort(key=lambda wager: wager.player_round_id)
    holds.sort(key=lambda hold: (hold.stream_id, hold.hold_id))
    return wagers, holds


# The player's part in every table's current round still open in the currency
# with a stake and no call/play or fold yet (a player's pending decisions are in
# the current rounds only: a table opens its next round once the last one is
# settled or voided). A few index probes: the partial index "playerround_undecided"
# holds only undecided rows, "one_player_round" one row per round and player.
_PENDING_DECISIONS = (
    "SELECT p.game, p.totals FROM games_housetable t "
    "JOIN games_houseround r ON r.round_id = t.current_round_id "
    "JOIN games_playerround p ON p.round_id = r.id AND p.player_id = %s "
    "WHERE r.status = 'open' AND r.currency = %s AND r.round_id <> %s AND p.staked > 0 AND NOT p.done_deciding"
)


def pending_forced_decisions(player_id: int, currency: str, excluding: str | None) -> int:
    """What the player's pending forced decisions in ``currency`` can still take
    from their wallet, summed over the open rounds (``excluding``: a round id
    left out, the one a bet being checked is in): per round the game's forced
    decision (``GameDefinition.forced_multiplier`` x Ante), which responsible
    gaming never refuses (``round.commands.limit_exempt``). The larger optional
    calls (UTH/Xtreme 4x, 3x, 2x) are not counted: each is checked when taken.
    Registered as the house family's ``casino.responsible_gaming.in_play``."""
    with connection.cursor() as cursor:
        cursor.execute(_PENDING_DECISIONS, [player_id, currency, excluding or ""])
        found = cursor.fetchall()
    total = 0
    for code, totals in found:
        spots = json.loads(totals) if isinstance(totals, str | bytes) else totals or {}
        total += game(code).forced_multiplier * int(spots.get("ante", 0))
    return total
