"""The PostgreSQL backend's health check (``casino.db_backends.postgresql``): an
idle connection with nothing waiting on its socket is usable without a round
trip; one the server has ended is found out and replaced, as Django's
``SELECT 1`` check would."""

from __future__ import annotations

import time
from typing import Any

import psycopg
import pytest
from django.db import connection

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _admin() -> psycopg.Connection:
    db = connection.settings_dict
    return psycopg.connect(
        host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"], password=db["PASSWORD"] or None,
        dbname=db["NAME"], autocommit=True,
    )  # fmt: skip


def _last_query(admin: psycopg.Connection, pid: int) -> str:
    row = admin.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()
    assert row is not None
    return str(row[0])


def test_an_idle_healthy_connection_is_usable_without_a_query() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid() /* marker */")
        pid = cursor.fetchone()[0]
    with _admin() as admin:
        assert "marker" in _last_query(admin, pid)
        assert connection.is_usable()
        # The server saw nothing new: the check asked no question.
        assert "marker" in _last_query(admin, pid)


def test_a_connection_the_server_ended_is_unusable_and_replaced_on_the_next_request() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with _admin() as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)
    deadline = time.monotonic() + 5
    while connection.is_usable() and time.monotonic() < deadline:
        time.sleep(0.05)  # the server's farewell reaches the socket shortly after the call
    assert not connection.is_usable()
    # What Django does at the start of each request with health checks on:
    wrapper: Any = connection
    wrapper.health_check_enabled, wrapper.health_check_done = True, False
    wrapper.close_if_health_check_failed()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid
