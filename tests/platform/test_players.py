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


#: A player who never changed a setting (seed 000, Settings; seed 001, Menu).
DEFAULTS = {
    "hide_chat": False,
    "show_side_bets": True,
    "animation_on": True,
    "language": None,
    "video_quality": "auto",
    "dealer_voice_on": True,
    "dealer_voice_volume": 100,
    "game_sound_on": True,
    "game_sound_volume": 100,
    "sound_on": True,
}


def test_login_gives_a_token_that_authenticates(player):
    client = login("alice", "correct horse battery")
    body = client.get("/api/me/").json()
    assert body == {"username": "alice", "settings": DEFAULTS}
    assert not PlayerProfile.objects.filter(user=player).exists()  # a read creates nothing


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
    changes = {
        "hide_chat": True,
        "show_side_bets": False,
        "video_quality": "low",
        "dealer_voice_on": False,
        "game_sound_volume": 35,
        "animation_on": False,
        "language": "fr",
    }
    changed = first_device.patch("/api/me/settings/", changes, format="json")
    assert changed.status_code == 200
    # The dealer's voice is muted, the game sound is not: the sounds are set separately (seed 000:243).
    expected = {**DEFAULTS, **changes, "sound_on": True}
    assert changed.json() == expected
    second_device = login("alice", "correct horse battery")
    assert second_device.get("/api/me/settings/").json() == expected
    assert second_device.get("/api/me/").json()["settings"] == expected


def test_each_sound_keeps_its_volume_while_muted_and_the_old_switch_sets_both(player):
    client = login("alice", "correct horse battery")
    client.patch("/api/me/settings/", {"dealer_voice_volume": 20, "game_sound_volume": 70}, format="json")
    muted = client.patch("/api/me/settings/", {"sound_on": False}, format="json").json()
    assert (muted["dealer_voice_on"], muted["game_sound_on"], muted["sound_on"]) == (False, False, False)
    assert (muted["dealer_voice_volume"], muted["game_sound_volume"]) == (20, 70)
    one_back = client.patch("/api/me/settings/", {"game_sound_on": True}, format="json").json()
    assert (one_back["dealer_voice_on"], one_back["game_sound_on"], one_back["sound_on"]) == (False, True, True)
    # A sound switch sent with the old one wins over it.
    both = client.patch("/api/me/settings/", {"sound_on": True, "dealer_voice_on": False}, format="json").json()
    assert (both["dealer_voice_on"], both["game_sound_on"]) == (False, True)
    assert client.patch("/api/me/settings/", {"language": None}, format="json").json()["language"] is None


