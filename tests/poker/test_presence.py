"""Seed 001's disconnection policy and responsible gaming before each hand
(issue #22), with real websocket clients of a real uvicorn process on
PostgreSQL and Redis; the dealer's steps run here, by the wall clock:

- a player who is not present when their turn runs out gets the table's
  *disconnection* time bank (not the thinking one); then the action is check
  if allowed, else fold, and they sit out;
- they are not dealt into hands that start while they are away (no blinds);
  their seat is reserved for ``reservation_seconds``, then emptied and their
  stack goes back to the wallet; back in time, they sit in again;
- a slow player who is still connected never gets the disconnection bank;
- a second connection to the same table closes the first (4409);
- a seated player who starts a cool-off is not dealt the next hand, and is
  told why on the table's websocket feed."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.utils import timezone
from websockets.sync.client import ClientConnection

from compliance.roles import OPERATOR, setup_roles
from games.poker import services
from games.poker.models import PokerHand, PokerSeat, PokerTable
from games.tables.presence import POKER, is_present
from tests.compliance.staff import staff, unchanged_form
from tests.db import ledger_sums
from tests.house.live.conftest import wait_for
from tests.house.live.test_presence import until_closed
from tests.poker.tables import make_player, make_table, sit, wallet
from tests.poker.test_tables import AA_VS_KK
from tests.poker.test_ws_act import Player

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def step(table: PokerTable, *, cards: list[str] | None = None) -> PokerTable:
    """The dealer's step once the table's deadline has passed (by the wall clock)."""
    table.refresh_from_db()
    deadline = table.deadline
    assert deadline is not None, table.phase
    wait_for(lambda: timezone.now() >= deadline, timeout=30, what="the deadline")
    moved = services.advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=timezone.now(), deck=cards)
    assert moved is not None
    table.refresh_from_db()
    return table


def history(player: Player, hand_id: str) -> list[dict[str, Any]]:
    """The hand's events in its history, as a player of it sees them."""
    answer = player.http.get(f"/api/poker/hands/{hand_id}/")
    assert answer.status_code == 200, answer.text
    events: list[dict[str, Any]] = answer.json()["events"]
    return events


def table_events(table: PokerTable, kind: str) -> list[dict[str, Any]]:
    from ledger.services import read_stream

    return [dict(e.data) for e in read_stream(stream_id=f"poker-table-{table.pk}") if e.type == kind]


def gone(player: Player) -> None:
    wait_for(lambda: not is_present(family=POKER, table_id=player.table_id, player_id=player.player,
                                    at=timezone.now()), timeout=10, what="the socket's lease released")  # fmt: skip


@contextmanager
def sockets(*players: Player) -> Iterator[list[ClientConnection]]:
    opened = []
    try:
        for player in players:
            context = player.socket()
            opened.append((context, context.__enter__()))
        yield [ws for _, ws in opened]
    finally:
        for context, _ in reversed(opened):
            context.__exit__(None, None, None)


def three_players(asgi_server: str, *, first_button: bool = True, **table: Any) -> tuple[PokerTable, list[Player]]:
    """Three players seated; ``first_button``: the first hand's button on seat 1 (set
    beside the log: only for a test that deals, whose first hand records it)."""
    fields = {"turn_seconds": 1, "time_bank_seconds": 0, "disconnection_bank_seconds": 2,
              "reservation_seconds": 60, "between_hands_seconds": 1, **table}  # fmt: skip
    poker = make_table(**fields)
    ids = [make_player() for _ in range(3)]
    for seat, player in enumerate(ids, start=1):
        sit(poker, player, seat, at=timezone.now())
    if first_button:
        PokerTable.objects.filter(pk=poker.pk).update(button_seat=3)  # the first hand: seat 1 acts first
    return poker, [Player(asgi_server, player, poker.pk) for player in ids]


