"""Group commit (#21 part 4): ``run_commands`` writes the commands of a table
together, answers each with its own result, and keeps the single path's
guarantees: ordering, idempotency, hash chains, no overdraft, money conserved."""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import pytest
from django.conf import settings
from django.db import connection, connections, transaction
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from casino.errors import DomainError
from games.house.models import HouseTable, PlayerRound
from games.house.round.state import replay_player
from games.house.services import BetResult, DecisionResult, TableTick, group, place_chip
from games.house.services.group import (
    ClearBets,
    CommandResult,
    DoubleBets,
    MakeDecision,
    PlaceChip,
    PlayerCommand,
    RepeatBets,
    UndoBet,
    run_commands,
    run_one,
)
from games.house.store.rows import state_from_json
from games.house.store.streams import player_stream
from ledger.models import Hold
from ledger.services import NewEvent, append_events, deposit, player_accounts, read_stream, withdraw
from ledger.services.verify import verify_ledger
from tests.db import ledger_sums
from tests.house.services.conftest import key, later, make_player, make_table, open_round, snapshot, step, wallet

LIMITS = {"ante": {"min": 100, "max": 1000}, "best_five": {"min": 100, "max": 500}}
EXAMPLES = int(os.environ.get("GROUP_PROPERTY_EXAMPLES", "8"))


def uth_round(players: int, *, funds: int = 100_000) -> tuple[HouseTable, list[int], TableTick]:
    """A UTH table at ``LIMITS`` with ``players`` seated players holding ``funds``,
    its first round open for bets: the table, the players, the tick."""
    table = make_table("uth", limits=LIMITS)
    seated = [make_player(table, funds=funds) for _ in range(players)]
    return table, seated, open_round(table)


def code(result: CommandResult) -> str:
    assert isinstance(result, DomainError), result
    return result.code


def bet(result: CommandResult) -> BetResult:
    assert isinstance(result, BetResult), result
    return result


def clean_ledger() -> None:
    """Money conserved, every hash chain and seal verifies, holds match the wagers."""
    assert ledger_sums() == {"EUR": 0}
    assert verify_ledger(key=settings.CASINO_SEAL_KEY.encode()) == []


def projections_replay(round_id: str) -> None:
    """Each player's projection is the replay of their stream."""
    for row in PlayerRound.objects.filter(round__round_id=round_id):
        replayed = replay_player(row.player_id, read_stream(stream_id=player_stream(round_id, row.player_id)))
        assert replayed == state_from_json(row.player_id, row.state)


@pytest.mark.django_db
def test_each_command_gets_its_own_result_in_one_batch() -> None:
    table = make_table("uth", limits=LIMITS)
    rich = [make_player(table, funds=10_000) for _ in range(3)]
    poor = make_player(table, funds=150)
    stranger = make_player(None, funds=10_000)  # no seat
    tick = open_round(table)
    commands: list[PlayerCommand] = [
        PlaceChip(rich[0], key(), "ante", 200),
        PlaceChip(poor, key(), "ante", 200),  # the ante and its ante_plus: 400 > 150
        PlaceChip(rich[1], key(), "ante", 50),  # below the spot's minimum
        PlaceChip(stranger, key(), "ante", 100),
        PlaceChip(rich[2], key(), "ante", 300),
        UndoBet(rich[1], key()),  # nothing placed (its chip was refused)
    ]
    results = run_commands(table_id=table.pk, commands=commands, now=later(tick))
    assert bet(results[0]).totals == {"ante": 200, "ante_plus": 200}
    assert bet(results[0]).balance == 10_000 - 400 == wallet(rich[0])
    assert code(results[1]) == "insufficient_balance"
    assert code(results[2]) == "below_minimum"
    assert code(results[3]) == "not_seated"
    assert bet(results[4]).balance == 10_000 - 600 == wallet(rich[2])
    assert code(results[5]) == "nothing_to_undo"
    assert wallet(poor) == 150
    assert wallet(rich[1]) == 10_000
    assert {row.player_id for row in PlayerRound.objects.filter(staked__gt=0)} == {rich[0], rich[2]}
    clean_ledger()
    projections_replay(tick.round_id)


