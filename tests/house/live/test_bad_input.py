"""Bad input gets a specific 4xx code and changes nothing (issue 6), through the real
DRF stack on PostgreSQL; plus per-player authorisation and REST redaction."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from casino.auth import issue_token
from games.house.models import HouseTable, TableSeat
from games.house.services import advance_table, place_chip, start_table
from tests.house.live.conftest import fast_table
from tests.house.services.conftest import key, make_player, snapshot

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def client_for(player_id: int) -> APIClient:
    client = APIClient()
    user = get_user_model().objects.get(pk=player_id)
    client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user=user)}")
    return client


def post(client: APIClient, path: str, body: Any = None, *, idem: str | None = "fresh", raw: str | None = None) -> Any:
    headers: dict[str, Any] = {}
    if idem is not None:
        headers["HTTP_IDEMPOTENCY_KEY"] = uuid.uuid4().hex if idem == "fresh" else idem
    data = raw if raw is not None else json.dumps(body if body is not None else {})
    return client.post(path, data=data, content_type="application/json", **headers)


def state() -> dict[str, Any]:
    result = snapshot()
    result["seats"] = sorted(TableSeat.objects.values_list("table_id", "player_id"))
    return result


@pytest.fixture
def betting() -> tuple[HouseTable, int, APIClient]:
    table = fast_table("uth", betting_seconds=60)
    player = make_player(table)
    start_table(table_id=table.pk, now=timezone.now())
    return table, player, client_for(player)


def refused(action: Callable[[], Any], status: int, code: str) -> None:
    before = state()
    response = action()
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code, response.content
    assert state() == before, "a refused request changed something"


def test_bet_refusals_each_have_their_code_and_change_nothing(betting) -> None:
    table, _player, client = betting
    chip = f"/api/tables/{table.pk}/bets/chip/"
    refused(lambda: post(client, chip, raw="{not json"), 400, "invalid_json")
    refused(lambda: post(client, chip, {"spot": "ante", "amount": 100}, idem=None), 400, "idempotency_key_required")
    refused(lambda: post(client, chip, {"spot": "nope", "amount": 100}), 400, "spot_not_offered")
    refused(lambda: post(client, chip, {"spot": "ante", "amount": 50}), 400, "below_minimum")
    refused(lambda: post(client, chip, {"spot": "ante", "amount": "100"}), 400, "invalid_amount")
    refused(lambda: post(client, chip, {"spot": "ante", "amount": 100.5}), 400, "invalid_amount")
    refused(lambda: post(client, chip, {"spot": "ante", "amount": -100}), 400, "invalid_amount")
    refused(lambda: post(client, chip, {"spot": "ante", "amount": True}), 400, "invalid_amount")
    refused(lambda: post(client, chip, {"amount": 100}), 400, "invalid_field")
    refused(
        lambda: post(client, "/api/tables/999999/bets/chip/", {"spot": "ante", "amount": 100}), 404, "table_not_found"
    )
    # An idempotency key replayed with another body is refused; with the same body it returns the first result.
    first = post(client, chip, {"spot": "ante", "amount": 100}, idem="same-key")
    assert first.status_code == 200, first.content
    refused(lambda: post(client, chip, {"spot": "ante", "amount": 200}, idem="same-key"), 409, "idempotency_key_reused")
    before = state()
    again = post(client, chip, {"spot": "ante", "amount": 100}, idem="same-key")
    assert again.status_code == 200
    assert again.json() == first.json()
    assert state() == before


def test_bets_outside_the_window_and_decisions_out_of_turn_are_refused(betting) -> None:
    table, player, client = betting
    decision = f"/api/tables/{table.pk}/decision/"
    place_chip(table_id=table.pk, player_id=player, spot="ante", amount=100, idempotency_key=key(), now=timezone.now())
    # A second player who will not decide keeps the preflop window open after the
    # first one calls (everyone having decided would let the dealer move on at once).
    undecided = make_player(table)
    place_chip(
        table_id=table.pk, player_id=undecided, spot="ante", amount=100, idempotency_key=key(), now=timezone.now()
    )
    # Betting open: no decision yet.
    refused(lambda: post(client, decision, {"option": "check"}), 409, "no_decision_window")
    # Close betting by the server's clock (the deadline passed); cards are dealt.
    table.refresh_from_db()
    tick = advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=table.deadline)
    assert tick is not None
    assert tick.phase == "preflop"
    refused(
        lambda: post(client, f"/api/tables/{table.pk}/bets/chip/", {"spot": "ante", "amount": 100}),
        409,
        "betting_closed",
    )
    refused(lambda: post(client, decision, {"option": "call2x"}), 400, "option_not_offered")
    other = make_player(table)
    refused(lambda: post(client_for(other), decision, {"option": "check"}), 409, "not_in_round")
    ok = post(client, decision, {"option": "call4x"})
    assert ok.status_code == 200, ok.content
    refused(lambda: post(client, decision, {"option": "check"}), 400, "decision_after_call")


def test_seats_a_second_seat_and_a_fifth_table_are_refused() -> None:
    tables = [fast_table("uth") for _ in range(5)]
    player = make_player()
    client = client_for(player)
    for table in tables[:4]:
        assert post(client, f"/api/tables/{table.pk}/join/").status_code == 201
    refused(lambda: post(client, f"/api/tables/{tables[0].pk}/join/"), 409, "already_seated")
    refused(lambda: post(client, f"/api/tables/{tables[4].pk}/join/"), 409, "too_many_tables")
    refused(lambda: post(client, "/api/tables/999999/join/"), 404, "table_not_found")
    assert client.post(f"/api/tables/{tables[0].pk}/leave/").status_code == 204
    assert post(client, f"/api/tables/{tables[4].pk}/join/").status_code == 201


def test_a_seat_given_up_mid_round_counts_until_its_wagers_are_settled() -> None:
    """RULES.md: at most 4 tables at once. Leaving a table whose round holds the
    player's wagers (betting closed: "a round, once bets close, proceeds") does
    not free a table until that round ends."""
    tables = [fast_table("uth", betting_seconds=60) for _ in range(5)]
    player = make_player()
    client = client_for(player)
    for table in tables[:4]:
        assert post(client, f"/api/tables/{table.pk}/join/").status_code == 201
    tick: Any = start_table(table_id=tables[0].pk, now=timezone.now())
    chip = post(client, f"/api/tables/{tables[0].pk}/bets/chip/", {"spot": "ante", "amount": 100})
    assert chip.status_code == 200, chip.content
    tick = advance_table(table_id=tables[0].pk, expected_seq=tick.phase_seq, now=tick.deadline)  # betting closes
    assert client.post(f"/api/tables/{tables[0].pk}/leave/").status_code == 204
    refused(lambda: post(client, f"/api/tables/{tables[4].pk}/join/"), 409, "too_many_tables")
    while tick is not None and tick.phase not in ("between", "idle"):  # the round plays on without the seat
        assert tick.deadline is not None
        tick = advance_table(table_id=tables[0].pk, expected_seq=tick.phase_seq, now=tick.deadline)
    assert post(client, f"/api/tables/{tables[4].pk}/join/").status_code == 201


def test_leaving_during_betting_returns_the_bets_and_frees_the_table() -> None:
    """Seed 000: leaving while betting time remains, "your bets will therefore be
    declined for that particular game round"."""
    tables = [fast_table("uth", betting_seconds=60) for _ in range(5)]
    player = make_player(funds=10_000)
    client = client_for(player)
    for table in tables[:4]:
        assert post(client, f"/api/tables/{table.pk}/join/").status_code == 201
    start_table(table_id=tables[0].pk, now=timezone.now())
    chip = post(client, f"/api/tables/{tables[0].pk}/bets/chip/", {"spot": "ante", "amount": 100})
    assert chip.json()["balance"] == 10_000 - 200  # the Ante and its Ante Plus
    assert client.post(f"/api/tables/{tables[0].pk}/leave/").status_code == 204
    assert client.get("/api/wallet/?currency=EUR").json()["balance"] == 10_000
    assert post(client, f"/api/tables/{tables[4].pk}/join/").status_code == 201
    refused(lambda: post(client, f"/api/tables/{tables[0].pk}/bets/chip/", {"spot": "ante", "amount": 100}), 409,
            "not_seated")  # fmt: skip


