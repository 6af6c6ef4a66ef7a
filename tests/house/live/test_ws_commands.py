"""Player commands over the table websocket (issue 21, part 3), against a real
uvicorn process on PostgreSQL and Redis: each command's ``ack`` carries exactly
what REST answers for the same command in the same state, each refusal the
REST code and no change, the frame's ``id`` is the REST ``Idempotency-Key``
(the same key over both is one command), the connection's player is the only
actor, and no money is created or lost (docs/websocket.md, "Client to server")."""

from __future__ import annotations

import contextlib
import json
import uuid
from contextlib import AbstractContextManager
from typing import Any

import httpx
import psycopg
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone
from websockets.sync.client import ClientConnection

from casino.auth import issue_token
from casino.models import PlayerProfile
from games.house.models import HouseTable, TableSeat
from games.house.services import TableTick, advance_table, start_table
from tests.conftest import _database_url_for_subprocess
from tests.db import ledger_sums
from tests.house.live.conftest import fast_table, make_player, wait_for
from tests.house.services.conftest import snapshot, wallet
from tests.ws_auth import snapshot_socket

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def token_of(player: int) -> str:
    return issue_token(user=get_user_model().objects.get(pk=player))


class Client:
    """One player: REST with their token, and a websocket on one table."""

    def __init__(self, base: str, player: int, table_id: int) -> None:
        self.base, self.player, self.table_id = base, player, table_id
        self.token = token_of(player)
        self.http = httpx.Client(base_url=base, headers={"Authorization": f"Token {self.token}"}, timeout=20)
        self.frames: list[dict[str, Any]] = []

    def socket(self) -> AbstractContextManager[ClientConnection]:
        return snapshot_socket(self.base, f"/ws/tables/{self.table_id}/", self.token)

    def rest(self, kind: str, body: dict[str, Any] | None = None, *, key: str | None = "fresh") -> httpx.Response:
        path = {"bet": "bets/chip", "undo": "bets/undo", "clear": "bets/clear", "repeat": "bets/repeat",
                "double": "bets/double", "decision": "decision", "join": "join", "leave": "leave"}[kind]  # fmt: skip
        headers = {} if key is None else {"Idempotency-Key": uuid.uuid4().hex if key == "fresh" else key}
        return self.http.post(f"/api/tables/{self.table_id}/{path}/", json=body or {}, headers=headers)

    def answer(self, ws: ClientConnection, client_id: Any) -> dict[str, Any]:
        """The next ``ack`` or ``error`` answering ``client_id`` (deltas skipped)."""
        while True:
            frame = json.loads(ws.recv(timeout=20))
            self.frames.append(frame)
            if frame["type"] in ("ack", "error") and frame.get("id") == client_id:
                return frame
            if frame["type"] == "error" and "id" not in frame and client_id is None:
                return frame

    def ws(self, ws: ClientConnection, kind: str, fields: dict[str, Any] | None = None, *,
           client_id: Any = "fresh") -> dict[str, Any]:  # fmt: skip
        frame_id = uuid.uuid4().hex if client_id == "fresh" else client_id
        frame = {"type": kind, **({} if frame_id is None else {"id": frame_id}), **(fields or {})}
        ws.send(json.dumps(frame))
        # The answer repeats an id that could be a key (a string of at most 100 characters).
        echoed = frame_id if isinstance(frame_id, str) and len(frame_id) <= 100 else None
        answer = self.answer(ws, echoed)
        assert answer["request"] == kind, answer
        return answer


def rest_body(response: httpx.Response) -> Any:
    return response.json() if response.content else None


def state() -> dict[str, Any]:
    """Every row a command may change (events, ledger, rounds, seats)."""
    result = snapshot()
    result["seats"] = sorted(TableSeat.objects.values_list("table_id", "player_id"))
    return result


def to_phase(table_id: int, phase: str, tick: TableTick | None = None) -> TableTick:
    """Run the table's clock (the deadlines by the server's clock) until ``phase``."""
    if tick is None:
        table = HouseTable.objects.get(pk=table_id)
        assert table.deadline is not None
        tick = advance_table(table_id=table_id, expected_seq=table.phase_seq, now=table.deadline)
    while tick is not None and tick.phase != phase:
        assert tick.deadline is not None
        tick = advance_table(table_id=table_id, expected_seq=tick.phase_seq, now=tick.deadline)
    assert tick is not None
    return tick


