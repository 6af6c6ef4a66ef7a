"""The jackpot meter over the real websocket (issue 37, part 2; docs/websocket.md):
two clients of one STAX table, a seated player and a watcher, both get the
pools' seeding, a round's contributions and a Star Progressive hit as
``house_round.jackpot`` deltas, in ``seq`` order, with the pools' amounts after
each change; the last equals the ledger's balances. The round's
``house_round.opened`` delta carries the Bonus Spin wheel. A real uvicorn
process; the rounds are dealt from this process with known shoes."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from games.house.models import HouseTable
from tests.feed_clients import Reader, connect, ws_url
from tests.house.services.conftest import TEST_WHEEL, make_player, make_table, open_round, step
from tests.house.services.test_jackpot_and_wheel import (
    MISS,
    POOLS,
    PROGRESSIVES,
    RESETS,
    ROYAL,
    ledger_pools,
    stax_round,
)
from tests.ws_auth import token_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def meters_of(deltas: list[dict[str, Any]]) -> list[dict[str, int]]:
    """The meter of each ``house_round.jackpot`` delta, in order."""
    return [
        {p["pool"]: p["amount"] for p in f["data"]["jackpot"]} for f in deltas if f["event"] == "house_round.jackpot"
    ]


def test_every_client_of_the_table_sees_each_change_of_the_pools(asgi_server: str) -> None:
    table = make_table("xtreme", progressives=PROGRESSIVES)
    alice = make_player(table, funds=10**7, name="jackpot-alice")
    carol = make_player(None, name="jackpot-carol")  # watches without a seat
    tokens = {pid: token_for(pid) for pid in (alice, carol)}

    def two_rounds() -> None:
        """Seeding as the first round opens, its contributions, then a Star hit in the next."""
        tick = stax_round(table, alice, open_round(table, shoe_cards=MISS))
        stax_round(table, alice, step(HouseTable.objects.get(pk=table.pk), tick, shoe_cards=ROYAL))

    async def scenario() -> dict[int, list[dict[str, Any]]]:
        path = f"/ws/tables/{table.pk}/"
        readers = {pid: Reader(await connect(asgi_server, ws_url(asgi_server, path, token)))
                   for pid, token in tokens.items()}  # fmt: skip
        try:
            for reader in readers.values():
                await reader.first("snapshot")
            await asyncio.to_thread(two_rounds)
            deadline = time.monotonic() + 30
            while any(len(meters_of(r.of("delta"))) < 3 for r in readers.values()):
                assert time.monotonic() < deadline, {pid: meters_of(r.of("delta")) for pid, r in readers.items()}
                await asyncio.sleep(0.05)
        finally:
            for reader in readers.values():
                await reader.stop()
        return {pid: [frame for _, frame in reader.frames] for pid, reader in readers.items()}

    frames = asyncio.run(scenario())
    contributed = {pool: RESETS[pool] + 1_000 * PROGRESSIVES["contribution_bp"][pool] // 10_000 for pool in POOLS}
    after_hit = {pool: 2 * contributed[pool] - RESETS[pool] for pool in POOLS} | {"star": RESETS["star"]}
    assert ledger_pools(table) == after_hit
    for pid, got in frames.items():
        snapshot = got[0]
        assert snapshot["type"] == "snapshot"
        # Before any round the pools were never funded.
        assert [(p["pool"], p["amount"]) for p in snapshot["table"]["table"]["jackpot"]] == [(p, 0) for p in POOLS]
        deltas = [f for f in got if f["type"] == "delta"]
        assert [f["seq"] for f in deltas] == list(range(deltas[0]["seq"], deltas[0]["seq"] + len(deltas))), pid
        assert meters_of(deltas) == [RESETS, contributed, after_hit], pid
        opened = [f["data"]["wheel"] for f in deltas if f["event"] == "house_round.opened"]
        assert opened == [TEST_WHEEL, TEST_WHEEL], pid
