"""Player cashier and responsible-gaming endpoints, and the payment provider's
signed callback (thin: validate, call a service, render)."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from typing import Any

from django.conf import settings
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino import cashier, responsible_gaming
from casino.api import errors, request_user
from casino.errors import DomainError
from casino.models import CashierTransaction, ResponsibleGaming

SIGNATURE_HEADER = "X-PSP-Signature"
# Amounts are stored in BIGINT columns: anything above is refused by the
# serializer (``invalid_request``), never sent to the database.
MAX_AMOUNT = 2**63 - 1


class CashierRequestSerializer(serializers.Serializer[Any]):
    amount = serializers.IntegerField(min_value=1, max_value=MAX_AMOUNT)
    currency = serializers.CharField(max_length=3, required=False)
    request_key = serializers.CharField(max_length=100)


class CashierTransactionSerializer(serializers.ModelSerializer[CashierTransaction]):
    class Meta:
        model = CashierTransaction
        fields = ["id", "kind", "amount", "currency", "state", "external_reference", "reason", "created_at",
                  "updated_at"]  # fmt: skip


class CallbackSerializer(serializers.Serializer[Any]):
    external_reference = serializers.CharField(max_length=100)
    status = serializers.ChoiceField(choices=["approved", "paid", "rejected"])
    amount = serializers.IntegerField(min_value=1, max_value=MAX_AMOUNT)
    currency = serializers.CharField(max_length=3)
    provider = serializers.CharField(max_length=50)


class _CashierRequestView(APIView):
    permission_classes = [IsAuthenticated]
    service: Any = None

    @extend_schema(
        request=CashierRequestSerializer,
        responses={
            201: CashierTransactionSerializer,
            **errors(
                r403="self_excluded, cooling_off, deposit_limit_exceeded (responsible gaming)",
                r409="insufficient_funds (a withdrawal larger than the balance), idempotency conflicts",
            ),
        },
    )
    def post(self, request: Request) -> Response:
        user = request_user(request)
        body = CashierRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        txn = type(self).service(
            player_id=user.pk,
            amount=body.validated_data["amount"],
            currency=body.validated_data.get("currency", settings.CASINO_DEFAULT_CURRENCY),
            request_key=body.validated_data["request_key"],
            now=timezone.now(),
        )
        return Response(CashierTransactionSerializer(txn).data, status=status.HTTP_201_CREATED)


class DepositRequestView(_CashierRequestView):
    """Ask to deposit; the payment provider confirms with a signed callback."""

    service = staticmethod(cashier.request_deposit)


class WithdrawalRequestView(_CashierRequestView):
    """Ask to withdraw; the amount is held until the withdrawal is paid or rejected."""

    service = staticmethod(cashier.request_withdrawal)


class CashierTransactionsView(APIView):
    """The caller's own deposits and withdrawals, newest first."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: CashierTransactionSerializer(many=True)})
    def get(self, request: Request) -> Response:
        rows = CashierTransaction.objects.filter(player=request_user(request)).order_by("-created_at")[:200]
        return Response(CashierTransactionSerializer(rows, many=True).data)


class BadSignature(DomainError, code="bad_signature", http_status=401):
    """The callback's signature is missing or wrong."""


class InvalidCallbackBody(DomainError, code="invalid_callback_body", http_status=400):
    """The callback's body is not JSON (UTF-8)."""


def callback_signature(body: bytes) -> str:
    """HMAC-SHA256 (hex) of the raw request body with ``CASINO_PSP_CALLBACK_KEY``."""
    return hmac.new(settings.CASINO_PSP_CALLBACK_KEY.encode(), body, hashlib.sha256).hexdigest()


