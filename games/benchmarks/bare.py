"""The peer of the REST bet path in ``bench bets``: the least a DRF endpoint does.

Served only when ``CASINO_BENCH_ENDPOINTS`` is on (never in production), by the
same server, through the same middleware and DRF settings (token
authentication, JSON negotiation, exception handler) as every API view:
authenticate the token, parse a JSON body, one ``INSERT``, answer JSON. The
row goes to ``ledger_idempotency`` (an existing table with a unique key, so the
insert costs what a real one does, index update included)."""

from __future__ import annotations

import json
import uuid

from django.db import connection
from django.utils import timezone
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


class BareInsertView(APIView):
    permission_classes = [IsAuthenticated]

    def post(self, request: Request) -> Response:
        data = request.data
        key = f"bench-bare:{request.user.pk}:{uuid.uuid4()}"
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO ledger_idempotency (key, command, request_hash, result, created_at) "
                "VALUES (%s, %s, %s, %s::jsonb, %s)",
                [key, "bench.bare", "-", json.dumps(data), timezone.now()],
            )
        return Response({"key": key, "amount": data.get("amount") if isinstance(data, dict) else None})
