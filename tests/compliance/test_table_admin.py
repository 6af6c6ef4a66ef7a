"""Tables in the operator admin through Django's test client (issue 8): create and
configure with a real form (only the game's spots and pay tables), invalid input
shown on the form and changing nothing, every change a new immutable version in the
table's configuration history and one ``operator.action`` event with the operator's
identity, a change never altering a past round or the round in progress, and the
permissions per role (operator and superuser act, compliance only views)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, InternalError, connection, transaction
from django.test import Client

from casino.errors import DomainError
from compliance.roles import COMPLIANCE, OPERATOR, setup_roles
from games.house.models import HouseRound, HouseTable, TableConfigVersion
from games.house.services import place_chip
from ledger.models import Event
from ledger.services import read_stream
from tests.compliance.staff import staff, unchanged_form
from tests.house.services.conftest import key, later, make_player, make_table, open_round, shoe, step, wallet

pytestmark = pytest.mark.django_db
ADMIN = "/admin/games/housetable/"

XTREME_POST: dict[str, Any] = {
    "code": "XT9", "game": "xtreme", "currency": "EUR", "name": "Xtreme nine", "hand_mode": "per_seat",
    "max_seats": "7", "ante_min": "100", "ante_max": "50000",
    "offer_player_bonus": "on", "player_bonus_min": "100", "player_bonus_max": "10000",
    "offer_stax": "on", "stax_min": "100", "stax_max": "10000",
    "offer_bonus_spin": "on", "bonus_spin_min": "100", "bonus_spin_max": "500",
    "paytable_xtra_bonus": "1", "paytable_player_bonus": "2", "paytable_stax": "6",
    "betting_seconds": "15", "warning_seconds": "5", "decision_seconds": "12", "deal_pause_seconds": "2",
    "between_rounds_seconds": "5",
    "star_reset": "1000000", "star_contribution_bp": "200", "spade_reset": "250000", "spade_contribution_bp": "150",
    "heart_reset": "100000", "heart_contribution_bp": "100", "diamond_reset": "50000",
    "diamond_contribution_bp": "75", "club_reset": "25000", "club_contribution_bp": "50",
    "wheel_name": "house wheel", "wheel_segments": "10x, 10, 10\n50x, 50, 2", "reason": "new table for the floor",
}  # fmt: skip


@pytest.fixture(autouse=True)
def roles() -> None:
    setup_roles()


def form_data(client: Client, table: HouseTable) -> dict[str, Any]:
    """What the change page's form would post back unchanged."""
    return unchanged_form(client, f"{ADMIN}{table.pk}/change/")


