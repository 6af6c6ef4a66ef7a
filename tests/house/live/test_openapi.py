"""The player REST API is documented in the OpenAPI schema (issue 6): every
path and method, its answer's shape and its error answers. Real answers of a
played round are checked against the published schema, both ways (no field
missing, none undocumented)."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from games.house.services import advance_table, start_table
from tests.house.live.conftest import fast_table
from tests.house.live.test_bad_input import client_for, post
from tests.house.services.conftest import make_player

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

PLAYER_API = {
    "/api/tables/": ["get"],
    "/api/tables/{table_id}/": ["get"],
    "/api/tables/{table_id}/join/": ["post"],
    "/api/tables/{table_id}/leave/": ["post"],
    "/api/tables/{table_id}/bets/chip/": ["post"],
    "/api/tables/{table_id}/bets/undo/": ["post"],
    "/api/tables/{table_id}/bets/clear/": ["post"],
    "/api/tables/{table_id}/bets/repeat/": ["post"],
    "/api/tables/{table_id}/bets/double/": ["post"],
    "/api/tables/{table_id}/decision/": ["post"],
    "/api/tables/{table_id}/chat/": ["get", "post"],
    "/api/wallet/": ["get"],
    "/api/history/": ["get"],
    "/api/history/games/{game_number}/": ["get"],
    "/api/rounds/{game_number}/fairness/": ["get"],
    "/api/poker/hands/{hand_id}/fairness/": ["get"],
    "/api/tables/{table_id}/help/": ["get"],
    "/api/poker/tables/{table_id}/help/": ["get"],
}


@pytest.fixture
def schema() -> dict[str, Any]:
    response = APIClient().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return dict(response.json())


def strict(node: Any, components: dict[str, Any]) -> Any:
    """An OpenAPI 3.0 schema node as JSON Schema: references resolved, ``nullable``
    as a null alternative, objects with listed properties closed to others."""
    if isinstance(node, list):
        return [strict(item, components) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return strict(components[node["$ref"].rsplit("/", 1)[1]], components)
    out = {k: strict(v, components) for k, v in node.items() if k not in ("nullable", "readOnly", "format")}
    if "properties" in out:
        out["additionalProperties"] = False
    return {"anyOf": [out, {"type": "null"}]} if node.get("nullable") else out


def answer_schema(schema: dict[str, Any], path: str, method: str, status: int) -> Any:
    content = schema["paths"][path][method]["responses"][str(status)]["content"]["application/json"]
    return strict(content["schema"], schema["components"]["schemas"])


def test_every_player_path_is_documented_with_its_answer_and_error_shapes(schema) -> None:
    error_body = strict({"$ref": "#/components/schemas/ErrorBody"}, schema["components"]["schemas"])
    for path, methods in PLAYER_API.items():
        assert path in schema["paths"], path
        for method in methods:
            responses = schema["paths"][path][method]["responses"]
            assert "401" in responses, (path, method)
            success = [code for code in responses if code.startswith("2")]
            assert len(success) == 1, (path, method, success)
            for code, response in responses.items():
                if code.startswith("4"):
                    assert answer_schema(schema, path, method, int(code)) == error_body, (path, method, code)
                    assert response["description"], (path, method, code)
            if success != ["204"]:
                documented = answer_schema(schema, path, method, int(success[0]))
                documented = documented.get("items", documented)  # lists: their rows
                assert documented.get("properties"), (path, method, "an answer with no documented fields")


def test_real_answers_of_a_played_round_match_the_schema(schema) -> None:
    table = fast_table("uth", betting_seconds=60)
    player = make_player()
    client = client_for(player)
    table_path = f"/api/tables/{table.pk}"
    answers: list[tuple[str, str, int, Any]] = []

    def check(path: str, method: str, response: Any, status: int) -> Any:
        assert response.status_code == status, response.content
        jsonschema.validate(response.json(), answer_schema(schema, path, method, status))
        if status >= 400:  # the refusal's code is one the schema names for this status
            description = schema["paths"][path][method]["responses"][str(status)]["description"]
            assert re.search(rf"\b{response.json()['error']['code']}\b", description), (path, status, description)
        answers.append((path, method, status, response.json()))
        return response.json()

    chip = {"spot": "ante", "amount": 100}
    check("/api/tables/{table_id}/join/", "post", post(client, "/api/tables/999999/join/"), 404)
    check("/api/tables/{table_id}/join/", "post", post(client, f"{table_path}/join/"), 201)
    check("/api/tables/{table_id}/bets/chip/", "post", post(client, f"{table_path}/bets/chip/", chip), 409)
    check("/api/tables/{table_id}/", "get", APIClient().get(f"{table_path}/"), 401)
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    check("/api/wallet/", "get", stranger.get("/api/wallet/"), 401)
    start_table(table_id=table.pk, now=timezone.now())
    check("/api/tables/{table_id}/decision/", "post", post(client, f"{table_path}/decision/", {"option": "check"}), 409)
    check("/api/tables/{table_id}/chat/", "post", post(client, f"{table_path}/chat/", raw="{not json"), 400)
    check("/api/tables/", "get", client.get("/api/tables/"), 200)
    check("/api/tables/{table_id}/", "get", client.get(f"{table_path}/"), 200)
    table.refresh_from_db()
    fairness = f"/api/rounds/{table.current_round_id}/fairness/"
    check("/api/rounds/{game_number}/fairness/", "get", client.get(fairness), 200)  # in play: the commitment
    check("/api/tables/{table_id}/bets/chip/", "post", post(client, f"{table_path}/bets/chip/", chip), 200)
    check("/api/tables/{table_id}/bets/double/", "post", post(client, f"{table_path}/bets/double/"), 200)
    check("/api/tables/{table_id}/bets/undo/", "post", post(client, f"{table_path}/bets/undo/"), 200)
    check("/api/tables/{table_id}/chat/", "post", post(client, f"{table_path}/chat/", {"text": "gl"}), 201)
    check("/api/tables/{table_id}/chat/", "get", client.get(f"{table_path}/chat/"), 200)
    table.refresh_from_db()
    assert table.deadline is not None
    tick = advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=table.deadline)
    assert tick is not None
    refused = post(client, f"{table_path}/bets/chip/", chip)
    check("/api/tables/{table_id}/bets/chip/", "post", refused, 409)
    decided = post(client, f"{table_path}/decision/", {"option": "call4x"})
    check("/api/tables/{table_id}/decision/", "post", decided, 200)
    table.refresh_from_db()
    while table.phase not in ("between", "idle"):
        assert table.deadline is not None
        assert advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=table.deadline) is not None
        table.refresh_from_db()
    check("/api/wallet/", "get", client.get("/api/wallet/"), 200)
    page = check("/api/history/", "get", client.get("/api/history/"), 200)
    game = page["results"][0]["game_number"]
    check("/api/history/games/{game_number}/", "get", client.get(f"/api/history/games/{game}/"), 200)
    check("/api/history/", "get", client.get("/api/history/", {"limit": "x"}), 400)
    check("/api/history/games/{game_number}/", "get", client.get("/api/history/games/NOPE-1/"), 404)
    check("/api/rounds/{game_number}/fairness/", "get", client.get(fairness), 200)  # over: leaves, deal order
    check("/api/rounds/{game_number}/fairness/", "get", client.get("/api/rounds/NOPE-1/fairness/"), 404)
    codes = [a[3]["error"]["code"] for a in answers if a[2] >= 400]
    assert codes == [
        "table_not_found", "wrong_phase", "not_authenticated", "authentication_failed", "not_in_round",
        "invalid_json", "betting_closed", "invalid_query", "game_not_found", "round_not_found",
    ]  # fmt: skip
