"""Issue 21 on poker tables (``ws/poker/<id>/``, the same ``games.tables.feed`` with
the poker translator and resume token): against a real uvicorn process, a
watcher that never reads is closed with 4408 while another gets every hand
event; a resume token behind the table resumes with a snapshot and no gap, one
the table has not reached (or malformed) is answered by ``bad_resume_seq``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone

from casino.errors import DomainError
from games.benchmarks.live import asgi_server
from games.poker import services
from games.poker.models import PokerHand, PokerTable
from tests.feed_clients import Reader, connect, drain, flood, gap_free, stalled, ws_url
from tests.poker.tables import advance, key, make_player, make_table
from tests.poker.test_tables import AA_VS_KK
from tests.ws_auth import token_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
FRAME_LIMIT = 64 * 1024  # the floods ask for 32 kB pongs
SERVER_ENV = {
    "CASINO_WS_SEND_TIMEOUT_SECONDS": "1",
    "CASINO_WS_OUTBOX_FRAMES": "64",
    "CASINO_WS_CLOSE_GRACE_SECONDS": "30",
    # The floods here test the outbound side (several MB of large pongs): the
    # inbound limits (tests/house/live/test_limits.py) are opened wide.
    "CASINO_WS_MAX_FRAME_BYTES": str(FRAME_LIMIT),
    "CASINO_WS_RATE": "100000",
    "CASINO_WS_BURST": "100000",
    "CASINO_WS_FLOOD_CLOSE": "100000",
}


@pytest.fixture(scope="module")
def server(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    with (
        django_db_blocker.unblock(),
        override_settings(CASINO_WS_MAX_FRAME_BYTES=FRAME_LIMIT),
        asgi_server(extra_env=SERVER_ENV) as base,
    ):
        yield base


def seated_table() -> tuple[PokerTable, list[int]]:
    """Two players seated; long pauses, so only the test moves the table."""
    table = make_table(between_hands_seconds=3600, turn_seconds=3600)
    players = [make_player() for _ in range(2)]
    for seat, player in enumerate(players, start=1):
        services.sit_down(table_id=table.pk, player_id=player, seat_number=seat, buy_in=1000,
                          idempotency_key=key("sit"), now=timezone.now())  # fmt: skip
    return table, players


def fold(table: PokerTable, players: list[int]) -> None:
    """Whoever's turn it is folds: the hand ends."""
    for player in players:
        with contextlib.suppress(DomainError):
            services.act(table_id=table.pk, player_id=player, action="fold", amount=None,
                         idempotency_key=key("fold"), now=timezone.now())  # fmt: skip
            return
    raise AssertionError("nobody could fold")


def hand_versions(reader: Reader) -> list[int]:
    return [frame["version"] for _, frame in reader.frames if frame["type"] in ("delta", "private")]


async def until_hand_version(reader: Reader, version: int, timeout: float = 10) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while max(hand_versions(reader), default=0) < version:
        assert loop.time() < deadline, (version, hand_versions(reader))
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.3)  # a duplicate would arrive meanwhile


def latest_hand(table: PokerTable) -> PokerHand:
    return PokerHand.objects.filter(table_id=table.pk).order_by("-hand_number").first()  # type: ignore[return-value]


def test_a_poker_watcher_that_never_reads_is_closed_with_4408_and_stalls_nobody(server: str) -> None:
    table, players = seated_table()
    watcher, sleeper = (token_for(make_player()) for _ in range(2))
    path = f"/ws/poker/{table.pk}/"

    async def scenario() -> tuple[Reader, tuple[list[dict[str, Any]], int | None], int]:
        reader = Reader(await connect(server, ws_url(server, path, watcher)))
        await reader.first("snapshot")
        slow = await stalled(server, ws_url(server, path, sleeper))
        await flood(slow)  # several MB it never reads: outbox overflow, 4408
        await asyncio.to_thread(advance, table, cards=AA_VS_KK)  # the dealer deals
        await asyncio.to_thread(fold, table, players)
        hand = await asyncio.to_thread(latest_hand, table)
        await until_hand_version(reader, hand.stream_version)
        slow_end = await drain(slow)
        await reader.stop()
        return reader, slow_end, hand.stream_version

    reader, (slow_frames, slow_code), last = asyncio.run(scenario())
    assert slow_code == 4408, slow_code
    pongs = [int(frame["nonce"].split(":")[0]) for frame in slow_frames if frame["type"] == "pong"]
    assert pongs == list(range(len(pongs)))  # a gap-free prefix of what it asked for
    assert len(pongs) < 250
    # The other watcher got every event of the hand, once, in order.
    assert hand_versions(reader) == list(range(1, last + 1)), hand_versions(reader)


def test_poker_resume_with_a_stale_a_future_and_a_malformed_token(server: str) -> None:
    table, players = seated_table()
    token = token_for(make_player())
    path = f"/ws/poker/{table.pk}/"

    async def scenario() -> tuple[str, Reader, list[list[dict[str, Any]]], int]:
        first = Reader(await connect(server, ws_url(server, path, token)))
        old = (await first.first("snapshot"))["seq"]
        await first.stop()
        await asyncio.to_thread(advance, table, cards=AA_VS_KK)  # missed while away
        resumed = Reader(await connect(server, ws_url(server, path, token, since=old)))
        await resumed.first("snapshot")
        await asyncio.to_thread(fold, table, players)
        hand = await asyncio.to_thread(latest_hand, table)
        await until_hand_version(resumed, hand.stream_version)
        await resumed.stop()
        table_version = int(old.split(":")[0])
        bad = []
        for since in (f"{table_version + 5}:0:", f"{table_version}:{hand.stream_version + 5}:{hand.hand_id}",
                      f"{table_version}:1:no-such-hand", "abc"):  # fmt: skip
            reader = Reader(await connect(server, ws_url(server, path, token, since=since)))
            await reader.first("snapshot")
            await reader.stop()
            bad.append([frame for _, frame in reader.frames])
        return old, resumed, bad, hand.stream_version

    old, resumed, bad, last = asyncio.run(scenario())
    kinds = [frame["type"] for _, frame in resumed.frames]
    assert kinds[0] == "snapshot", kinds  # a stale token is no error
    assert not resumed.of("error")
    snapshot = resumed.of("snapshot")[0]
    assert snapshot["seq"] != old
    assert snapshot["hand_version"] > 0  # the hand dealt while away is in it
    versions = hand_versions(resumed)
    assert versions == list(range(snapshot["hand_version"] + 1, last + 1)), versions
    assert gap_free(versions)
    for frames in bad:
        assert [frame["type"] for frame in frames[:2]] == ["error", "snapshot"], frames[:2]
        assert frames[0]["code"] == "bad_resume_seq"
        assert frames[0]["details"]["seq"] == frames[1]["seq"]
