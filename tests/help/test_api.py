"""The help endpoints through the real DRF stack on PostgreSQL (games/help/api.py):
the game pages in English and French, a house table's page with its own limits,
pay tables in force and wheel, a poker table's page with its rake, the language
chosen by ``?lang=`` or the request's language, and the refusals
(``unknown_game`` 404, ``unsupported_language`` 400, ``table_not_found`` 404,
``poker_table_not_found`` 404, unauthenticated 401). Answers are checked against
the published OpenAPI schema."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from rest_framework.test import APIClient

from casino.models import PlayerProfile
from games.house.models import HouseTable
from games.house.rules.registry import pay_table
from tests.house.live.test_bad_input import client_for
from tests.house.live.test_openapi import answer_schema
from tests.house.services.conftest import make_player, make_table
from tests.poker.tables import make_table as make_poker_table

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

GAMES = ("uth", "casino_holdem", "xtreme", "holdem_no_limit", "holdem_pot_limit", "holdem_fixed_limit")


@pytest.fixture
def client() -> APIClient:
    return client_for(make_player(funds=0))


@pytest.fixture(scope="module")
def schema(django_db_setup, django_db_blocker) -> dict[str, Any]:
    with django_db_blocker.unblock():
        response = APIClient().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return dict(response.json())


def get(client: APIClient, path: str, **headers: Any) -> Any:
    return client.get(path, **headers)


def refused(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code


@pytest.mark.parametrize("code", GAMES)
def test_each_game_has_an_english_and_a_french_page_in_its_schema(client, schema, code: str) -> None:
    pages = {}
    for language in ("en", "fr"):
        response = get(client, f"/api/games/{code}/help/?lang={language}")
        assert response.status_code == 200, response.content
        body = response.json()
        jsonschema.validate(body, answer_schema(schema, "/api/games/{game_code}/help/", "get", 200))
        assert body["language"] == language
        assert body["game"] == code
        pages[language] = body
    assert [s["id"] for s in pages["en"]["sections"]] == [s["id"] for s in pages["fr"]["sections"]]
    assert pages["en"]["sections"][0]["title"] == "Object of the game"
    assert pages["fr"]["sections"][0]["title"] == "Aperçu et objectif du jeu"


def test_without_lang_the_requests_language_decides(client) -> None:
    """No ``?lang=``: the player's profile language, else ``Accept-Language`` (docs/players.md)."""
    french_title = "Aperçu et objectif du jeu"
    assert get(client, "/api/games/uth/help/").json()["language"] == "en"
    body = get(client, "/api/games/uth/help/", HTTP_ACCEPT_LANGUAGE="fr-FR,fr;q=0.9").json()
    assert (body["language"], body["sections"][0]["title"]) == ("fr", french_title)
    # A French profile answers in French on an English device; ``?lang=`` still wins.
    player = make_player(funds=0)
    PlayerProfile.objects.update_or_create(user_id=player, defaults={"language": "fr"})
    french_player = client_for(player)
    body = get(french_player, "/api/games/uth/help/", HTTP_ACCEPT_LANGUAGE="en").json()
    assert (body["language"], body["sections"][0]["title"]) == ("fr", french_title)
    assert get(french_player, "/api/games/uth/help/?lang=en").json()["language"] == "en"


def test_refusals_have_their_codes(client) -> None:
    refused(get(client, "/api/games/blackjack/help/"), 404, "unknown_game")
    refused(get(client, "/api/games/uth/help/?lang=de"), 400, "unsupported_language")
    refused(get(client, "/api/games/uth/help/?lang="), 400, "unsupported_language")
    refused(get(client, "/api/tables/999999/help/"), 404, "table_not_found")
    refused(get(client, "/api/poker/tables/999999/help/"), 404, "poker_table_not_found")
    refused(APIClient().get("/api/games/uth/help/"), 401, "not_authenticated")
    # The language is checked before the game or the table is looked up.
    refused(get(client, "/api/games/blackjack/help/?lang=xx"), 400, "unsupported_language")


