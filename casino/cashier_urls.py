"""Routes of the cashier and the player's responsible-gaming settings (mounted under /api/)."""

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

urlpatterns: list[Any] = [
    path("cashier/deposits/", DepositRequestView.as_view(), name="cashier-deposit"),
    path("cashier/withdrawals/", WithdrawalRequestView.as_view(), name="cashier-withdrawal"),
    path("cashier/transactions/", CashierTransactionsView.as_view(), name="cashier-transactions"),
    path("cashier/transactions/<uuid:pk>/refund/", RefundView.as_view(), name="cashier-refund"),
    path("cashier/callback/", ProviderCallbackView.as_view(), name="cashier-callback"),
    path("me/limits/", LimitsView.as_view(), name="me-limits"),
    path("me/exclusion/", ExclusionView.as_view(), name="me-exclusion"),
]
