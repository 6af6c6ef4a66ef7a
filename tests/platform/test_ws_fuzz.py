"""No frame answers with a crash (issue 35, part 2): a fuzz of every websocket
command the AsyncAPI document lists (``games/tables/asyncapi.py``: what each of the
three channels receives), against a real uvicorn process, PostgreSQL and Redis.

Each session connects a player to each channel (their house table with the betting
window open and money in the wallet, a poker table where a hand is dealt to them,
a tournament) and sends, first, one frame of every message type the channel
receives, built from its payload schema, then ``WS_FUZZ_FRAMES`` frames drawn by
Hypothesis: a message built from its schema (some with one field of the wrong
type), the same with one of issue 35's hand-made shapes in place of a field or of
the whole frame (``tests/platform/shapes.py``: deep nesting, lone surrogates,
NUL, ``1e400``, ``10**400``, ``-0``, ``NaN``...), or a frame that is not a message
at all (empty, not JSON, an array, binary). After each frame a ``ping`` with a
fresh nonce marks where its answers end.

Asserted for every frame: it is answered (a refusal or a valid answer: a chat
line comes through the table's group, so a chat frame's answer may come later, and
is counted at the end), every frame the server sends matches its message in the
document, no answer is ``server_error``, and the connection stays open (the one
close a frame may cause, 1007 for a text frame that is not UTF-8, is the websocket
implementation's and is not sent here: docs/websocket.md). At the end the
server's log holds no "Exception in ASGI application" and no traceback.

The server runs with the message rate raised (``CASINO_WS_RATE``): the rate limit
has its own tests (``tests/house/live/test_limits.py``) and would otherwise
answer most frames ``rate_limited`` before they reach anything. In the suite: one
session per channel, a fixed seed (``derandomize``), ``WS_FUZZ_FRAMES`` (default
40) frames; ``make fuzz-ws`` runs many sessions with fresh seeds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import websockets
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.utils import timezone
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from casino.auth import issue_token
from games.house.services import start_table
from games.tables import asyncapi
from tests.conftest import uvicorn_process
from tests.house.live.conftest import fast_table
from tests.house.live.test_asyncapi import resolve, validate_frames
from tests.house.live.test_limits import connect, finish, recv_json
from tests.house.services.conftest import make_player
from tests.platform import shapes
from tests.poker.tables import advance, make_table, make_tournament, sit

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

FRAMES = int(os.environ.get("WS_FUZZ_FRAMES", "15"))
SESSIONS = int(os.environ.get("WS_FUZZ_SESSIONS", "8"))
RANDOM_SEED = os.environ.get("WS_FUZZ_SEED", "") == "random"
FULL_MATRIX = os.environ.get("WS_FUZZ_MATRIX", "") == "full"
LOG = "test-ws-fuzz.log"
ANSWER_SECONDS = 20  # generous: the machine is shared; a frame is answered in milliseconds

CHANNELS = {"houseTable": "houseReceive", "pokerTable": "pokerReceive", "pokerTournament": "tournamentReceive"}


@pytest.fixture(scope="module")
def fuzz_server(django_db_setup, django_db_blocker) -> Iterator[str]:
    """A uvicorn process of its own (its log only this module's), the message rate raised."""
    env = {"CASINO_WS_RATE": "100000", "CASINO_WS_BURST": "100000"}
    with uvicorn_process(log_name=LOG, ready_path="/api/", env=env) as base:
        yield base


# --- frames from the document -------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values of the small JSON Schemas the AsyncAPI document gives client messages."""
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return st.text(min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 24), 24))
    if kind == "integer":
        return st.integers(min_value=-5, max_value=5_000) | st.sampled_from([0, 1, 100, 2**31, 2**63])
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", ()))
        # anyOf of required sets (poker's act: id or idempotency_key): the first is taken.
        for alternative in schema.get("anyOf", [])[:1]:
            required |= set(alternative.get("required", ()))
        return st.fixed_dictionaries(
            {name: from_schema(properties.get(name, {})) for name in sorted(required)},
            optional={name: from_schema(sub) for name, sub in properties.items() if name not in required},
        )
    return JSON_VALUES


def receives(document: dict[str, Any], channel: str) -> dict[str, dict[str, Any]]:
    """Message name -> payload schema of every message ``channel`` receives."""
    operation = document["operations"][CHANNELS[channel]]
    found = {}
    for reference in operation["messages"]:
        name = reference["$ref"].rsplit("/", 1)[-1]
        message = resolve(document, reference["$ref"])
        if "$ref" in message:
            message = resolve(document, message["$ref"])
        found[name] = message["payload"]
    return found


