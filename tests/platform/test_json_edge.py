"""No input answers 500 (issue 35, part 2): JSON is checked at the edge, REST and
websocket alike (``casino.json_input``), and refused with a specific code.

The red team's reproductions: a body nested 1,000+ deep answered
``RecursionError`` 500 on ten endpoints; a lone surrogate in a string answered
``UnicodeEncodeError`` 500 while the error that echoed it was rendered; over the
websocket a 7,000-deep frame and a surrogate chat message each ended in
"Exception in ASGI application" and a 1006 drop. Each now gets its refusal and
changes nothing; the websocket keeps the connection.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any
from urllib.parse import urlencode

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from casino import json_input
from casino.auth import issue_token
from games.house.services import start_table
from games.tables.chat import ChatMessage
from tests.house.live.conftest import fast_table
from tests.house.live.test_limits import connect, finish, until
from tests.house.services.conftest import make_player, rows
from tests.poker.tables import make_table

DEPTH = 1_200  # past the standard library's recursion limit, as the red team sent
DEEP = "[" * DEPTH + "]" * DEPTH
SURROGATE = '{"spot": "\\udc80", "amount": 100, "text": "\\udc80", "action": "\\udc80", "buy_in": 100}'
NUL = '{"spot": "ante\\u0000", "amount": 100, "text": "hi\\u0000", "action": "fold\\u0000"}'


# --- the edge check itself (pure) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (DEEP, "too_deep"),
        ("[" * 10_000 + "]" * 10_000, "too_deep"),
        ('{"a":' * 33 + "1" + "}" * 33, "too_deep"),
        (SURROGATE, "invalid_text"),
        ('{"\\ud800": 1}', "invalid_text"),
        (NUL, "invalid_text"),
        ("NaN", "invalid_json"),
        ('{"amount": Infinity}', "invalid_json"),
        ('{"amount": 1e999}', "invalid_json"),
        ('{"amount": ' + "9" * 5_000 + "}", "invalid_json"),
        ("{not json", "invalid_json"),
        ("", "invalid_json"),
    ],
)
def test_json_input_refuses_each_bad_shape_with_its_code(text: str, code: str) -> None:
    with pytest.raises(json_input.InputRefused) as refused:
        json_input.loads(text, max_depth=32)
    assert refused.value.code == code


def test_json_input_takes_what_the_api_sends() -> None:
    assert json_input.loads(b'{"spot": "ante", "amount": 100, "text": "caf\\u00e9 \xe2\x82\xac"}') == {
        "spot": "ante",
        "amount": 100,
        "text": "café €",
    }
    assert json_input.loads('{"a":' * 31 + "[1]" + "}" * 31, max_depth=32) is not None  # exactly 32 levels
    with pytest.raises(json_input.InvalidText):
        json_input.loads(b'{"text": "\xff"}')  # bytes that are not UTF-8


# --- REST: the ten endpoints the red team broke ---------------------------------------------------


def _client(user: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user=user)}")
    return client


def _state() -> dict[str, Any]:
    return {
        **rows("ledger_event", "ledger_transfer", "ledger_hold", "ledger_account", "games_playerround"),
        **rows("games_pokerseat", "casino_cashiertransaction", "casino_responsiblegaming", "live_chatmessage"),
    }


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_every_body_the_red_team_sent_is_refused_with_its_code_and_changes_nothing() -> None:
    table = fast_table("uth", betting_seconds=60)
    player_id = make_player(table)
    start_table(table_id=table.pk, now=timezone.now())
    poker = make_table()
    client = _client(get_user_model().objects.get(pk=player_id))
    endpoints = [
        ("post", f"/api/tables/{table.pk}/bets/chip/"),
        ("post", f"/api/tables/{table.pk}/decision/"),
        ("post", f"/api/tables/{table.pk}/chat/"),
        ("post", f"/api/poker/tables/{poker.pk}/sit/"),
        ("post", f"/api/poker/tables/{poker.pk}/act/"),
        ("post", f"/api/poker/tables/{poker.pk}/top-up/"),
        ("post", "/api/cashier/deposits/"),
        ("post", "/api/cashier/withdrawals/"),
        ("put", "/api/me/limits/"),
        ("post", "/api/me/exclusion/"),
    ]
    for body, code in ((DEEP, "too_deep"), (SURROGATE, "invalid_text"), (NUL, "invalid_text")):
        for method, path in endpoints:
            before = _state()
            answer = getattr(client, method)(
                path, data=body, content_type="application/json", HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex
            )
            assert answer.status_code == 400, (path, code, answer.content)
            assert answer.json()["error"]["code"] == code, (path, answer.content)
            assert _state() == before, f"{path}: a refused body changed something"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_no_documented_operation_answers_a_server_error_to_the_bad_shapes() -> None:
    """Every operation of the published schema that takes a body, as a superuser (past
    every permission): the bad shapes get a 4xx, and a 400 names the shape's code."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    admin = get_user_model().objects.create_superuser(username=f"edge-{uuid.uuid4().hex[:8]}", password="x" * 16)
    client = APIClient()
    client.force_authenticate(user=admin)
    shapes = [
        (DEEP, "too_deep"),
        (SURROGATE, "invalid_text"),
        (NUL, "invalid_text"),
        ('{"amount": 1e999}', "invalid_json"),
    ]
    operations = [
        (path, method)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in {"post", "put", "patch"} and "requestBody" in operation
    ]
    assert len(operations) > 15  # the schema was read
    for path, method in operations:
        url = re.sub(r"\{[^}]*id\}", "1", path.replace("{id}", str(uuid.uuid4())))
        url = re.sub(r"\{[^}]+\}", "nope", url)
        for body, code in shapes:
            answer = getattr(client, method)(
                url, data=body, content_type="application/json", HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex
            )
            assert answer.status_code < 500, (method, url, code, answer.content[:300])
            if answer.status_code == 400:
                assert answer.json()["error"]["code"] == code, (method, url, answer.content[:300])


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_path_segment_with_nul_names_nothing() -> None:
    """``<text:...>`` (``casino.converters``): a game number or hand id with NUL
    matches no route (404), where the lookup by it was a 500."""
    client = APIClient()
    client.force_authenticate(user=get_user_model().objects.create_superuser(username="nul-path", password="x" * 16))
    for path in ("/api/history/games/%00/", "/api/rounds/a%00/fairness/", "/api/compliance/game-recall/%00/",
                 "/api/compliance/reports/%00/", "/api/poker/hands/%00/", "/api/poker/hands/%00/replay/",
                 "/api/poker/hands/%00/fairness/"):  # fmt: skip
        answer = client.get(path)
        assert answer.status_code == 404, (path, answer.content[:200])
        assert answer.json()["error"]["code"] == "not_found", path