def state() -> dict[str, Any]:
    """Every table row, version row and event: compared around refused input."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM games_housetable ORDER BY id")
        tables = cursor.fetchall()
    return {"tables": tables, "versions": list(TableConfigVersion.objects.values()),
            "events": list(Event.objects.values_list("pk", flat=True))}  # fmt: skip


def test_the_operator_creates_an_xtreme_table_choosing_the_game_first():
    operator, client = staff("op", OPERATOR)
    chooser = client.get(f"{ADMIN}add/")
    assert chooser.status_code == 200
    assert b'href="?game=xtreme"' in chooser.content
    page = client.get(f"{ADMIN}add/?game=xtreme")
    fields = page.context["adminform"].form.fields
    assert [n for n, _ in fields["paytable_stax"].choices if n] == [1, 2, 3, 6, 7, 8, 9]
    assert "paytable_best_five" not in fields
    assert "best_five_min" not in fields
    assert "play_min" not in fields
    assert "xtra_bonus_min" not in fields
    response = client.post(f"{ADMIN}add/?game=xtreme", XTREME_POST)
    assert response.status_code == 302, response.context["adminform"].form.errors
    table = HouseTable.objects.get(code="XT9")
    assert (table.game, table.currency, table.is_open, table.config_version) == ("xtreme", "EUR", False, 1)
    assert table.limits == {"ante": {"min": 100, "max": 50_000}, "player_bonus": {"min": 100, "max": 10_000},
                            "stax": {"min": 100, "max": 10_000}, "bonus_spin": {"min": 100, "max": 500}}  # fmt: skip
    assert table.pay_tables == {"xtra_bonus": 1, "player_bonus": 2, "stax": 6}
    assert table.wheel == {"name": "house wheel", "version": "1", "segments": [
        {"label": "10x", "multiple": 10, "weight": 10}, {"label": "50x", "multiple": 50, "weight": 2}]}  # fmt: skip
    assert table.progressives["contribution_bp"]["star"] == 200
    assert table.progressives["reset"]["club"] == 25_000
    version = TableConfigVersion.objects.get(table=table)
    assert (version.version, version.created_by, version.actor) == (1, operator, f"user:{operator.pk}")
    assert version.reason == "new table for the floor"
    [event] = Event.objects.filter(type="operator.action")
    assert (event.data["action"], event.data["target"]) == ("table.create", "table:XT9")
    assert event.metadata == {"actor": f"user:{operator.pk}", "table_id": table.pk}
    assert version.event_position == event.pk


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"ante_min": "600", "ante_max": "500"}, "ante_min"),
        ({"ante_min": "0"}, "ante_min"),
        ({"ante_min": "1.5"}, "ante_min"),
        ({"stax_max": "abc"}, "stax_max"),
        ({"paytable_stax": "4"}, "paytable_stax"),  # STAX has no table 4
        ({"paytable_xtra_bonus": ""}, "paytable_xtra_bonus"),
        ({"bonus_spin_max": "300"}, "bonus_spin_min"),  # 3 units: not a Bonus Spin size
        ({"warning_seconds": "15"}, "warning_seconds"),
        ({"betting_seconds": "0"}, "betting_seconds"),
        ({"max_seats": "23"}, "max_seats"),
        ({"star_contribution_bp": "20000"}, "star_reset"),
        ({"heart_reset": "0"}, "heart_reset"),
        ({"wheel_segments": "10x, 10"}, "wheel_segments"),
        ({"wheel_segments": "10x, 10, 0"}, "wheel_segments"),
        ({"wheel_segments": ""}, "wheel_segments"),
        ({"chips": "500, 100"}, "chips"),  # not ascending
        ({"chips": "100, five"}, "chips"),
        ({"chips": "50"}, "chips"),  # no chip reaches the 100 minimum
        ({"mandatory_wagers": ["hole_card_bonus"]}, "mandatory_wagers"),  # not offered
    ],
)
def test_invalid_input_shows_on_its_field_and_changes_nothing(change, field):
    _, client = staff("op", OPERATOR)
    assert client.post(f"{ADMIN}add/?game=xtreme", XTREME_POST).status_code == 302
    table = HouseTable.objects.get(code="XT9")
    data = {**form_data(client, table), **change}
    before = state()
    response = client.post(f"{ADMIN}{table.pk}/change/", data)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert field in errors, errors
    assert state() == before
    # The same input on a new table creates nothing.
    refused = client.post(f"{ADMIN}add/?game=xtreme", {**XTREME_POST, **change, "code": "XT10"})
    assert refused.status_code == 200
    assert not HouseTable.objects.filter(code="XT10").exists()
    assert state() == before


def test_chips_mandatory_wagers_and_multi_play_are_set_on_the_form():
    """Issue 37: the form's chip list (minor units), the mandatory side bets and the multi-play box."""
    _, client = staff("op", OPERATOR)
    post = {**XTREME_POST, "chips": "100, 500, 2500", "mandatory_wagers": ["stax"], "multi_play": "on"}
    assert client.post(f"{ADMIN}add/?game=xtreme", post).status_code == 302
    table = HouseTable.objects.get(code="XT9")
    assert (table.chips, table.mandatory_wagers, table.multi_play) == ([100, 500, 2500], ["stax"], True)
    data = {**form_data(client, table), "chips": "", "mandatory_wagers": []}
    data.pop("multi_play")  # unticked
    assert client.post(f"{ADMIN}{table.pk}/change/", data).status_code == 302
    table.refresh_from_db()
    assert table.chips == [100, 500, 1000, 2500, 10_000, 50_000]  # empty: the currency's default
    assert (table.mandatory_wagers, table.multi_play, table.config_version) == ([], False, 2)