@pytest.mark.django_db
def test_a_closed_window_refuses_the_whole_batch_and_writes_nothing() -> None:
    table, players, tick = uth_round(3)
    before = snapshot()
    keys = [key() for _ in players]
    chips: list[PlayerCommand] = [PlaceChip(p, k, "ante", 100) for p, k in zip(players, keys, strict=True)]
    results = run_commands(table_id=table.pk, commands=chips, now=later(tick, seconds=1))
    assert [code(r) for r in results] == ["betting_closed"] * 3
    assert snapshot() == before
    # The refused keys were not kept: the same keys place the chips in the window.
    results = run_commands(table_id=table.pk, commands=chips, now=later(tick))
    assert [bet(r).balance for r in results] == [100_000 - 200] * 3


@pytest.mark.django_db
def test_round_full_refuses_only_the_chip_past_the_limit() -> None:
    table = make_table("xtreme", hand_mode="per_seat")
    HouseTable.objects.filter(pk=table.pk).update(max_seats=2)
    a, b = make_player(table), make_player(table)
    tick = open_round(table)  # a round of two hands
    HouseTable.objects.filter(pk=table.pk).update(max_seats=4)
    c, d = make_player(table), make_player(table)
    commands: list[PlayerCommand] = [
        PlaceChip(a, key(), "ante", 100),
        PlaceChip(b, key(), "ante", 100),
        PlaceChip(c, key(), "ante", 100),  # both hands are taken
        ClearBets(a, key()),  # a's place comes free...
        PlaceChip(d, key(), "ante", 100),  # ...for d
        PlaceChip(c, key(), "ante", 100),
    ]
    results = run_commands(table_id=table.pk, commands=commands, now=later(tick))
    assert bet(results[0]).totals["ante"] == 100
    assert bet(results[1]).totals["ante"] == 100
    assert code(results[2]) == "round_full"
    assert bet(results[3]).totals == {}
    assert bet(results[4]).totals["ante"] == 100
    assert code(results[5]) == "round_full"
    assert sorted(PlayerRound.objects.filter(staked__gt=0).values_list("player_id", flat=True)) == sorted([b, d])
    assert wallet(c) == wallet(a) == 100_000
    clean_ledger()


@pytest.mark.django_db
def test_a_players_commands_apply_in_order_on_their_evolving_state() -> None:
    table = make_table("uth", limits=LIMITS)
    p = make_player(table, funds=1_400)
    other = make_player(table, funds=1_000)
    tick = open_round(table)
    commands: list[PlaceChip | UndoBet | DoubleBets] = [
        PlaceChip(p, key(), "ante", 200),  # 400 with its ante_plus (200 kept for the river's 1x)
        PlaceChip(other, key(), "ante", 100),
        PlaceChip(p, key(), "ante", 200),  # 800 (400 kept)
        # 1,200 held would leave 200 for a 600 river play: refused on the balance the first two left
        PlaceChip(p, key(), "ante", 200),
        UndoBet(p, key()),  # back to 400
        DoubleBets(p, key()),  # 800
    ]
    results = run_commands(table_id=table.pk, commands=list(commands), now=later(tick))
    assert bet(results[0]).balance == 1_000
    assert bet(results[1]).balance == 800
    assert bet(results[2]).balance == 600
    assert code(results[3]) == "decision_would_be_uncovered"
    assert bet(results[4]).balance == 1_000
    assert bet(results[5]).totals == {"ante": 400, "ante_plus": 400}
    assert bet(results[5]).balance == 600 == wallet(p)
    clean_ledger()
    projections_replay(tick.round_id)


@pytest.mark.django_db
def test_retries_inside_and_across_batches_return_the_first_result() -> None:
    table, (p, q), tick = uth_round(2)
    k = key()
    results = run_commands(table_id=table.pk, commands=[PlaceChip(p, k, "ante", 100), PlaceChip(q, key(), "ante", 100),
                                                        PlaceChip(p, k, "ante", 100)], now=later(tick))  # fmt: skip
    assert results[2] == results[0]
    assert wallet(p) == 100_000 - 200
    before = snapshot()
    again = run_commands(table_id=table.pk, commands=[PlaceChip(p, k, "ante", 100), PlaceChip(q, key(), "ante", 100)],
                         now=later(tick))  # fmt: skip
    assert again[0] == results[0]
    assert wallet(p) == 100_000 - 200
    assert wallet(q) == 100_000 - 400
    # The single path recognises the batch's key too (same command, same body).
    assert place_chip(table_id=table.pk, player_id=p, spot="ante", amount=100, idempotency_key=k,
                      now=later(tick)) == results[0]  # fmt: skip
    assert snapshot()["ledger_hold"] != before["ledger_hold"]  # q's chip only
    assert Hold.objects.filter(source__key__contains=f":player:{p}:").count() == 1


