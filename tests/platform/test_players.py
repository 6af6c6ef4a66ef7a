"""Player login and stored settings (seed 000 'Settings': applied at once, stored
to the profile, restored on any device)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from casino.models import PlayerProfile

pytestmark = pytest.mark.django_db


@pytest.fixture
def player():
    return get_user_model().objects.create_user("alice", password="correct horse battery")


def login(username: str, password: str) -> APIClient:
    client = APIClient()
    response = client.post("/api/auth/token/", {"username": username, "password": password}, format="json")
    assert response.status_code == 200, response.content
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    return client


def test_login_gives_a_token_that_authenticates(player):
    client = login("alice", "correct horse battery")
    body = client.get("/api/me/").json()
    assert body == {"username": "alice", "settings": {"hide_chat": False, "show_side_bets": True, "sound_on": True}}


def test_wrong_password_is_refused_with_a_code(player):
    response = APIClient().post("/api/auth/token/", {"username": "alice", "password": "nope"}, format="json")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_credentials"


def test_unauthenticated_access_is_refused():
    response = APIClient().get("/api/me/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_settings_are_stored_and_seen_from_another_device(player):
    first_device = login("alice", "correct horse battery")
    changed = first_device.patch("/api/me/settings/", {"hide_chat": True, "sound_on": False}, format="json")
    assert changed.status_code == 200
    assert changed.json() == {"hide_chat": True, "show_side_bets": True, "sound_on": False}
    second_device = login("alice", "correct horse battery")
    assert second_device.get("/api/me/settings/").json() == {
        "hide_chat": True,
        "show_side_bets": True,
        "sound_on": False,
    }


@pytest.mark.parametrize(
    ("payload", "code"),
    [({"volume": 3}, "unknown_setting"), ({"hide_chat": "maybe"}, "invalid_request")],
)
def test_bad_settings_are_refused_and_change_nothing(player, payload, code):
    client = login("alice", "correct horse battery")
    client.patch("/api/me/settings/", {"hide_chat": True}, format="json")
    response = client.patch("/api/me/settings/", payload, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    profile = PlayerProfile.objects.get(user=player)
    assert (profile.hide_chat, profile.show_side_bets, profile.sound_on) == (True, True, True)


def test_logout_revokes_the_token(player):
    client = login("alice", "correct horse battery")
    assert client.post("/api/auth/logout/").status_code == 204
    assert client.get("/api/me/").status_code == 401
