"""House tables' part of the process's feed (``games.tables.feed``; docs/websocket.md,
"Delivery"): which stored events a house table's watchers are told, redacted
by the ONE presenter (``games.house.realtime.presenters.public_delta`` /
``private_delta``), each public frame JSON-encoded once for every watcher.

The events come from the process's one reader of the event store
(``games.tables.feed.LogReader``: the safe global log, woken by NOTIFY on round-stream
commits); ``deltas`` is the translator it calls for every batch.

Chat and ``player.notice`` messages are not events: they travel on the channel
layer directly (groups ``chat-<table>`` and ``player-<id>``), which reaches every
process on Redis and the one process of the embedded default.
"""

from __future__ import annotations

import asyncio
import random
import weakref
from collections.abc import Collection, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from games.tables.feed import NOTIFY_CHANNEL, Delta, encode, register_translator
from ledger.services.events import RecordedEvent

FAMILY = "house"
# An audience: (table id, player id) for one player's private delta, (table id, None) for everyone.
Audience = tuple[int, int | None]


def chat_group(table_id: int) -> str:
    """Deployment-wide chat group of a table (channel layer, every process)."""
    return f"chat-{table_id}"


def notice_group(player_id: int) -> str:
    """Deployment-wide group for ``player.notice`` messages (e.g. reality checks)."""
    return f"player-{player_id}"


