"""``GET /metrics`` (docs/live.md, "Metrics"), in this process: who may scrape it
(staff or ``Authorization: Bearer <METRICS_TOKEN>``; anyone else JSON 401/403),
that the commands played are counted by kind and outcome, and that no series
carries a player's id or name. Two ASGI processes and a worker reporting into
one scrape: tests/platform/test_metrics_topology.py."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.test import APIClient

from casino.auth import issue_token
from casino.responsible_gaming import set_limit
from games.house.services import start_table
from ledger.services.seals import seal
from tests.house.live.conftest import fast_table
from tests.house.services.conftest import make_player

pytestmark = pytest.mark.django_db

TOKEN = "a-metrics-token-for-the-tests-0123456789abcdef"
#: The only label names a series may have (docs/live.md, "Metrics"): small fixed sets, never an id.
ALLOWED_LABELS = {"family", "command", "transport", "outcome", "interface", "phase", "task", "code", "reason", "limit"}


def scrape(client: APIClient, **headers: str) -> Any:
    return client.get("/metrics", headers=headers)


def samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    """Every sample of a text exposition: (name, labels, value)."""
    return [(s.name, s.labels, s.value) for f in text_string_to_metric_families(text) for s in f.samples]


def value(text: str, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels`` (0 when none)."""
    return sum(v for n, ls, v in samples(text) if n == name and labels.items() <= ls.items())


def staff_client() -> APIClient:
    client = APIClient()
    client.force_login(get_user_model().objects.create_user("ops-metrics", password="pw-ops-123", is_staff=True))
    return client


def player_client(player_id: int) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user=get_user_model().objects.get(pk=player_id))}")
    return client


# --- who may scrape -------------------------------------------------------------------------------


@override_settings(METRICS_TOKEN=TOKEN)
def test_anonymous_callers_and_wrong_tokens_are_refused_401_in_json():
    client = APIClient()
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Bearer {TOKEN[:-1]}"},
                    {"Authorization": "Bearer " + "\xe9" * 8}, {"Authorization": f"Basic {TOKEN}"}):  # fmt: skip
        answer = scrape(client, **headers)
        assert answer.status_code == 401, (headers, answer.content[:200])
        assert answer["Content-Type"].startswith("application/json")
        assert answer.json()["error"]["code"] == "metrics_unauthenticated"
        assert b"casino_" not in answer.content


def test_without_a_configured_token_no_bearer_token_is_accepted():
    for given in ("", "anything"):
        answer = scrape(APIClient(), Authorization=f"Bearer {given}")
        assert answer.status_code == 401
        assert answer.json()["error"]["code"] == "metrics_unauthenticated"


@override_settings(METRICS_TOKEN=TOKEN)
def test_a_player_who_is_not_staff_is_refused_403_even_logged_in():
    player = make_player(funds=0)
    answer = scrape(player_client(player), Accept="text/plain")
    assert answer.status_code == 403
    assert answer.json()["error"]["code"] == "metrics_refused"
    session = APIClient()
    session.force_login(get_user_model().objects.get(pk=player))
    assert scrape(session).status_code == 403


@override_settings(METRICS_TOKEN=TOKEN)
def test_staff_and_the_token_get_the_prometheus_text_format():
    for client, headers in ((staff_client(), {}), (APIClient(), {"Authorization": f"Bearer {TOKEN}"})):
        # What Prometheus sends: OpenMetrics preferred, the text format accepted.
        answer = scrape(client, Accept="text/plain;version=0.0.4;q=0.5,*/*;q=0.1", **headers)
        assert answer.status_code == 200, answer.content[:300]
        assert answer["Content-Type"].startswith("text/plain; version=0.0.4")
        # Labelled series appear once something is counted under them; these are there from the start.
        names = {f.name for f in text_string_to_metric_families(answer.content.decode())}
        assert {"casino_ledger_head_position", "casino_ledger_scrape_ok", "casino_feed_events"} <= names


@override_settings(METRICS_TOKEN=TOKEN)
def test_openmetrics_is_answered_when_asked_for():
    answer = scrape(APIClient(), Authorization=f"Bearer {TOKEN}", Accept="application/openmetrics-text")
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("application/openmetrics-text")
    assert answer.content.rstrip().endswith(b"# EOF")


# --- what is counted, and with which labels ------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_rest_commands_are_counted_by_kind_and_outcome_and_no_series_names_a_player():
    staff = staff_client()
    table = fast_table("uth", betting_seconds=60)
    name = f"metrics-player-{uuid.uuid4().hex[:8]}"
    player_id = make_player(table, name=name)
    start_table(table_id=table.pk, now=timezone.now())
    before = scrape(staff).content.decode()
    client = player_client(player_id)
    chip = f"/api/tables/{table.pk}/bets/chip/"
    for _ in range(3):
        key = {"Idempotency-Key": uuid.uuid4().hex}
        ok = client.post(chip, {"spot": "ante", "amount": 100}, format="json", headers=key)
        assert ok.status_code == 200, ok.content
    refused = client.post(chip, {"spot": "nowhere", "amount": 100}, format="json",
                          headers={"Idempotency-Key": uuid.uuid4().hex})  # fmt: skip
    assert refused.status_code == 400
    code = refused.json()["error"]["code"]
    # A responsible-gaming refusal: a loss limit of 0 refuses the next chip.
    set_limit(player_id=player_id, kind="loss_day", amount=0, currency="EUR", now=timezone.now())
    limited = client.post(chip, {"spot": "ante", "amount": 100}, format="json",
                          headers={"Idempotency-Key": uuid.uuid4().hex})  # fmt: skip
    assert limited.json()["error"]["code"] == "loss_limit_exceeded", limited.content
    seal()
    call_command("verify_ledger", "--no-projections", verbosity=0)
    after = scrape(staff).content.decode()

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    rest_bet = {"family": "house", "command": "bet", "transport": "rest"}
    assert grew("casino_commands_total", **rest_bet, outcome="ok") == 3
    assert grew("casino_commands_total", **rest_bet, outcome=code) == 1
    assert grew("casino_commands_total", **rest_bet, outcome="loss_limit_exceeded") == 1
    assert grew("casino_command_duration_seconds_count", **rest_bet) == 5
    assert grew("casino_group_commit_batch_size_count", interface="rest") >= 3
    assert grew("casino_rg_refusals_total", limit="loss_day") == 1
    assert value(after, "casino_ledger_verify_ok") == 1
    assert value(after, "casino_ledger_verify_problems") == 0
    assert value(after, "casino_ledger_seal_age_seconds") >= 0
    assert value(after, "casino_ledger_head_position") > 0
    # No label names a player, a table or a round, and no label value is the player's id or name.
    for sample_name, labels, _ in samples(after):
        assert set(labels) - {"le"} <= ALLOWED_LABELS, (sample_name, labels)
        for label, text in labels.items():
            assert text not in (str(player_id), name, str(table.pk)) or label == "le", (sample_name, labels)
