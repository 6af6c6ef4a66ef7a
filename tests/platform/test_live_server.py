"""The real stack from the outside: a uvicorn process and a Celery worker process
on the test database and Redis, reached over real HTTP."""

from __future__ import annotations

import httpx
import pytest


@pytest.mark.django_db(transaction=True)
def test_health_over_http_crosses_processes(asgi_server, celery_worker_process, django_user_model):
    # The readiness check is for staff (here with an API token) or the health-check token.
    django_user_model.objects.create_user("ops", password="a long operator passphrase", is_staff=True)
    token = httpx.post(
        f"{asgi_server}/api/auth/token/", json={"username": "ops", "password": "a long operator passphrase"}, timeout=10
    ).json()["token"]
    assert httpx.get(f"{asgi_server}/api/health/", timeout=30).status_code == 403
    response = httpx.get(f"{asgi_server}/api/health/", headers={"Authorization": f"Token {token}"}, timeout=30)
    body = response.json()
    assert response.status_code == 200, body
    assert body["failing"] == []
    # The ASGI process reached the worker process through the broker.
    assert body["components"]["broker"]["detail"] == "worker answered the ping"


@pytest.mark.django_db(transaction=True)
def test_login_over_http(asgi_server, django_user_model):
    django_user_model.objects.create_user("bob", password="another long passphrase")
    token = httpx.post(
        f"{asgi_server}/api/auth/token/", json={"username": "bob", "password": "another long passphrase"}, timeout=10
    )
    assert token.status_code == 200
    me = httpx.get(f"{asgi_server}/api/me/", headers={"Authorization": f"Token {token.json()['token']}"}, timeout=10)
    assert me.json()["username"] == "bob"