def test_a_change_is_a_new_version_in_the_history_and_one_event():
    operator, client = staff("op", OPERATOR)
    client.post(f"{ADMIN}add/?game=xtreme", XTREME_POST)
    table = HouseTable.objects.get(code="XT9")
    data = {**form_data(client, table), "paytable_stax": "7", "betting_seconds": "20", "reason": "slower floor"}
    data.pop("offer_player_bonus")  # no longer offered: its limits and pay table go
    assert client.post(f"{ADMIN}{table.pk}/change/", data).status_code == 302
    table.refresh_from_db()
    assert table.config_version == 2
    assert table.pay_tables == {"xtra_bonus": 1, "stax": 7}
    assert "player_bonus" not in table.limits
    assert table.wheel["version"] == "1"  # the wheel did not change
    v1, v2 = TableConfigVersion.objects.filter(table=table).order_by("version")
    assert v1.config["pay_tables"] == {"xtra_bonus": 1, "player_bonus": 2, "stax": 6}  # history kept
    assert set(v2.changes) == {"pay_tables", "limits", "betting_seconds"}
    assert v2.changes["betting_seconds"] == {"from": 15, "to": 20}
    assert (v2.created_by, v2.reason) == (operator, "slower floor")
    actions = Event.objects.filter(type="operator.action").order_by("pk")
    assert [e.data["action"] for e in actions] == ["table.create", "table.configure"]
    assert actions[1].data["details"]["version"] == 2
    assert actions[1].data["details"]["changes"] == v2.changes
    page = client.get(f"{ADMIN}{table.pk}/change/").content.decode()
    assert 'id="config-history"' in page
    assert "slower floor" in page
    history = client.get(f"/admin/games/tableconfigversion/?table__id__exact={table.pk}")
    assert history.status_code == 200
    # Saving the form unchanged records nothing.
    assert client.post(f"{ADMIN}{table.pk}/change/", form_data(client, table)).status_code == 302
    assert TableConfigVersion.objects.filter(table=table).count() == 2
    assert Event.objects.filter(type="operator.action").count() == 2


def test_a_form_loaded_before_another_change_is_refused():
    _, client = staff("op", OPERATOR)
    client.post(f"{ADMIN}add/?game=xtreme", XTREME_POST)
    table = HouseTable.objects.get(code="XT9")
    stale = form_data(client, table)
    assert client.post(f"{ADMIN}{table.pk}/change/", {**stale, "name": "first"}).status_code == 302
    before = state()
    response = client.post(f"{ADMIN}{table.pk}/change/", {**stale, "ante_max": "90000"})
    assert response.status_code == 200
    assert "reload" in str(response.context["adminform"].form.non_field_errors())
    assert state() == before


def test_a_tables_currency_never_changes_after_creation_least_of_all_in_play():
    """Issue #20: a currency change under seated players orphans their money. A
    house table's is fixed at creation (its house and STAX pool accounts are in
    it): the service refuses a new one, in play or idle, and the change form has
    no currency field, so a forged one is ignored."""
    from games.house.services.tables import configure_table

    table = make_table("xtreme", code="XC1", hand_mode="per_seat", limits={"ante": {"min": 100, "max": 10_000}},
                       pay_tables={"xtra_bonus": 1})  # fmt: skip
    alice = make_player(table)
    tick = open_round(table)
    place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    operator, client = staff("op", OPERATOR)
    for config in ({"currency": "USD"}, {"currency": "USD", "name": "dollars"}, {"game": "uth"}):
        before = state()
        with pytest.raises(DomainError) as refused, transaction.atomic():
            configure_table(table_id=table.pk, operator=operator, config=config, now=later(tick))
        assert refused.value.code == "table_identity_fixed"
        assert state() == before
    forged = client.post(
        f"{ADMIN}{table.pk}/change/", form_data(client, table) | {"currency": "USD", "name": "dollars"}
    )
    assert forged.status_code == 302, forged.context["adminform"].form.errors
    table.refresh_from_db()
    assert (table.name, table.currency) == ("dollars", "EUR")
    idle = make_table("uth", code="XC2")
    with pytest.raises(DomainError) as refused, transaction.atomic():
        configure_table(table_id=idle.pk, operator=operator, config={"currency": "USD"}, now=later(tick))
    assert refused.value.code == "table_identity_fixed"
    # Stating the same identity is not a change.
    assert configure_table(table_id=idle.pk, operator=operator, config={"currency": "EUR"}, now=later(tick)) is None


def test_versions_are_immutable_in_the_database():
    _, client = staff("op", OPERATOR)
    client.post(f"{ADMIN}add/?game=xtreme", XTREME_POST)
    version = TableConfigVersion.objects.get()
    with pytest.raises(ValueError, match="immutable"):
        version.save()
    with pytest.raises((IntegrityError, InternalError)), transaction.atomic():
        TableConfigVersion.objects.filter(pk=version.pk).update(reason="rewritten")
    assert TableConfigVersion.objects.get().reason == "new table for the floor"


