"""The player's web client is served at ``/`` (issue 38): the page, its module
script and stylesheet from the static files, on the embedded default's settings
and without any network beyond this server."""

from __future__ import annotations

import re

import pytest
from django.test import Client

pytestmark = [pytest.mark.django_db]


def test_the_client_page_is_served_at_the_root_with_its_scripts() -> None:
    client = Client()
    page = client.get("/")
    assert page.status_code == 200
    html = page.content.decode()
    assert '<script type="module" src="/static/client/js/main.js">' in html
    for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', html):
        assert client.get(asset).status_code == 200, asset
    # No script, style or font from another host: the client works without network at run time.
    assert not re.search(r'(?:src|href)="(?:https?:)?//', html)


def test_the_root_refuses_to_be_written_to() -> None:
    assert Client().post("/").status_code == 405
