"""Health (docs/live.md, "Health"): ``GET /api/health/live`` is public, cheap and
says nothing about the internals; the readiness check ``GET /api/health/``
(database, broker + worker round trip on its own queue, channel layer) is for
staff or the ``HEALTH_CHECK_TOKEN``, runs once at a time per process, and never
tells a client the database's error text."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from channels.layers import channel_layers
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import override_settings
from rest_framework.test import APIClient

from casino.views import TOKEN_HEADER
from tests.conftest import uvicorn_process

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
# Port 1 on loopback: nothing listens there, so connections are refused at once.
DEAD_REDIS = "redis://127.0.0.1:1/0"
TOKEN = "a-health-check-token-for-the-tests-0123456789"
# Words that would tell an attacker what runs inside.
INTERNALS = ("database", "postgres", "redis", "celery", "broker", "channel", "worker", "version", "127.0.0.1")


@pytest.fixture
def client() -> APIClient:
    return APIClient()


@pytest.fixture
def staff(client: APIClient) -> APIClient:
    user = get_user_model().objects.create_user("ops", password="pw-ops-123", is_staff=True)
    client.force_login(user)
    return client


def ready(client: APIClient, **headers: str) -> Any:
    return client.get("/api/health/", headers=headers)


# --- liveness ---------------------------------------------------------------------------------------


def test_liveness_is_public_and_names_nothing_inside(client, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/api/health/live")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    text = response.content.decode().lower()
    assert not any(word in text for word in INTERNALS)


# --- who may ask for readiness --------------------------------------------------------------------------


@override_settings(HEALTH_CHECK_TOKEN=TOKEN)
def test_readiness_is_refused_to_anonymous_players_and_wrong_tokens(client, django_user_model):
    for response in (
        ready(client),
        ready(client, **{TOKEN_HEADER: "wrong"}),
        ready(client, **{TOKEN_HEADER: TOKEN[:-1]}),
        ready(client, **{TOKEN_HEADER: "\xe9" * len(TOKEN)}),
    ):
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "health_check_refused"
        assert "components" not in response.json()
    player = django_user_model.objects.create_user("pat", password="pw-pat-123")
    client.force_login(player)
    assert ready(client).json()["error"]["code"] == "health_check_refused"


def test_no_token_is_accepted_when_none_is_configured(client):
    with override_settings(HEALTH_CHECK_TOKEN=""):
        response = ready(client, **{TOKEN_HEADER: ""})
    assert response.status_code == 403


def test_healthy_for_staff_when_every_part_answers(staff, celery_worker_process):
    response = ready(staff)
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert body["failing"] == []
    assert set(body["components"]) == {"database", "broker", "channel_layer"}
    assert all(part["status"] == "ok" for part in body["components"].values())
    assert body["components"]["broker"]["detail"] == "worker answered the ping"


@override_settings(HEALTH_CHECK_TOKEN=TOKEN)
def test_healthy_for_the_token(client, celery_worker_process):
    response = ready(client, **{TOKEN_HEADER: TOKEN})
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "ok"


# --- failing parts ----------------------------------------------------------------------------------------


def test_503_names_the_broker_when_it_is_unreachable_without_its_address(staff, celery_worker_process):
    with override_settings(CELERY_BROKER_URL=DEAD_REDIS, HEALTH_CHECK_TIMEOUT=2):
        response = ready(staff)
    body = response.json()
    assert response.status_code == 503
    assert body["status"] == "error"
    assert body["failing"] == ["broker"]
    assert body["components"]["broker"]["detail"] == "broker unreachable"
    assert "127.0.0.1" not in response.content.decode()
    assert body["components"]["database"]["status"] == "ok"


def test_503_names_the_broker_when_no_worker_answers_its_queue(staff, celery_worker_process):
    # The session's worker consumes the health queue; a queue nobody consumes
    # makes the round trip fail.
    queue = f"nobody-listens-{uuid.uuid4().hex}"
    try:
        with override_settings(HEALTH_CHECK_TIMEOUT=1, HEALTH_CHECK_QUEUE=queue):
            response = ready(staff)
    finally:
        redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(queue)
    body = response.json()
    assert response.status_code == 503
    assert body["failing"] == ["broker"]
    assert body["components"]["broker"]["detail"] == "no worker answered within 1s"


def test_503_names_the_channel_layer_when_it_is_unreachable(staff, celery_worker_process):
    dead_layer = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [DEAD_REDIS]}}}
    with override_settings(CHANNEL_LAYERS=dead_layer, HEALTH_CHECK_TIMEOUT=2):
        channel_layers.backends.clear()
        try:
            response = ready(staff)
        finally:
            channel_layers.backends.clear()
    body = response.json()
    assert response.status_code == 503
    assert body["failing"] == ["channel_layer"]
    assert body["components"]["channel_layer"]["detail"] == "channel layer unreachable"


# --- over real HTTP: one thread at most, nothing on the dealer's queue, no database error text -----------------


@contextmanager
def server(**env: str) -> Iterator[str]:
    """A uvicorn process of the project with ``env`` on top of the tests' environment."""
    with uvicorn_process(log_name="test-health-{port}.log", ready_path="/api/health/live", env=env) as base:
        yield base


