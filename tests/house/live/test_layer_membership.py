"""Thousands of websockets joining or leaving at once (a network blip) outnumber
a Redis channel layer's connection pool, whose redis-py pool raises instead of
waiting. The consumers change group membership through
``games.house.realtime.relay.change_membership``, which waits for a free connection. Real
Redis, a pool of 2 connections, 60 concurrent members."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from channels_redis.core import RedisChannelLayer
from django.conf import settings
from redis.exceptions import MaxConnectionsError

from games.house.realtime.relay import change_membership

pytestmark = pytest.mark.skipif(not settings.REDIS_URL, reason="needs Redis (CI always has it)")

MEMBERS = 60


def small_layer() -> RedisChannelLayer:
    return RedisChannelLayer(hosts=[{"address": settings.REDIS_URL, "max_connections": 2, "socket_timeout": 30}])


async def members(layer: RedisChannelLayer, group: str) -> int:
    connection = layer.connection(layer.consistent_hash(group))
    return int(await connection.zcard(layer._group_key(group)))


async def forget(layer: RedisChannelLayer, group: str) -> None:
    """Delete the test's group key and close the layer's pools (not ``flush``,
    which would empty the whole Redis database other tests share)."""
    connection = layer.connection(layer.consistent_hash(group))
    await connection.delete(layer._group_key(group))
    await layer.close_pools()


def test_a_bare_group_add_burst_exhausts_the_pool() -> None:
    """The failure the helper exists for (if redis-py starts waiting, this test says so)."""

    async def burst() -> list[BaseException | None]:
        layer = small_layer()
        group = f"burst-{uuid.uuid4().hex[:8]}"
        try:
            return await asyncio.gather(
                *(layer.group_add(group, f"c{i}") for i in range(MEMBERS)), return_exceptions=True
            )
        finally:
            await forget(layer, group)

    outcomes = asyncio.run(burst())
    assert any(isinstance(outcome, MaxConnectionsError) for outcome in outcomes)


def test_change_membership_waits_for_the_pool_and_loses_nobody() -> None:
    async def burst() -> tuple[int, int]:
        layer = small_layer()
        group = f"burst-{uuid.uuid4().hex[:8]}"
        channels = [f"specific.test!{i}" for i in range(MEMBERS)]
        try:
            await asyncio.gather(*(change_membership(layer, "add", group, c) for c in channels))
            joined = await members(layer, group)
            await asyncio.gather(*(change_membership(layer, "discard", group, c) for c in channels))
            return joined, await members(layer, group)
        finally:
            await forget(layer, group)

    joined, left = asyncio.run(burst())
    assert (joined, left) == (MEMBERS, 0)


def test_a_chat_burst_fits_a_consumers_channel() -> None:
    """The layer drops a group send to a full channel without a word (its default
    capacity is 100): 300 chat lines sent at once to a consumer that has not read
    yet all arrive, in order, with the project's ``CHANNEL_LAYER_CAPACITY``."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    assert layer is not None
    group = f"burst-{uuid.uuid4().hex}"

    async def burst() -> list[int]:
        channel = await layer.new_channel()
        await layer.group_add(group, channel)
        try:
            for n in range(300):
                await layer.group_send(group, {"type": "chat.message", "n": n})
            return [(await asyncio.wait_for(layer.receive(channel), 5))["n"] for _ in range(300)]
        finally:
            await layer.group_discard(group, channel)

    assert asyncio.run(burst()) == list(range(300))
