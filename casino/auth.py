"""Logins, API tokens and websocket tickets (docs/auth.md).

- **Client address** (``client_ip``): the TCP peer, or with ``TRUSTED_PROXY_COUNT``
  = N the Nth ``X-Forwarded-For`` entry from the right; never a header otherwise.
  django-axes (login lockout) and DRF's throttles identify clients with it.
- **API tokens** are django-rest-knox's: only a SHA-512 digest is stored, each
  expires ``CASINO_TOKEN_TTL_SECONDS`` after login, logout revokes the current
  one, logout-all and any password change revoke all of a user's.
  ``TokenAuthentication`` keeps knox's contract (``Authorization: Token <key>``)
  but reads the token and its user with one SQL statement: every chip on the
  bet path is one authenticated request.
- **Websocket tickets**: a short-lived, single-use random string from
  ``POST /api/auth/ws-ticket/``, consumed by the websocket handshake
  (``?ticket=``), so no long-lived credential is ever in a URL.
"""

from __future__ import annotations

import functools
import hashlib
import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.cache import caches
from django.db import connection, transaction
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from knox.crypto import hash_token
from knox.models import AuthToken
from knox.settings import CONSTANTS
from rest_framework import authentication, exceptions

from casino import log_context
from casino.errors import DomainError

# --- client address ------------------------------------------------------------------------------


def client_ip(request: HttpRequest) -> str:
    """The client's address. With ``TRUSTED_PROXY_COUNT`` = 0 (the default) it is
    ``REMOTE_ADDR``, the TCP peer, and ``X-Forwarded-For`` is never read. With N
    trusted proxies each appends its peer to the header, so the client is the
    Nth entry from the right (the leftmost when the header is shorter; the peer
    when it is absent). Also django-axes' ``AXES_CLIENT_IP_CALLABLE``."""
    remote = str(request.META.get("REMOTE_ADDR") or "")
    proxies = int(settings.TRUSTED_PROXY_COUNT)
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if proxies <= 0 or not forwarded:
        return remote
    entries = [entry.strip() for entry in str(forwarded).split(",")]
    return entries[-min(proxies, len(entries))] or remote


# --- login lockout (django-axes) -------------------------------------------------------------------


class LoginLockedOut(DomainError, code="login_locked_out", http_status=429):
    """Too many failed logins for this username or from this address: try again after the cool-off."""


def lockout_seconds() -> int:
    """The cool-off, in whole seconds (``CASINO_LOGIN_COOLOFF_SECONDS``)."""
    cooloff = settings.AXES_COOLOFF_TIME
    return int(cooloff.total_seconds()) if isinstance(cooloff, timedelta) else int(float(cooloff or 0) * 3600)