@pytest.mark.django_db
def test_a_reused_key_with_another_body_is_refused_and_changes_nothing() -> None:
    table, (p, q), tick = uth_round(2)
    k = key()
    bet(run_commands(table_id=table.pk, commands=[PlaceChip(p, k, "ante", 100), PlaceChip(q, key(), "ante", 100)],
                     now=later(tick))[0])  # fmt: skip
    before = snapshot()
    results = run_commands(table_id=table.pk, commands=[PlaceChip(p, k, "ante", 300), UndoBet(q, k)], now=later(tick))
    assert [code(r) for r in results] == ["idempotency_key_reused"] * 2
    assert snapshot() == before


@pytest.mark.django_db
def test_a_refused_key_can_succeed_later() -> None:
    table = make_table("uth", limits=LIMITS)
    p = make_player(table, funds=100)
    q = make_player(table)
    tick = open_round(table)
    k = key()
    first = run_commands(table_id=table.pk, commands=[PlaceChip(p, k, "ante", 100), PlaceChip(q, key(), "ante", 100)],
                         now=later(tick))  # fmt: skip
    assert code(first[0]) == "insufficient_balance"
    accounts = player_accounts(player_id=p, currency="EUR")
    deposit(wallet=accounts.wallet, amount=1_000, currency="EUR", external_reference=key("ref"),
            idempotency_key=key("dep"), actor="test")  # fmt: skip
    again = run_commands(table_id=table.pk, commands=[PlaceChip(q, key(), "ante", 100), PlaceChip(p, k, "ante", 100)],
                         now=later(tick))  # fmt: skip
    assert bet(again[1]).balance == 1_100 - 200 == wallet(p)
    clean_ledger()


@pytest.mark.django_db
def test_decisions_in_one_batch_answer_as_if_one_after_another() -> None:
    table = make_table("casino_holdem")
    players = [make_player(table) for _ in range(3)]
    tick = open_round(table)
    for p in players:
        bet(run_one(table_id=table.pk, command=PlaceChip(p, key(), "ante", 100), now=later(tick)))
    tick = step(table, tick)  # the decision window
    results = run_commands(table_id=table.pk, commands=[MakeDecision(p, key(), "call") for p in players],
                           now=later(tick))  # fmt: skip
    decided = [r for r in results if isinstance(r, DecisionResult)]
    assert len(decided) == 3
    assert [r.all_decided for r in decided] == [False, False, True]
    assert [r.amount for r in decided] == [200] * 3
    assert all(r.tick is not None and r.tick.phase_seq == tick.phase_seq for r in decided)
    assert [wallet(p) for p in players] == [100_000 - 100 - 200] * 3
    clean_ledger()
    projections_replay(tick.round_id)


@contextmanager
def statements() -> Iterator[list[int]]:
    """Count the statements the connection sends (libpq's protocol trace:
    every Bind or simple Query message), psycopg cursors included."""
    counted: list[int] = []
    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    with tempfile.TemporaryFile() as trace:
        pgconn.trace(trace.fileno())
        try:
            yield counted
        finally:
            pgconn.untrace()
            trace.seek(0)
            lines = trace.read().decode(errors="replace").splitlines()
    counted.append(sum(1 for line in lines if "\tF\t" in line and ("\tBind\t" in line or "\tQuery\t" in line)))


@pytest.mark.postgres  # the batched path is PostgreSQL's; SQLite runs the single path
@pytest.mark.django_db
def test_a_batch_is_written_in_a_constant_number_of_statements() -> None:
    table, players, tick = uth_round(50)
    bet(run_one(table_id=table.pk, command=PlaceChip(players[0], key(), "ante", 100), now=later(tick)))
    counts = []
    for size in (10, 50):
        with statements() as counted:
            results = run_commands(table_id=table.pk, commands=[PlaceChip(p, key(), "ante", 100) for p in
                                                                players[:size]], now=later(tick))  # fmt: skip
        assert all(isinstance(r, BetResult) for r in results)
        counts.append(counted[0])
    # 16 today (SAVEPOINT and RELEASE included: the test runs inside a transaction): as many for 50 as for 10.
    assert counts[0] == counts[1] <= 20, counts
    clean_ledger()


