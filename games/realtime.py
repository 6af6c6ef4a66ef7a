"""What every table websocket shares, whichever the game family (protocol:
docs/websocket.md): who the user is, the application close codes, refusing
a connection so the client sees the code, and answering frames that are not
one JSON text. Interface layer: no game rule lives here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.contrib.auth.models import AnonymousUser
from rest_framework.authtoken.models import Token

# Close codes (4000-4999 are the application's).
CLOSE_UNAUTHENTICATED = 4401
CLOSE_TABLE_NOT_FOUND = 4404


async def refuse(consumer: AsyncJsonWebsocketConsumer, code: int) -> None:
    """Close with an application close code (4401, 4404). The handshake is
    accepted first: a close before it becomes an HTTP 403 refusal, and the
    client never sees the code."""
    await consumer.accept()
    await consumer.close(code=code)


def _user_from_token(key: str) -> Any:
    token = Token.objects.select_related("user").filter(key=key).first()
    return token.user if token and token.user.is_active else None


async def authenticate_scope(scope: Mapping[str, Any]) -> Any:
    """The websocket's user: ``?token=`` (an API token) or the session's, else ``None``."""
    query = parse_qs((scope.get("query_string") or b"").decode())
    if query.get("token"):
        return await database_sync_to_async(_user_from_token)(query["token"][0])
    user = scope.get("user")
    if user is None or isinstance(user, AnonymousUser) or not user.is_authenticated:
        return None
    return user


class JSONFrames(AsyncJsonWebsocketConsumer):
    """A frame that is not one JSON text (binary, empty, not JSON) is answered
    with ``malformed_message``; Channels' own consumer raised and dropped the
    socket on binary and empty frames."""

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        try:
            content = await self.decode_json(text_data) if text_data else None
        except ValueError:
            content = None
        if content is None:
            await self.send_json(
                {"type": "error", "code": "malformed_message", "message": "Send one JSON object per text frame."}
            )
            return
        await self.receive_json(content, **kwargs)