def leaves(value: object, key: str = "") -> list[tuple[str, object]]:
    """Every (key, scalar) pair of a JSON document."""
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in leaves(v, str(k))]
    if isinstance(value, list):
        return [pair for item in value for pair in leaves(item, key)]
    return [(key, value)]


def test_unauthenticated_and_cross_player_access(betting) -> None:
    table, player, client = betting
    place_chip(table_id=table.pk, player_id=player, spot="ante", amount=300, idempotency_key=key(), now=timezone.now())
    anonymous = APIClient()
    for path in ("/api/tables/", f"/api/tables/{table.pk}/", "/api/wallet/", "/api/history/"):
        response = anonymous.get(path)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "not_authenticated"
    refused(
        lambda: post(anonymous, f"/api/tables/{table.pk}/bets/chip/", {"spot": "ante", "amount": 100}),
        401,
        "not_authenticated",
    )
    # Another player sees the table but never this player's bets or balance.
    other = make_player(table, funds=5_000)
    view = client_for(other).get(f"/api/tables/{table.pk}/").json()
    assert view["me"]["player_id"] == other
    assert view["me"]["bets"] == {}
    assert view["me"]["balance"] == 5_000
    # The other player's 300 appears nowhere in this player's view (ids aside: an id may be 300).
    assert [(k, v) for k, v in leaves(view["me"]) if v == 300 and not k.endswith("id")] == []
    # A bet of another player cannot be undone by this one (their own round has nothing to undo).
    refused(lambda: post(client_for(other), f"/api/tables/{table.pk}/bets/undo/"), 409, "nothing_to_undo")
    # Game recall: only one's own games.
    table.refresh_from_db()
    refused(lambda: client_for(other).get(f"/api/history/games/{table.current_round_id}/"), 404, "game_not_found")
    assert client.get(f"/api/history/games/{table.current_round_id}/").status_code == 200


