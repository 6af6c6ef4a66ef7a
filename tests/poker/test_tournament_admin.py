"""Tournaments in the admin (docs/compliance.md, "Tournaments: operator"), with
Django's test client on PostgreSQL: templates (create, edit, validated: a
payout table not summing to 100% is refused with its code and nothing saved),
a tournament made from a template (``create_from_template``: the terms copied,
``operator.action`` ``tournament.create``), watching a running tournament (its
tables and entries), pause and resume from the list with a reason; the
compliance role sees everything and acts on nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from casino.errors import DomainError
from compliance.roles import COMPLIANCE, OPERATOR, setup_roles
from games.poker.models import PokerTable
from games.poker.tournament import services as tournament_services
from games.poker.tournament.models import Tournament, TournamentTemplate
from games.poker.tournament.services.templates import TEMPLATE_FIELDS
from ledger.models import Event
from tests.compliance.staff import staff
from tests.db import rows
from tests.poker.tables import LEVELS, PAYOUTS, key, make_player, make_tournament

pytestmark = pytest.mark.django_db

TEMPLATES = "/admin/games/tournamenttemplate/"
TOURNAMENTS = "/admin/games/tournament/"
TEMPLATE_FORM = {
    "name": "Daily 6-max", "kind": "sit_and_go", "currency": "EUR", "buy_in": "1000", "fee": "100",
    "starting_chips": "1500", "max_players": "6", "table_seats": "3", "guarantee": "0", "cancel_policy": "chip_count",
    "turn_seconds": "15", "time_bank_seconds": "20", "between_hands_seconds": "2", "hand_for_hand_margin": "1",
    "levels": '[{"small_blind": 10, "big_blind": 20, "ante": 0, "duration_seconds": 300}]',
    "payouts": '[{"max_entrants": null, "shares_bp": [6500, 3500]}]',
}  # fmt: skip
NOT_100 = '[{"max_entrants": null, "shares_bp": [6000, 3000]}]'
UNCHANGED = ("games_tournament", "games_tournamenttemplate", "ledger_event")


def make_template(**changes: Any) -> TournamentTemplate:
    fields: dict[str, Any] = {
        "name": f"tpl-{key()}", "kind": "sit_and_go", "currency": "EUR", "buy_in": 1000, "fee": 100,
        "starting_chips": 1500, "max_players": 6, "table_seats": 3, "levels": LEVELS, "payouts": PAYOUTS,
        "cancel_policy": "chip_count", "guarantee": 500, "turn_seconds": 12, "time_bank_seconds": 25,
        "between_hands_seconds": 4, "hand_for_hand_margin": 1,
    }  # fmt: skip
    fields.update(changes)
    return TournamentTemplate.objects.create(**fields)  # unvalidated on purpose: the service validates


def operator_actions(user: Any, action: str) -> list[Event]:
    found = Event.objects.filter(type="operator.action", stream_id=f"operator-{user.pk}").order_by("id")
    return [e for e in found if e.data["action"] == action]


# --- the service -----------------------------------------------------------------------------------------


def test_create_from_template_copies_every_term_and_records_the_operator() -> None:
    setup_roles()
    operator, _web = staff("tpl-op", OPERATOR)
    template = make_template()
    # Every term of a template is copied (a new template field must be added to TEMPLATE_FIELDS).
    own = {f.name for f in TournamentTemplate._meta.concrete_fields} - {"id", "name", "created_at"}
    assert own == set(TEMPLATE_FIELDS)

    tournament = tournament_services.create_from_template(
        template_id=template.pk, operator=operator, now=timezone.now()
    )
    tournament.refresh_from_db()
    assert (tournament.state, tournament.name, tournament.template_id, tournament.start_at) == (
        "registering", template.name, template.pk, None,
    )  # fmt: skip
    assert {f: getattr(tournament, f) for f in TEMPLATE_FIELDS} == {f: getattr(template, f) for f in TEMPLATE_FIELDS}
    [action] = operator_actions(operator, "tournament.create")
    assert action.data["target"] == f"poker-tournament:{tournament.pk}"
    assert action.data["details"]["template_id"] == template.pk
    assert action.metadata == {"actor": f"user:{operator.pk}", "tournament_id": tournament.pk}
    # Registration works as for any tournament.
    player = make_player()
    tournament_services.register(
        tournament_id=tournament.pk, player_id=player, idempotency_key=key("reg"), now=timezone.now()
    )
    assert tournament_services.registered_count(tournament) == 1


def test_a_scheduled_template_needs_a_start_time() -> None:
    setup_roles()
    operator, _web = staff("tpl-op", OPERATOR)
    template = make_template(kind="scheduled", late_registration_level=2)
    now = timezone.now()
    for start_at in (None, now, now - timedelta(minutes=1)):
        before = rows(*UNCHANGED)
        with pytest.raises(DomainError) as refusal:
            tournament_services.create_from_template(
                template_id=template.pk, operator=operator, start_at=start_at, now=now
            )
        assert refusal.value.code == "tournament_start_required"
        assert rows(*UNCHANGED) == before
    start = now + timedelta(hours=2)
    tournament = tournament_services.create_from_template(
        template_id=template.pk, operator=operator, name="  Sunday 20:00 ", start_at=start, now=now
    )
    assert (tournament.kind, tournament.name, tournament.start_at, tournament.late_registration_level) == (
        "scheduled", "Sunday 20:00", start, 2,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"payouts": [{"max_entrants": None, "shares_bp": [6000, 3000]}]}, "tournament_payouts_not_100"),
        ({"levels": [{"small_blind": 20, "big_blind": 10, "ante": 0, "duration_seconds": 60}]},
         "tournament_level_invalid_blinds"),
        ({"late_registration_level": 9}, "tournament_invalid"),
    ],
)  # fmt: skip
def test_a_bad_template_is_refused_with_its_code_and_nothing_is_created(changes: dict[str, Any], code: str) -> None:
    """Issue #23's bad input: "A payout table whose percentages do not sum to 100"."""
    setup_roles()
    operator, _web = staff("tpl-op", OPERATOR)
    template = make_template(**changes)
    before = rows(*UNCHANGED)
    with pytest.raises(DomainError) as refusal:
        tournament_services.create_from_template(template_id=template.pk, operator=operator, now=timezone.now())
    assert refusal.value.code == code
    assert rows(*UNCHANGED) == before
    with pytest.raises(DomainError) as missing:
        tournament_services.create_from_template(template_id=999_999, operator=operator, now=timezone.now())
    assert missing.value.code == "tournament_template_not_found"