def test_a_change_applies_from_the_next_round_never_to_the_one_in_progress_or_past():
    table = make_table("xtreme", code="XV1", limits={"ante": {"min": 100, "max": 10_000},
                                                    "player_bonus": {"min": 100, "max": 10_000}},
                       pay_tables={"xtra_bonus": 1, "player_bonus": 1})  # fmt: skip
    alice = make_player(table)
    tick = open_round(table, shoe_cards=shoe("Ah Ad", dealer="2c 3d", board="As Kh Kd 7c 4s"))
    opened = [e.data for e in read_stream(stream_id=f"round-{tick.round_id}")]
    place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    _operator, client = staff("op", OPERATOR)
    data = {**form_data(client, table), "ante_min": "1000", "paytable_player_bonus": "2", "betting_seconds": "40"}
    assert client.post(f"{ADMIN}{table.pk}/change/", data).status_code == 302
    table.refresh_from_db()
    assert table.config_version == 2
    baseline = TableConfigVersion.objects.get(table=table, version=1)  # recorded before the first change
    assert baseline.actor == "system"
    assert baseline.config["pay_tables"]["player_bonus"] == 1
    # The round in progress keeps its limits (100 is below the new minimum) and its pay table.
    place_chip(table_id=table.pk, player_id=alice, spot="player_bonus", amount=100, idempotency_key=key(),
               now=later(tick))  # fmt: skip
    tick = step(table, tick)
    while tick.phase != "between":
        tick = step(table, tick)
    [result] = [e.data for e in read_stream(stream_id=f"round-{tick.round_id}-player-{alice}")
                if e.type == "house_player.settled"]  # fmt: skip
    settled = {w["wager"]: w for w in result["wagers"]}
    assert settled["player_bonus"]["returned"] == 1_000  # full house 9 to 1 on table 1 (table 2 pays 8)
    first = HouseRound.objects.get(round_id=tick.round_id)
    assert (first.config_version, first.pay_tables["player_bonus"]) == (1, 1)
    # The next round opens with version 2.
    tick = step(table, tick)
    assert tick.phase == "betting"
    second = HouseRound.objects.get(round_id=tick.round_id)
    assert (second.config_version, second.pay_tables["player_bonus"]) == (2, 2)
    [opened2] = [e.data for e in read_stream(stream_id=f"round-{tick.round_id}") if e.type == "house_round.opened"]
    assert opened2["config_version"] == 2
    assert opened2["durations"]["betting"] == 40
    assert opened2["limits"]["ante"]["min"] == 1_000
    funds = wallet(alice)
    with pytest.raises(DomainError) as refused, transaction.atomic():
        place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=100, idempotency_key=key(),
                   now=later(tick))  # fmt: skip
    assert refused.value.code == "below_minimum"
    assert wallet(alice) == funds
    # The past round's events are exactly what they were.
    assert [e.data for e in read_stream(stream_id=f"round-{first.round_id}")][: len(opened)] == opened
    assert opened[0]["config_version"] == 1


def test_compliance_views_tables_and_history_and_changes_nothing():
    _, operator = staff("op", OPERATOR)
    operator.post(f"{ADMIN}add/?game=xtreme", XTREME_POST)
    table = HouseTable.objects.get(code="XT9")
    _, viewer = staff("cat", COMPLIANCE)
    page = viewer.get(f"{ADMIN}{table.pk}/change/")
    assert page.status_code == 200
    assert 'id="config-history"' in page.content.decode()
    assert "50000" in page.content.decode()  # the limits are shown
    assert viewer.get("/admin/games/tableconfigversion/").status_code == 200
    before = state()
    assert viewer.get(f"{ADMIN}add/").status_code == 403
    assert viewer.get(f"{ADMIN}add/?game=uth").status_code == 403
    assert viewer.post(f"{ADMIN}add/?game=xtreme", {**XTREME_POST, "code": "XT10"}).status_code == 403
    assert viewer.post(f"{ADMIN}{table.pk}/change/", {**XTREME_POST, "name": "mine"}).status_code == 403
    assert viewer.get(f"{ADMIN}{table.pk}/control/open/").status_code == 403
    assert viewer.post(f"{ADMIN}{table.pk}/control/open/").status_code == 403
    assert viewer.post(f"{ADMIN}{table.pk}/delete/", {"post": "yes"}).status_code == 403
    for action in ("open_tables", "close_tables", "pause_rounds", "resume_rounds", "void_rounds"):
        viewer.post(ADMIN, {"action": action, "_selected_action": [table.pk]})
    assert state() == before
    assert not HouseTable.objects.get(pk=table.pk).is_open


