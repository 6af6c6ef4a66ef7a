"""Table chat: stored messages (issue 6, "Table chat ... rate-limited, stored, hideable").

The model belonged to an app of its own (``games.live``, label ``live``) until
issue 34; it keeps that app's table (``live_chatmessage``) and index names, so
moving it touched no row (docs/live.md). The services are in
``games/house/services/chat.py``."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ChatMessage(models.Model):
    """One chat line a player wrote at a table. Never edited; kept for moderation."""

    table = models.ForeignKey("games.HouseTable", on_delete=models.PROTECT, related_name="chat_messages")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="chat_messages")
    text = models.CharField(max_length=280)
    sent_at = models.DateTimeField(db_index=True)

    class Meta:
        app_label = "games"
        db_table = "live_chatmessage"
        ordering = ["-sent_at", "-id"]
        indexes = [models.Index(fields=["table", "-sent_at"], name="chat_table_recent")]

    def __str__(self) -> str:
        return f"{self.player} at {self.table_id}: {self.text[:30]}"