def test_rest_never_shows_face_down_cards_before_the_reveal(betting) -> None:
    table, player, client = betting
    place_chip(table_id=table.pk, player_id=player, spot="ante", amount=100, idempotency_key=key(), now=timezone.now())
    table.refresh_from_db()
    tick = advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=table.deadline)
    assert tick is not None
    view = client.get(f"/api/tables/{table.pk}/").json()
    cards = view["round"]["cards"]
    assert len(cards["player"]) == 2
    assert all(cards["player"])
    assert cards["dealer"] == [None, None]
    assert cards["board"] == [None] * 5
    history = client.get(f"/api/history/games/{table.current_round_id}/").json()
    assert history["cards"]["dealer"] == [None, None]
    dealt = next(e for e in history["round_events"] if e["type"] == "house_round.cards_dealt")
    assert all(c["card"] is None for c in dealt["data"]["cards"] if c["to"] in ("dealer", "board"))


def test_table_list_reports_phase_deadline_and_traffic_light(betting) -> None:
    table, _, client = betting
    rows = {row["id"]: row for row in client.get("/api/tables/").json()}
    row = rows[table.pk]
    assert row["phase"] == "betting"
    assert row["deadline"]
    assert row["limits"]["ante"]["min"] == 100
    assert row["traffic_light"] == "green"  # 60 s window, 1 s warning
    HouseTable.objects.filter(pk=table.pk).update(deadline=timezone.now() + timedelta(seconds=0.5))
    assert {r["id"]: r for r in client.get("/api/tables/").json()}[table.pk]["traffic_light"] == "yellow"
    HouseTable.objects.filter(pk=table.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    assert {r["id"]: r for r in client.get("/api/tables/").json()}[table.pk]["traffic_light"] == "red"


def test_chat_is_stored_rate_limited_and_hideable(betting, settings) -> None:
    settings.CASINO_CHAT_RATE = 2
    table, _player, client = betting
    path = f"/api/tables/{table.pk}/chat/"
    assert post(client, path, {"text": "hello"}, idem=None).status_code == 201
    assert post(client, path, {"text": "again"}, idem=None).status_code == 201
    refused(lambda: post(client, path, {"text": "spam"}, idem=None), 429, "chat_rate_limited")
    refused(lambda: post(client, path, {"text": ""}, idem=None), 400, "invalid_chat_message")
    refused(lambda: post(client, path, {"text": "nul\u0000byte"}, idem=None), 400, "invalid_text")
    other = make_player(table)
    other_client = client_for(other)
    assert [m["text"] for m in other_client.get(path).json()] == ["hello", "again"]
    assert other_client.patch("/api/me/settings/", {"hide_chat": True}, format="json").status_code == 200
    assert other_client.get(path).json() == []
    outsider = client_for(make_player())
    refused(lambda: post(outsider, path, {"text": "hi"}, idem=None), 409, "not_seated")


def test_a_configuration_change_leaves_the_running_rounds_traffic_light_alone(betting) -> None:
    """A change is in force from the next round: the round in betting keeps the
    warning seconds it opened with (1 s of a 60 s window), in the lobby and on
    the table's own view, while the table row already shows the new 59 s."""
    from games.house.services.tables import configure_table

    table, _, client = betting
    operator = get_user_model().objects.create_superuser(username=f"op-{uuid.uuid4().hex[:8]}", password="x")
    version = configure_table(
        table_id=table.pk, operator=operator, config={"warning_seconds": 59}, reason="test", now=timezone.now()
    )
    assert version is not None
    table.refresh_from_db()
    assert table.warning_seconds == 59
    # 30 s left: yellow by the new 59 s, green by the round's own 1 s.
    HouseTable.objects.filter(pk=table.pk).update(deadline=timezone.now() + timedelta(seconds=30))
    lobby = {r["id"]: r for r in client.get("/api/tables/").json()}
    assert lobby[table.pk]["traffic_light"] == "green"
    assert client.get(f"/api/tables/{table.pk}/").json()["traffic_light"] == "green"
    HouseTable.objects.filter(pk=table.pk).update(deadline=timezone.now() + timedelta(seconds=0.5))
    assert {r["id"]: r for r in client.get("/api/tables/").json()}[table.pk]["traffic_light"] == "yellow"
