"""Structured logs (issue 36, part 3; docs/live.md, "Logs"): a JSON line per
record, with the request id, player, table and game number of what it is
about, from the HTTP request or the websocket command through the Celery task
it schedules; and never a password, token or ticket.

The live tests read the JSON lines a real uvicorn process and a real Celery
worker process (``LOG_FORMAT=json``) write on the test database and broker."""

from __future__ import annotations

import contextvars
import io
import json
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from rest_framework.test import APIClient

from casino import log_context
from casino.auth import issue_token
from casino.logs import JsonFormatter, NotForTerminal, PlainFormatter, logging_config
from games.house.models import HouseRound, HouseTable
from games.house.services import start_table
from games.poker.models import PokerSeat
from tests.conftest import celery_worker, uvicorn_process
from tests.house.live.conftest import fast_table, wait_for
from tests.house.services.conftest import make_player
from tests.poker.tables import heads_up_dealt
from tests.ws_auth import snapshot_socket

SERVER_LOG = "test-logs-asgi.log"
WORKER_LOG = "test-logs-worker.log"


def json_lines(name: str) -> list[dict[str, Any]]:
    """The log records in ``settings.VAR_DIR / name``: every line that opens an object
    must be one JSON object (other lines are what a process printed, not logged:
    Celery's banner on standard output)."""
    text = (Path(settings.VAR_DIR) / name).read_text()
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def lines_saying(name: str, message: str) -> list[dict[str, Any]]:
    return [line for line in json_lines(name) if line["message"] == message]


@pytest.fixture(scope="module")
def json_server(django_db_setup: Any, django_db_blocker: Any) -> Iterator[str]:
    """This module's uvicorn process, logging JSON lines to ``SERVER_LOG``."""
    with uvicorn_process(log_name=SERVER_LOG, ready_path="/api/health/live", env={"LOG_FORMAT": "json"}) as base:
        yield base


@pytest.fixture
def betting() -> tuple[HouseTable, int, str]:
    """An open UTH betting window of 60 s; a seated, funded player and their API token."""
    table = fast_table("uth", betting_seconds=60, decision_seconds=60)
    player = make_player(table, funds=100_000)
    start_table(table_id=table.pk, now=timezone.now())
    return table, player, issue_token(user=get_user_model().objects.get(pk=player))


def game_number_of(table: HouseTable) -> str:
    """The game number of the table's round (a round's id is its game number)."""
    table.refresh_from_db()
    return HouseRound.objects.get(round_id=table.current_round_id).game_number


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_bet_over_rest_logs_its_request_id_player_table_and_game_number_as_json(json_server, betting) -> None:
    table, player, token = betting
    request_id = f"bet-{uuid.uuid4()}"
    response = httpx.post(
        f"{json_server}/api/tables/{table.pk}/bets/chip/",
        json={"spot": "ante", "amount": 100},
        headers={"Authorization": f"Token {token}", "Idempotency-Key": uuid.uuid4().hex, "X-Request-ID": request_id},
        timeout=20,
    )
    assert response.status_code == 200, response.text
    assert response.headers["X-Request-ID"] == request_id
    [line] = [line for line in lines_saying(SERVER_LOG, "bet accepted") if line.get("request_id") == request_id]
    assert line["level"] == "INFO"
    assert line["logger"] == "games.house.api.play"
    assert line["player"] == player
    assert line["table"] == table.pk
    assert line["game_number"] == game_number_of(table)
    assert (line["spot"], line["amount"]) == ("ante", 100)
    assert line["timestamp"].startswith(str(timezone.now().year))
    assert token not in json.dumps(line)