@pytest.mark.postgres  # the batched path is PostgreSQL's
@pytest.mark.django_db
def test_a_batch_the_database_refuses_falls_back_to_one_by_one() -> None:
    table, players, tick = uth_round(3, funds=1_000)
    with connection.cursor() as cursor:
        # A trigger refusing every batch's ledger claim (and nothing of the single path), for this test only.
        cursor.execute(
            "CREATE FUNCTION test_refuse_group() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'no batches today'; END $$"
        )
        cursor.execute(
            "CREATE TRIGGER test_refuse_group BEFORE INSERT ON ledger_idempotency FOR EACH ROW "
            "WHEN (NEW.key LIKE 'group:%%') EXECUTE FUNCTION test_refuse_group()"
        )
    commands: list[PlayerCommand] = [
        PlaceChip(players[0], key(), "ante", 200),
        PlaceChip(players[1], key(), "ante", 600),
        PlaceChip(players[0], key(), "ante", 400),
        PlaceChip(players[2], key(), "ante", 50),
    ]
    results = run_commands(table_id=table.pk, commands=commands, now=later(tick))
    assert bet(results[0]).balance == 600
    assert code(results[1]) == "insufficient_balance"
    assert code(results[2]) == "insufficient_balance"  # 600 left, 800 asked
    assert code(results[3]) == "below_minimum"
    assert [wallet(p) for p in players] == [600, 1_000, 1_000]
    clean_ledger()


@pytest.mark.django_db(transaction=True)
def test_the_batcher_groups_concurrent_submits_and_answers_each() -> None:
    from games.house.realtime.batcher import Batcher

    table, players, tick = uth_round(50, funds=1_000)
    now = later(tick)
    batcher = Batcher(max_batch=256, threads=2)

    async def everyone() -> list[CommandResult]:
        # Each player bets 200 (400 with the ante plus); every fifth asks 600 (1,200 > 1,000).
        return await asyncio.gather(*(
            batcher.submit(table.pk, PlaceChip(p, key(), "ante", 600 if i % 5 == 0 else 200), now)
            for i, p in enumerate(players)
        ))  # fmt: skip

    async def again() -> list[CommandResult]:
        # Committed states are remembered (``store.remember_players``): these chips use them.
        return await asyncio.gather(*(batcher.submit(table.pk, PlaceChip(p, key(), "ante", 100), now) for p in players))

    try:
        results = asyncio.run(everyone())
        second = asyncio.run(again())
    finally:
        batcher.close()
    assert batcher.commands == 100
    assert batcher.batches < 100
    for i, (p, result, later_result) in enumerate(zip(players, results, second, strict=True)):
        if i % 5 == 0:
            assert code(result) == "insufficient_balance"
            assert bet(later_result).totals == {"ante": 100, "ante_plus": 100}
            assert wallet(p) == 800
        else:
            assert bet(result).balance == 600
            assert bet(later_result).totals == {"ante": 300, "ante_plus": 300}
            assert bet(later_result).balance == 400 == wallet(p)
    clean_ledger()
    projections_replay(tick.round_id)


