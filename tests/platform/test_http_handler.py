"""casino.http.ThreadPoolHTTPHandler: Django's synchronous stack on a fixed pool of
threads, driven here as an ASGI server drives it (scope, receive, send)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.core import signals
from django.test import override_settings

from casino.http import DEFAULT_THREADS, ThreadPoolHTTPHandler, http_threads

Answer = tuple[int, dict[bytes, bytes], bytes, list[dict[str, Any]]]
# The readiness check is for staff or this token (docs/live.md, "Health").
HEALTH_TOKEN = "http-handler-test-health-token"
HEALTH_HEADERS = [(b"x-health-check-token", HEALTH_TOKEN.encode())]


def _call(handler: ThreadPoolHTTPHandler, method: str, path: str, body: bytes = b"",
          headers: list[tuple[bytes, bytes]] | None = None) -> Answer:  # fmt: skip
    return asyncio.run(_acall(handler, method, path, body, headers))


async def _acall(handler: ThreadPoolHTTPHandler, method: str, path: str, body: bytes = b"",
                 headers: list[tuple[bytes, bytes]] | None = None) -> Answer:  # fmt: skip
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
        "headers": [(b"host", b"localhost"), (b"content-length", str(len(body)).encode()), *(headers or [])],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
    }  # fmt: skip
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await handler(scope, receive, send)
    start = sent[0]
    assert start["type"] == "http.response.start"
    content = b"".join(m.get("body", b"") for m in sent[1:])
    assert sent[-1].get("more_body", False) is False
    return start["status"], dict(start["headers"]), content, sent


@pytest.fixture
def handler(settings) -> Iterator[ThreadPoolHTTPHandler]:
    settings.ALLOWED_HOSTS = ["localhost"]
    handler = ThreadPoolHTTPHandler(threads=2)
    yield handler
    handler.close()


@pytest.fixture
def finished() -> Any:
    """Counts request_finished signals and the threads they fired on."""
    seen: list[str] = []

    def receiver(**_: Any) -> None:
        seen.append(threading.current_thread().name)

    signals.request_finished.connect(receiver)
    yield seen
    signals.request_finished.disconnect(receiver)


@pytest.mark.django_db(transaction=True)
def test_a_json_api_request_is_answered_on_a_pool_thread(handler, finished) -> None:
    with override_settings(HEALTH_CHECK_TOKEN=HEALTH_TOKEN):
        status, headers, content, _ = _call(handler, "GET", "/api/health/", headers=HEALTH_HEADERS)
    assert status in (200, 503)  # the broker may be away in this test; the answer is what matters
    assert "components" in json.loads(content)
    assert headers[b"Content-Type"].startswith(b"application/json")
    # request_finished fired once, on the pool thread that ran the view (it
    # returns that thread's database connection).
    assert len(finished) == 1
    assert finished[0].startswith("http")


@pytest.mark.django_db(transaction=True)
def test_refusals_keep_their_codes(handler, finished) -> None:
    status, _, content, _ = _call(handler, "GET", "/api/me/")
    assert status == 401
    assert json.loads(content)["error"]["code"] == "not_authenticated"
    status, _, content, _ = _call(
        handler, "POST", "/api/auth/token/", b"{not json", [(b"content-type", b"application/json")]
    )
    assert status == 400
    assert json.loads(content)["error"]["code"] == "invalid_json"
    assert len(finished) == 2


@pytest.mark.django_db(transaction=True)
def test_a_streamed_file_is_sent_whole_and_closed_after(handler, finished) -> None:
    from django.contrib.staticfiles import finders

    path = finders.find("admin/css/base.css")
    assert path is not None
    expected = open(path, "rb").read()  # noqa: SIM115
    status, _, content, sent = _call(handler, "GET", "/static/admin/css/base.css")
    assert status == 200
    assert content == expected
    assert len(sent) > 2  # streamed: the headers, then the file in chunks
    assert len(finished) == 1  # closed once, after the body was sent


def test_threads_follow_the_pool_size_unless_set(monkeypatch) -> None:
    monkeypatch.delenv("HTTP_THREADS", raising=False)
    monkeypatch.delenv("DB_POOL_MAX_SIZE", raising=False)
    assert http_threads() == DEFAULT_THREADS
    monkeypatch.setenv("DB_POOL_MAX_SIZE", "5")
    assert http_threads() == 5
    monkeypatch.setenv("HTTP_THREADS", "12")
    assert http_threads() == 12


def test_only_http_scopes_are_served(handler) -> None:
    with pytest.raises(ValueError, match="websocket"):
        asyncio.run(handler({"type": "websocket"}, None, None))


@pytest.mark.django_db(transaction=True)
def test_async_code_in_a_view_runs_on_the_servers_event_loop(handler) -> None:
    """The health check's channel-layer round trip (``async_to_sync`` in a sync
    view) must run on the loop the server's consumers receive on: a channel
    layer receives on one event loop only."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()

    async def scenario() -> Answer:
        # A consumer of this process, listening on the layer while the view runs.
        channel = await layer.new_channel()
        listening = asyncio.create_task(layer.receive(channel))
        await asyncio.sleep(0.1)
        try:
            return await asyncio.wait_for(_acall(handler, "GET", "/api/health/", headers=HEALTH_HEADERS), 60)
        finally:
            # Ended by a message, not by cancelling it: a receive cancelled in the
            # middle of channels_redis's pop once left this test waiting for good.
            await layer.send(channel, {"type": "test.done"})
            assert (await asyncio.wait_for(listening, 30))["type"] == "test.done"

    with override_settings(HEALTH_CHECK_TOKEN=HEALTH_TOKEN):
        _, _, content, _ = asyncio.run(scenario())
    component = json.loads(content)["components"]["channel_layer"]
    assert component["status"] == "ok", component
