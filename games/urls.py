"""Routes of the play API (mounted under /api/)."""

from __future__ import annotations

from typing import Any

from django.urls import include, path

import casino.converters  # noqa: F401 (registers the <text:...> route converter)
import games.tables.api  # noqa: F401 (registers the <id:...> route converter)
from games.help import api as help_api
from games.house.api import operator_views, views
from games.poker.api import operator_views as poker_operator_views
from games.poker.tournament import history as tournament_history
from games.tables.asyncapi import AsyncAPIView

urlpatterns: list[Any] = [
    path("tables/", views.TableListView.as_view(), name="tables"),
    path("tables/<id:table_id>/", views.TableDetailView.as_view(), name="table"),
    path("tables/<id:table_id>/join/", views.JoinView.as_view(), name="table-join"),
    path("tables/<id:table_id>/leave/", views.LeaveView.as_view(), name="table-leave"),
    path("tables/<id:table_id>/bets/chip/", views.ChipView.as_view(), name="bet-chip"),
    path("tables/<id:table_id>/bets/undo/", views.UndoView.as_view(), name="bet-undo"),
    path("tables/<id:table_id>/bets/clear/", views.ClearView.as_view(), name="bet-clear"),
    path("tables/<id:table_id>/bets/repeat/", views.RepeatView.as_view(), name="bet-repeat"),
    path("tables/<id:table_id>/bets/double/", views.DoubleView.as_view(), name="bet-double"),
    path("tables/<id:table_id>/decision/", views.DecisionView.as_view(), name="decision"),
    path("tables/<id:table_id>/hint/", views.HintView.as_view(), name="decision-hint"),
    path("tables/<id:table_id>/chat/", views.ChatView.as_view(), name="table-chat"),
    *operator_views.urlpatterns,
    *poker_operator_views.urlpatterns,
    path("wallet/", views.WalletView.as_view(), name="wallet"),
    path("wallet/statement/", views.WalletStatementView.as_view(), name="wallet-statement"),
    path("history/", views.AccountHistoryView.as_view(), name="account-history"),
    path("history/games/<text:game_number>/", views.GameHistoryView.as_view(), name="game-history"),
    *tournament_history.urlpatterns,
    path("rounds/<text:game_number>/fairness/", views.RoundFairnessView.as_view(), name="round-fairness"),
    *help_api.urlpatterns,
    path("asyncapi.json", AsyncAPIView.as_view(), name="asyncapi"),
    path("", include("games.poker.api.views")),
]