@pytest.fixture
def betting(asgi_server: str) -> tuple[HouseTable, Client, Client]:
    """An open UTH betting window of 60 s (spots up to 1,000); player ``rest``
    and player ``ws``, seated and funded alike."""
    limits = {"ante": {"min": 100, "max": 1_000}, "best_five": {"min": 100, "max": 1_000}}
    table = fast_table("uth", betting_seconds=60, decision_seconds=60, limits=limits)
    rest, ws = (Client(asgi_server, make_player(table, funds=100_000), table.pk) for _ in range(2))
    start_table(table_id=table.pk, now=timezone.now())
    return table, rest, ws


def test_each_command_acks_exactly_what_rest_answers(betting) -> None:
    table, rest, player = betting
    with player.socket() as ws:
        commands = [("bet", {"spot": "ante", "amount": 100}), ("bet", {"spot": "best_five", "amount": 300}),
                    ("undo", None), ("double", None), ("clear", None), ("bet", {"spot": "ante", "amount": 500}),
                    ("bet", {"spot": "ante", "amount": 2_000})]  # fmt: skip
        for kind, fields in commands:
            by_rest = rest.rest(kind, fields)
            assert by_rest.status_code == 200, by_rest.text
            ack = player.ws(ws, kind, fields)
            assert ack["type"] == "ack", ack
            assert ack["result"] == by_rest.json(), kind
        assert ack["result"]["capped"] is True  # the chip over the limit is capped, and said so
        # Decisions: a third player keeps the window open, so neither decision is the last.
        waiting = make_player(table)
        waiting_client = Client(rest.base, waiting, table.pk)
        assert waiting_client.rest("bet", {"spot": "ante", "amount": 100}).status_code == 200
        to_phase(table.pk, "preflop")
        by_rest = rest.rest("decision", {"option": "check"})
        assert by_rest.status_code == 200, by_rest.text
        ack = player.ws(ws, "decision", {"option": "check"})
        assert ack["type"] == "ack", ack
        assert ack["result"] == by_rest.json()
        assert ack["result"]["all_decided"] is False
    # Repeat needs a previous round: play this one out and open the next.
    to_phase(table.pk, "betting", to_phase(table.pk, "between"))
    with player.socket() as ws:
        by_rest = rest.rest("repeat")
        assert by_rest.status_code == 200, by_rest.text
        ack = player.ws(ws, "repeat")
        assert ack["result"] == by_rest.json()
        assert ack["result"]["totals"]["ante"] == 1_000  # the capped Ante of the previous round
    assert wallet(rest.player) == wallet(player.player)
    assert ledger_sums() == {"EUR": 0}


def test_join_and_leave_ack_what_rest_answers(asgi_server: str) -> None:
    tables = [fast_table("uth") for _ in range(2)]
    rest = Client(asgi_server, make_player(), tables[0].pk)
    player = Client(asgi_server, make_player(), tables[0].pk)
    with player.socket() as ws:
        joined = rest.rest("join")
        assert joined.status_code == 201
        ack = player.ws(ws, "join")
        assert ack == {"type": "ack", "id": ack["id"], "request": "join", "result": joined.json()}
        assert ack["result"]["table_id"] == tables[0].pk
        again = player.ws(ws, "join")
        assert again["type"] == "error"
        assert again["code"] == rest.rest("join").json()["error"]["code"] == "already_seated"
        left = rest.rest("leave")
        assert left.status_code == 204
        assert player.ws(ws, "leave")["result"] is None
        before = state()
        gone = player.ws(ws, "leave")
        assert gone["code"] == rest.rest("leave").json()["error"]["code"] == "not_seated"
        missing = player.ws(ws, "join", client_id=None)
        assert missing["code"] == "idempotency_key_required"
        assert state() == before


def refusal(client: Client, ws: ClientConnection, kind: str, fields: dict[str, Any] | None, code: str, *,
            client_id: Any = "fresh", rest_key: str | None = "fresh") -> None:  # fmt: skip
    """``kind`` refused with ``code`` over the websocket and over REST alike; nothing changed."""
    before = state()
    error = client.ws(ws, kind, fields, client_id=client_id)
    assert error["type"] == "error", error
    assert error["code"] == code, error
    assert set(error) <= {"type", "id", "request", "code", "message", "details"}
    assert state() == before, f"a refused {kind} over the websocket changed something"
    by_rest = client.rest(kind, fields, key=rest_key)
    assert by_rest.status_code >= 400
    assert by_rest.json()["error"] == {k: v for k, v in error.items() if k in ("code", "message", "details")}
    assert state() == before


