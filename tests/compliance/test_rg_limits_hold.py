"""Responsible-gaming limits that hold under concurrency and second thoughts
(issue 35, part 1), on PostgreSQL with real connections: each red-team
reproduction gets its refusal.

- A less protective change (a session limit removed the moment it bites)
  waits the 24 h cooling-off period; a more protective one applies at once.
- A wager is checked against the worst case of everything in play: the forced
  decisions pending at the player's other house tables count, and concurrent
  wagers of one player at several tables (and a poker buy-in) cannot pass a
  loss limit together.
- Concurrent deposits are counted one after the other at request time, and a
  deposit accepted then is credited when paid, never refunded for the limit.

Rules: docs/cashier-and-responsible-gaming.md."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from casino import responsible_gaming as rg
from casino.cashier import provider_callback, request_deposit
from casino.models import CashierTransaction, ResponsibleGaming
from games.house.models import HouseTable
from games.house.services import BetResult, assign_seat, make_decision, place_chip, start_table
from games.house.services.group import PlaceChip, run_commands
from games.poker.services.seats import sit_down
from tests.compliance.test_rg_limits_api import advance, betting, chip, post, put_limits, refused, wallet
from tests.db import ledger_sums, race, rows
from tests.house.live.conftest import fast_table
from tests.house.services.conftest import key, make_player, snapshot
from tests.poker.tables import make_table as make_poker_table

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def seated_table(game: str, player: int) -> HouseTable:
    """Another open table of ``game`` with the player seated, its round in its betting window."""
    table = fast_table(game, betting_seconds=60, decision_seconds=60)
    assign_seat(table_id=table.pk, player_id=player)
    start_table(table_id=table.pk, now=timezone.now())
    return table


def near(when: str, expected: datetime) -> bool:
    return abs(datetime.fromisoformat(when) - expected) < timedelta(minutes=1)


# --- 1. a less protective change waits, session time limit included ----------------------------


def test_a_session_limit_removed_the_moment_it_bites_still_refuses_bets_and_buy_ins() -> None:
    """Red team: 1-minute session limit, play, ``session_time_limit_reached``,
    then ``PUT {"session_limit_minutes": null}`` answered 200 and the next
    Casino Hold'em bet and a poker buy-in were accepted."""
    table, player, client = betting("casino_holdem", 10_000)
    poker = make_poker_table()
    assert put_limits(client, {"session_limit_minutes": 1}).status_code == 200
    assert chip(client, table, "ante", 100).status_code == 200  # the session starts
    # 70 s of continuous play later (a wager within the idle gap).
    ResponsibleGaming.objects.filter(pk=player).update(
        session_started_at=timezone.now() - timedelta(seconds=70), last_wager_at=timezone.now() - timedelta(seconds=5)
    )
    refused(chip(client, table, "ante", 100), 403, "session_time_limit_reached")
    # The removal is accepted as a pending change, and the answer says when it takes effect.
    removed = put_limits(client, {"session_limit_minutes": None})
    assert removed.status_code == 200, removed.content
    answer = removed.json()
    assert answer["session_limit_minutes"] == 1
    assert answer["session_limit"]["in_force"] == 1
    assert answer["session_limit"]["pending"] is None
    assert near(answer["session_limit"]["pending_from"], timezone.now() + timedelta(hours=24))
    assert client.get("/api/me/limits/").json()["session_limit"] == answer["session_limit"]
    # The next bet and a poker buy-in are still refused, and change nothing.
    before = snapshot()
    refused(chip(client, table, "ante", 100), 403, "session_time_limit_reached")
    refused(post(client, f"/api/poker/tables/{poker.pk}/sit/", {"seat": 1, "buy_in": 1_000}), 403,
            "session_time_limit_reached")  # fmt: skip
    assert snapshot() == before
    # A longer limit waits as well.
    longer = put_limits(client, {"session_limit_minutes": 600}).json()["session_limit"]
    assert (longer["in_force"], longer["pending"]) == (1, 600)
    refused(chip(client, table, "ante", 100), 403, "session_time_limit_reached")
    # Once the cooling-off period has passed the change is in force.
    ResponsibleGaming.objects.filter(pk=player).update(session_limit_pending_from=timezone.now())
    assert chip(client, table, "ante", 100).status_code == 200
    assert client.get("/api/me/limits/").json()["session_limit_minutes"] == 600


