"""The AsyncAPI document of the table websockets (``GET /api/asyncapi.json``,
``games/tables/asyncapi.py``; issue 21) is a sound AsyncAPI 3 document, and it tells
the truth: real tables are driven over real websockets on a real uvicorn
process (house: a round opened by the dealer, a REST bet, chat, a notice, ping,
refusals; poker: a seat taken, a hand dealt, an action), and EVERY frame the
server sent validates against the payload schema of the message of its
``type`` in the operation that says the server sends it. A frame of a type the
document does not list fails, whatever the type (command answers included)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from games.house.services import start_table
from tests.house.live.conftest import fast_table
from tests.house.live.test_limits import connect, finish, player, poker_table, recv_json, until
from tests.poker.tables import advance
from tests.poker.test_tables import AA_VS_KK

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def document(asgi_server) -> dict[str, Any]:
    response = httpx.get(f"{asgi_server}/api/asyncapi.json", timeout=10)  # anonymous
    assert response.status_code == 200, response.text
    return response.json()


def resolve(document: dict[str, Any], pointer: str) -> Any:
    assert pointer.startswith("#/"), pointer
    node: Any = document
    for part in pointer[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def references(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from references(value)
    elif isinstance(node, list):
        for value in node:
            yield from references(value)


def sent_by_server(document: dict[str, Any], address: str) -> dict[str, dict[str, Any]]:
    """``type`` -> Message Object of every message the server sends on the channel at ``address``."""
    found: dict[str, dict[str, Any]] = {}
    for operation in document["operations"].values():
        if operation["action"] != "send" or resolve(document, operation["channel"]["$ref"])["address"] != address:
            continue
        for reference in operation["messages"]:
            message = resolve(document, reference["$ref"])
            if "$ref" in message:
                message = resolve(document, message["$ref"])
            payload = message["payload"]
            if "$ref" in payload:
                payload = resolve(document, payload["$ref"])
            schema = next(
                p for p in [payload, *payload.get("allOf", [])] if "const" in p.get("properties", {}).get("type", {})
            )
            kind = schema["properties"]["type"]["const"]
            assert kind not in found, f"two messages of type {kind} on {address}"
            found[kind] = message
    return found


def validate_frames(document: dict[str, Any], address: str, frames: list[dict[str, Any]]) -> set[str]:
    """Every frame against its message's payload schema; the set of types seen."""
    documented = sent_by_server(document, address)
    seen = set()
    for frame in frames:
        kind = frame.get("type")
        assert kind in documented, f"frame type {kind!r} on {address} is not in the document: {frame}"
        # The payload, resolved against the whole document (its $refs point into components).
        schema = {"$ref": "#/payload", "payload": documented[kind]["payload"], "components": document["components"]}
        jsonschema.Draft7Validator(schema).validate(frame)
        seen.add(kind)
    return seen


def test_the_document_is_asyncapi_3_and_every_reference_resolves(document) -> None:
    assert document["asyncapi"] == "3.0.0"
    assert document["info"]["title"]
    assert document["info"]["version"]
    assert all(server["protocol"] in ("ws", "wss") and server["host"] for server in document["servers"].values())
    addresses = {channel["address"] for channel in document["channels"].values()}
    assert addresses == {"/ws/tables/{table_id}/", "/ws/poker/{table_id}/", "/ws/poker/tournaments/{tournament_id}/"}
    for reference in references(document):
        resolve(document, reference)  # raises KeyError if it does not resolve
    for name, operation in document["operations"].items():
        assert operation["action"] in ("send", "receive"), name
        channel_ref = operation["channel"]["$ref"]
        assert channel_ref.startswith("#/channels/"), name
        for message in operation["messages"]:
            # AsyncAPI 3: an operation's messages are its channel's.
            assert message["$ref"].startswith(f"{channel_ref}/messages/"), (name, message)
    for name, message in document["components"]["messages"].items():
        jsonschema.Draft7Validator.check_schema(message["payload"])
        assert message["contentType"] == "application/json", name
    for name, schema in document["components"]["schemas"].items():
        jsonschema.Draft7Validator.check_schema(schema)
        assert schema, name
    # Close codes, the resume parameter and the limits are documented.
    assert set(document["x-close-codes"]) >= {"4401", "4404", "4408", "4429", "1009"}
    house = next(c for c in document["channels"].values() if c["address"].startswith("/ws/tables/"))
    assert "since" in house["bindings"]["ws"]["query"]["properties"]
    assert set(document["x-limits"]) >= {"max_frame_bytes", "messages_per_second", "burst", "connections_per_player"}


def test_every_message_each_way_is_documented(document) -> None:
    def kinds(address: str, action: str) -> set[str]:
        names = set()
        for operation in document["operations"].values():
            channel = resolve(document, operation["channel"]["$ref"])
            if operation["action"] == action and channel["address"] == address:
                for reference in operation["messages"]:
                    message = resolve(document, resolve(document, reference["$ref"])["$ref"])
                    names.add(message["name"])
        return names

    assert kinds("/ws/tables/{table_id}/", "send") == {"snapshot", "delta", "private", "chat", "notice", "pong",
                                                       "error", "ack"}  # fmt: skip
    assert kinds("/ws/tables/{table_id}/", "receive") == {"snapshot", "chat", "ping", "bet", "undo", "clear", "repeat",
                                                          "double", "decision", "join", "leave"}  # fmt: skip
    assert kinds("/ws/poker/{table_id}/", "send") >= {"snapshot", "delta", "private", "table", "ack", "error", "pong"}
    assert kinds("/ws/poker/{table_id}/", "receive") == {"act", "snapshot", "ping"}


