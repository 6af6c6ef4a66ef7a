"""GET /api/health/: 200 when database, broker (worker round trip) and channel
layer all answer; 503 naming the part that does not."""

from __future__ import annotations

import pytest
from channels.layers import channel_layers
from django.test import override_settings
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

# Port 1 on loopback: nothing listens there, so connections are refused at once.
DEAD_REDIS = "redis://127.0.0.1:1/0"


@pytest.fixture
def client() -> APIClient:
    return APIClient()


def test_healthy_when_every_part_answers(client, celery_worker_process):
    response = client.get("/api/health/")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert body["failing"] == []
    assert set(body["components"]) == {"database", "broker", "channel_layer"}
    assert all(part["status"] == "ok" for part in body["components"].values())
    assert body["components"]["broker"]["detail"] == "worker answered the ping"


def test_503_names_the_broker_when_it_is_unreachable(client, celery_worker_process):
    with override_settings(CELERY_BROKER_URL=DEAD_REDIS, HEALTH_CHECK_TIMEOUT=2):
        response = client.get("/api/health/")
    body = response.json()
    assert response.status_code == 503
    assert body["status"] == "error"
    assert body["failing"] == ["broker"]
    assert body["components"]["broker"]["detail"].startswith("broker unreachable")
    assert body["components"]["database"]["status"] == "ok"


def test_503_names_the_broker_when_no_worker_answers(client):
    # No worker fixture here would still find the session worker if another
    # test started it; a queue no worker consumes makes the round trip fail.
    with override_settings(HEALTH_CHECK_TIMEOUT=1, CELERY_TASK_DEFAULT_QUEUE="nobody-listens"):
        from casino.celery import app

        app.conf.task_default_queue = "nobody-listens"
        try:
            response = client.get("/api/health/")
        finally:
            app.conf.task_default_queue = "celery"
    body = response.json()
    assert response.status_code == 503
    assert body["failing"] == ["broker"]
    assert "no worker answered" in body["components"]["broker"]["detail"]


def test_503_names_the_channel_layer_when_it_is_unreachable(client, celery_worker_process):
    dead_layer = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [DEAD_REDIS]}}}
    with override_settings(CHANNEL_LAYERS=dead_layer, HEALTH_CHECK_TIMEOUT=2):
        channel_layers.backends.clear()
        try:
            response = client.get("/api/health/")
        finally:
            channel_layers.backends.clear()
    body = response.json()
    assert response.status_code == 503
    assert body["failing"] == ["channel_layer"]


def test_api_root_lists_the_entry_points(client):
    body = client.get("/api/").json()
    assert body["health"].endswith("/api/health/")
    assert body["docs"].endswith("/api/docs/")
    assert body["schema"].endswith("/api/schema/")


def test_openapi_schema_and_docs_are_served(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    assert "/api/health/" in schema.json()["paths"]
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    assert b"swagger" in docs.content.lower()
