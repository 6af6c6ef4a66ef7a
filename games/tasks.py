"""The games app's Celery tasks (Celery's autodiscovery imports this module): each wing's tasks."""

from __future__ import annotations

from games.house import tasks as house_tasks
from games.poker import tasks as poker_tasks

__all__ = ["house_tasks", "poker_tasks"]