def test_a_house_tables_page_shows_its_limits_pay_tables_in_force_and_wheel(client, schema) -> None:
    table = make_table(
        "xtreme",
        limits={"ante": {"min": 200, "max": 5_000}, "stax": {"min": 100, "max": 1_000},
                "bonus_spin": {"min": 100, "max": 500}},
        pay_tables={"xtra_bonus": 1, "stax": 7},
        progressives={"reset": dict.fromkeys(("star", "spade", "heart", "diamond", "club"), 10000),
                      "contribution_bp": {"star": 500, "spade": 300, "heart": 200, "diamond": 100, "club": 0}},
    )  # fmt: skip
    response = get(client, f"/api/tables/{table.pk}/help/?lang=fr")
    assert response.status_code == 200, response.content
    body = response.json()
    jsonschema.validate(body, answer_schema(schema, "/api/tables/{table_id}/help/", "get", 200))
    section = body["table"]
    assert section["code"] == table.code
    assert section["currency"] == "EUR"
    assert [(lim["wager"], lim["min"], lim["max"]) for lim in section["limits"]] == [
        ("ante", 200, 5_000),
        ("stax", 100, 1_000),
        ("bonus_spin", 100, 500),
    ]
    assert section["limits"][0]["name"] == "Mise initiale (Ante)"
    assert section["pay_tables"] == {"xtra_bonus": 1, "stax": 7}
    # Only the pay tables in force, with their real lines; only the side bets offered.
    assert [t["name"] for t in body["pay_tables"]] == ["xtreme.xtra_bonus.1", "xtreme.stax.7"]
    stax = pay_table("xtreme", "stax", 7)
    assert [line["ratio"] for line in body["pay_tables"][1]["lines"]] == [str(p.ratio) for _, p in stax.lines]
    assert [w["wager"] for w in body["wagers"]] == ["ante", "xtra_bonus", "stax", "bonus_spin", "play"]
    assert body["bonus_spin"]["wheel"]["name"] == "test-wheel"
    assert section["stax_contribution"] == pytest.approx(0.11)
    assert section["chips"] == table.chips
    assert section["mandatory_wagers"] == []
    assert section["multi_play"] is True  # the default: open to multi-game play


def test_a_poker_tables_page_shows_its_stakes_and_rake_per_player_count(client, schema) -> None:
    table = make_poker_table(variant="pot_limit", max_seats=6, small_blind=25, big_blind=50, ante=5)
    response = get(client, f"/api/poker/tables/{table.pk}/help/?lang=en")
    assert response.status_code == 200, response.content
    body = response.json()
    jsonschema.validate(body, answer_schema(schema, "/api/poker/tables/{table_id}/help/", "get", 200))
    assert body["game"] == "holdem_pot_limit"
    section = body["table"]
    assert (section["small_blind"], section["big_blind"], section["ante"]) == (25, 50, 5)
    # Seed 001, "Limit" (pot limit): cap 1 euro for 2-3 players, 2 for 4-5, 3 for 6-10.
    assert [(r["players"], r["cap"]) for r in section["rake"]] == [(2, 100), (3, 100), (4, 200), (5, 200), (6, 300)]
    assert "Pot limit:" in "\n".join(p for s in body["sections"] for p in s["paragraphs"])


def test_the_active_language_is_the_fallback() -> None:
    """What the locale middleware activates (Accept-Language, the profile's language) picks
    the page when ``?lang=`` is absent; a language without help pages falls back to English."""
    from django.utils import translation

    from games.help.services import game_help

    with translation.override("fr-ca"):
        assert game_help(game_code="uth", language=None)["language"] == "fr"
    with translation.override("de"):
        assert game_help(game_code="uth", language=None)["language"] == "en"
    with translation.override("fr"):
        assert game_help(game_code="uth", language="en")["sections"][0]["title"] == "Object of the game"


def test_a_tables_chips_mandatory_wagers_and_multi_play_are_on_its_page() -> None:
    """The table's chips, mandatory wagers and multi-play flag (issue 37, parts 1 and 3) on its page."""
    from games.help.content import house
    from games.help.i18n import render
    from games.help.services import table_terms

    table = make_table("xtreme")
    HouseTable.objects.filter(pk=table.pk).update(chips=[100, 500, 2_500], mandatory_wagers=["stax"], multi_play=False)
    table.refresh_from_db()
    section = render(house.game_page(table.game, table_terms(table)), "en")["table"]
    assert section["chips"] == [100, 500, 2_500]
    assert section["mandatory_wagers"] == [{"wager": "stax", "name": "STAX"}]
    assert section["multi_play"] is False
    mandatory = (
        "At this table every player's bets must include these wagers: STAX; "
        "bets without them are returned at No More Bets and the player sits the round out."
    )
    assert mandatory in section["paragraphs"]
    assert "This table is not available for multi-game play." in section["paragraphs"]