@pytest.mark.parametrize("who", [OPERATOR, "superuser"])
def test_operator_and_superuser_open_and_close_a_table(who):
    user, client = staff("boss", superuser=True) if who == "superuser" else staff("op", OPERATOR)
    client.post(f"{ADMIN}add/?game=xtreme", XTREME_POST)
    table = HouseTable.objects.get(code="XT9")
    confirm = client.get(f"{ADMIN}{table.pk}/control/open/")
    assert confirm.status_code == 200
    assert b'id="table-control"' in confirm.content
    assert not HouseTable.objects.get(pk=table.pk).is_open  # a GET changes nothing
    assert client.post(f"{ADMIN}{table.pk}/control/open/").status_code == 302
    table.refresh_from_db()
    assert (table.is_open, table.phase) == (True, "betting")
    assert HouseRound.objects.get(table=table).config_version == 1
    refused = client.post(ADMIN, {"action": "open_tables", "_selected_action": [table.pk]}, follow=True)
    assert b"table_already_open" in refused.content
    assert client.post(ADMIN, {"action": "close_tables", "_selected_action": [table.pk]}).status_code == 302
    table.refresh_from_db()
    assert not table.is_open
    assert table.phase == "betting"  # the round in progress goes on
    actions = [(e.data["action"], e.metadata["actor"]) for e in Event.objects.filter(type="operator.action")
               .order_by("pk")]  # fmt: skip
    assert actions == [(a, f"user:{user.pk}") for a in ("table.create", "table.open", "table.close")]


def test_round_controls_from_the_table_list_are_events_too():
    table = make_table("uth", code="UP1")
    alice = make_player(table)
    tick = open_round(table)
    place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    operator, client = staff("op", OPERATOR)
    for action in ("pause_rounds", "void_rounds"):
        assert client.post(ADMIN, {"action": action, "_selected_action": [table.pk]}).status_code == 302
    assert HouseRound.objects.get(round_id=tick.round_id).status == "voided"
    actions = Event.objects.filter(type="operator.action").order_by("pk")
    assert [(e.data["action"], e.data["target"]) for e in actions] == [
        ("round.pause", f"round:{tick.round_id}"), ("round.void", f"round:{tick.round_id}")]  # fmt: skip
    assert all(e.metadata == {"actor": f"user:{operator.pk}", "table_id": table.pk} for e in actions)


@pytest.mark.parametrize(
    ("game", "spots", "tables"),
    [
        ("uth", {"best_five": "1"}, {"paytable_ante_plus": "1", "paytable_best_five": "1"}),
        ("casino_holdem", {"bonus": "1"}, {"paytable_ante": "1", "paytable_bonus": "1"}),
    ],
)
def test_every_game_has_its_own_form(game, spots, tables):
    _, client = staff("op", OPERATOR)
    fields = client.get(f"{ADMIN}add/?game={game}").context["adminform"].form.fields
    assert {f.removeprefix("paytable_") for f in fields if f.startswith("paytable_")} == {
        t.removeprefix("paytable_") for t in tables
    }
    assert "stax_min" not in fields
    assert "wheel_segments" not in fields
    data = {"code": "G1", "game": game, "currency": "EUR", "name": game, "hand_mode": "shared",
            "ante_min": "100", "ante_max": "1000", "betting_seconds": "15", "warning_seconds": "5",
            "decision_seconds": "12", "deal_pause_seconds": "2", "between_rounds_seconds": "5", **tables}  # fmt: skip
    for spot in spots:
        data |= {f"offer_{spot}": "on", f"{spot}_min": "100", f"{spot}_max": "500"}
    assert client.post(f"{ADMIN}add/?game={game}", data).status_code == 302
    table = HouseTable.objects.get(code="G1")
    assert table.limits == {"ante": {"min": 100, "max": 1000}, **{s: {"min": 100, "max": 500} for s in spots}}
    assert table.pay_tables == {t.removeprefix("paytable_"): 1 for t in tables}
    assert (table.wheel, table.progressives) == ({}, {})