def test_each_refusal_has_the_rest_code_and_changes_nothing(betting) -> None:
    table, _rest, player = betting
    poor = Client(player.base, make_player(table, funds=150), table.pk)
    stranger = Client(player.base, make_player(funds=10_000), table.pk)
    with player.socket() as ws, poor.socket() as poor_ws, stranger.socket() as stranger_ws:
        refusal(player, ws, "bet", {"spot": "nope", "amount": 100}, "spot_not_offered")
        refusal(player, ws, "bet", {"spot": "ante", "amount": 50}, "below_minimum")
        refusal(player, ws, "bet", {"spot": "ante", "amount": "100"}, "invalid_amount")
        refusal(player, ws, "bet", {"spot": "ante", "amount": 100.5}, "invalid_amount")
        refusal(player, ws, "bet", {"spot": "ante", "amount": True}, "invalid_amount")
        refusal(player, ws, "bet", {"amount": 100}, "invalid_field")
        refusal(player, ws, "bet", {"spot": "best_five", "amount": 100}, "ante_required")
        refusal(player, ws, "undo", None, "nothing_to_undo")
        refusal(player, ws, "repeat", None, "nothing_to_repeat")
        refusal(player, ws, "decision", {"option": "check"}, "not_in_round")  # no bet yet
        refusal(player, ws, "decision", {}, "invalid_field")
        # The key is checked before the fields, as REST does.
        refusal(player, ws, "bet", {"spot": "ante", "amount": 100}, "idempotency_key_required", client_id=None,
                rest_key=None)  # fmt: skip
        refusal(player, ws, "bet", {"spot": "ante", "amount": 100}, "idempotency_key_required", client_id=7,
                rest_key=None)  # fmt: skip
        refusal(player, ws, "bet", {"spot": "ante", "amount": 100}, "idempotency_key_required", client_id="x" * 101,
                rest_key=None)  # fmt: skip
        refusal(poor, poor_ws, "bet", {"spot": "ante", "amount": 100}, "insufficient_balance")
        refusal(stranger, stranger_ws, "bet", {"spot": "ante", "amount": 100}, "not_seated")
        refusal(stranger, stranger_ws, "decision", {"option": "check"}, "not_seated")
        refusal(stranger, stranger_ws, "undo", None, "not_seated")
        assert player.ws(ws, "bet", {"spot": "ante", "amount": 100})["type"] == "ack"
        refusal(player, ws, "decision", {"option": "check"}, "no_decision_window")
        to_phase(table.pk, "preflop")
        refusal(player, ws, "bet", {"spot": "ante", "amount": 100}, "betting_closed")
        refusal(player, ws, "double", None, "betting_closed")
        refusal(player, ws, "decision", {"option": "call2x"}, "option_not_offered")
        refusal(player, ws, "decision", {"option": 4}, "invalid_field")
    assert ledger_sums() == {"EUR": 0}


def test_a_french_players_refusals_are_french_over_the_websocket_and_rest_alike(betting) -> None:
    """Issue 37: the profile's language chooses; the codes and details are the English ones."""
    _table, english, french = betting
    PlayerProfile.objects.create(user_id=french.player, language="fr")
    with french.socket() as ws, english.socket() as english_ws:
        refusal(french, ws, "bet", {"spot": "nope", "amount": 100}, "spot_not_offered")
        assert french.frames[-1]["message"] == "La table ne propose pas cette case de mise."
        refusal(french, ws, "undo", None, "nothing_to_undo")
        assert french.frames[-1]["message"] == "Il n'y a pas de mise à annuler."
        ws.send("not json")
        assert french.answer(ws, None) == {
            "type": "error", "code": "malformed_message", "message": "Envoyez un objet JSON par trame de texte.",
        }  # fmt: skip
        refusal(english, english_ws, "bet", {"spot": "nope", "amount": 100}, "spot_not_offered")
        assert english.frames[-1]["message"] == "The table offers no such betting spot."


