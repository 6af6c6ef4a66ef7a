"""One scrape for the whole system (issue 36, part 3; docs/live.md, "Metrics"):
two uvicorn processes, a Celery worker and beat share one multi-process
directory (``PROMETHEUS_MULTIPROC_DIR``, set by the tests' plugin); players bet
over REST on both processes, decide over their sockets, and play a poker hand
with their sockets on different processes. ``GET /metrics`` of either process
then shows the named series, with counts that cover what was played on both.

The processes and clients are the topology test's (tests/platform/test_topology.py)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from casino.responsible_gaming import set_limit
from ledger.services.seals import seal
from tests.platform.conftest import RuntimeRole
from tests.platform.test_metrics import ALLOWED_LABELS, samples, value
from tests.platform.test_topology import (
    PROXY,
    Cast,
    Client,
    Servers,
    hands_ended,
    in_db_thread,
    production_env,
    sit_down,
    stop_clients,
    topology,
    until,
    wait_ready,
)

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True, databases=["default", "owner"])]
METRICS_TOKEN = "metrics-" + uuid.uuid4().hex


def scrape(base: str) -> str:
    answer = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}", **PROXY}, timeout=20)
    assert answer.status_code == 200, answer.text[:500]
    return answer.text


async def scraped(base: str) -> str:
    return await asyncio.to_thread(scrape, base)


async def until_scraped(base: str, check: Callable[[str], bool], *, what: str, timeout: float = 30) -> str:
    """Scrape ``base`` until ``check`` holds for the text (a socket's close reaches the server a little later)."""
    text = ""

    async def holds() -> bool:
        nonlocal text
        text = await scraped(base)
        return check(text)

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await holds():
        ws = "\n".join(line for line in text.splitlines() if line.startswith("casino_ws"))
        assert loop.time() < deadline, f"timed out waiting for {what}:\n{ws}"
        await asyncio.sleep(0.3)
    return text


def test_two_asgi_processes_and_a_worker_report_into_one_scrape(runtime_role: RuntimeRole, tmp_path: Path) -> None:
    cast = Cast.make()
    house, poker, house_ids = cast.house, cast.poker, cast.house_ids
    env = {**production_env(runtime_role.url, uuid.uuid4().hex), "METRICS_TOKEN": METRICS_TOKEN}

    with ExitStack() as stack:
        topo = stack.enter_context(topology(env, tmp_path))
        asgi1, base1 = topo.asgi("asgi1")
        asgi2, base2 = topo.asgi("asgi2")
        topo.worker("worker1")
        topo.beat()
        wait_ready(topo.processes, [base1, base2])
        servers = Servers([base1, base2])
        a, b, c, d = cast.clients(servers, base1, base2)
        clients: list[Client] = [a, b, c, d]
        seen: dict[str, str] = {}

        # Gauges of processes other tests left (a killed process's sockets count until it is marked dead).
        before = scrape(base1)

        def sockets(text: str, family: str) -> float:
            now, then = (value(t, "casino_ws_connections", family=family) for t in (text, before))
            return now - then

        async def scenario() -> None:
            tasks = [asyncio.ensure_future(client.run()) for client in clients]
            try:
                await sit_down((c, d), poker)
                await until(lambda: a.settled_rounds() and b.settled_rounds(), timeout=90, what="house rounds")
                await until(lambda: hands_ended(c) and hands_ended(d), timeout=90, what="a poker hand")
                # Four sockets open, two per family, over the two processes: the gauge sums them.
                seen["open"] = await until_scraped(
                    base2,
                    lambda t: sockets(t, "house") == 2 and sockets(t, "poker") == 2,
                    what="four open sockets",
                )
                # A responsible-gaming refusal: alice's loss limit is 0 from now on; her next chip is refused.
                await in_db_thread(
                    lambda: set_limit(
                        player_id=house_ids[0], kind="loss_day", amount=0, currency="EUR", now=timezone.now()
                    )
                )
                await until(lambda: "loss_limit_exceeded" in a.refusals, timeout=60, what="a chip over the limit")
                for bettor in (a, b):
                    bettor.betting = False
                    await asyncio.gather(*bettor.tasks)
            finally:
                await stop_clients(clients, tasks)

            # The sockets closed (by the clients: 1000) leave the gauge and are counted by code.
            def closed(text: str, family: str) -> float:
                return value(text, "casino_ws_closes_total", family=family, code="1000") - value(
                    seen["open"], "casino_ws_closes_total", family=family, code="1000"
                )

            seen["closed"] = await until_scraped(
                base1,
                lambda t: (
                    sockets(t, "house") == 0
                    and closed(t, "house") == 2
                    and sockets(t, "poker") == 0
                    and closed(t, "poker") == 2
                ),
                what="the sockets' closes",
                timeout=90,
            )

        asyncio.run(scenario())
        seal()
        call_command("verify_ledger", "--no-projections", verbosity=0)
        one, other = scrape(base1), scrape(base2)
        assert asgi1.popen.poll() is None
        assert asgi2.popen.poll() is None

    # Both processes answer the same totals: each reads every process's files.
    def commands(text: str) -> list[tuple[str, list[tuple[str, str]], float]]:
        return sorted((n, sorted(ls.items()), v) for n, ls, v in samples(text) if n == "casino_commands_total")

    assert commands(one) == commands(other)

    def grew(name: str, **labels: str) -> float:
        """What this test added to a counter (other tests of this run write into the same directory)."""
        return value(one, name, **labels) - value(before, name, **labels)

    rest_bet = {"family": "house", "command": "bet", "transport": "rest"}
    bets = a.bets + b.bets
    assert {server for _round, server in bets} == {base1, base2}  # bets were accepted by both processes
    # The refusals the clients saw were answered (and counted) too.
    refused = len(a.refusals) + len(b.refusals)
    assert grew("casino_commands_total", **rest_bet, outcome="ok") == len(bets)
    assert grew("casino_commands_total", **rest_bet) == len(bets) + refused
    over_limit = a.refusals.count("loss_limit_exceeded")
    assert over_limit >= 1
    assert grew("casino_commands_total", **rest_bet, outcome="loss_limit_exceeded") == over_limit
    # Her decisions in the round in play meet the same limit (over the socket): counted as refusals too.
    assert grew("casino_rg_refusals_total", limit="loss_day") >= over_limit
    assert grew("casino_command_duration_seconds_count", **rest_bet) == grew("casino_commands_total", **rest_bet)
    assert grew("casino_commands_total", family="house", command="decision", transport="ws") >= 1
    assert grew("casino_commands_total", family="poker", command="sit", transport="rest", outcome="ok") == 2
    # Every act acknowledged was counted (an ack sent as its client stopped reading is counted, not seen).
    acts = len(c.acts) + len(d.acts)
    assert acts >= 1
    assert grew("casino_commands_total", family="poker", command="act", transport="ws", outcome="ok") >= acts
    assert grew("casino_group_commit_batch_size_count", interface="rest") >= len(bets)
    assert grew("casino_group_commit_batch_size_sum", interface="rest") >= len(bets)
    # The dealer (worker and beat) reports into the same scrape: phases ended after their deadlines
    # and the tasks' time in the queue.
    lags = [(labels, v) for n, labels, v in samples(one) if n == "casino_dealer_phase_lag_seconds_count"]
    # At least the first round's betting and the pause after it ended at their deadlines (decision
    # windows everyone answered end early: not a lag).
    assert grew("casino_dealer_phase_lag_seconds_count", family="house") >= 2, lags
    assert grew("casino_dealer_phase_lag_seconds_count", family="poker") >= 1
    assert grew("casino_task_queue_lag_seconds_count", task="games.advance") >= 3
    assert grew("casino_task_queue_lag_seconds_count", task="games.poker.advance") >= 1
    assert grew("casino_task_queue_lag_seconds_count", task="games.sweep") >= 1
    # The feeds of both processes read the log.
    assert grew("casino_feed_events_total") > 0
    assert grew("casino_feed_lag_seconds_count") > 0
    head = value(one, "casino_ledger_head_position")
    # The read position is the feeds' while they run (sockets open): read from the scrape taken then. It is
    # the lowest of the live processes that set it, and this pytest process is live and shares the directory
    # with the in-process feeds of the tests run before it in the same worker (their own databases' logs):
    # so only its bound is this test's to check, not that it is above 0.
    assert any(name == "casino_feed_read_position" for name, _labels, _v in samples(seen["open"]))
    assert value(seen["open"], "casino_feed_read_position") <= head
    # The ledger: sealed, verified (verify_ledger ran in this test's process), read at the scrape.
    assert value(one, "casino_ledger_seal_age_seconds") >= 0
    assert value(one, "casino_ledger_unsealed_events") >= 0
    assert value(one, "casino_ledger_verify_ok") == 1
    assert value(one, "casino_ledger_verify_problems") == 0
    # No series names a player, a table or a round.
    player_ids = {str(pk) for pk in get_user_model().objects.values_list("pk", flat=True)} | {
        str(house.pk),
        str(poker.pk),
    }
    for text in (one, seen["open"], seen["closed"]):
        for name, labels, _ in samples(text):
            assert set(labels) - {"le"} <= ALLOWED_LABELS, (name, labels)
            assert not {v for k, v in labels.items() if k not in ("le", "code")} & player_ids, (name, labels)