@pytest.mark.django_db(transaction=True)
def test_a_request_without_a_valid_request_id_gets_a_new_one(json_server) -> None:
    given = httpx.get(f"{json_server}/api/health/live", headers={"X-Request-ID": "mine-1"}, timeout=10)
    assert given.headers["X-Request-ID"] == "mine-1"
    for bad in ("a b", "x" * 129, "id\\n{forged}", ""):
        answered = httpx.get(f"{json_server}/api/health/live", headers={"X-Request-ID": bad}, timeout=10)
        assert answered.headers["X-Request-ID"] not in {bad, ""}
        assert len(answered.headers["X-Request-ID"]) == 32
    fresh = [httpx.get(f"{json_server}/api/health/live", timeout=10).headers["X-Request-ID"] for _ in range(2)]
    assert fresh[0] != fresh[1]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_each_websocket_command_has_a_request_id_of_its_own(json_server, betting) -> None:
    table, player, token = betting
    with snapshot_socket(json_server, f"/ws/tables/{table.pk}/", token) as ws:
        for frame_id in ("ws-1", "ws-2"):
            ws.send(json.dumps({"type": "bet", "id": frame_id, "spot": "ante", "amount": 100}))
            while (answer := json.loads(ws.recv(timeout=20))).get("id") != frame_id:
                pass
            assert answer["type"] == "ack", answer
    game_number = game_number_of(table)
    lines = [
        line
        for line in lines_saying(SERVER_LOG, "bet accepted")
        if line.get("player") == player and line.get("table") == table.pk
    ]
    assert len(lines) == 2, lines
    assert all(line["game_number"] == game_number for line in lines)
    request_ids = {line.get("request_id") for line in lines}
    assert None not in request_ids
    assert len(request_ids) == 2, "each command frame is a request of its own"


@pytest.fixture(scope="module")
def json_worker(django_db_setup: Any, django_db_blocker: Any) -> Iterator[None]:
    """A real Celery worker process for this module, logging JSON lines to ``WORKER_LOG``."""
    with celery_worker(log_name=WORKER_LOG, env={"LOG_FORMAT": "json"}):
        yield


@pytest.mark.django_db(transaction=True)
def test_the_task_a_request_schedules_logs_with_the_request_s_id(json_server, json_worker) -> None:
    """The readiness check sends the worker a ping task: the worker's line for
    that task carries the id of the HTTP request that sent it."""
    get_user_model().objects.create_user("ops", password="a long operator passphrase", is_staff=True)
    staff = issue_token(user=get_user_model().objects.get(username="ops"))
    request_id = f"health-{uuid.uuid4()}"
    response = httpx.get(
        f"{json_server}/api/health/",
        headers={"Authorization": f"Token {staff}", "X-Request-ID": request_id},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    assert response.json()["components"]["broker"]["detail"] == "worker answered the ping"

    def ping_lines() -> list[dict[str, Any]]:
        return [line for line in json_lines(WORKER_LOG) if line.get("task") == "casino.ping"]

    what = "the ping task's line with the request id"
    wait_for(lambda: any(line.get("request_id") == request_id for line in ping_lines()), timeout=20, what=what)
    [line] = [line for line in ping_lines() if line.get("request_id") == request_id]
    assert line["logger"] == "celery.app.trace"
    assert line["task_id"]


@pytest.mark.django_db
def test_a_poker_action_logs_its_request_id_player_table_and_hand_id() -> None:
    """Through the real DRF stack in this process (token, middleware), its line read
    with the JSON formatter: the hand's id where a house round has its game number."""
    table = heads_up_dealt()
    players = list(PokerSeat.objects.filter(table=table).values_list("player_id", flat=True))

    def act_as_whoever_is_to_act(logger: logging.Logger) -> None:
        for player in players:
            api = APIClient()
            api.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user=get_user_model().objects.get(pk=player))}")
            response = api.post(
                f"/api/poker/tables/{table.pk}/act/", {"action": "call"}, format="json",
                HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex, HTTP_X_REQUEST_ID=f"act-{player}",
            )  # fmt: skip
            assert response["X-Request-ID"] == f"act-{player}"
            if response.status_code == 200:
                return
            assert response.json()["error"]["code"] == "poker_not_your_turn"
        raise AssertionError("nobody could call")

    text = contextvars.Context().run(captured, JsonFormatter(), act_as_whoever_is_to_act, "games.poker.api.views")
    [line] = [json.loads(row) for row in text.splitlines() if json.loads(row)["message"] == "poker action accepted"]
    table.refresh_from_db()
    assert line["request_id"] == f"act-{line['player']}"
    assert line["player"] in players
    assert line["table"] == table.pk
    assert line["hand_id"] == table.current_hand_id
    assert line["action"] == "call"


# --- the formats themselves (no server) ------------------------------------------------------------

