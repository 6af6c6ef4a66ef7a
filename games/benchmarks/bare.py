"""The peers of the bet paths in ``bench bets``: the least a DRF endpoint and a
table websocket do.

Served only when ``CASINO_BENCH_ENDPOINTS`` is on (never in production), by the
same server as every API view and table socket:

- ``BareInsertView`` (``POST /api/bench/bare/``): through the same middleware
  and DRF settings (token authentication, JSON negotiation, exception handler)
  as every API view: authenticate the token, parse a JSON body, one
  ``INSERT``, answer JSON;
- ``BareInsertConsumer`` (``ws/bench/bare/``): through the same ASGI stack as
  ``ws/tables/<id>/`` (origin check, session middleware, router): the handshake
  authenticated by ``?ticket=`` exactly as the table socket does
  (``games.tables.realtime.authenticate_scope``), then for each text frame: its
  JSON parsed (``casino.json_input``, as the table socket and the REST parser
  parse), one ``INSERT`` on a command thread (``games.tables.ws_commands``,
  where the table socket's seat commands run), one JSON answer frame
  ``{"type": "ack", "id", "request", "result"}``.

Both insert into ``ledger_idempotency`` (an existing table with a unique key, so
the insert costs what a real one does, index update included)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.db import connection
from django.utils import timezone
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino import json_input
from casino.api import request_user
from games.tables import ws_commands
from games.tables.realtime import CLOSE_UNAUTHENTICATED, DirectDispatch, authenticate_scope


def _insert(player_id: int, data: Any) -> str:
    """One row into ``ledger_idempotency``; its key."""
    key = f"bench-bare:{player_id}:{uuid.uuid4()}"
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO ledger_idempotency (key, command, request_hash, result, created_at) "
            "VALUES (%s, %s, %s, %s::jsonb, %s)",
            [key, "bench.bare", "-", json.dumps(data), timezone.now()],
        )
    return key


class BareInsertView(APIView):
    permission_classes = [IsAuthenticated]

    def post(self, request: Request) -> Response:
        data = request.data
        key = _insert(request_user(request).pk, data)
        return Response({"key": key, "amount": data.get("amount") if isinstance(data, dict) else None})


class BareInsertConsumer(DirectDispatch, AsyncWebsocketConsumer):
    """The bare websocket peer of the table socket's ``bet`` (module docstring).
    After the handshake it sends ``{"type": "snapshot"}`` (the load generator
    starts once it has its socket's snapshot, as on a table socket)."""

    player_id: int

    async def connect(self) -> None:
        user = await authenticate_scope(self.scope)
        await self.accept()
        if user is None:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.player_id = int(user.pk)
        await self.send(text_data='{"type":"snapshot"}')

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            content = json_input.loads(text_data or "", max_depth=settings.CASINO_JSON_MAX_DEPTH)
        except json_input.InputRefused as refused:
            await self.send(text_data=json.dumps({"type": "error", "code": refused.code}))
            return
        client_id = content.get("id") if isinstance(content, dict) else None
        key = await ws_commands.on_thread(_insert, player_id=self.player_id, data=content)
        amount = content.get("amount") if isinstance(content, dict) else None
        answer = {"type": "ack", "id": client_id, "request": "bet", "result": {"key": key, "amount": amount}}
        await self.send(text_data=json.dumps(answer))