@pytest.mark.parametrize(
    ("payload", "code", "details"),
    [
        ({"volume": 3}, "unknown_setting", {"settings": ["volume"]}),
        ({"hide_chat": True, "theme": "dark", "zoom": 2}, "unknown_setting", {"settings": ["theme", "zoom"]}),
        ([{"hide_chat": True}], "invalid_settings", None),
        ("hide_chat", "invalid_settings", None),
        ({"hide_chat": "maybe"}, "invalid_setting", {"setting": "hide_chat", "allowed": {"type": "boolean"}}),
        ({"hide_chat": 1}, "invalid_setting", {"setting": "hide_chat", "allowed": {"type": "boolean"}}),
        ({"sound_on": None}, "invalid_setting", {"setting": "sound_on", "allowed": {"type": "boolean"}}),
        *[
            (
                {"dealer_voice_volume": 50, volume: value},
                "invalid_setting",
                {"setting": volume, "allowed": {"type": "integer", "min": 0, "max": 100}},
            )
            for volume in ("dealer_voice_volume", "game_sound_volume")
            for value in (-1, 101, 50.5, 50.0, "50", True, None, 10**30)
        ],
        (
            {"video_quality": "4k"},
            "invalid_setting",
            {"setting": "video_quality", "allowed": {"choices": ["auto", "high", "medium", "low"], "nullable": False}},
        ),
        (
            {"video_quality": None},
            "invalid_setting",
            {"setting": "video_quality", "allowed": {"choices": ["auto", "high", "medium", "low"], "nullable": False}},
        ),
        (
            {"language": "de"},
            "invalid_setting",
            {"setting": "language", "allowed": {"choices": ["en", "fr"], "nullable": True}},
        ),
        (
            {"language": "FR"},
            "invalid_setting",
            {"setting": "language", "allowed": {"choices": ["en", "fr"], "nullable": True}},
        ),
    ],
)
def test_bad_settings_are_refused_and_change_nothing(player, payload, code, details):
    client = login("alice", "correct horse battery")
    client.patch("/api/me/settings/", {"hide_chat": True, "game_sound_volume": 40}, format="json")
    before = client.get("/api/me/settings/").json()
    response = client.patch("/api/me/settings/", payload, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == code
    assert error.get("details") == details
    assert client.get("/api/me/settings/").json() == before
    profile = PlayerProfile.objects.get(user=player)
    assert (profile.hide_chat, profile.game_sound_volume, profile.dealer_voice_volume) == (True, 40, 100)


def test_another_players_settings_are_neither_read_nor_changed(player):
    get_user_model().objects.create_user("bob", password="another horse battery")
    alice = login("alice", "correct horse battery")
    bob = login("bob", "another horse battery")
    bob.patch("/api/me/settings/", {"hide_chat": True, "user": player.pk}, format="json")
    assert alice.get("/api/me/settings/").json() == DEFAULTS
    assert bob.patch("/api/me/settings/", {"game_sound_volume": 0}, format="json").json()["game_sound_volume"] == 0
    assert alice.get("/api/me/settings/").json() == DEFAULTS


def test_the_settings_panel_is_described_in_the_players_language(player):
    client = login("alice", "correct horse battery")
    english = client.get("/api/me/settings/describe/")
    assert english.status_code == 200
    body = english.json()
    assert body["language"] == "en"
    tabs = {tab["name"]: tab for tab in body["tabs"]}
    # Seed 000, Settings: GENERAL (chat, side bets), VIDEO (quality), SOUND (dealer's voice, game sound).
    assert [tab["name"] for tab in body["tabs"]] == ["general", "video", "sound"]
    assert [s["name"] for s in tabs["sound"]["settings"]] == [
        "dealer_voice_on", "dealer_voice_volume", "game_sound_on", "game_sound_volume",
    ]  # fmt: skip
    volume = tabs["sound"]["settings"][1]
    assert (volume["type"], volume["min"], volume["max"], volume["default"]) == ("volume", 0, 100, 100)
    video = tabs["video"]["settings"][0]
    assert video["label"] == "Video quality"
    assert video["choices"][0] == {"value": "auto", "label": "Automatic"}
    assert (video["default"], video["nullable"]) == ("auto", False)
    # The device's language, then the player's choice, which wins over it.
    french_device = client.get("/api/me/settings/describe/", headers={"Accept-Language": "fr-CA"}).json()
    client.patch("/api/me/settings/", {"language": "fr"}, format="json")
    french_player = client.get("/api/me/settings/describe/", headers={"Accept-Language": "en"})
    assert french_player["Content-Language"] == "fr"
    for french in (french_device, french_player.json()):
        assert french["language"] == "fr"
        tabs = {tab["name"]: tab for tab in french["tabs"]}
        assert [tab["label"] for tab in french["tabs"]] == ["Général", "Vidéo", "Son"]
        video = tabs["video"]["settings"][0]
        assert video["label"] == "Qualité vidéo"
        assert [c["label"] for c in video["choices"]] == ["Automatique", "Haute", "Moyenne", "Basse"]
        assert [c["value"] for c in video["choices"]] == ["auto", "high", "medium", "low"]  # values never change
        assert tabs["sound"]["settings"][0]["label"] == "Voix du croupier"
        language = tabs["general"]["settings"][3]
        assert [c["label"] for c in language["choices"]] == ["English", "Français"]
    assert client.get("/api/me/settings/describe/", headers={"Accept-Language": "en"}).status_code == 200
    assert APIClient().get("/api/me/settings/describe/").status_code == 401


def test_logout_revokes_the_token(player):
    client = login("alice", "correct horse battery")
    assert client.post("/api/auth/logout/").status_code == 204
    assert client.get("/api/me/").status_code == 401