def test_an_absent_actor_gets_the_disconnection_bank_then_folds_sits_out_and_is_not_dealt_in(
    asgi_server: str,
) -> None:
    table, (p1, p2, p3) = three_players(asgi_server, reservation_seconds=4)
    with sockets(p2, p3):
        with p1.socket():
            table = step(table, cards=AA_VS_KK)
            first = PokerHand.objects.get(hand_id=table.current_hand_id)
            assert first.actor_seat == 1
        gone(p1)  # seat 1 lost its connection while to act
        table = step(table)  # its turn timer ran out: the disconnection bank, not the thinking bank (0 here)
        hand = PokerHand.objects.get(pk=first.pk)
        assert hand.in_disconnection_bank
        assert hand.actor_seat == 1
        view = p2.http.get(f"/api/poker/tables/{table.pk}/").json()
        assert view["hand"]["in_disconnection_bank"] is True
        assert view["table"]["disconnection_bank_seconds"] == 2
        turn = [e for e in history(p2, first.hand_id) if e["type"] == "poker_hand.turn"][-1]
        assert (turn["seat"], turn["bank"]) == (1, "disconnection")
        table = step(table)  # the bank ran out too: fold (a call was due), and sit out
        sat_out = table_events(table, "poker_table.sat_out")
        assert [(e["player_id"], e["reason"]) for e in sat_out] == [(p1.player, "disconnected")]
        timed_out = [e for e in history(p2, first.hand_id) if e["type"] == "poker_hand.timed_out"]
        assert [(e["seat"], e["action"], e["disconnected"]) for e in timed_out] == [(1, "fold", True)]
        # The replay shows the fold as the dealer's, after the disconnection bank.
        steps = p2.http.get(f"/api/poker/hands/{first.hand_id}/replay/").json()["steps"]
        fold = next(s for s in steps if s["event"]["type"] == "poker.action_taken" and s["event"]["seat"] == 1)
        assert fold["event"]["action"] == "fold"
        assert [(d["type"], d.get("bank")) for d in fold["dealer"]] == [
            ("poker_hand.turn", None),  # the turn timer
            ("poker_hand.turn", "disconnection"),
            ("poker_hand.timed_out", None),
        ]
        seat1 = PokerSeat.objects.get(table=table, player_id=p1.player)
        assert seat1.sitting_out
        assert seat1.stack == 1_000
        services.act(table_id=table.pk, player_id=p2.player, action="fold", idempotency_key="p2-fold",
                     now=timezone.now())  # fmt: skip
        table = step(table)  # the next hand starts while seat 1 is away: not dealt in, no blind
        second = PokerHand.objects.get(hand_id=table.current_hand_id)
        assert second.pk != first.pk
        assert set(second.players) == {"2", "3"}
        assert PokerSeat.objects.get(table=table, player_id=p1.player).stack == 1_000
        services.act(table_id=table.pk, player_id=_actor(second), action="fold",
                     idempotency_key="fold-2", now=timezone.now())  # fmt: skip
        # The reservation runs out: the seat is emptied, its chips go back to the wallet.
        reserved = seat1.reserved_until
        assert reserved is not None
        wait_for(lambda: timezone.now() > reserved, timeout=10, what="the reservation")
        table = step(table)
    assert not PokerSeat.objects.filter(table=table, player_id=p1.player).exists()
    freed = table_events(table, "poker_table.stood_up")
    assert [(e["player_id"], e["reason"], e["amount"]) for e in freed] == [(p1.player, "reservation_expired", 1_000)]
    assert wallet(p1.player) == 100_000
    assert ledger_sums() == {"EUR": 0}


def _actor(hand: PokerHand) -> int:
    hand.refresh_from_db()
    return int(hand.players[str(hand.actor_seat)])


def test_a_player_back_before_the_reservation_ends_sits_in_again(asgi_server: str) -> None:
    table, (p1, p2, p3) = three_players(asgi_server)
    with sockets(p2, p3):
        with p1.socket():
            pass
        gone(p1)  # away before the hand starts
        table = step(table, cards=AA_VS_KK)
        hand = PokerHand.objects.get(hand_id=table.current_hand_id)
        assert set(hand.players) == {"2", "3"}  # not dealt in, posts no blind
        seat = PokerSeat.objects.get(table=table, player_id=p1.player)
        assert (seat.sitting_out, seat.sat_out_reason, seat.stack) == (True, "disconnected", 1_000)
        with p1.socket():  # back in time: sits in again, from the next hand
            view = p1.http.get(f"/api/poker/tables/{table.pk}/").json()
            mine = next(s for s in view["seats"] if s["you"])
            assert mine["sitting_out"] is False
            assert table_events(table, "poker_table.sat_in")[-1]["rejoined"] is True
            services.act(table_id=table.pk, player_id=_actor(hand), action="fold", idempotency_key="fold-r",
                         now=timezone.now())  # fmt: skip
            table = step(table)
            assert "1" in PokerHand.objects.get(hand_id=table.current_hand_id).players
    assert ledger_sums() == {"EUR": 0}