@pytest.mark.django_db(transaction=True)
def test_request_threads_at_one_table_are_grouped_and_each_gets_its_own_answer() -> None:
    """REST's request threads (``games.house.api.group_commit``): 30 threads
    released together at one table are written in fewer batches than
    commands, each with its own answer; a refusal refuses its own command only."""
    import threading

    from django.db import connections
    from django.utils import timezone

    from games.house.api import group_commit
    from games.house.services import start_table

    table = make_table("uth", limits=LIMITS)
    players = [make_player(table, funds=1_000) for _ in range(30)]
    # A batch's moment is the server clock: the round opens now.
    start_table(table_id=table.pk, now=timezone.now())
    results: dict[int, CommandResult] = {}
    start = threading.Barrier(len(players))

    def request(i: int, player: int) -> None:
        try:
            start.wait(timeout=30)
            amount = 600 if i % 5 == 0 else 200  # every fifth: 1,200 with the Ante Plus > 1,000
            results[player] = group_commit.run_grouped(
                table_id=table.pk, command=PlaceChip(player, key(), "ante", amount)
            )
        finally:
            connections.close_all()

    group_commit.stats.reset()
    threads = [threading.Thread(target=request, args=(i, p)) for i, p in enumerate(players)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert group_commit.stats.commands == 30
    assert group_commit.stats.batches < 30
    assert not group_commit._tables  # the lead ended with the last batch
    for i, player in enumerate(players):
        if i % 5 == 0:
            assert code(results[player]) == "insufficient_balance"
            assert wallet(player) == 1_000
        else:
            assert bet(results[player]).balance == 600 == wallet(player)
    clean_ledger()


# --- Hypothesis: the batched path answers exactly as the single path ----------------------------

command_plan = st.tuples(
    st.integers(0, 2),  # player
    st.sampled_from(["chip", "chip", "chip", "undo", "clear", "double", "repeat", "retry", "reuse"]),
    st.sampled_from(["ante", "best_five"]),
    st.sampled_from([50, 100, 300, 600, 1_000]),
)


def _commands(plans: list[tuple[int, str, str, int]], players: list[int], prefix: str) -> list[PlayerCommand]:
    """The plans as commands of ``players``; "retry" repeats an earlier command
    (same key, same body), "reuse" sends an earlier key with another body."""
    made: list[PlayerCommand] = []
    for n, (who, kind, spot, amount) in enumerate(plans):
        p, k = players[who], f"{prefix}-{n}"
        if kind in ("retry", "reuse") and made:
            earlier = made[amount % len(made)]
            made.append(earlier if kind == "retry" else UndoBet(earlier.player_id, earlier.idempotency_key))
            continue
        factory: dict[str, Any] = {"undo": UndoBet, "clear": ClearBets, "double": DoubleBets, "repeat": RepeatBets}
        made.append(PlaceChip(p, k, spot, amount) if kind in ("chip", "retry", "reuse") else factory[kind](p, k))
    return made


def _answer(result: CommandResult) -> Any:
    """A result without the ids that differ between the two tables."""
    if isinstance(result, DomainError):
        return result.code
    assert isinstance(result, BetResult)
    return (result.totals, result.capped, result.balance, result.doubled)


@pytest.mark.django_db
@hypothesis_settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    funds=st.lists(st.sampled_from([150, 1_000, 5_000]), min_size=3, max_size=3),
    plans=st.lists(command_plan, min_size=1, max_size=24),
    cuts=st.lists(st.integers(1, 8), min_size=1, max_size=8),
)
def test_batches_answer_and_write_as_the_single_path(funds: list[int], plans: list, cuts: list[int]) -> None:
    """Random commands of three players, sent at one table one by one through the
    single services and at a twin table in random batches: the same answers,
    the same wallets, holds and projections, the ledger clean."""
    single_table, batch_table = make_table("uth", limits=LIMITS), make_table("uth", limits=LIMITS)
    single_players = [make_player(single_table, funds=f) for f in funds]
    batch_players = [make_player(batch_table, funds=f) for f in funds]
    ticks = open_round(single_table), open_round(batch_table)
    now: datetime = later(ticks[0])
    tag = key("h")
    singles = [run_one(table_id=single_table.pk, command=c, now=now)
               for c in _commands(plans, single_players, f"{tag}-s")]  # fmt: skip
    commands = _commands(plans, batch_players, f"{tag}-b")
    batched: list[CommandResult] = []
    start, n = 0, 0
    while start < len(commands):
        size = cuts[n % len(cuts)]
        with transaction.atomic():
            batched += run_commands(table_id=batch_table.pk, commands=commands[start : start + size], now=now)
        start, n = start + size, n + 1
    assert [_answer(r) for r in batched] == [_answer(r) for r in singles]
    assert [wallet(p) for p in batch_players] == [wallet(p) for p in single_players]
    for s, b in zip(single_players, batch_players, strict=True):
        rows = [PlayerRound.objects.filter(player_id=p).values_list("staked", "totals").first() for p in (s, b)]
        assert rows[0] == rows[1]
    clean_ledger()
    projections_replay(ticks[1].round_id)


@pytest.mark.django_db
def test_invalid_keys_are_refused_and_change_nothing() -> None:
    table, (p, q), tick = uth_round(2)
    before = snapshot()
    bad: list[PlayerCommand] = [PlaceChip(p, "", "ante", 100), PlaceChip(q, "k" * 201, "ante", 100)]
    results = run_commands(table_id=table.pk, commands=bad, now=later(tick))
    assert [code(r) for r in results] == ["invalid_idempotency_key"] * 2
    assert snapshot() == before


# --- the lean write: the run's ledger part and its saves in one statement -----------------------

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{64}")


