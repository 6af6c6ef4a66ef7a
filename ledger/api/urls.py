"""Routes of the ledger-side API (mounted under /api/): cashier, responsible
gaming and compliance."""

from __future__ import annotations

from typing import Any

from django.urls import path

from casino.cashier_views import (
    CashierTransactionsView,
    DepositRequestView,
    ExclusionView,
    LimitsView,
    ProviderCallbackView,
    RefundView,
    WithdrawalRequestView,
)
from compliance.views import ExportKeyView, ExportView, GameRecallView, ReportView

urlpatterns: list[Any] = [
    path("cashier/deposits/", DepositRequestView.as_view(), name="cashier-deposit"),
    path("cashier/withdrawals/", WithdrawalRequestView.as_view(), name="cashier-withdrawal"),
    path("cashier/transactions/", CashierTransactionsView.as_view(), name="cashier-transactions"),
    path("cashier/transactions/<uuid:pk>/refund/", RefundView.as_view(), name="cashier-refund"),
    path("cashier/callback/", ProviderCallbackView.as_view(), name="cashier-callback"),
    path("me/limits/", LimitsView.as_view(), name="me-limits"),
    path("me/exclusion/", ExclusionView.as_view(), name="me-exclusion"),
    path("compliance/exports/", ExportView.as_view(), name="compliance-export"),
    path("compliance/export-key/", ExportKeyView.as_view(), name="compliance-export-key"),
    path("compliance/reports/<str:name>/", ReportView.as_view(), name="compliance-report"),
    path("compliance/game-recall/<str:game_number>/", GameRecallView.as_view(), name="compliance-game-recall"),
]