def test_the_id_is_the_idempotency_key_shared_with_rest(betting) -> None:
    _table, _rest, player = betting
    with player.socket() as ws:
        first = player.ws(ws, "bet", {"spot": "ante", "amount": 100}, client_id="chip-1")
        assert first["type"] == "ack"
        balance, before = wallet(player.player), state()
        # The same id and body: the first result again, nothing charged twice.
        assert player.ws(ws, "bet", {"spot": "ante", "amount": 100}, client_id="chip-1") == first
        assert player.rest("bet", {"spot": "ante", "amount": 100}, key="chip-1").json() == first["result"]
        # The same id with another body: refused, nothing changed.
        reused = player.ws(ws, "bet", {"spot": "ante", "amount": 200}, client_id="chip-1")
        assert reused["code"] == "idempotency_key_reused"
        assert player.rest("bet", {"spot": "ante", "amount": 200}, key="chip-1").json()["error"]["code"] == (
            "idempotency_key_reused"
        )
        assert player.ws(ws, "undo", client_id="chip-1")["code"] == "idempotency_key_reused"
        assert (wallet(player.player), state()) == (balance, before)
        # REST first, then the websocket with that key: one command.
        by_rest = player.rest("bet", {"spot": "ante", "amount": 300}, key="chip-2")
        assert by_rest.status_code == 200
        balance, before = wallet(player.player), state()
        assert player.ws(ws, "bet", {"spot": "ante", "amount": 300}, client_id="chip-2")["result"] == by_rest.json()
        assert (wallet(player.player), state()) == (balance, before)
        assert by_rest.json()["totals"]["ante"] == 400
    assert wallet(player.player) == 100_000 - 800  # two Antes of 100 + 300 and their Ante Plus
    assert ledger_sums() == {"EUR": 0}


def test_the_connection_player_is_the_only_actor(betting) -> None:
    """A ``player_id`` or ``table_id`` in the frame is ignored: the command is
    the connection's player's, at the connection's table."""
    table, other, player = betting
    elsewhere = fast_table("uth", betting_seconds=60)
    start_table(table_id=elsewhere.pk, now=timezone.now())
    with player.socket() as ws:
        ack = player.ws(ws, "bet", {"spot": "ante", "amount": 100, "player_id": other.player,
                                    "table_id": elsewhere.pk})  # fmt: skip
        assert ack["type"] == "ack"
    assert wallet(player.player) == 100_000 - 200
    assert wallet(other.player) == 100_000
    assert other.http.get(f"/api/tables/{table.pk}/").json()["me"]["bets"] == {}
    assert player.http.get(f"/api/tables/{table.pk}/").json()["me"]["bets"] == {"ante": 100, "ante_plus": 100}
    assert player.http.get(f"/api/tables/{elsewhere.pk}/").json()["me"]["bets"] == {}


def test_pipelined_commands_run_and_are_answered_in_the_order_sent(betting) -> None:
    _table, _rest, player = betting
    with player.socket() as ws:
        ids = [f"p-{n}" for n in range(6)]
        frames = [{"type": "bet", "id": ids[0], "spot": "ante", "amount": 100},
                  {"type": "bet", "id": ids[1], "spot": "best_five", "amount": 200},
                  {"type": "undo", "id": ids[2]},
                  {"type": "bet", "id": ids[3], "spot": "best_five", "amount": 500},
                  {"type": "double", "id": ids[4]},
                  {"type": "bet", "id": ids[5], "spot": "nope", "amount": 100}]  # fmt: skip
        for frame in frames:
            ws.send(json.dumps(frame))
        answers: list[dict[str, Any]] = []
        while len(answers) < len(frames):
            frame = json.loads(ws.recv(timeout=20))
            if frame["type"] in ("ack", "error"):
                answers.append(frame)
    assert [a["id"] for a in answers] == ids
    assert [a["type"] for a in answers] == ["ack"] * 5 + ["error"]
    assert answers[2]["result"]["totals"] == {"ante": 100, "ante_plus": 100}  # the undo took the 200
    assert answers[4]["result"]["totals"] == {"ante": 200, "ante_plus": 200, "best_five": 1000}
    assert wallet(player.player) == 100_000 - 1400