def _marks() -> tuple[int, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT (SELECT COALESCE(MAX(id), 0) FROM ledger_event), "
                       "(SELECT COALESCE(MAX(id), 0) FROM ledger_transfer)")  # fmt: skip
        events, transfers = cursor.fetchone()
    return int(events), int(transfers)


def _written_since(marks: tuple[int, int], round_id: str) -> str:
    """What a batch wrote after ``marks``: its events (no ``recorded_at``),
    transfers, statement lines, holds, every balance and the round's player
    rows, ids named by their order, hold ids, hashes and MACs by their first
    appearance (the same chain shape gives the same names)."""
    events_after, transfers_after = marks
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, stream_id, version, type, schema_version, data::text, metadata::text, prev_hash, "
                       "hash, mac FROM ledger_event WHERE id > %s ORDER BY id", [events_after])  # fmt: skip
        events = cursor.fetchall()
        order = {row[0]: n for n, row in enumerate(events)}
        cursor.execute("SELECT id, debit_account_id, credit_account_id, amount, currency, kind, hold_id, event_id "
                       "FROM ledger_transfer WHERE id > %s ORDER BY id", [transfers_after])  # fmt: skip
        transfers = cursor.fetchall()
        transfer_order = {row[0]: n for n, row in enumerate(transfers)}
        cursor.execute("SELECT account_id, transfer_id, event_id, amount, balance_after FROM ledger_statement_line "
                       "WHERE transfer_id > %s ORDER BY id", [transfers_after])  # fmt: skip
        lines = cursor.fetchall()
        cursor.execute("SELECT id, source_id, escrow_id, destination_id, amount, currency, status, opened_event_id "
                       "FROM ledger_hold WHERE opened_event_id > %s ORDER BY opened_event_id, id",
                       [events_after])  # fmt: skip
        holds = cursor.fetchall()
        cursor.execute("SELECT id, balance FROM ledger_account ORDER BY id")
        balances = cursor.fetchall()
        cursor.execute("SELECT p.player_id, p.stream_version, p.state::text, p.totals::text, p.staked "
                       "FROM games_playerround p JOIN games_houseround r ON r.id = p.round_id "
                       "WHERE r.round_id = %s ORDER BY p.player_id", [round_id])  # fmt: skip
        players = cursor.fetchall()
    text = repr({
        "events": [row[1:] for row in events],
        "transfers": [(*row[1:7], order[row[7]]) for row in transfers],
        "lines": [(a, transfer_order[t], order[e], amount, after) for a, t, e, amount, after in lines],
        "holds": [(*row[:7], order[row[7]]) for row in holds],
        "balances": balances,
        "players": players,
    })  # fmt: skip
    names: dict[str, str] = {}
    return _UUID.sub(lambda m: names.setdefault(m.group(0), f"<{len(names)}>"), text)


@pytest.mark.postgres  # the lean write is PostgreSQL's
@pytest.mark.django_db
def test_the_lean_write_leaves_what_settle_prepared_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same batch (two chips of one player: two runs; a command refused in
    between; a double: several legs on one wallet) written by the lean statement
    and, rolled back, by ``settle_prepared``: the same answers and rows."""
    table, (p, q, r), tick = uth_round(3, funds=5_000)
    for spot in ("ante", "best_five"):
        bet(run_one(table_id=table.pk, command=PlaceChip(r, key(), spot, 100), now=later(tick)))
    commands: list[PlayerCommand] = [
        PlaceChip(p, key(), "ante", 200),
        PlaceChip(q, key(), "ante", 50),  # below the minimum: refused, its claim released
        DoubleBets(r, key()),  # a hold per spot on r's wallet in one command: its balance after at each line
        PlaceChip(p, key(), "ante", 100),  # p again: the next run
        PlaceChip(q, key(), "ante", 300),
    ]
    used: list[bool] = []
    lean_writes = group.hold_batch_writes

    def lean(batch: Any) -> Any:
        writes = lean_writes(batch)
        used.append(writes is not None)
        return writes

    def written(path: Any) -> tuple[list[Any], str]:
        monkeypatch.setattr(group, "hold_batch_writes", path)
        point, marks = transaction.savepoint(), _marks()
        results = run_commands(table_id=table.pk, commands=commands, now=later(tick))
        rows = _written_since(marks, tick.round_id)
        clean_ledger()
        projections_replay(tick.round_id)
        transaction.savepoint_rollback(point)
        # A refusal is compared by its code (each error is its own object), a result whole.
        return [r.code if isinstance(r, DomainError) else r for r in results], rows

    settled = written(lambda batch: None)
    assert written(lean) == settled
    assert used == [True, True]  # both runs written by the lean statement
    results = settled[0]
    assert results[1] == "below_minimum"
    assert bet(results[2]).totals == {"ante": 200, "ante_plus": 200, "best_five": 200}
    assert bet(results[3]).totals == {"ante": 300, "ante_plus": 300}
    assert bet(results[4]).balance == 5_000 - 600


def _spy_on_lean_writes(monkeypatch: pytest.MonkeyPatch, before: Any) -> list[str]:
    """Run ``before()`` just before the lean statement is sent; the names of the
    errors the lean statement raised."""
    raised: list[str] = []
    send = group.saving_commands_and_ledger

    def spy(**kwargs: Any) -> Any:
        before()
        try:
            return send(**kwargs)
        except Exception as error:
            raised.append(type(error).__name__)
            raise

    monkeypatch.setattr(group, "saving_commands_and_ledger", spy)
    return raised


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_withdrawal_between_the_read_and_the_lean_write_falls_back_to_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A concurrent withdrawal empties a wallet after the batch read it: the lean
    statement's no-overdraft guard refuses, the batch rolls back whole and each
    command gets the single path's answer."""
    table, players, tick = uth_round(3, funds=1_000)
    poor = players[1]

    def withdraw_elsewhere() -> None:
        def run() -> None:
            try:
                withdraw(wallet=player_accounts(player_id=poor, currency="EUR").wallet, amount=900, currency="EUR",
                         external_reference=key("ref"), idempotency_key=key("wd"), actor="test")  # fmt: skip
            finally:
                connections.close_all()

        if not raised:  # once: the batch's attempt, not the fallback's
            worker = threading.Thread(target=run)
            worker.start()
            worker.join()

    raised = _spy_on_lean_writes(monkeypatch, withdraw_elsewhere)
    results = run_commands(table_id=table.pk, commands=[PlaceChip(p, key(), "ante", 200) for p in players],
                           now=later(tick))  # fmt: skip
    assert raised == ["InsufficientFunds"]
    assert bet(results[0]).balance == 600 == wallet(players[0])
    assert code(results[1]) == "insufficient_balance"  # 100 left, 400 asked
    assert bet(results[2]).balance == 600 == wallet(players[2])
    assert wallet(poor) == 100
    clean_ledger()


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_stream_moved_on_before_the_lean_write_falls_back_to_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another writer took the next version of a player's stream (forged in the
    batch's own transaction, so the fallback's rollback removes it): the lean
    statement's unique key refuses (``StaleStreamVersion``), the batch rolls back
    whole and each command gets the single path's answer."""
    table, players, tick = uth_round(2, funds=1_000)
    for p in players:
        bet(run_one(table_id=table.pk, command=PlaceChip(p, key(), "ante", 100), now=later(tick)))
    stream = player_stream(tick.round_id, players[0])

    def move_on() -> None:
        if not raised:
            head = read_stream(stream_id=stream)[-1].version
            append_events(stream_id=stream, expected_version=head, events=[NewEvent("test.forged", {})])

    raised = _spy_on_lean_writes(monkeypatch, move_on)
    results = run_commands(table_id=table.pk, commands=[PlaceChip(p, key(), "ante", 100) for p in players],
                           now=later(tick))  # fmt: skip
    assert raised == ["StaleStreamVersion"]
    assert [bet(r).totals for r in results] == [{"ante": 200, "ante_plus": 200}] * 2
    assert [e.type for e in read_stream(stream_id=stream)].count("test.forged") == 0
    clean_ledger()
    projections_replay(tick.round_id)


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_batch_of_chips_writes_in_one_statement_after_its_read() -> None:
    """The lean write: a batch of chips is its read, the responsible-gaming
    lock (none here), and one statement for every write."""
    table, players, tick = uth_round(10)
    bet(run_one(table_id=table.pk, command=PlaceChip(players[0], key(), "ante", 100), now=later(tick)))
    with statements() as counted:
        results = run_commands(table_id=table.pk, commands=[PlaceChip(p, key(), "ante", 100) for p in players],
                               now=later(tick))  # fmt: skip
    assert all(isinstance(r, BetResult) for r in results)
    # SAVEPOINT, the read, the write, RELEASE (the test runs inside a transaction).
    assert counted[0] <= 4, counted
    clean_ledger()
