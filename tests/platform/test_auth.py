"""API tokens and login lockout through the API (docs/auth.md): tokens are
knox's (hashed, expiring, revocable, rotated on a password change), read in
one query; logins are locked per username and per client address
(django-axes), the address coming from ``TRUSTED_PROXY_COUNT``."""

from __future__ import annotations

import hashlib
import time
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.test import APIClient

from casino.auth import issue_token

pytestmark = pytest.mark.django_db

LIMIT = 5  # CASINO_LOGIN_FAILURE_LIMIT's default


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def _player(name: str) -> Any:
    return get_user_model().objects.create_user(username=name, password=f"{name}-pw-123456")


def login(name: str, password: str | None = None, **extra: Any) -> Any:
    """``POST /api/auth/token/`` from the address in ``extra`` (``REMOTE_ADDR``, headers)."""
    body = {"username": name, "password": password or f"{name}-pw-123456"}
    return APIClient().post("/api/auth/token/", body, format="json", **extra)


# --- tokens ---------------------------------------------------------------------------------------


def test_a_valid_token_authenticates_its_own_user_with_every_field_in_one_query() -> None:
    user = get_user_model().objects.create_user(username="alice", email="alice@example.com")
    key = issue_token(user=user)
    assert _client(key).get("/api/wallet/").status_code == 200
    from casino.auth import TokenAuthentication

    with CaptureQueriesContext(connection) as queries:
        found, auth = TokenAuthentication().authenticate_credentials(key)
    assert len(queries) == 1
    assert (found.pk, found.username, found.email, found.is_active) == (user.pk, "alice", "alice@example.com", True)
    assert auth.digest == hashlib.sha512(key.encode()).hexdigest()


def test_tokens_are_stored_hashed_only() -> None:
    _player("hashed")
    response = login("hashed", REMOTE_ADDR="10.1.0.1")
    assert response.status_code == 200
    key = response.json()["token"]
    assert response.json()["expires_in"] == 10 * 3600
    rows = list(AuthToken.objects.values_list("digest", "token_key"))
    assert rows == [(hashlib.sha512(key.encode()).hexdigest(), key[:15])]
    assert all(key not in str(value) for row in rows for value in row)