def test_every_limit_kind_changes_by_one_rule() -> None:
    """More protective (first, lower, the same) at once; less protective (higher,
    removed) after 24 h; asking again for what is pending keeps its date."""
    player = make_player(funds=0)
    now = timezone.now()
    later = now + timedelta(hours=3)
    for kind in (*rg.LIMIT_KINDS, "session"):

        def change(value: int | None, at: datetime, kind: str = kind) -> dict[str, Any]:
            if kind == "session":
                row = rg.set_limits(player_id=player, currency="EUR", limits={}, now=at, session_limit_minutes=value)
                return rg.session_limit_entry(row)
            row = rg.set_limits(player_id=player, currency="EUR", limits={kind: value}, now=at)
            return dict(row.limits["EUR"][kind])

        assert change(60, now) == {"amount": 60, "pending": None, "pending_from": None}  # first: at once
        assert change(30, now) == {"amount": 30, "pending": None, "pending_from": None}  # lower: at once
        raised = change(90, now)
        assert (raised["amount"], raised["pending"]) == (30, 90)  # higher: waits
        assert near(raised["pending_from"], now + timedelta(hours=24))
        assert change(90, later) == raised, kind  # asked again: the same date
        removed = change(None, later)
        assert (removed["amount"], removed["pending"]) == (30, None)
        assert near(removed["pending_from"], later + timedelta(hours=24))
        assert change(30, later) == {"amount": 30, "pending": None, "pending_from": None}  # the same: cancels
        assert rg.effective_limit(change(None, later), later + timedelta(hours=24, seconds=1)) is None
    # An exclusion is never shortened (a cool-off cannot be cut short either).
    row = rg.exclude(player_id=player, currency="EUR", kind="cool_off", days=7, now=now)
    until = row.excluded_until
    assert rg.exclude(player_id=player, currency="EUR", kind="cool_off", days=1, now=now).excluded_until == until


# --- 2. the worst case of everything in play, under the player's lock -------------------------


def test_a_pending_forced_decision_at_another_table_counts_against_the_loss_limit() -> None:
    """Red team: loss_day 1,000, Casino Hold'em and UTH rounds overlapping, Ante
    200 at each: both accepted, both forced decisions taken, 1,200 staked. The
    second Ante's worst case is 200 + 400 (CHE Ante and its 2x call) + 400 + 200
    (UTH Ante, Ante Plus and its 1x play) = 1,200 > 1,000: refused."""
    che, player, client = betting("casino_holdem", 10_000)
    uth = seated_table("uth", player)
    assert put_limits(client, {"limits": {"loss_day": 1_000}}).status_code == 200
    assert chip(client, che, "ante", 200).status_code == 200
    before = snapshot()
    error = refused(chip(client, uth, "ante", 200), 403, "loss_limit_exceeded")
    assert error["details"]["in_play"] == 400  # the CHE call still to come
    assert error["details"]["reserved_for_decision"] == 200
    assert error["details"]["lost"] == 200
    assert snapshot() == before
    # The CHE call is the forced decision the limit made room for: never refused.
    assert advance(che) == "flop"
    called = post(client, f"/api/tables/{che.pk}/decision/", {"option": "call"})
    assert called.status_code == 200, called.content
    # 600 lost at CHE (Ante and call): the UTH Ante's worst case (600) no longer fits...
    refused(chip(client, uth, "ante", 200), 403, "loss_limit_exceeded")
    # ... a smaller one does: 600 + 200 + 100 (Ante 100, Ante Plus 100, 1x play 100) = 900.
    assert chip(client, uth, "ante", 100).status_code == 200
    total = wallet(player)
    assert 10_000 - total == 800  # staked: CHE 600, UTH 200
    assert ledger_sums() == {"EUR": 0}


