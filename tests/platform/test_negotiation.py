"""Content negotiation (casino.api.JSONFirstNegotiation): what player clients send
is answered with JSON at once; everything else is negotiated as DRF does."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.test import APIClient, APIRequestFactory

from casino.auth import issue_token

pytestmark = pytest.mark.django_db


@pytest.fixture
def client() -> APIClient:
    user = get_user_model().objects.create_user(username="alice")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user=user)}")
    return client


@pytest.mark.parametrize("accept", [None, "*/*", "application/json", " application/json "])
def test_no_accept_any_or_json_is_answered_with_json(client: APIClient, accept: str | None) -> None:
    response = client.get("/api/wallet/") if accept is None else client.get("/api/wallet/", HTTP_ACCEPT=accept)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert set(response.json()) >= {"balance", "currency"}


def test_a_browser_still_gets_the_browsable_api(client: APIClient) -> None:
    for response in (
        client.get("/api/wallet/", HTTP_ACCEPT="text/html"),
        client.get("/api/wallet/", {"format": "api"}),
    ):
        assert response.status_code == 200
        assert response["Content-Type"].startswith("text/html")


def test_a_type_no_renderer_offers_is_still_refused_with_406(client: APIClient) -> None:
    response = client.get("/api/wallet/", HTTP_ACCEPT="application/xml")
    assert response.status_code == 406
    assert response.json()["error"]["code"] == "not_acceptable"


def test_a_format_no_renderer_offers_is_still_not_found(client: APIClient) -> None:
    assert client.get("/api/wallet/", {"format": "xml"}).status_code == 404


def _answer(negotiation: DefaultContentNegotiation, request: Request, renderers: list[Any]) -> tuple[Any, str]:
    """The renderer class and media type chosen, or ``NotAcceptable`` and "" if refused."""
    try:
        renderer, media_type = negotiation.select_renderer(request, renderers)
    except NotAcceptable:
        return NotAcceptable, ""
    return type(renderer), media_type


@pytest.mark.parametrize("accept", [None, "*/*", "application/json", " application/json", "text/html", "*/*; q=0.5"])
@pytest.mark.parametrize("query", ["", "?format=json", "?format=api"])
def test_the_answer_is_drfs_own_and_drf_is_asked_only_off_the_fast_path(
    monkeypatch: pytest.MonkeyPatch, accept: str | None, query: str
) -> None:
    from casino.api import JSONFirstNegotiation

    factory = APIRequestFactory()
    path = f"/api/wallet/{query}"
    request = Request(factory.get(path) if accept is None else factory.get(path, HTTP_ACCEPT=accept))
    renderers = [JSONRenderer(), BrowsableAPIRenderer()]
    expected = _answer(DefaultContentNegotiation(), request, renderers)
    asked: list[str] = []
    drf_select = DefaultContentNegotiation.select_renderer

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append("drf")
        return drf_select(self, *args, **kwargs)

    monkeypatch.setattr(DefaultContentNegotiation, "select_renderer", spy)
    assert _answer(JSONFirstNegotiation(), request, renderers) == expected
    fast = query == "" and (accept or "*/*").strip() in ("*/*", "application/json")
    assert asked == ([] if fast else ["drf"])