def test_an_unknown_token_or_an_inactive_user_is_refused_with_401() -> None:
    user = _player("bob")
    key = issue_token(user=user)
    assert _client("0" * 64).get("/api/wallet/").status_code == 401
    assert _client(key[:15] + "0" * 49).get("/api/wallet/").status_code == 401  # right prefix, wrong digest
    user.is_active = False
    user.save()
    response = _client(key).get("/api/wallet/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_a_token_expires_after_its_ttl() -> None:
    _player("carol")
    knox = {"TOKEN_TTL": timedelta(seconds=1), "AUTH_HEADER_PREFIX": "Token", "AUTO_REFRESH": False}
    with override_settings(REST_KNOX=knox, CASINO_TOKEN_TTL_SECONDS=1):
        answer = login("carol", REMOTE_ADDR="10.1.0.2")
    assert answer.json()["expires_in"] == 1
    client = _client(answer.json()["token"])
    assert client.get("/api/wallet/").status_code == 200
    time.sleep(1.2)
    response = client.get("/api/wallet/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "token_expired"


def test_logout_revokes_the_current_token_and_logout_all_every_token() -> None:
    _player("dave")
    phone, laptop, tablet = (_client(login("dave", REMOTE_ADDR="10.1.0.3").json()["token"]) for _ in range(3))
    assert phone.post("/api/auth/logout/").status_code == 204
    assert phone.get("/api/wallet/").status_code == 401
    assert laptop.get("/api/wallet/").status_code == 200  # another device's token stays valid
    assert laptop.post("/api/auth/logout-all/").status_code == 204
    assert laptop.get("/api/wallet/").status_code == 401
    assert tablet.get("/api/wallet/").status_code == 401
    assert not AuthToken.objects.exists()


def test_a_password_change_in_the_admin_revokes_every_token_of_the_user() -> None:
    erin, _frank = _player("erin"), _player("frank")
    erin_keys = [login("erin", REMOTE_ADDR="10.1.0.4").json()["token"] for _ in range(2)]
    frank_key = login("frank", REMOTE_ADDR="10.1.0.4").json()["token"]
    operator = get_user_model().objects.create_superuser(username="op", password="op-pw-123456")
    admin = Client()
    admin.force_login(operator)
    new = "erin-new-pw-654321"
    changed = admin.post(f"/admin/auth/user/{erin.pk}/password/", {"password1": new, "password2": new})
    assert changed.status_code == 302, changed.content[:500]
    assert all(_client(key).get("/api/wallet/").status_code == 401 for key in erin_keys)
    assert _client(frank_key).get("/api/wallet/").status_code == 200  # only erin's
    assert login("erin", new, REMOTE_ADDR="10.1.0.4").status_code == 200


def test_saving_a_user_without_changing_the_password_keeps_the_tokens() -> None:
    user = _player("gina")
    key = issue_token(user=user)
    user.email = "gina@example.com"
    user.save()
    assert _client(key).get("/api/wallet/").status_code == 200


# --- login lockout (django-axes) --------------------------------------------------------------------


def _error(response: Any) -> str:
    return str(response.json()["error"]["code"])


def test_an_account_is_locked_after_the_failure_limit_whatever_the_address() -> None:
    _player("henry")
    _player("iris")
    answers = [login("henry", "wrong-password", REMOTE_ADDR=f"10.2.0.{n + 1}") for n in range(LIMIT)]
    assert [(a.status_code, _error(a)) for a in answers[:-1]] == [(401, "invalid_credentials")] * (LIMIT - 1)
    assert (answers[-1].status_code, _error(answers[-1])) == (429, "login_locked_out")  # the LIMITth locks
    locked = login("henry", REMOTE_ADDR="10.2.1.1")  # the right password, from a fresh address
    assert (locked.status_code, _error(locked)) == (429, "login_locked_out")
    assert int(locked["Retry-After"]) == 900
    assert locked.json()["error"]["details"] == {"retry_after_seconds": 900}
    assert login("iris", REMOTE_ADDR="10.2.1.1").status_code == 200  # another account is not locked


def test_an_address_is_locked_after_the_failure_limit_whatever_the_usernames() -> None:
    _player("jack")
    answers = [login(f"nobody-{n}", "guess", REMOTE_ADDR="10.3.0.1").status_code for n in range(LIMIT)]
    assert answers == [401] * (LIMIT - 1) + [429]
    locked = login("jack", REMOTE_ADDR="10.3.0.1")
    assert (locked.status_code, _error(locked)) == (429, "login_locked_out")
    assert login("jack", REMOTE_ADDR="10.3.0.2").status_code == 200


def test_a_lockout_ends_after_the_cool_off(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read on a moved clock (Django's and axes' ``now``), not by sleeping: with a
    real one-second cool-off a slow machine (a parallel run) let the failures
    expire before the lockout was checked. Locked a second before the cool-off
    has passed since the first failure, open a second after it passed since the last."""
    _player("kate")
    cool_off = settings.AXES_COOLOFF_TIME
    first = timezone.now()
    for _ in range(LIMIT):
        login("kate", "wrong-password", REMOTE_ADDR="10.4.0.1")
    last = timezone.now()
    assert login("kate", REMOTE_ADDR="10.4.0.2").status_code == 429

    def clock_at(moment: datetime) -> None:
        for target in ("django.utils.timezone.now", "axes.attempts.now", "axes.handlers.proxy.now"):
            monkeypatch.setattr(target, lambda: moment)

    clock_at(first + cool_off - timedelta(seconds=1))
    assert login("kate", REMOTE_ADDR="10.4.0.2").status_code == 429
    clock_at(last + cool_off + timedelta(seconds=1))
    assert login("kate", REMOTE_ADDR="10.4.0.2").status_code == 200


def test_forwarded_for_is_never_read_without_trusted_proxies() -> None:
    """100 wrong passwords with 100 made-up X-Forwarded-For addresses (and as
    many usernames): the address is the peer's, so it is locked at the limit."""
    _player("liam")
    answers = [
        login(f"guess-{n}", "wrong", REMOTE_ADDR="10.5.0.1", HTTP_X_FORWARDED_FOR=f"198.51.{n // 250}.{n % 250}")
        for n in range(100)
    ]
    assert [a.status_code for a in answers[: LIMIT - 1]] == [401] * (LIMIT - 1)
    assert {a.status_code for a in answers[LIMIT - 1 :]} == {429}
    assert login("liam", REMOTE_ADDR="10.5.0.1", HTTP_X_FORWARDED_FOR="192.0.2.77").status_code == 429


@override_settings(TRUSTED_PROXY_COUNT=1)
def test_with_one_trusted_proxy_the_client_is_the_last_forwarded_entry() -> None:
    _player("mia")
    proxy = {"REMOTE_ADDR": "10.6.0.1"}  # every request comes through the one proxy
    answers = [
        login(f"guess-{n}", "wrong", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}, 203.0.113.9", **proxy) for n in range(100)
    ]
    assert {a.status_code for a in answers[LIMIT - 1 :]} == {429}  # made-up left entries change nothing
    assert login("mia", HTTP_X_FORWARDED_FOR="203.0.113.9", **proxy).status_code == 429
    # Another client behind the same proxy is another address: not locked.
    assert login("mia", HTTP_X_FORWARDED_FOR="203.0.113.10", **proxy).status_code == 200


def test_the_admin_login_is_locked_too() -> None:
    get_user_model().objects.create_superuser(username="boss", password="boss-pw-123456")
    admin = Client(REMOTE_ADDR="10.7.0.1")
    for _ in range(LIMIT - 1):
        page = admin.post("/admin/login/", {"username": "boss", "password": "wrong"})
        assert page.status_code == 200
        assert b"Please enter the correct" in page.content
    assert admin.post("/admin/login/", {"username": "boss", "password": "wrong"}).status_code == 429
    locked = Client(REMOTE_ADDR="10.7.0.2").post("/admin/login/", {"username": "boss", "password": "boss-pw-123456"})
    assert locked.status_code == 429
    assert "sessionid" not in locked.cookies
    # The address is locked for every account, the API's logins included.
    assert admin.post("/admin/login/", {"username": "other", "password": "x"}).status_code == 429
    api = login("boss", "boss-pw-123456", REMOTE_ADDR="10.7.0.1")
    assert (api.status_code, _error(api)) == (429, "login_locked_out")
