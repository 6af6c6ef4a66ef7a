"""Issue #22, part 2: "Every one of these transitions is an event, shown in
history and replay" -- the seat transitions of seed 001's disconnection
policy and of responsible gaming, through the real API on PostgreSQL.

- ``GET /api/poker/tables/<id>/seat-history/``: a player's own seat events
  at the table, in order (sat down, sat out with why, sat in / rejoined,
  stood up with the chips returned and why). Nobody reads another player's:
  each caller gets only their own events.
- The hand history and replay say, in ``at_the_deal``, which seats were dealt
  in and which sat out at the deal, the reason for the viewer's own seat only
  (RULES.md: another player's responsible-gaming stop is private). A player
  whose seat sat out at the deal may replay the hand and read why.

The disconnection tests use real websocket clients of a real uvicorn process
(the helpers of ``test_presence``); the responsible-gaming ones the API client.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from games.poker.models import PokerHand, PokerSeat, PokerTable
from tests.db import ledger_sums
from tests.house.live.conftest import wait_for
from tests.poker.tables import advance, make_player, make_table, sit, wallet
from tests.poker.test_presence import _actor, gone, sockets, step, three_players
from tests.poker.test_tables import AA_VS_KK
from tests.poker.test_ws_act import Player

SAT_DOWN, SAT_OUT, SAT_IN, STOOD_UP = (
    "poker_table.sat_down", "poker_table.sat_out", "poker_table.sat_in", "poker_table.stood_up",
)  # fmt: skip


def seat_history(player: Player, table_id: int) -> list[dict[str, Any]]:
    answer = player.http.get(f"/api/poker/tables/{table_id}/seat-history/")
    assert answer.status_code == 200, answer.text
    page = answer.json()
    assert page["count"] == len(page["results"])
    results: list[dict[str, Any]] = page["results"]
    return results


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_disconnected_player_sees_their_sit_out_then_their_rejoin(asgi_server: str) -> None:
    table, (p1, p2, p3) = three_players(asgi_server)
    with sockets(p2, p3):
        with p1.socket():
            pass
        gone(p1)  # away before the hand starts: not dealt in (seed 001)
        table = step(table, cards=AA_VS_KK)
        hand_id = table.current_hand_id
        # The replay says seat 1 was seated and sitting out at the deal; not why, to another player.
        seen = p2.http.get(f"/api/poker/hands/{hand_id}/replay/").json()["at_the_deal"]
        assert [row["seat"] for row in seen["dealt_in"]] == [2, 3]
        assert seen["sitting_out"] == [{"seat": 1, "player_id": p1.player, "reason": None, "code": None}]
        # The player who was away may replay it, and reads why they were not in it.
        mine = p1.http.get(f"/api/poker/hands/{hand_id}/replay/")
        assert mine.status_code == 200, mine.text
        assert mine.json()["at_the_deal"]["sitting_out"] == [
            {"seat": 1, "player_id": p1.player, "reason": "disconnected", "code": None}
        ]
        assert all(p["cards"] is None for p in mine.json()["steps"][-1]["state"]["players"])  # no hole card
        with p1.socket():  # back while the seat is reserved: sits in again
            wait_for(lambda: not PokerSeat.objects.get(table=table, player_id=p1.player).sitting_out,
                     timeout=10, what="the rejoin")  # fmt: skip
            services_fold(table, hand_id)
    events = seat_history(p1, table.pk)
    assert [(e["type"], e["seat"]) for e in events] == [(SAT_DOWN, 1), (SAT_OUT, 1), (SAT_IN, 1)]
    assert events[0]["buy_in"] == 1_000
    assert (events[1]["reason"], events[1]["code"]) == ("disconnected", None)
    assert events[1]["reserved_until"] is not None
    assert events[2]["rejoined"] is True
    assert [e["version"] for e in events] == sorted(e["version"] for e in events)
    # Another player's seat history holds only their own sitting down.
    others = seat_history(p2, table.pk)
    assert [(e["type"], e["seat"]) for e in others] == [(SAT_DOWN, 2)]


def services_fold(table: PokerTable, hand_id: str) -> None:
    from games.poker import services

    services.act(table_id=table.pk, player_id=_actor(PokerHand.objects.get(hand_id=hand_id)), action="fold",
                 idempotency_key=f"fold-{hand_id}", now=timezone.now())  # fmt: skip


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_reservation_that_runs_out_is_a_stand_up_with_the_stack_returned(asgi_server: str) -> None:
    table, (p1, p2, p3) = three_players(asgi_server, reservation_seconds=2)
    with sockets(p2, p3):
        with p1.socket():
            pass
        gone(p1)
        table = step(table, cards=AA_VS_KK)
        first = table.current_hand_id
        reserved = PokerSeat.objects.get(table=table, player_id=p1.player).reserved_until
        assert reserved is not None
        services_fold(table, first)
        wait_for(lambda: timezone.now() > reserved, timeout=10, what="the reservation")
        table = step(table)  # the next deal frees the seat first, then deals without it
        assert table.current_hand_id != first
        assert set(PokerHand.objects.get(hand_id=table.current_hand_id).players) == {"2", "3"}
    events = seat_history(p1, table.pk)
    assert [e["type"] for e in events] == [SAT_DOWN, SAT_OUT, STOOD_UP]
    assert events[1]["reason"] == "disconnected"
    assert (events[2]["reason"], events[2]["amount"]) == ("reservation_expired", 1_000)
    assert wallet(p1.player) == 100_000  # every chip back in the wallet
    # The seat is gone, the history of the hand it sat out of still says why, to its player.
    told = p1.http.get(f"/api/poker/hands/{first}/").json()["at_the_deal"]["sitting_out"]
    assert told == [{"seat": 1, "player_id": p1.player, "reason": "disconnected", "code": None}]
    assert ledger_sums() == {"EUR": 0}


def client(player: int) -> APIClient:
    api = APIClient()
    api.force_authenticate(get_user_model().objects.get(pk=player))
    return api


def cooled_off_at_the_deal() -> tuple[PokerTable, list[int], str]:
    """Three seated players; the first starts a cool-off, then a hand is dealt."""
    table = make_table()
    players = [make_player() for _ in range(3)]
    for number, player in enumerate(players, start=1):
        sit(table, player, number, at=timezone.now())
    PokerTable.objects.filter(pk=table.pk).update(button_seat=3)
    cooled = client(players[0]).post("/api/me/exclusion/", {"kind": "cool_off", "days": 1}, format="json")
    assert cooled.status_code == 200, cooled.content
    table = advance(table, cards=AA_VS_KK)
    return table, players, table.current_hand_id


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_responsible_gaming_sit_out_shows_its_code_to_that_player_only() -> None:
    table, (p1, p2, _p3), hand_id = cooled_off_at_the_deal()
    assert set(PokerHand.objects.get(hand_id=hand_id).players) == {"2", "3"}
    refused = client(p1).post(f"/api/poker/tables/{table.pk}/sit-in/")
    assert refused.status_code == 403
    code = refused.json()["error"]["code"]
    # The player's own seat history: the sit-out, its reason and the refusal's code.
    mine = client(p1).get(f"/api/poker/tables/{table.pk}/seat-history/").json()["results"]
    assert [e["type"] for e in mine] == [SAT_DOWN, SAT_OUT]
    assert (mine[1]["reason"], mine[1]["code"]) == ("responsible_gaming", code)
    # Their replay of the hand they sat out of says why.
    replay = client(p1).get(f"/api/poker/hands/{hand_id}/replay/")
    assert replay.status_code == 200
    assert replay.json()["at_the_deal"]["sitting_out"] == [
        {"seat": 1, "player_id": p1, "reason": "responsible_gaming", "code": code}
    ]
    # Another player: their own seat history has nothing of it; the hand shows seat 1 out, not why.
    theirs = client(p2).get(f"/api/poker/tables/{table.pk}/seat-history/").json()
    assert (theirs["count"], [(e["type"], e["seat"]) for e in theirs["results"]]) == (1, [(SAT_DOWN, 2)])
    for path in (f"/api/poker/hands/{hand_id}/", f"/api/poker/hands/{hand_id}/replay/"):
        answer = client(p2).get(path)
        assert answer.status_code == 200
        assert answer.json()["at_the_deal"]["sitting_out"] == [
            {"seat": 1, "player_id": p1, "reason": None, "code": None}
        ]
        text = json.dumps(answer.json())
        assert "responsible_gaming" not in text
        assert code not in text
    # A player never at the table: an empty seat history, and not the hand.
    stranger = make_player()
    page = client(stranger).get(f"/api/poker/tables/{table.pk}/seat-history/").json()
    assert (page["count"], page["results"]) == (0, [])
    assert client(stranger).get(f"/api/poker/hands/{hand_id}/replay/").status_code == 404


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_hand_with_everyone_dealt_in_has_nobody_sitting_out() -> None:
    table = make_table()
    players = [make_player() for _ in range(2)]
    for number, player in enumerate(players, start=1):
        sit(table, player, number, at=timezone.now())
    table = advance(table, cards=AA_VS_KK)
    deal = client(players[0]).get(f"/api/poker/hands/{table.current_hand_id}/").json()["at_the_deal"]
    assert [(row["seat"], row["player_id"], row["stack"]) for row in deal["dealt_in"]] == [
        (1, players[0], 1_000), (2, players[1], 1_000),
    ]  # fmt: skip
    assert deal["sitting_out"] == []


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_seat_history_pages_and_refuses_bad_input() -> None:
    table = make_table()
    player = make_player()
    api = client(player)
    path = f"/api/poker/tables/{table.pk}/seat-history/"
    sit(table, player, 1, at=timezone.now())
    assert api.post(f"/api/poker/tables/{table.pk}/sit-out/").status_code == 200
    assert api.post(f"/api/poker/tables/{table.pk}/sit-in/").status_code == 200
    left = api.post(f"/api/poker/tables/{table.pk}/leave/", HTTP_IDEMPOTENCY_KEY="leave-1")
    assert left.status_code == 200
    everything = api.get(path).json()
    assert [e["type"] for e in everything["results"]] == [SAT_DOWN, SAT_OUT, SAT_IN, STOOD_UP]
    assert everything["results"][1]["reason"] == "player"
    assert everything["results"][2]["rejoined"] is False
    assert (everything["results"][3]["reason"], everything["results"][3]["amount"]) == ("left", 1_000)
    page = api.get(path, {"limit": 2, "offset": 1}).json()
    assert (page["count"], page["limit"], page["offset"]) == (4, 2, 1)
    assert page["results"] == everything["results"][1:3]
    for query in ({"limit": 201}, {"limit": -1}, {"offset": "x"}, {"offset": 10**7}):
        refused = api.get(path, query)
        assert refused.status_code == 400, query
        assert refused.json()["error"]["code"] == "invalid_query"
    missing = api.get(f"/api/poker/tables/{table.pk + 1000}/seat-history/")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "poker_table_not_found"