def with_wrong_field(message: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    names = sorted(name for name in message if name != "type") or ["id"]
    return st.builds(lambda name, value: {**message, name: value}, st.sampled_from(names), JSON_VALUES)


GARBAGE: list[str | bytes] = ["", " ", "null", "[]", "{}", "{", '"chat"', "1e400", "NaN", shapes.DEEP,
                              '{"type": null}', '{"type": ["bet"]}', '{"type": {"a": 1}}', '{"type": 7}',
                              '{"type": "x"}', b"\x00\xff", b"{}"]  # fmt: skip


def frames(schemas: dict[str, dict[str, Any]]) -> st.SearchStrategy[str | bytes]:
    """One frame: a message of one of ``schemas``, mutated or shaped, or garbage."""
    message = st.sampled_from(sorted(schemas)).flatmap(lambda name: from_schema(schemas[name]))
    mutated = message.flatmap(lambda m: st.just(m) | with_wrong_field(m))
    shaped = message.flatmap(
        lambda m: st.builds(
            lambda shape, where: shapes.splice(m, where, shape[0]).decode(), shapes.raw_json_shape(), shapes.members(m)
        )
    )
    return mutated.map(json.dumps) | shaped | st.sampled_from(GARBAGE)


# --- a session ------------------------------------------------------------------------------------


def template(document: dict[str, Any], channel: str) -> str:
    """The channel's address as the document writes it (``/ws/tables/{table_id}/``)."""
    return str(document["channels"][channel]["address"])


async def exchange(ws: Any, frame: str | bytes, address: str, document: dict[str, Any]) -> list[dict[str, Any]]:
    """Send ``frame`` then a ping; what came before the ping's pong (each checked)."""
    nonce = f"end-{uuid.uuid4().hex}"
    await ws.send(frame)
    await ws.send(json.dumps({"type": "ping", "nonce": nonce}))
    answers: list[dict[str, Any]] = []
    while True:
        try:
            received = await recv_json(ws, ANSWER_SECONDS)
        except websockets.ConnectionClosed:
            raise AssertionError(f"{address}: closed {ws.close_code} after {frame[:200]!r}") from None
        if received.get("type") == "pong" and received.get("nonce") == nonce:
            break
        answers.append(received)
    validate_frames(document, address, answers)
    failed = [a for a in answers if a.get("code") == "server_error"]
    assert not failed, (address, frame[:200], failed)
    return answers


async def session(
    base: str, token: str, address: str, path: str, document: dict[str, Any], sent: list[str | bytes]
) -> None:
    """Connect to ``path`` (the channel at ``address``), send ``sent`` (each
    answered, module docstring), and leave the connection open to the end."""
    pending_chats = 0  # chat frames not answered in their own exchange: a line must come later
    chat_lines = 0
    async with connect(base, path, token) as ws:
        first = await recv_json(ws, ANSWER_SECONDS)
        validate_frames(document, address, [first])
        for frame in sent:
            answers = await exchange(ws, frame, address, document)
            chat_lines += sum(1 for a in answers if a.get("type") == "chat")
            if not answers:
                is_chat = False
                with contextlib.suppress(ValueError, AttributeError, RecursionError):
                    is_chat = isinstance(frame, str) and json.loads(frame).get("type") == "chat"
                assert is_chat, f"{address}: no answer to {frame[:200]!r}"
                pending_chats += 1
        # The chat lines still on their way through the table's group.
        deadline = asyncio.get_running_loop().time() + ANSWER_SECONDS
        while chat_lines < pending_chats and asyncio.get_running_loop().time() < deadline:
            answers = await exchange(ws, '{"type": "snapshot"}', address, document)
            chat_lines += sum(1 for a in answers if a.get("type") == "chat")
        assert chat_lines >= pending_chats, f"{address}: {pending_chats} chat frames unanswered, {chat_lines} lines"
        assert ws.close_code is None


@dataclass(frozen=True)
class Arena:
    """Who connects where: each channel's address and the token of its player."""

    connections: dict[str, tuple[str, str]]  # channel -> (address, token)


@pytest.fixture
def arena() -> Arena:
    """A player with a seat at an open house table (and money) who also watches a
    tournament, and a player of a dealt poker hand. Made once for a test, so a
    Hypothesis test's sessions share it."""
    house = fast_table("uth", betting_seconds=3600)
    player = make_player(house)
    start_table(table_id=house.pk, now=timezone.now())
    poker = make_table(between_hands_seconds=3600, turn_seconds=3600)
    dealt = [make_player(), make_player()]
    for number, who in enumerate(dealt, start=1):
        sit(poker, who, number)
    advance(poker)  # the first hand dealt
    token = issue_token(user=get_user_model().objects.get(pk=player))
    poker_token = issue_token(user=get_user_model().objects.get(pk=dealt[0]))
    return Arena(
        {
            "houseTable": (f"/ws/tables/{house.pk}/", token),
            "pokerTable": (f"/ws/poker/{poker.pk}/", poker_token),
            "pokerTournament": (f"/ws/poker/tournaments/{make_tournament().pk}/", token),
        }
    )


def example_of(schema: dict[str, Any]) -> Any:
    """A valid value of one of the document's client message schemas (every field given)."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "string":
        return "fuzz-" + uuid.uuid4().hex[:8]
    if kind == "integer":
        return 100
    if kind == "object":
        return {name: example_of(sub) for name, sub in schema.get("properties", {}).items()}
    return 1


def assert_the_log_is_clean(log: bytes) -> None:
    assert b"Exception in ASGI application" not in log
    assert b"Traceback" not in log
    assert b"websocket command" not in log  # ws_commands.answer_awaiting's log of an unexpected failure


def test_every_websocket_command_with_every_hand_made_shape(fuzz_server: str, arena: Arena) -> None:
    """Every message every channel receives, as the document gives it, then with
    hand-made shapes in one of its fields in turn (or as the whole frame): in the
    suite each shape once per channel, spread over its messages; with
    ``WS_FUZZ_MATRIX=full`` (``make fuzz-ws``) every shape in every message."""
    document = asyncapi.document()
    for channel, (address, token) in arena.connections.items():
        sent: list[str | bytes] = []
        schemas = receives(document, channel)
        # "leave" last: the commands before it run with the seat.
        for index, (_name, schema) in enumerate(
            sorted(schemas.items(), key=lambda item: (item[0] == "leave", item[0]))
        ):
            message = example_of(schema)
            places: list[str | None] = [None, *sorted(field for field in message if field != "type")]
            sent.append(json.dumps(message))
            sent += [
                shapes.splice(message, places[i % len(places)], raw).decode()
                for i, (raw, _) in enumerate(shapes.RAW_JSON)
                if FULL_MATRIX or i % len(schemas) == index
            ]
        sent += GARBAGE  # frames that are no message; a list or object as type crashed the house socket
        finish(session(fuzz_server, token, template(document, channel), address, document, sent))
    assert_the_log_is_clean((Path(django_settings.VAR_DIR) / LOG).read_bytes())


@settings(
    max_examples=SESSIONS,
    derandomize=not RANDOM_SEED,
    database=None,
    deadline=None,
    phases=[Phase.generate],  # no shrinking against a live server: the failing frame is in the message
    suppress_health_check=list(HealthCheck),
)
@given(data=st.data())
def test_websocket_sessions_of_generated_and_mutated_frames(
    fuzz_server: str, arena: Arena, data: st.DataObject
) -> None:
    """A session on a drawn channel: frames drawn from every message it receives,
    mutated, shaped, or garbage (module docstring)."""
    document = asyncapi.document()
    channel = data.draw(st.sampled_from(sorted(arena.connections)), label="channel")
    address, token = arena.connections[channel]
    sent = data.draw(
        st.lists(frames(receives(document, channel)), min_size=max(1, FRAMES // 2), max_size=FRAMES), label="frames"
    )
    finish(session(fuzz_server, token, template(document, channel), address, document, sent))
    assert_the_log_is_clean((Path(django_settings.VAR_DIR) / LOG).read_bytes())


def test_a_text_frame_that_is_not_utf8_closes_1007_and_nothing_else_does(fuzz_server: str, arena: Arena) -> None:
    """The one close a frame may cause: a text frame whose bytes are not UTF-8 is
    failed by the websocket implementation (RFC 6455: 1007, invalid frame payload
    data) before any consumer code; the same bytes in a binary frame are answered
    ``malformed_message`` and the connection stays."""
    address, token = arena.connections["houseTable"]

    async def scenario() -> tuple[dict[str, Any], int | None]:
        async with connect(fuzz_server, address, token) as ws:
            await recv_json(ws, ANSWER_SECONDS)  # the snapshot
            await ws.send(b'{"type": "chat", "text": "\xff"}')  # binary
            binary = await recv_json(ws, ANSWER_SECONDS)
            await ws.send(b'{"type": "chat", "text": "\xff"}', text=True)
            with contextlib.suppress(websockets.ConnectionClosed):
                while True:
                    await recv_json(ws, ANSWER_SECONDS)
            return binary, ws.close_code

    binary, code = finish(scenario())
    assert binary["code"] == "malformed_message", binary
    assert code == 1007
    assert_the_log_is_clean((Path(django_settings.VAR_DIR) / LOG).read_bytes())