async def drain(ws: Any, frames: list[dict[str, Any]], quiet: float = 1.0) -> None:
    """Keep what arrives until nothing has for ``quiet`` seconds."""
    while True:
        try:
            frames.append(await recv_json(ws, quiet))
        except TimeoutError:
            return


def test_every_house_frame_matches_the_document(asgi_server, document) -> None:
    from channels.layers import get_channel_layer

    table = fast_table("uth", betting_seconds=60)
    pid, token = player("doc-house", funds=100_000)
    _, other = player("doc-house-watch")

    async def scenario() -> list[dict[str, Any]]:
        frames: list[dict[str, Any]] = []
        auth = {"Authorization": f"Token {token}"}
        async with httpx.AsyncClient(base_url=asgi_server, headers=auth, timeout=10) as http:
            assert (await http.post(f"/api/tables/{table.pk}/join/")).status_code == 201
            path = f"/ws/tables/{table.pk}/"
            async with connect(asgi_server, path, token) as ws, connect(asgi_server, path, other) as watcher:
                frames.append(await recv_json(ws))
                frames.append(await recv_json(watcher))
                await sync_to_async(start_table)(table_id=table.pk, now=timezone.now())
                frames.append(await until(ws, lambda m: m["type"] == "delta"))
                bet = await http.post(f"/api/tables/{table.pk}/bets/chip/", json={"spot": "ante", "amount": 100},
                                      headers={"Idempotency-Key": uuid.uuid4().hex})  # fmt: skip
                assert bet.status_code == 200, bet.text
                frames.append(await until(ws, lambda m: m["type"] == "private"))
                layer = get_channel_layer()
                assert layer is not None
                await layer.group_send(f"player-{pid}", {"type": "player.notice", "kind": "reality_check"})
                for message in ({"type": "chat", "text": "hello"}, {"type": "ping", "nonce": 1},
                                {"type": "snapshot"}, {"type": "nope"}, {"type": "chat", "text": ""},
                                {"type": "bet", "id": "doc-1", "spot": "ante", "amount": 100},
                                {"type": "undo", "id": "doc-2"},
                                {"type": "bet", "id": "doc-3", "spot": "nowhere", "amount": 100}):  # fmt: skip
                    await ws.send(json.dumps(message))
                await ws.send("{not json")
                await ws.send(b"\x00")
                await drain(ws, frames)
                await drain(watcher, frames, 0.1)
        return frames

    frames = finish(scenario())
    seen = validate_frames(document, "/ws/tables/{table_id}/", frames)
    assert seen >= {"snapshot", "delta", "private", "chat", "notice", "pong", "error", "ack"}, seen
    codes = {f["code"] for f in frames if f["type"] == "error"}
    assert codes >= {"unknown_message", "invalid_chat_message", "malformed_message"}, codes
    answered = {f["id"]: f["type"] for f in frames if f["type"] in ("ack", "error") and "id" in f}
    assert answered == {"doc-1": "ack", "doc-2": "ack", "doc-3": "error"}, answered


def test_every_poker_frame_matches_the_document(asgi_server, document) -> None:
    seated = [player(f"doc-poker-{n}", funds=100_000) for n in range(2)]
    table = poker_table([seated[0][0]])

    async def scenario() -> list[dict[str, Any]]:
        frames: list[dict[str, Any]] = []
        path = f"/ws/poker/{table.pk}/"
        async with (
            connect(asgi_server, path, seated[0][1]) as first,
            connect(asgi_server, path, seated[1][1]) as second,
        ):
            frames += [await recv_json(first), await recv_json(second)]
            auth = {"Authorization": f"Token {seated[1][1]}", "Idempotency-Key": uuid.uuid4().hex}
            async with httpx.AsyncClient(base_url=asgi_server, timeout=10) as http:
                sat = await http.post(f"/api/poker/tables/{table.pk}/sit/", json={"seat": 2, "buy_in": 1000},
                                      headers=auth)  # fmt: skip
                assert sat.status_code == 201, sat.text
            frames.append(await until(first, lambda m: m["type"] == "table"))
            await sync_to_async(advance)(table, cards=AA_VS_KK)
            frames.append(await until(first, lambda m: m["type"] == "private"))
            frames.append(await until(second, lambda m: m["type"] == "private"))
            await asyncio.sleep(0.5)  # the rest of the deal's events
            for ws in (first, second):  # one acts in turn, the other is refused
                await ws.send(json.dumps({"type": "act", "action": "call", "idempotency_key": uuid.uuid4().hex}))
                await ws.send(json.dumps({"type": "ping", "nonce": "p"}))
                await ws.send(json.dumps({"type": "snapshot"}))
                await ws.send(json.dumps({"type": "nope"}))
            await drain(first, frames)
            await drain(second, frames, 0.1)
        return frames

    frames = finish(scenario())
    seen = validate_frames(document, "/ws/poker/{table_id}/", frames)
    assert seen >= {"snapshot", "table", "delta", "private", "pong", "error"}, seen
    assert seen & {"acted", "ack"}, seen  # the action in turn was answered