# --- templates in the admin ------------------------------------------------------------------------------


def test_admin_creates_and_edits_templates_validated_by_the_domain() -> None:
    setup_roles()
    _operator, web = staff("tpl-op", OPERATOR)
    before = rows(*UNCHANGED)
    bad = web.post(f"{TEMPLATES}add/", TEMPLATE_FORM | {"payouts": NOT_100})
    assert bad.status_code == 200
    errors = bad.context["adminform"].form.errors
    assert "tournament_payouts_not_100" in str(errors["payouts"])
    assert rows(*UNCHANGED) == before  # nothing saved

    good = web.post(f"{TEMPLATES}add/", TEMPLATE_FORM)
    assert good.status_code == 302, good.content
    template = TournamentTemplate.objects.get(name="Daily 6-max")
    assert (template.table_seats, template.cancel_policy, template.hand_for_hand_margin) == (3, "chip_count", 1)
    listing = web.get(TEMPLATES)
    assert b"Daily 6-max" in listing.content
    assert b"create_tournament" in listing.content

    edited = web.post(f"{TEMPLATES}{template.pk}/change/", TEMPLATE_FORM | {"fee": "150", "payouts": NOT_100})
    assert edited.status_code == 200
    assert "tournament_payouts_not_100" in str(edited.context["adminform"].form.errors["payouts"])
    template.refresh_from_db()
    assert template.fee == 100
    assert web.post(f"{TEMPLATES}{template.pk}/change/", TEMPLATE_FORM | {"fee": "150"}).status_code == 302
    template.refresh_from_db()
    assert template.fee == 150


def test_admin_action_creates_tournaments_from_templates() -> None:
    setup_roles()
    operator, web = staff("tpl-op", OPERATOR)
    sng = make_template(name="SNG")
    scheduled = make_template(name="Scheduled", kind="scheduled")

    # A Sit & Go: asks for the name first (blank: the template's), then creates it.
    selected = {"action": "create_tournament", "_selected_action": [str(sng.pk)]}
    ask = web.post(TEMPLATES, selected)
    assert ask.status_code == 200
    assert b'name="name"' in ask.content
    assert not Tournament.objects.exists()
    done = web.post(TEMPLATES, selected | {"apply": "1", "name": "SNG #1"}, follow=True)
    assert done.status_code == 200
    [tournament] = Tournament.objects.all()
    assert (tournament.name, tournament.template_id, tournament.state) == ("SNG #1", sng.pk, "registering")
    assert b"SNG #1" in done.content
    [action] = operator_actions(operator, "tournament.create")
    assert action.data["details"]["template_id"] == sng.pk

    # A scheduled template needs the start time: the form says so and nothing is created.
    selected = {"action": "create_tournament", "_selected_action": [str(scheduled.pk)]}
    missing = web.post(TEMPLATES, selected | {"apply": "1", "name": ""})
    assert missing.status_code == 200
    assert "start_at" in missing.context["form"].errors
    assert Tournament.objects.count() == 1
    start = (timezone.localtime() + timedelta(days=1)).replace(second=0, microsecond=0)
    web.post(TEMPLATES, selected | {"apply": "1", "name": "", "start_at": start.strftime("%Y-%m-%d %H:%M")})
    made = Tournament.objects.get(template=scheduled)
    assert (made.name, made.kind, made.start_at) == ("Scheduled", "scheduled", start)

    # A template the service refuses: the code is shown, nothing created.
    broken = make_template(name="Broken", payouts=[{"max_entrants": None, "shares_bp": [6000, 3000]}])
    refused = web.post(TEMPLATES, {"action": "create_tournament", "_selected_action": [str(broken.pk)],
                                   "apply": "1"}, follow=True)  # fmt: skip
    assert b"tournament_payouts_not_100" in refused.content
    assert not Tournament.objects.filter(template=broken).exists()


