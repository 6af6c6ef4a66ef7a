"""Staff see a round's commitment, never its sealed salt and deck, while it is
in play (issue 20, "Provably-fair deals"; docs/fairness.md): the rounds'
admin timeline, the ledger's event admin (house and poker shuffles), game
recall and the fairness endpoint, as an operator and as compliance. Once the
round is over the fairness endpoint reveals them to staff as to anyone; the
admin pages keep the field sealed."""

from __future__ import annotations

from typing import Any

import pytest

from compliance.roles import COMPLIANCE, OPERATOR, setup_roles
from games.cards.vault import position_salts
from games.house.models import HouseRound
from games.house.round.events import SHUFFLED
from games.house.services import place_chip
from games.house.store import round_stream
from games.poker import event_types as et
from games.tables.dealkeys import deal_key
from games.tables.fairness import is_plain, open_committed_deck
from ledger.confidential import SEALED
from ledger.models import Event
from ledger.services import read_stream
from tests.compliance.staff import staff
from tests.house.services.conftest import key, later, make_player, make_table, open_round, play_out, step
from tests.poker.tables import heads_up_dealt

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def secret(stream_id: str, event_type: str, deal_id: str) -> tuple[Event, str, str]:
    """The shuffle event row, its salt (opened with the deal's key, as the dealer opens it) and its commitment."""
    recorded = next(e for e in read_stream(stream_id=stream_id) if e.type == event_type)
    sealed = recorded.data["sealed_deck"]
    key = None if is_plain(sealed) else deal_key(deal_id=deal_id)
    opened = open_committed_deck(commitment=recorded.data["commitment"], sealed_deck=sealed, key=key, deal_id=deal_id)
    assert opened.salt is not None
    return Event.objects.get(pk=recorded.position), opened.salt, recorded.data["commitment"]


def house_secret(round_id: str) -> tuple[Event, str, str]:
    """A house round's shuffle event row, its master salt (opened with the
    round's deal key, as the dealer service opens it) and its commitment."""
    recorded = next(e for e in read_stream(stream_id=round_stream(round_id)) if e.type == SHUFFLED)
    deal_id = f"house-round:{round_id}"
    opened = open_committed_deck(commitment=recorded.data["commitment"], sealed_deck=recorded.data["sealed_deck"],
                                 key=deal_key(deal_id=deal_id), deal_id=deal_id)  # fmt: skip
    assert opened.salt is not None
    return Event.objects.get(pk=recorded.position), opened.salt, recorded.data["commitment"]


def page(client: Any, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, (path, response.status_code)
    return response.content.decode()


def test_staff_see_only_the_commitment_while_a_round_is_in_play() -> None:
    setup_roles()
    table = make_table("uth")
    alice = make_player(table)
    tick = open_round(table)
    place_chip(table_id=table.pk, player_id=alice, spot="ante", amount=100, idempotency_key=key(), now=later(tick))
    tick = step(table, tick)  # dealt, the preflop decision open
    row, salt, commitment = house_secret(tick.round_id)
    first_salt = position_salts(salt, 1)[0]
    round_row = HouseRound.objects.get(round_id=tick.round_id)
    for role in (OPERATOR, COMPLIANCE):
        _, client = staff(f"staff-{role}", role)
        timeline = page(client, f"/admin/games/houseround/{round_row.pk}/change/")
        assert "house_round.shuffled" in timeline
        assert commitment in timeline
        event_page = page(client, f"/admin/ledger/event/{row.pk}/change/")
        assert commitment in event_page
        assert SEALED in event_page
        recall = page(client, f"/api/compliance/game-recall/{tick.game_number}/?player={alice}")
        fairness = page(client, f"/api/rounds/{tick.game_number}/fairness/")
        assert commitment in fairness
        for name, text in (("timeline", timeline), ("event", event_page), ("recall", recall), ("fairness", fairness)):
            assert salt not in text, (role, name)
            assert first_salt not in text, (role, name)
    # Over: the fairness endpoint reveals every leaf (each position's salt) to staff as to anyone; the
    # shuffle event's page keeps its seal sealed.
    play_out(table, tick)
    _, client = staff("after", OPERATOR)
    assert first_salt in page(client, f"/api/rounds/{tick.game_number}/fairness/")
    assert salt not in page(client, f"/admin/ledger/event/{row.pk}/change/")


def test_the_ledger_admin_never_shows_a_poker_hands_sealed_deck() -> None:
    setup_roles()
    table = heads_up_dealt()
    hand_id = table.current_hand_id
    row, salt, commitment = secret(et.hand_stream(hand_id), et.SHUFFLED, f"poker-hand:{hand_id}")
    sealed = row.data["sealed_deck"]
    # Neither its salt nor, for a deck sealed under its deal key, its ciphertext.
    unseen = [salt] if is_plain(sealed) else [salt, sealed["ct"]]
    for role in (OPERATOR, COMPLIANCE):
        _, client = staff(f"poker-{role}", role)
        event_page = page(client, f"/admin/ledger/event/{row.pk}/change/")
        assert commitment in event_page
        listing = page(client, f"/admin/ledger/event/?q={et.SHUFFLED}")
        for secret_text in unseen:
            assert secret_text not in event_page
            assert secret_text not in listing
