"""Table chat: stored messages (issue 6, "Table chat ... rate-limited, stored, hideable")."""

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
        ordering = ["-sent_at", "-id"]
        indexes = [models.Index(fields=["table", "-sent_at"], name="chat_table_recent")]

    def __str__(self) -> str:
        return f"{self.player} at {self.table_id}: {self.text[:30]}"