# --- form bodies: the same text check (casino.parsers) ------------------------------------------


@pytest.mark.postgres
@pytest.mark.django_db
def test_form_bodies_get_the_same_text_check_and_no_number_shape_answers_500() -> None:
    """The API documents form bodies too (``application/x-www-form-urlencoded``,
    ``multipart/form-data``): NUL in a field is ``invalid_text`` as in JSON, and
    the number shapes a form can carry (as text) get the field's own refusal."""
    table = fast_table("uth", betting_seconds=60)
    player_id = make_player(table)
    start_table(table_id=table.pk, now=timezone.now())
    client = _client(get_user_model().objects.get(pk=player_id))
    chip = f"/api/tables/{table.pk}/bets/chip/"
    before = _state()
    for fmt in ("multipart", "form"):
        for body, code in (
            ({"spot": "ante\x00", "amount": "100"}, "invalid_text"),
            ({"spot": "ante", "amount": "100", "note\x00": "x"}, "invalid_text"),
            ({"spot": "ante", "amount": "1e400"}, None),
            ({"spot": "ante", "amount": "9" * 5_000}, None),
            ({"spot": "ante", "amount": "NaN"}, None),
            ({"spot": "ante", "amount": "-0"}, None),
        ):
            if fmt == "form":
                answer = client.post(chip, data=urlencode(body), content_type="application/x-www-form-urlencoded",
                                     HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex)  # fmt: skip
            else:
                answer = client.post(chip, data=body, format="multipart", HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex)
            assert 400 <= answer.status_code < 500, (fmt, body, answer.content[:300])
            if code is not None:
                assert answer.json()["error"]["code"] == code, (fmt, answer.content[:300])
    assert _state() == before
    # A username no user model holds (it overflowed django-axes' record of the failure: a 500).
    login = APIClient().post("/api/auth/token/", {"username": "9" * 5_000, "password": "x"}, format="multipart")
    assert login.status_code == 400, login.content[:300]


# --- websocket: the same refusals, and the connection stays -------------------------------------


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_deep_frame_and_a_surrogate_chat_message_are_refused_and_the_socket_stays(asgi_server) -> None:
    table = fast_table("uth", betting_seconds=60)
    token = issue_token(user=get_user_model().objects.get(pk=make_player(table)))
    log = settings.VAR_DIR / "test-asgi.log"
    logged_before = log.stat().st_size

    async def scenario() -> list[dict[str, Any]]:
        async with connect(asgi_server, f"/ws/tables/{table.pk}/", token) as ws:
            await until(ws, lambda m: m.get("type") == "snapshot")
            await ws.send("[" * 7_000 + "]" * 7_000)  # 14 KB: within the frame limit
            deep = await until(ws, lambda m: m.get("type") == "error")
            await ws.send('{"type": "chat", "id": "c1", "text": "\\udc80"}')
            surrogate = await until(ws, lambda m: m.get("type") == "error")
            await ws.send(json.dumps({"type": "ping"}))
            pong = await until(ws, lambda m: m.get("type") == "pong")
            assert ws.close_code is None
            return [deep, surrogate, pong]

    before = ChatMessage.objects.count()
    deep, surrogate, pong = finish(scenario())
    assert deep["code"] == "too_deep", deep
    assert surrogate["code"] == "invalid_text", surrogate
    assert surrogate.get("id") == "c1", surrogate
    assert pong["type"] == "pong"
    assert ChatMessage.objects.count() == before
    with log.open("rb") as written:
        written.seek(logged_before)
        assert b"Exception in ASGI application" not in written.read()
