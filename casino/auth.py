"""Player authentication for the API: DRF's token scheme in one plain query.

Same contract as ``rest_framework.authentication.TokenAuthentication``
(``Authorization: Token <key>``; unknown key or inactive user: 401) but the token
and its user are read with one SQL statement instead of the ORM's query
compilation, which cost more than the read itself on the bet path (every chip is
one authenticated request).
"""

from __future__ import annotations

import functools
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token


@functools.cache
def _user_sql() -> tuple[list[str], str]:
    user = get_user_model()
    fields = user._meta.concrete_fields
    columns = ", ".join(f'u."{f.column}"' for f in fields)
    sql = (
        f'SELECT {columns} FROM "{Token._meta.db_table}" t JOIN "{user._meta.db_table}" u '
        f'ON u."{user._meta.pk.column}" = t."user_id" WHERE t."key" = %s'
    )
    return [f.attname for f in fields], sql


class TokenAuthentication(authentication.TokenAuthentication):
    """``Authorization: Token <key>`` with the token and user read in one query."""

    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        names, sql = _user_sql()
        with connection.cursor() as cursor:
            cursor.execute(sql, [key])
            row = cursor.fetchone()
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user = get_user_model().from_db(connection.alias, names, row)
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return user, Token(key=key, user=user)