def test_the_decision_offer_leaves_out_only_the_other_tables_pending_decisions() -> None:
    """A call at a table is checked with the other tables' forced decisions
    reserved, not this round's own (the call replaces it): loss_day 800, UTH
    Ante 100 (200 held, 100 for the river) and CHE Ante 100 (100 held, 200 for
    the call): 300 lost, 200 pending elsewhere, so 300 of room at UTH's preflop:
    3x (300) is offered and taken, 4x (400) neither."""
    uth, player, client = betting("uth", 10_000)
    che = seated_table("casino_holdem", player)
    assert put_limits(client, {"limits": {"loss_day": 800}}).status_code == 200
    assert chip(client, uth, "ante", 100).status_code == 200
    assert chip(client, che, "ante", 100).status_code == 200
    assert advance(uth) == "preflop"
    assert client.get(f"/api/tables/{uth.pk}/").json()["me"]["options"] == ["call3x", "check"]
    round_id = HouseTable.objects.get(pk=uth.pk).current_round_id
    assert rg.wager_allowance(player_id=player, currency="EUR", now=timezone.now(), excluding=round_id) == 300
    error = refused(post(client, f"/api/tables/{uth.pk}/decision/", {"option": "call4x"}), 403, "loss_limit_exceeded")
    assert error["details"]["in_play"] == 200
    assert post(client, f"/api/tables/{uth.pk}/decision/", {"option": "call3x"}).status_code == 200
    # The CHE call, the forced decision reserved for, is still taken.
    assert advance(che) == "flop"
    assert post(client, f"/api/tables/{che.pk}/decision/", {"option": "call"}).status_code == 200
    assert 10_000 - wallet(player) == 800


def test_concurrent_wagers_at_several_tables_and_a_buy_in_cannot_pass_the_limit_together() -> None:
    """loss_day 1,200; at once: Ante 200 at two UTH tables (each 400 held + 200
    for the river's play) and a 600 poker buy-in. Any two fit the limit, three
    do not: exactly two are accepted, on real concurrent connections."""
    player = make_player(funds=100_000)
    tables = [seated_table("uth", player) for _ in range(2)]
    poker = make_poker_table()
    rg.set_limit(player_id=player, kind="loss_day", amount=1_200, currency="EUR", now=timezone.now())
    now = timezone.now()

    def work(i: int) -> Any:
        if i < len(tables):
            return place_chip(table_id=tables[i].pk, player_id=player, spot="ante", amount=200,
                              idempotency_key=key(), now=now)  # fmt: skip
        return sit_down(table_id=poker.pk, player_id=player, seat_number=1, buy_in=600, idempotency_key=key(), now=now)

    results = race(3, work)
    assert sorted(r if isinstance(r, str) else "accepted" for r in results) == [
        "accepted", "accepted", "loss_limit_exceeded"
    ], results  # fmt: skip
    lost = 100_000 - wallet(player)
    elsewhere = rg.in_play(player_id=player, currency="EUR")
    assert lost + elsewhere <= 1_200
    assert ledger_sums() == {"EUR": 0}


def test_concurrent_antes_at_four_tables_take_only_the_room_the_limit_leaves() -> None:
    """loss_day 1,800; Ante 200 at four UTH tables at once, each 600 in the worst
    case: three fit, the fourth is refused, whatever the order."""
    player = make_player(funds=100_000)
    tables = [seated_table("uth", player) for _ in range(4)]
    rg.set_limit(player_id=player, kind="loss_day", amount=1_800, currency="EUR", now=timezone.now())
    now = timezone.now()
    results = race(4, lambda i: place_chip(table_id=tables[i].pk, player_id=player, spot="ante", amount=200,
                                           idempotency_key=key(), now=now))  # fmt: skip
    assert sorted(r if isinstance(r, str) else "accepted" for r in results) == [
        "accepted", "accepted", "accepted", "loss_limit_exceeded"
    ], results  # fmt: skip
    assert 100_000 - wallet(player) == 3 * 400
    assert rg.in_play(player_id=player, currency="EUR") == 3 * 200


def test_batches_at_two_tables_with_the_same_limited_players_hold_the_limits() -> None:
    """The group commit locks its limited players at once, in player-id order:
    two batches at two tables naming the same two players in opposite orders,
    run at once, give each player exactly one of their two Antes (loss_day
    1,000; each Ante 200 is 600 in the worst case)."""
    players = [make_player(funds=10_000) for _ in range(2)]
    tables = [seated_table("uth", players[0]) for _ in range(2)]
    for table in tables:
        assign_seat(table_id=table.pk, player_id=players[1])
    for player in players:
        rg.set_limit(player_id=player, kind="loss_day", amount=1_000, currency="EUR", now=timezone.now())
    now = timezone.now()
    orders = [players, players[::-1]]
    batches = race(2, lambda i: run_commands(table_id=tables[i].pk, now=now,
                                             commands=[PlaceChip(p, key(), "ante", 200) for p in orders[i]]),
                   atomic=False)  # fmt: skip
    for i, results in enumerate(batches):
        assert isinstance(results, list), results
        assert all(isinstance(r, BetResult) or r.code == "loss_limit_exceeded" for r in results), results
        by_player = dict(zip(orders[i], results, strict=True))
        batches[i] = {p: isinstance(r, BetResult) for p, r in by_player.items()}
    for player in players:
        assert [batch[player] for batch in batches].count(True) == 1, batches
        assert 10_000 - wallet(player) == 400
    assert ledger_sums() == {"EUR": 0}


