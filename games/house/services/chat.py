"""Table chat (application services): stored, rate-limited, hideable per player."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from casino.errors import DomainError
from casino.models import PlayerProfile
from games.house.services.seats import require_seat
from games.tables.chat import ChatMessage

MAX_CHAT_LENGTH = 280


class ChatRateLimited(DomainError, code="chat_rate_limited", http_status=429):
    """Too many chat messages: wait a few seconds."""


class InvalidChatMessage(DomainError, code="invalid_chat_message"):
    """A chat message is 1 to 280 characters of text, not blank, without NUL."""


def chat_line(message: ChatMessage, username: str) -> dict[str, object]:
    return {
        "id": message.pk,
        "table_id": message.table_id,
        "player": username,
        "text": message.text,
        "sent_at": message.sent_at.isoformat(),
    }


@transaction.atomic
def post_chat(*, table_id: int, player_id: int, username: str, text: object, now: datetime | None = None) -> dict:
    """Store a chat line of a seated player. Refusals: ``invalid_chat_message``,
    ``not_seated``, ``chat_rate_limited`` (``CASINO_CHAT_RATE`` messages per
    ``CASINO_CHAT_RATE_WINDOW`` seconds per table)."""
    now = now or timezone.now()
    # NUL: no PostgreSQL text column can hold it (the insert would fail, not refuse).
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_CHAT_LENGTH or "\x00" in text:
        raise InvalidChatMessage()
    seat = require_seat(table_id=table_id, player_id=player_id)
    # Lock the seat row: concurrent posts of one player count one after the other.
    type(seat).objects.select_for_update().filter(pk=seat.pk).first()
    window_start = now - timedelta(seconds=settings.CASINO_CHAT_RATE_WINDOW)
    recent = ChatMessage.objects.filter(table_id=table_id, player_id=player_id, sent_at__gt=window_start).count()
    if recent >= settings.CASINO_CHAT_RATE:
        raise ChatRateLimited(retry_after_seconds=settings.CASINO_CHAT_RATE_WINDOW)
    message = ChatMessage.objects.create(table_id=table_id, player_id=player_id, text=text.strip(), sent_at=now)
    return chat_line(message, username)


def recent_chat(*, table_id: int, viewer_id: int, limit: int = 50) -> list[dict]:
    """The table's latest chat lines, oldest first; only the viewer's own lines
    when they hide chat."""
    rows = ChatMessage.objects.filter(table_id=table_id).select_related("player")
    if hides_chat(player_id=viewer_id):
        rows = rows.filter(player_id=viewer_id)
    return [chat_line(m, m.player.get_username()) for m in reversed(rows[:limit])]


def hides_chat(*, player_id: int) -> bool:
    """The player's stored ``hide_chat`` setting (default off)."""
    return bool(PlayerProfile.objects.filter(user_id=player_id).values_list("hide_chat", flat=True).first())