def lockout_response(request: HttpRequest, original_response: Any = None, credentials: Any = None) -> HttpResponse:
    """django-axes' ``AXES_LOCKOUT_CALLABLE``: the answer to a locked-out login.
    The API's is its usual JSON error, ``429 login_locked_out`` with
    ``Retry-After``; the admin's login page gets the same status as text."""
    retry = lockout_seconds()
    error = LoginLockedOut(retry_after_seconds=retry)
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"error": error.as_dict()}, status=error.http_status)
    else:
        response = HttpResponse(error.message, status=error.http_status, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(retry)
    return response


# --- API tokens (django-rest-knox) -------------------------------------------------------------------


@functools.cache
def _user_sql() -> tuple[list[str], str]:
    user = get_user_model()
    fields = user._meta.concrete_fields
    columns = ", ".join(f'u."{f.column}"' for f in fields)
    sql = (
        f'SELECT (t."expiry" IS NOT NULL AND t."expiry" <= %s), {columns} FROM "{AuthToken._meta.db_table}" t '
        f'JOIN "{user._meta.db_table}" u ON u."{user._meta.pk.column}" = t."user_id" '
        f'WHERE t."digest" = %s AND t."token_key" = %s'
    )
    return [f.attname for f in fields], sql


class TokenAuthentication(authentication.TokenAuthentication):
    """``Authorization: Token <key>`` against knox's hashed tokens, in one query.

    Knox looks a token up by its first 15 characters (``token_key``) and
    compares the SHA-512 digest; here the digest (the table's primary key) and
    the prefix are both in the ``WHERE`` of the one statement that also reads
    the user, and compares the expiry with the database's "now" parameter.
    Unknown key, inactive user: 401 ``authentication_failed``; expired: 401
    ``token_expired``. ``request.auth`` is an unsaved knox ``AuthToken`` with
    the ``digest`` that names it (for logout)."""

    keyword = "Token"

    def authenticate_credentials(self, key: str) -> tuple[Any, AuthToken]:
        names, sql = _user_sql()
        digest = hash_token(key)
        # The expiry is compared by the database, with "now" adapted as the ORM
        # adapts a DateTimeField's value (SQLite keeps naive UTC text).
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        with connection.cursor() as cursor:
            cursor.execute(sql, [now, digest, key[: CONSTANTS.TOKEN_KEY_LENGTH]])
            row = cursor.fetchone()
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        expired, *values = row
        if expired:
            raise exceptions.AuthenticationFailed(_("Token expired: log in again."), code="token_expired")
        user = get_user_model().from_db(connection.alias, names, values)
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        log_context.bind(player=user.pk)  # the request's log lines name its player
        return user, AuthToken(digest=digest, token_key=key[: CONSTANTS.TOKEN_KEY_LENGTH], user=user)


def issue_token(*, user: AbstractBaseUser) -> str:
    """A new API token for ``user`` (what ``POST /api/auth/token/`` returns),
    expiring ``CASINO_TOKEN_TTL_SECONDS`` from now; only its digest is stored,
    so the returned string is the only copy. The user's expired tokens are
    deleted on the way. Every test, demo and benchmark gets its tokens here."""
    with transaction.atomic():
        AuthToken.objects.filter(user_id=user.pk, expiry__lte=timezone.now()).delete()
        _instance, key = AuthToken.objects.create(user=user)
    return str(key)


def revoke_token(*, token: AuthToken) -> None:
    """Revoke one token (logout): it authenticates nothing from now on."""
    AuthToken.objects.filter(digest=token.digest).delete()


def revoke_all_tokens(*, user_id: int) -> int:
    """Revoke every token of a user (logout everywhere, password change); how many."""
    deleted, _by_model = AuthToken.objects.filter(user_id=user_id).delete()
    return int(deleted)


@receiver(pre_save, sender=settings.AUTH_USER_MODEL)
def _note_password_change(sender: type[Any], instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    """Note on the instance whether this save changes the stored password hash
    (``set_password`` and save, the admin's password form, ``changepassword``)."""
    instance._casino_password_changed = False
    if instance.pk is None or (update_fields is not None and "password" not in update_fields):
        return
    stored = sender._default_manager.filter(pk=instance.pk).values_list("password", flat=True).first()
    instance._casino_password_changed = stored is not None and stored != instance.password


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def _revoke_tokens_on_password_change(sender: type[Any], instance: Any, created: bool, **kwargs: Any) -> None:
    """A password change revokes every API token of the user, in the same
    transaction as the change (sessions are ended by Django's own session
    hash check)."""
    if getattr(instance, "_casino_password_changed", False):
        instance._casino_password_changed = False
        revoke_all_tokens(user_id=int(instance.pk))


# --- websocket tickets -----------------------------------------------------------------------------


def _ticket_key(ticket: str) -> str:
    # The store holds a digest: reading it gives no usable ticket.
    return hashlib.sha256(ticket.encode("utf-8", "surrogatepass")).hexdigest()


def issue_ws_ticket(*, user_id: int) -> str:
    """A websocket ticket for ``user_id``: random, valid ``CASINO_WS_TICKET_SECONDS``,
    good for one handshake (``?ticket=``). Kept in the ``ws_tickets`` cache
    (Redis with ``REDIS_URL``, so any process may consume it)."""
    ticket = secrets.token_urlsafe(32)
    caches["ws_tickets"].set(_ticket_key(ticket), int(user_id), timeout=settings.CASINO_WS_TICKET_SECONDS)
    return ticket


def consume_ws_ticket(*, ticket: str) -> int | None:
    """The user id a ticket was issued to, once: the ticket is deleted, and only
    the caller whose delete removed it gets the id (two handshakes racing with
    one ticket: one wins). Unknown, expired or used: ``None``."""
    if not ticket or len(ticket) > 128:
        return None
    store, key = caches["ws_tickets"], _ticket_key(ticket)
    user_id = store.get(key)
    if user_id is None or not store.delete(key):
        return None
    return int(user_id)