# --- watching, pausing and resuming ----------------------------------------------------------------------


def running() -> Tournament:
    tournament = make_tournament(name="Watched SNG", max_players=6, table_seats=3)
    for _ in range(6):
        tournament_services.register(tournament_id=tournament.pk, player_id=make_player(), idempotency_key=key("reg"),
                          now=timezone.now())  # fmt: skip
    tournament.refresh_from_db()
    assert tournament.state == "running"
    return tournament


def test_admin_watches_pauses_and_resumes_a_running_tournament() -> None:
    setup_roles()
    operator, web = staff("tourney-op", OPERATOR)
    tournament = running()
    tables = list(PokerTable.objects.filter(tournament=tournament).order_by("table_number"))

    listing = web.get(TOURNAMENTS)
    assert listing.status_code == 200
    assert b"Watched SNG" in listing.content
    assert b"6 / 6" in listing.content  # players left / entrants
    for action in (b"pause_tournaments", b"resume_tournaments", b"cancel_and_refund"):
        assert action in listing.content
    page = web.get(f"{TOURNAMENTS}{tournament.pk}/change/")
    assert page.status_code == 200
    for table in tables:
        assert table.code.encode() in page.content
    assert page.content.count(b"playing") >= 6  # the entries

    selected = {"action": "pause_tournaments", "_selected_action": [str(tournament.pk)]}
    ask = web.post(TOURNAMENTS, selected)
    assert ask.status_code == 200
    assert b'name="reason"' in ask.content
    no_reason = web.post(TOURNAMENTS, selected | {"apply": "1", "reason": ""})
    assert no_reason.status_code == 200  # asked again
    tournament.refresh_from_db()
    assert tournament.state == "running"
    assert web.post(TOURNAMENTS, selected | {"apply": "1", "reason": "dealer server restart"}).status_code == 302
    tournament.refresh_from_db()
    assert (tournament.state, tournament.clock_started_at) == ("paused", None)
    assert set(PokerTable.objects.filter(tournament=tournament).values_list("phase", flat=True)) == {"paused"}
    [paused] = operator_actions(operator, "tournament.pause")
    assert (paused.data["reason"], paused.metadata["actor"]) == ("dealer server restart", f"user:{operator.pk}")

    # Pausing again: the code shown, nothing changes.
    before = rows(*UNCHANGED, "games_pokertable")
    again = web.post(TOURNAMENTS, selected | {"apply": "1", "reason": "again"}, follow=True)
    assert b"tournament_not_running" in again.content
    assert rows(*UNCHANGED, "games_pokertable") == before

    resume = {"action": "resume_tournaments", "_selected_action": [str(tournament.pk)], "apply": "1", "reason": ""}
    assert web.post(TOURNAMENTS, resume).status_code == 302
    tournament.refresh_from_db()
    assert tournament.state == "running"
    assert tournament.clock_started_at is not None
    assert set(PokerTable.objects.filter(tournament=tournament).values_list("phase", flat=True)) == {"between"}
    [resumed] = operator_actions(operator, "tournament.resume")
    assert resumed.metadata["actor"] == f"user:{operator.pk}"


def test_compliance_views_tournaments_and_templates_but_acts_on_nothing() -> None:
    setup_roles()
    tournament = running()
    template = make_template(name="Viewed")
    _viewer, web = staff("tourney-viewer", COMPLIANCE)
    listing = web.get(TOURNAMENTS)
    assert listing.status_code == 200
    for action in (b"pause_tournaments", b"resume_tournaments", b"cancel_and_refund"):
        assert action not in listing.content
    page = web.get(f"{TOURNAMENTS}{tournament.pk}/change/")
    assert page.status_code == 200
    codes = PokerTable.objects.filter(tournament=tournament).values_list("code", flat=True)
    assert all(code.encode() in page.content for code in codes)
    templates = web.get(TEMPLATES)
    assert templates.status_code == 200
    assert b"Viewed" in templates.content
    assert b"create_tournament" not in templates.content
    assert web.get(f"{TEMPLATES}add/").status_code == 403
    assert web.get(f"{TOURNAMENTS}add/").status_code == 403

    before = rows(*UNCHANGED, "games_pokertable")
    for name in ("pause_tournaments", "resume_tournaments", "cancel_and_refund"):
        response = web.post(TOURNAMENTS, {"action": name, "_selected_action": [str(tournament.pk)], "apply": "1",
                                          "reason": "no"})  # fmt: skip
        assert response.status_code == 200  # not offered: the list again, nothing done
    response = web.post(TEMPLATES, {"action": "create_tournament", "_selected_action": [str(template.pk)],
                                     "apply": "1"})  # fmt: skip
    assert response.status_code == 200
    assert web.post(f"{TEMPLATES}{template.pk}/change/", TEMPLATE_FORM).status_code == 403
    assert rows(*UNCHANGED, "games_pokertable") == before