# --- 3. deposits: counted one after the other, and one that fitted is never refunded -----------


def test_concurrent_deposits_take_exactly_the_room_of_the_limit_and_none_is_refunded() -> None:
    """Red team: deposit_day 1,000, ten concurrent deposits of 200: six (or
    eight) accepted, then the paid callback put all six into ``refund_due``."""
    player = make_player(funds=0)
    now = timezone.now()
    rg.set_limit(player_id=player, kind="deposit_day", amount=1_000, currency="EUR", now=now)
    results = race(10, lambda i: request_deposit(player_id=player, amount=200, currency="EUR",
                                                 request_key=f"d{i}", now=now))  # fmt: skip
    accepted = [r for r in results if isinstance(r, CashierTransaction)]
    assert len(accepted) == 5, results
    assert sorted(r for r in results if isinstance(r, str)) == ["deposit_limit_exceeded"] * 5
    # The refused ones stored nothing.
    assert CashierTransaction.objects.filter(player_id=player).count() == 5
    # A retry of an accepted request is the same transaction, not a refusal.
    first = results.index(accepted[0])
    again = request_deposit(player_id=player, amount=200, currency="EUR", request_key=f"d{first}", now=now)
    assert again.pk == accepted[0].pk
    # A lower limit set meanwhile does not take back the room the accepted requests took.
    rg.set_limit(player_id=player, kind="deposit_day", amount=100, currency="EUR", now=now)
    for txn in accepted:
        paid = provider_callback(external_reference=txn.external_reference, status="paid", amount=200,
                                 currency="EUR", provider="acme", now=timezone.now())  # fmt: skip
        assert paid.state == "paid"
    assert wallet(player) == 1_000
    assert not CashierTransaction.objects.filter(player_id=player, state="refund_due").exists()
    assert ledger_sums() == {"EUR": 0}


def test_a_refused_deposit_changes_nothing() -> None:
    player = make_player(funds=0)
    rg.set_limit(player_id=player, kind="deposit_day", amount=1_000, currency="EUR", now=timezone.now())
    request_deposit(player_id=player, amount=1_000, currency="EUR", request_key="full", now=timezone.now())
    tables = ("casino_cashiertransaction", "ledger_event", "ledger_account", "casino_responsiblegaming")
    before = rows(*tables)
    with pytest.raises(rg.DepositLimitExceeded) as caught:
        request_deposit(player_id=player, amount=1, currency="EUR", request_key="over", now=timezone.now())
    assert (caught.value.details["used"], caught.value.details["remaining"]) == (1_000, 0)
    assert rows(*tables) == before


def test_the_decision_at_the_round_a_bet_was_checked_for_is_never_refused() -> None:
    """The invariant the limits keep: losses + everything in play stay within
    the limit, so each forced decision can be taken (exempt) without passing it."""
    che, player, client = betting("casino_holdem", 10_000)
    uth = seated_table("uth", player)
    assert put_limits(client, {"limits": {"loss_day": 1_000}}).status_code == 200
    assert chip(client, che, "ante", 200).status_code == 200  # 200 + 400
    assert chip(client, uth, "ante", 100).status_code == 200  # 200 + 100: 900 in the worst case
    assert advance(che) == "flop"
    assert advance(uth) == "preflop"
    assert post(client, f"/api/tables/{che.pk}/decision/", {"option": "call"}).status_code == 200
    for street in ("check", "check"):
        made = make_decision(table_id=uth.pk, player_id=player, option=street, idempotency_key=key(),
                             now=timezone.now())  # fmt: skip
        assert made.amount == 0
        advance(uth)
    river = post(client, f"/api/tables/{uth.pk}/decision/", {"option": "call1x"})
    assert river.status_code == 200, river.content
    assert 10_000 - wallet(player) == 900
