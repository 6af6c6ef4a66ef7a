"""Admin URL lookups on event data are refused (issue 33): the red team's
oracle (``?stream_id=…&type=poker_hand.shuffled&data__icontains="Jc"``, hole
cards recovered before the flop in 432 requests) and ``?data__contains=``
(a 500) get a 400 for every role, superusers included, on every admin whose
model has a JSON column (or reaches one through a relation); lookups on the
named columns still filter; no admin searches a JSON column."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.db import models
from django.test import RequestFactory
from django.urls import reverse

from casino.admin_base import SafeLookups, reads_json
from compliance.roles import COMPLIANCE, OPERATOR, setup_roles
from games.poker import event_types as et
from ledger.models import Event, Transfer
from tests.compliance.staff import staff
from tests.poker.tables import heads_up_dealt

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def json_fields(model: type[models.Model]) -> list[str]:
    return [f.name for f in model._meta.get_fields() if isinstance(f, models.JSONField)]


def test_every_admin_over_a_json_column_refuses_lookups_on_it_and_searches_none() -> None:
    request = RequestFactory().get("/admin/")
    with_json = [(model, model_admin) for model, model_admin in admin.site._registry.items() if json_fields(model)]
    assert Event in dict(with_json)
    for model, model_admin in admin.site._registry.items():
        for name in model_admin.search_fields:
            assert not reads_json(model, name.lstrip("=^@")), (model, name)
        for item in model_admin.list_filter:
            if isinstance(item, str):
                assert not reads_json(model, item), (model, item)
    for model, model_admin in with_json:
        assert isinstance(model_admin, SafeLookups), model
        for name in json_fields(model):
            for lookup in (f"{name}__contains", f"{name}__icontains", f"{name}__cards__0", name):
                assert not model_admin.lookup_allowed(lookup, "x", request), (model, lookup)
    # Through a relation too: a transfer's event's data.
    assert not admin.site._registry[Transfer].lookup_allowed("event__data__icontains", "Jc", request)


def test_the_oracle_is_refused_with_400_for_every_role_and_named_fields_still_filter() -> None:
    setup_roles()
    table = heads_up_dealt()
    stream = et.hand_stream(table.current_hand_id)
    users = {"operator": staff("op-l", OPERATOR)[1], "superuser": staff("su-l", superuser=True)[1],
             "compliance": staff("co-l", COMPLIANCE)[1]}  # fmt: skip
    changelist = reverse("admin:ledger_event_changelist")
    for who, client in users.items():
        for query in (
            f"stream_id={stream}&type={et.SHUFFLED}&data__icontains=%22Jc%22",
            f"stream_id={stream}&type={et.SHUFFLED}&data__icontains=%22Jc%22,%22Qc%22",
            "data__contains=x",
            "data__contains=%7B%7D",
            "data__sealed_deck__deck__0=Jc",
            "data__isnull=false",
            "metadata__icontains=user",
            f"stream_id={stream}&data__cards__contains=%5B%22Jc%22%5D",
        ):
            response = client.get(f"{changelist}?{query}")
            assert response.status_code == 400, (who, query, response.status_code)
        # Named, safe fields still filter.
        listed = client.get(f"{changelist}?stream_id={stream}&type={et.SHUFFLED}")
        assert listed.status_code == 200, who
        assert listed.context["cl"].result_count == 1
        by_type = client.get(f"{changelist}?type__exact=poker.hole_cards_dealt")
        assert by_type.status_code == 200
        assert by_type.context["cl"].result_count == 2
        # A search reads no event data: a card code finds nothing.
        assert client.get(f"{changelist}?q=Jc").context["cl"].result_count == 0
        for path in ("/admin/games/pokerhand/?players__icontains=1", "/admin/games/houseround/?summary__dealer=x",
                     "/admin/games/playerround/?state__contains=x", "/admin/ledger/transfer/?event__data__contains=x",
                     "/admin/games/housetable/?limits__contains=x"):  # fmt: skip
            assert client.get(path).status_code == 400, (who, path)