SECRETS = ("hunter2-pass", "tok-9f8e7d", "tkt-123abc", "sess-556", "As-Kd-hole")


def captured(formatter: logging.Formatter, emit: Any, name: str = "") -> str:
    """What ``emit(logger)`` writes through ``formatter`` (with the context filter) to
    the logger ``name`` (default: a new one of its own)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    handler.addFilter(log_context.ContextFilter())
    logger = logging.getLogger(name or f"test.logs.{uuid.uuid4().hex}")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        emit(logger)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return stream.getvalue()


def leaky(logger: logging.Logger) -> None:
    """Log every way a careless caller could leak a secret."""
    logger.info(
        "login for bob with password=hunter2-pass from GET /ws/tables/1/?ticket=tkt-123abc",
        extra={"password": "hunter2-pass", "token": "tok-9f8e7d", "auth": {"api_token": "tok-9f8e7d"},
               "ws_ticket": "tkt-123abc", "sessionid": "sess-556", "seat": {"hole_cards": "As-Kd-hole"},
               "path": "/api/me/?token=tok-9f8e7d"},
    )  # fmt: skip
    logger.warning('answer {"token": "tok-9f8e7d"}, header Authorization: Token tok-9f8e7d')
    try:
        raise ValueError("bad credentials password=hunter2-pass")
    except ValueError:
        logger.exception("failed")


@pytest.mark.parametrize("formatter", [JsonFormatter(), PlainFormatter()], ids=["json", "plain"])
def test_no_password_token_ticket_or_face_down_card_in_a_line(formatter: logging.Formatter) -> None:
    text = captured(formatter, leaky)
    assert "login for bob" in text
    for secret in SECRETS:
        assert secret not in text, (secret, text)


def test_a_json_line_is_one_object_with_the_context_set() -> None:
    def emit(logger: logging.Logger) -> None:
        with log_context.scope(request_id="r-1", player=7):
            log_context.bind(table=3, game_number="UTH1-42")
            logger.info("one\nrecord", extra={"spot": "ante"})
        logger.info("outside")

    # A context of its own: what earlier tests of this process bound outside a request scope stays out.
    text = contextvars.Context().run(captured, JsonFormatter(), emit)
    inside, outside = (json.loads(line) for line in text.splitlines())
    assert list(inside)[:4] == ["timestamp", "level", "logger", "message"]
    assert inside["message"] == "one\nrecord"
    assert {k: inside[k] for k in ("request_id", "player", "table", "game_number", "spot")} == {
        "request_id": "r-1", "player": 7, "table": 3, "game_number": "UTH1-42", "spot": "ante",
    }  # fmt: skip
    assert not set(log_context.FIELDS) & set(outside), "the scope put the context back"


def test_with_a_log_file_the_terminal_gets_warnings_only() -> None:
    config = logging_config(level="INFO", console_format="plain", log_file="/tmp/x.log", local_broker=True)
    assert config["handlers"]["console"]["level"] == "WARNING"
    assert config["handlers"]["file"]["formatter"] == "json"
    assert "not_for_terminal" in config["handlers"]["console"]["filters"]
    assert logging_config(level="INFO", console_format="json")["handlers"]["console"]["level"] == "INFO"
    with pytest.raises(ValueError, match="LOG_FORMAT"):
        logging_config(level="INFO", console_format="xml")


def test_the_terminal_of_make_run_skips_a_client_s_4xx_but_not_a_500() -> None:
    """Django logs every answer 4xx at WARNING after the middleware is done: the line
    takes the request's id from the request, goes to the file, not to the terminal."""
    request = HttpRequest()
    request_id = log_context.RequestContextMiddleware(lambda r: HttpResponse())(request)["X-Request-ID"]
    records = {
        status: logging.LogRecord("django.request", logging.WARNING if status < 500 else logging.ERROR, __file__, 1,
                                  "answer %s", (status,), None)
        for status in (404, 409, 500)
    }  # fmt: skip
    for status, record in records.items():
        record.status_code, record.request = status, request
        assert log_context.ContextFilter().filter(record)
        assert getattr(record, "request_id", None) == request_id
    terminal = NotForTerminal()
    assert [status for status, record in records.items() if terminal.filter(record)] == [500]