# A Redis layer's pool raises when every connection is busy: thousands of
# websockets joining or leaving at once (a network blip) outnumber it. Membership
# changes therefore take at most half the pool at a time (per event loop), and a
# change that still finds it exhausted (other traffic) retries after a jittered
# backoff.
_POOL_RETRY_DELAYS = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2)
_MEMBERSHIP_SLOTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def _membership_slots(layer: Any) -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    slots = _MEMBERSHIP_SLOTS.get(loop)
    if slots is None:
        hosts = getattr(layer, "hosts", None) or [{}]
        pool = int(hosts[0].get("max_connections") or 100) if isinstance(hosts[0], dict) else 100
        slots = _MEMBERSHIP_SLOTS[loop] = asyncio.Semaphore(max(1, pool // 2))
    return slots


async def change_membership(layer: Any, action: str, group: str, channel: str) -> None:
    """``layer.group_add`` or ``layer.group_discard`` (``action``: ``add`` or
    ``discard``) without exhausting the layer's connection pool: bounded
    concurrency, then retries while the pool is exhausted; the last failure is raised."""
    from redis.exceptions import MaxConnectionsError

    change = layer.group_add if action == "add" else layer.group_discard
    async with _membership_slots(layer):
        for delay in (*_POOL_RETRY_DELAYS, None):
            try:
                await change(group, channel)
                return
            except MaxConnectionsError:
                if delay is None:
                    raise
                await asyncio.sleep(delay * (0.5 + random.random()))


class RoundInfo:
    """What the relay caches per round: its table, hand mode, the table's
    public sequence number just before the round's first event, and the chip
    set the round takes (its ``house_round.opened``'s, else the table's)."""

    __slots__ = ("base_seq", "chips", "currency", "hand_mode", "table_id")

    def __init__(self, table_id: int, hand_mode: str, base_seq: int, currency: str, chips: list[int]) -> None:
        self.table_id, self.hand_mode, self.base_seq, self.currency = table_id, hand_mode, base_seq, currency
        self.chips = chips


_rounds: dict[str, RoundInfo] = {}


def round_info(round_id: str) -> RoundInfo | None:
    """The round's table and base sequence. The table's ``public_seq`` counts every
    round-stream event at the table, so an event's table sequence is the total of
    the earlier rounds' stream versions plus its own version (gap-free, the same
    number the snapshot's ``public_seq`` carries)."""
    info = _rounds.get(round_id)
    if info is None:
        from django.db.models import Sum

        from games.house.models import HouseRound

        row = HouseRound.objects.filter(round_id=round_id).values("pk", "table_id", "hand_mode", "currency").first()
        if row is None:
            return None
        earlier = HouseRound.objects.filter(table_id=row["table_id"], pk__lt=row["pk"])
        base = earlier.aggregate(total=Sum("stream_version"))["total"] or 0
        info = _rounds[round_id] = RoundInfo(
            row["table_id"], row["hand_mode"], int(base), row["currency"], _round_chips(round_id, row["table_id"])
        )
        if len(_rounds) > 10_000:  # old rounds are never needed again
            _rounds.pop(next(iter(_rounds)))
    return info


def _round_chips(round_id: str, table_id: int) -> list[int]:
    """The chips the round takes: its opening event's set, or (a round opened
    before chip sets) the table's."""
    from games.house.models import HouseTable
    from games.house.store.streams import round_stream
    from ledger.services import read_stream

    opened = read_stream(stream_id=round_stream(round_id), limit=1)
    chips = opened[0].data.get("chips") if opened else None
    if chips:
        return [int(chip) for chip in chips]
    return list(HouseTable.objects.filter(pk=table_id).values_list("chips", flat=True).first() or [])


def parse_stream(stream_id: str) -> tuple[str, int | None] | None:
    """``round-<id>`` -> (id, None); ``round-<id>-player-<pid>`` -> (id, pid); else None."""
    if not stream_id.startswith("round-"):
        return None
    rest = stream_id[len("round-") :]
    round_id, sep, player = rest.rpartition("-player-")
    if sep and player.isdigit():
        return round_id, int(player)
    return rest, None


def messages_for(event: RecordedEvent, tables: Collection[int] | None = None) -> list[tuple[Audience, dict[str, Any]]]:
    """The (audience, message) pairs one stored event turns into, already redacted
    by the presenter (``games.house.realtime.presenters``); none for a table
    outside ``tables`` (``None``: every table)."""
    from games.house.realtime import presenters
    from games.house.round.events import CARDS_DEALT, WINDOW_OPENED

    parsed = parse_stream(event.stream_id)
    if parsed is None:
        return []
    round_id, player_id = parsed
    info = round_info(round_id)
    if info is None or (tables is not None and info.table_id not in tables):
        return []
    out: list[tuple[Audience, dict[str, Any]]] = []
    context = {"table_id": info.table_id, "round_id": round_id}
    if player_id is None:
        public = presenters.public_delta(event)
        if public is None:
            return []
        seq = info.base_seq + event.version
        out.append(((info.table_id, None), {"type": "table.delta", "delta": {**public, **context, "seq": seq}}))
        if event.type == CARDS_DEALT and info.hand_mode == "per_seat":
            # Each seat's own hole cards, to that player only.
            owners = {c["to"] for c in event.data["cards"] if str(c["to"]).startswith("player:")}
            for owner in sorted(owners):
                pid = int(owner.split(":", 1)[1])
                own = presenters.public_delta(event, viewer_id=pid)
                out.append(((info.table_id, pid), private(own, context, pid)))
        elif event.type == WINDOW_OPENED:
            for pid, options, balance in offers(round_id):
                offer = {"type": "decision.offered", "data": {**event.data, "options": options, "balance": balance}}
                out.append(((info.table_id, pid), private(offer, context, pid)))
        return out
    delta = presenters.private_delta(event)
    if delta is not None:
        context["currency"] = info.currency
        out.append(((info.table_id, player_id), private(delta, context, player_id)))
    return out


def wallet_balances(players: Iterable[tuple[int, str]]) -> dict[tuple[int, str], int]:
    """(player, currency) -> wallet balance, in one query by the accounts' unique key."""
    from ledger.models import Account
    from ledger.services.money import account_key

    keys = {account_key("wallet", f"player:{pid}", currency): (pid, currency) for pid, currency in players}
    if not keys:
        return {}
    rows = Account.objects.filter(key__in=list(keys)).values_list("key", "balance")
    return {keys[key]: int(balance) for key, balance in rows}


def add_balances(messages: list[tuple[Audience, dict[str, Any]]]) -> None:
    """Give each player-stream delta (those with a ``currency``) the player's
    wallet balance as the relay sends it: one query per batch; it may already
    include later movements, e.g. at another table. And the chips of the round
    that balance covers (``covered_chips``, seed 000:179: only those are enabled)."""
    from games.house.rules.table_config import covered_chips

    wanted = [m["delta"] for _, m in messages if m["type"] == "player.delta" and "currency" in m["delta"]]
    balances = wallet_balances({(delta["player_id"], delta["currency"]) for delta in wanted})
    for delta in wanted:
        delta["balance"] = balance = balances.get((delta["player_id"], delta["currency"]), 0)
        info = _rounds.get(delta["round_id"])
        delta["covered_chips"] = covered_chips(info.chips if info is not None else [], balance)


def private(delta: Any, context: dict[str, Any], player_id: int) -> dict[str, Any]:
    return {"type": "player.delta", "delta": {**delta, **context, "player_id": player_id}}


def offers(round_id: str) -> list[tuple[int, list[str], int]]:
    """(player, options offered now, wallet balance) for every participant of the
    round, in two queries (a decision window can have 10,000 participants)."""
    from casino.responsible_gaming import wager_allowances
    from games.house.models import PlayerRound
    from games.house.round.commands import offered_options
    from games.house.store.rows import state_from_json
    from games.house.store.streams import load_round

    state = load_round(round_id)
    if state.config is None:
        return []
    # Offered iff a decision sent now would be accepted: past the deadline, none.
    moment = datetime.now(UTC)
    now = moment.isoformat()
    rows = list(PlayerRound.objects.filter(round__round_id=round_id).values_list("player_id", "state"))
    currency = state.config.currency
    balances = wallet_balances((pid, currency) for pid, _ in rows)
    # Responsible gaming: one read of the rows of those who have settings.
    allowances = wager_allowances(player_ids=[pid for pid, _ in rows], currency=currency, now=moment,
                                  excluding=state.config.round_id)  # fmt: skip
    result = []
    for pid, data in rows:
        balance = balances.get((pid, currency), 0)
        options = offered_options(state, state_from_json(pid, data), balance=balance, now=now,
                                  allowance=allowances.get(pid))  # fmt: skip
        if options:
            result.append((pid, options, balance))
    return result


def as_message(kind: str, delta: dict[str, Any]) -> dict[str, Any]:
    """A delta as the client sees it: ``type`` is the message kind, ``event`` the event type."""
    body = {k: v for k, v in delta.items() if k != "type"}
    return {"type": kind, "event": delta["type"], **body}


def deltas(events: Sequence[RecordedEvent], tables: Collection[int] | None = None) -> list[tuple[str, int, Delta]]:
    """The feed's translator for house tables (``tables``: only these): public
    deltas sequenced by the table's ``seq`` (lane ``seq``), private ones to
    their player only."""
    messages: list[tuple[Audience, dict[str, Any]]] = []
    for event in events:
        messages.extend(messages_for(event, tables))
    add_balances(messages)
    out: list[tuple[str, int, Delta]] = []
    for (table_id, player_id), message in messages:
        if player_id is None:
            delta = message["delta"]
            text = encode(as_message("delta", delta))
            out.append((FAMILY, table_id, Delta(public=text, lane="seq", position=int(delta["seq"]))))
        else:
            out.append((FAMILY, table_id, Delta(private={player_id: encode(as_message("private", message["delta"]))})))
    return out


register_translator(FAMILY, deltas)

__all__ = ["FAMILY", "NOTIFY_CHANNEL", "as_message", "change_membership", "chat_group", "deltas", "notice_group"]