class ProviderCallbackView(APIView):
    """The payment provider's status callback, signed with a shared key
    (header ``X-PSP-Signature``: HMAC-SHA256 hex of the raw body). Idempotent by
    external reference: a retry returns the transaction as it is. A ``paid``
    deposit the player cannot be credited with answers 200 in ``refund_due``
    (the provider must not retry it; an operator refunds it).

    Refusals, nothing changed: ``bad_signature`` (401; a missing, wrong or
    non-ASCII signature), ``invalid_callback_body`` (400; signed, but not UTF-8
    JSON), ``invalid_request`` (400; fields), ``callback_mismatch``,
    ``cashier_state_conflict``, ``not_found``."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []

    @extend_schema(
        request=CallbackSerializer,
        responses={
            200: CashierTransactionSerializer,
            **errors(
                r400="invalid_callback_body, invalid_request, callback_mismatch",
                r401="bad_signature (a missing, wrong or non-ASCII X-PSP-Signature)",
                r404="not_found (no transaction with that reference)",
                r409="cashier_state_conflict",
            ),
        },
    )
    def post(self, request: Request) -> Response:
        raw = request.body
        given = request.headers.get(SIGNATURE_HEADER, "")
        # compare_digest takes ASCII strings only (a header may carry any byte).
        if (
            not settings.CASINO_PSP_CALLBACK_KEY
            or not given.isascii()
            or not hmac.compare_digest(given, callback_signature(raw))
        ):
            raise BadSignature()
        try:
            data = json.loads(raw or b"{}")
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            raise InvalidCallbackBody(type=type(exc).__name__) from None
        body = CallbackSerializer(data=data)
        body.is_valid(raise_exception=True)
        txn = cashier.provider_callback(**body.validated_data, now=timezone.now())
        return Response(CashierTransactionSerializer(txn).data)


class RefundSerializer(serializers.Serializer[Any]):
    reason = serializers.CharField(max_length=200, help_text="e.g. the provider's refund reference")


class MayDecideCashier(BasePermission):
    """Staff with ``casino.decide_cashiertransaction`` (the operator role)."""

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and user.has_perm("casino.decide_cashiertransaction"))


class RefundView(APIView):
    """Operators (``casino.decide_cashiertransaction``): record that a ``refund_due``
    deposit was refunded through the provider; its money leaves the player's
    suspense account and the transaction becomes ``refunded`` (``operator_refund``)."""

    permission_classes = [MayDecideCashier]

    @extend_schema(request=RefundSerializer, responses={200: CashierTransactionSerializer})
    def post(self, request: Request, pk: uuid.UUID) -> Response:
        body = RefundSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        txn = cashier.operator_refund(
            transaction_id=pk, operator=request.user, reason=body.validated_data["reason"], now=timezone.now()
        )
        return Response(CashierTransactionSerializer(txn).data)


class LimitsSerializer(serializers.Serializer[Any]):
    currency = serializers.CharField(
        required=False, min_length=3, max_length=3,
        help_text="The wallet currency these limits are for (default: the casino's default currency).",
    )  # fmt: skip
    limits = serializers.DictField(
        child=serializers.IntegerField(min_value=0, max_value=responsible_gaming.MAX_AMOUNT, allow_null=True),
        required=False,
    )
    session_limit_minutes = serializers.IntegerField(
        min_value=1, max_value=responsible_gaming.MAX_MINUTES, allow_null=True, required=False
    )
    reality_check_minutes = serializers.IntegerField(
        min_value=1, max_value=responsible_gaming.MAX_MINUTES, allow_null=True, required=False
    )


class ExclusionSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=["cool_off", "self_exclusion"])
    days = serializers.IntegerField(min_value=1, max_value=responsible_gaming.MAX_EXCLUSION_DAYS, allow_null=True)


def valid(serializer: serializers.Serializer[Any]) -> dict[str, Any]:
    """The serializer's data, or ``invalid_limit`` (400) naming the fields it refused."""
    if not serializer.is_valid():
        raise responsible_gaming.InvalidLimit("The limits asked for are not valid.", fields=serializer.errors)
    return dict(serializer.validated_data)


def render_limits(row: ResponsibleGaming, currency: str) -> dict[str, Any]:
    """The settings as the player reads them: each limit's value ``in_force``
    now and, when a less protective change waits, its ``pending`` value and
    ``pending_from`` (when it takes effect); the session time limit alike
    (``session_limit``; ``session_limit_minutes`` is its value in force)."""
    now = timezone.now()
    in_currency = responsible_gaming.limits_in({"limits": row.limits}, currency)
    session = responsible_gaming.session_limit_entry(row)
    return {
        "currency": currency,
        "limits": {
            kind: {
                "in_force": responsible_gaming.effective_limit(in_currency.get(kind), now),
                "pending": (in_currency.get(kind) or {}).get("pending"),
                "pending_from": (in_currency.get(kind) or {}).get("pending_from"),
            }
            for kind in responsible_gaming.LIMIT_KINDS
        },
        "currencies": sorted(row.limits),
        "session_limit_minutes": responsible_gaming.effective_limit(session, now),
        "session_limit": {
            "in_force": responsible_gaming.effective_limit(session, now),
            "pending": session["pending"],
            "pending_from": session["pending_from"],
        },
        "reality_check_minutes": row.reality_check_minutes,
        "exclusion": row.exclusion if row.excluded_until and row.excluded_until > now else "",
        "excluded_until": row.excluded_until.isoformat() if row.excluded_until and row.excluded_until > now else None,
    }


class LimitsView(APIView):
    """The caller's responsible-gaming limits in one currency (``?currency=``, or
    ``currency`` in the body; default the casino's default currency). A more
    protective change (a first limit, a lower one) applies at once; a less
    protective one (higher, or removed: ``null``), the session time limit
    included, after 24 hours: the answer shows it as ``pending`` with
    ``pending_from``, the value in force staying until then. A change applies
    all or nothing: one refused value leaves every limit as it was."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[OpenApiParameter("currency", str, required=False, description="Limits of this currency.")],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> Response:
        user = request_user(request)
        currency = str(request.query_params.get("currency") or settings.CASINO_DEFAULT_CURRENCY)[:8]
        row = responsible_gaming.read_settings(player_id=user.pk, currency=settings.CASINO_DEFAULT_CURRENCY)
        return Response(render_limits(row, currency))

    @extend_schema(request=LimitsSerializer, responses={200: OpenApiTypes.OBJECT})
    def put(self, request: Request) -> Response:
        user = request_user(request)
        data = valid(LimitsSerializer(data=request.data))
        currency = data.get("currency") or settings.CASINO_DEFAULT_CURRENCY
        session = {name: data[name] for name in ("session_limit_minutes", "reality_check_minutes") if name in data}
        row = responsible_gaming.set_limits(
            player_id=user.pk, currency=currency, limits=data.get("limits", {}), now=timezone.now(), **session
        )
        return Response(render_limits(row, currency))


class ExclusionView(APIView):
    """Start a cool-off (1-42 days) or a self-exclusion (180+ days, or permanent with ``days: null``)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=ExclusionSerializer, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request) -> Response:
        user = request_user(request)
        data = valid(ExclusionSerializer(data=request.data))
        row = responsible_gaming.exclude(
            player_id=user.pk, currency=settings.CASINO_DEFAULT_CURRENCY, kind=data["kind"],
            days=data["days"], now=timezone.now(),
        )  # fmt: skip
        return Response(render_limits(row, settings.CASINO_DEFAULT_CURRENCY))
