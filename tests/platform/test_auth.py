"""API token authentication (casino.auth): the one-query token scheme keeps DRF's contract."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_a_valid_token_authenticates_its_own_user_with_every_field() -> None:
    user = get_user_model().objects.create_user(username="alice", email="alice@example.com")
    token = Token.objects.create(user=user)
    response = _client(token.key).get("/api/wallet/")
    assert response.status_code == 200
    from casino.auth import TokenAuthentication

    found, auth = TokenAuthentication().authenticate_credentials(token.key)
    assert (found.pk, found.username, found.email, found.is_active) == (user.pk, "alice", "alice@example.com", True)
    assert auth.key == token.key


def test_an_unknown_token_or_an_inactive_user_is_refused_with_401() -> None:
    user = get_user_model().objects.create_user(username="bob")
    token = Token.objects.create(user=user)
    assert _client("0" * 40).get("/api/wallet/").status_code == 401
    user.is_active = False
    user.save()
    response = _client(token.key).get("/api/wallet/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"
