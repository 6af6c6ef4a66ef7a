"""Content negotiation (casino.api.JSONFirstNegotiation): what player clients send
is answered with JSON at once; everything else is negotiated as DRF does."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


@pytest.fixture
def client() -> APIClient:
    user = get_user_model().objects.create_user(username="alice")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.mark.parametrize("accept", [None, "*/*", "application/json", " application/json "])
def test_no_accept_any_or_json_is_answered_with_json(client: APIClient, accept: str | None) -> None:
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    response = client.get("/api/wallet/", **headers)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert set(response.json()) >= {"balance", "currency"}


@pytest.mark.parametrize("how", [{"HTTP_ACCEPT": "text/html"}, {"QUERY_STRING": "format=api"}])
def test_a_browser_still_gets_the_browsable_api(client: APIClient, how: dict[str, str]) -> None:
    response = client.get("/api/wallet/", **how)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")


def test_a_type_no_renderer_offers_is_still_refused_with_406(client: APIClient) -> None:
    response = client.get("/api/wallet/", HTTP_ACCEPT="application/xml")
    assert response.status_code == 406
    assert response.json()["error"]["code"] == "not_acceptable"


def test_a_format_no_renderer_offers_is_still_not_found(client: APIClient) -> None:
    assert client.get("/api/wallet/", QUERY_STRING="format=xml").status_code == 404