def test_a_rate_limited_command_is_answered_with_its_id(betting) -> None:
    """Every command frame gets exactly one answer carrying its ``id``, a frame the
    token bucket refuses too: its ``rate_limited`` error came without the id, so a
    client matching answers by ``id`` (``bench bets``' closed loop) waited forever
    for a bet that had been answered. Pings empty the bucket (cheap, no id), then
    bets follow at once: the first of them meet the empty bucket."""
    _table, _rest, player = betting
    with player.socket() as ws:
        for n in range(settings.CASINO_WS_BURST):
            ws.send(json.dumps({"type": "ping", "nonce": n}))
        ids = [f"limited-{n}" for n in range(5)]
        for client_id in ids:
            ws.send(json.dumps({"type": "bet", "id": client_id, "spot": "ante", "amount": 100}))
        answers: dict[str, list[dict[str, Any]]] = {}
        while set(answers) != set(ids):
            frame = json.loads(ws.recv(timeout=10))  # an unanswered bet: TimeoutError
            if frame["type"] in ("ack", "error"):
                assert frame.get("id") in ids, frame
                answers.setdefault(frame["id"], []).append(frame)
        with contextlib.suppress(TimeoutError):
            while True:  # nothing answers a bet twice
                frame = json.loads(ws.recv(timeout=0.5))
                assert frame["type"] not in ("ack", "error"), frame
    assert all(len(answered) == 1 for answered in answers.values()), answers
    limited = [a[0] for a in answers.values() if a[0]["type"] == "error"]
    assert limited, "no bet met the empty bucket"
    assert all(a["code"] == "rate_limited" and a["details"]["retry_after"] >= 0 for a in limited), limited
    acked = len(ids) - len(limited)
    assert wallet(player.player) == 100_000 - 100 * acked  # a refused bet changed nothing


def test_the_last_decision_over_the_websocket_moves_the_dealer_on(betting, spawn_worker) -> None:
    """REST's extra step after a decision: when it was the last one outstanding
    the dealer (a real worker) advances at once, long before the 60 s decision
    window ends. Nothing else schedules that advance: the test runs the clock
    up to the decision itself."""
    table, _rest, player = betting
    spawn_worker("ws-commands")
    with player.socket() as ws:
        assert player.ws(ws, "bet", {"spot": "ante", "amount": 100})["type"] == "ack"
        tick = to_phase(table.pk, "preflop")
        ack = player.ws(ws, "decision", {"option": "check"})
        assert ack["type"] == "ack", ack
        assert ack["result"]["all_decided"] is True
        assert ack["result"]["tick"]["phase_seq"] == tick.phase_seq
        assert isinstance(ack["result"]["tick"]["deadline"], str)  # rendered as REST renders it
        wait_for(lambda: HouseTable.objects.get(pk=table.pk).phase_seq > tick.phase_seq, timeout=20, what="dealer")
    assert ledger_sums() == {"EUR": 0}


def end_the_servers_connections() -> int:
    """Have PostgreSQL end every connection to the test database but this
    test's own (as a database restart or a failover would), and wait until
    their backends are gone; how many it ended."""
    with psycopg.connect(_database_url_for_subprocess().replace("postgres://", "postgresql://")) as admin:
        admin.autocommit = True
        rows = admin.execute(
            "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND pid <> %s",
            [connection_pid()],
        ).fetchall()
        ended = [pid for pid, done in rows if done]
        wait_for(
            lambda: not admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = ANY(%s)", [ended]).fetchall(),
            timeout=20,
            what="the ended backends to exit",
        )
    return len(ended)


def connection_pid() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def test_a_socket_recovers_when_the_server_loses_its_database_connections_between_two_frames(betting) -> None:
    """Every database connection of the server ends between two frames: the
    next bet is acked with what it did and the next snapshot shows it. The
    socket's database work closes a broken connection and opens a new one
    before it runs (the group commit's threads, ``database_sync_to_async``),
    not Channels' per-message check, which the table sockets skip
    (``games.tables.realtime.DirectDispatch``)."""
    _table, _rest, player = betting
    with player.socket() as ws:
        assert player.ws(ws, "bet", {"spot": "ante", "amount": 100})["type"] == "ack"
        assert end_the_servers_connections() > 0
        ack = player.ws(ws, "bet", {"spot": "ante", "amount": 100})
        assert ack["type"] == "ack", ack
        assert ack["result"]["totals"] == {"ante": 200, "ante_plus": 200}
        ws.send(json.dumps({"type": "snapshot"}))
        while (frame := json.loads(ws.recv(timeout=20)))["type"] != "snapshot":
            pass
        assert frame["table"]["me"]["balance"] == 100_000 - 400
    assert wallet(player.player) == 100_000 - 400  # each Ante chip with its automatic Ante Plus
    assert ledger_sums() == {"EUR": 0}