def _timed_get(url: str, headers: dict[str, str]) -> tuple[float, httpx.Response]:
    started = time.monotonic()
    response = httpx.get(url, headers=headers, timeout=30)
    return time.monotonic() - started, response


def _burst(url: str, count: int) -> list[tuple[float, httpx.Response]]:
    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(lambda _: _timed_get(url, {TOKEN_HEADER: TOKEN}), range(count)))


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_readiness_calls_hold_one_http_thread_and_nothing_on_the_dealers_queue():
    # No worker consumes this health queue, so the one check that runs waits its
    # whole broker timeout: long enough to see what the other 19 calls get.
    queue = f"health-{uuid.uuid4().hex}"
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    dealer_before = broker.llen("celery")
    timeout = 4.0
    try:
        with server(HTTP_THREADS="2", HEALTH_CHECK_TOKEN=TOKEN, HEALTH_CHECK_QUEUE=queue,
                    HEALTH_CHECK_TIMEOUT=str(timeout), HEALTH_CHECK_CACHE_SECONDS="60") as base:  # fmt: skip
            answers = _burst(f"{base}/api/health/", 20)
            checked = [(took, r) for took, r in answers if "components" in r.json()]
            busy = [(took, r) for took, r in answers if "components" not in r.json()]
            # One check ran; everyone else was answered at once, on the one other thread.
            assert len(checked) == 1, [r.json() for _, r in answers]
            assert checked[0][0] >= timeout
            assert checked[0][1].status_code == 503
            assert checked[0][1].json()["failing"] == ["broker"]
            assert len(busy) == 19
            assert all(r.status_code == 503 and r.json()["error"]["code"] == "health_check_busy" for _, r in busy)
            assert max(took for took, _ in busy) < timeout - 1
            assert broker.llen(queue) == 1  # one ping published, on the health queue
            # Concurrent callers now get the last result while a new check runs.
            again = _burst(f"{base}/api/health/", 10)
            cached = [r.json() for _, r in again if r.json().get("cached")]
            assert len(cached) == 9
            assert max(took for took, r in again if r.json().get("cached")) < timeout - 1
            assert broker.llen(queue) == 2
    finally:
        broker.delete(queue)
    assert broker.llen("celery") == dealer_before  # nothing on the dealer's queue


@pytest.mark.django_db(transaction=True)
def test_a_database_that_is_down_is_reported_without_its_error_text():
    bad = "postgres://leaky_user:leaky_secret@127.0.0.1:1/leaky_db"
    with server(DATABASE_URL=bad, HEALTH_CHECK_TOKEN=TOKEN, HEALTH_CHECK_TIMEOUT="2") as base:
        response = httpx.get(f"{base}/api/health/", headers={TOKEN_HEADER: TOKEN}, timeout=30)
        assert response.status_code == 503
        body = response.json()
        assert "database" in body["failing"]
        assert body["components"]["database"]["detail"] == "database unreachable"
        text = response.text.lower()
        for secret in ("leaky", "127.0.0.1", "port 1", "refused", "psycopg", "connection"):
            assert secret not in text, secret
        # Without the token the caller cannot be authenticated: refused, not a 500.
        anonymous = httpx.get(f"{base}/api/health/", timeout=30)
        assert anonymous.status_code == 403
        assert "leaky" not in anonymous.text
        assert httpx.get(f"{base}/api/health/live", timeout=10).json() == {"status": "ok"}


# --- the API root and the schema -------------------------------------------------------------------------------


def test_api_root_lists_the_entry_points(client):
    body = client.get("/api/").json()
    assert body["health"].endswith("/api/health/live")
    assert body["readiness"].endswith("/api/health/")
    assert body["docs"].endswith("/api/docs/")
    assert body["schema"].endswith("/api/schema/")


def test_openapi_schema_and_docs_are_served(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert "/api/health/" in paths
    assert "/api/health/live" in paths
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    assert b"swagger" in docs.content.lower()