def test_a_slow_connected_player_never_gets_the_disconnection_bank(asgi_server: str) -> None:
    table, (p1, p2, p3) = three_players(asgi_server, time_bank_seconds=1, disconnection_bank_seconds=30)
    with sockets(p1, p2, p3):
        table = step(table, cards=AA_VS_KK)
        hand_id = table.current_hand_id
        table = step(table)  # turn timer out, still connected: the thinking bank
        hand = PokerHand.objects.get(hand_id=hand_id)
        assert hand.in_time_bank
        assert not hand.in_disconnection_bank
        table = step(table)  # the thinking bank out: fold and sit out for the timeout
        turns = [e for e in history(p2, hand_id) if e["type"] == "poker_hand.turn"]
        banks = [e.get("bank") for e in turns]
        assert "disconnection" not in banks
        assert "thinking" in banks
        reasons = [(e["player_id"], e["reason"]) for e in table_events(table, "poker_table.sat_out")]
        assert reasons == [(p1.player, "timeout")]


def test_a_second_connection_to_the_same_poker_table_closes_the_first(asgi_server: str) -> None:
    table, (p1, _p2, _p3) = three_players(asgi_server, first_button=False)  # no hand is dealt
    with p1.socket() as first, p1.socket() as second:
        until_closed(first)
        assert first.close_code == 4409
        second.send(json.dumps({"type": "ping", "nonce": 1}))
        assert json.loads(second.recv(timeout=10))["type"] == "pong"
        time.sleep(0.3)
        assert is_present(family=POKER, table_id=table.pk, player_id=p1.player, at=timezone.now())


def test_a_seated_player_who_starts_a_cool_off_is_not_dealt_the_next_hand(asgi_server: str) -> None:
    table, (p1, p2, p3) = three_players(asgi_server, turn_seconds=60)
    with sockets(p1, p2, p3) as (ws1, ws2, _ws3):
        cooled = p1.http.post("/api/me/exclusion/", json={"kind": "cool_off", "days": 1})
        assert cooled.status_code == 200, cooled.text
        table = step(table, cards=AA_VS_KK)
        hand = PokerHand.objects.get(hand_id=table.current_hand_id)
        assert set(hand.players) == {"2", "3"}
        assert PokerSeat.objects.get(table=table, player_id=p1.player).stack == 1_000  # no blind posted
        # The reason reaches the player on the table's feed, with the refusal's code.
        deadline = time.monotonic() + 10
        while True:
            frame = json.loads(ws1.recv(timeout=max(0.1, deadline - time.monotonic())))
            event = frame.get("event") or {}
            if frame["type"] == "table" and event.get("type") == "poker_table.sat_out":
                break
        assert event["player_id"] == p1.player
        # The other players see the seat sit out, not why.
        while True:
            other = json.loads(ws2.recv(timeout=10))
            if other["type"] == "table" and (other.get("event") or {}).get("type") == "poker_table.sat_out":
                break
        assert other["event"]["player_id"] == p1.player
        assert other["event"]["reason"] is None
        assert "code" not in other["event"]
        seen = next(s for s in p2.http.get(f"/api/poker/tables/{table.pk}/").json()["seats"] if s["seat"] == 1)
        assert (seen["sitting_out"], seen["sat_out_reason"]) == (True, None)
        # Sitting in is refused while cooling off, with the same code; standing up cashes out.
        refused = p1.http.post(f"/api/poker/tables/{table.pk}/sit-in/")
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] in ("cooling_off", "self_excluded")
        assert (event["reason"], event["code"]) == ("responsible_gaming", refused.json()["error"]["code"])
        left = p1.http.post(f"/api/poker/tables/{table.pk}/leave/", headers={"Idempotency-Key": "leave-1"})
        assert left.status_code == 200, left.text
    assert wallet(p1.player) == 100_000
    assert ledger_sums() == {"EUR": 0}


def test_the_operator_sets_the_disconnection_time_bank_per_table_in_the_admin() -> None:
    """Seed 001: "the value of disconnection timebank is set in the back office",
    per table, apart from the thinking time bank."""
    setup_roles()
    _, client = staff("poker-disconnection-bank", OPERATOR)
    table = make_table(time_bank_seconds=15)
    page = f"/admin/games/pokertable/{table.pk}/change/"
    data = unchanged_form(client, page)
    assert str(data["disconnection_bank_seconds"]) == "30"  # the default
    saved = client.post(page, data | {"disconnection_bank_seconds": "45"})
    assert saved.status_code == 302, saved.context["adminform"].form.errors
    table.refresh_from_db()
    assert (table.disconnection_bank_seconds, table.time_bank_seconds) == (45, 15)
