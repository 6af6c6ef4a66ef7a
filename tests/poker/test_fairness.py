"""Provably-fair poker hands (issue 20, "Provably-fair deals"; docs/fairness.md):
the deck is shuffled and committed before the blinds; the table snapshot shows
the commitment; ``GET /api/poker/hands/<hand id>/fairness/`` answers the
commitment alone while the hand is played, and once it is complete or voided
the salt, the deck and the deal order (hole cards, burns, board), which check
against the hand history with ``tools/verify_deal.py``. Hands recorded before
commitments (``poker_hand.shuffled`` schema 1, the deck in the clear) still
load, replay and show their history."""

from __future__ import annotations

import copy

import pytest

from games.fairness import open_deck
from games.poker import event_types as et
from games.poker import services
from games.poker.models import PokerHand, PokerTable
from games.poker.services.tables import load_hand
from ledger.legs import without_legs
from ledger.services import NewEvent, append_events, read_stream
from ledger.services.projectors import apply_events
from tests.poker.tables import T0, advance, make_player, make_table, sit
from tests.poker.test_api import get, post
from tests.poker.test_tables import AA_VS_KK
from tools.verify_deal import verify

pytestmark = pytest.mark.django_db

# The hand of tests/poker/test_api.py: seats 2 (2c 7d), 3 (As Ah), 1 (Ks Kh) from the button's left.
SCRIPT = [(0, "raise", 30), (1, "call", None), (2, "call", None), (1, "check", None), (2, "bet", 60),
          (0, "call", None), (1, "fold", None), (2, "check", None), (0, "check", None), (2, "check", None),
          (0, "check", None)]  # fmt: skip


def three_seated() -> tuple[PokerTable, list[int]]:
    table = make_table()
    players = [make_player() for _ in range(3)]
    for seat, player in enumerate(players, start=1):
        sit(table, player, seat)
    PokerTable.objects.filter(pk=table.pk).update(button_seat=3)  # the hand's button: seat 1
    return table, players


def test_a_hand_is_committed_before_the_blinds_and_its_deal_checks_once_it_is_over() -> None:
    table, players = three_seated()
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    recorded = read_stream(stream_id=et.hand_stream(hand_id))
    assert recorded[0].type == et.SHUFFLED  # before the blinds, before anything
    commitment = recorded[0].data["commitment"]
    assert get(players[0], f"tables/{table.pk}/").json()["hand"]["commitment"] == commitment
    in_play = {"game_number": hand_id, "algorithm": "sha256", "commitment": commitment}
    stranger = make_player()  # any player may ask
    for asker in (*players, stranger):
        assert get(asker, f"hands/{hand_id}/fairness/").json() == in_play
    for index, action, amount in SCRIPT:
        body = {"action": action} if amount is None else {"action": action, "amount": amount}
        assert post(players[index], f"tables/{table.pk}/act/", body).status_code == 200
    answer = get(stranger, f"hands/{hand_id}/fairness/").json()
    salt, _ = open_deck(recorded[0].data["sealed_deck"])
    assert (answer["salt"], answer["deck"], answer["commitment"]) == (salt, list(AA_VS_KK), commitment)
    # One card at a time round the table from the button's left, twice; burn, flop, burn, turn, burn, river.
    places = [("seat:2", 0), ("seat:3", 0), ("seat:1", 0), ("seat:2", 1), ("seat:3", 1), ("seat:1", 1),
              ("burn", 0), ("board", 0), ("board", 1), ("board", 2), ("burn", 1), ("board", 3), ("burn", 2),
              ("board", 4)]  # fmt: skip
    assert answer["deal_order"] == [
        {"position": i, "card": AA_VS_KK[i], "to": to, "slot": slot} for i, (to, slot) in enumerate(places)
    ]
    for viewer in players:
        history = get(viewer, f"hands/{hand_id}/").json()
        assert verify(answer, history) == []
    forged = copy.deepcopy(answer)  # the turn card traded with an undealt one
    forged["deck"][11], forged["deck"][30] = forged["deck"][30], forged["deck"][11]
    assert verify(forged)[0].startswith("the commitment is not SHA-256 of salt:deck")
    unknown = get(stranger, "hands/NOPE-20261122-000000/fairness/")
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "poker_hand_not_found")


def test_a_voided_hand_reveals_its_deck() -> None:
    table, players = three_seated()
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    assert "salt" not in get(players[0], f"hands/{hand_id}/fairness/").json()
    services.void_hand(table_id=table.pk, actor="operator:7", reason="card reader fault", now=T0)
    answer = get(players[0], f"hands/{hand_id}/fairness/").json()
    assert answer["deck"] == list(AA_VS_KK)
    assert [(d["position"], d["to"]) for d in answer["deal_order"]] == [
        (0, "seat:2"), (1, "seat:3"), (2, "seat:1"), (3, "seat:2"), (4, "seat:3"), (5, "seat:1")
    ]  # fmt: skip
    assert verify(answer, get(players[0], f"hands/{hand_id}/").json()) == []


def test_a_hand_recorded_before_commitments_loads_replays_and_says_there_is_nothing_to_verify() -> None:
    table, players = three_seated()
    table = advance(table, cards=AA_VS_KK)
    real = PokerHand.objects.get(hand_id=table.current_hand_id)
    post(players[0], f"tables/{table.pk}/act/", {"action": "fold"})
    post(players[1], f"tables/{table.pk}/act/", {"action": "fold"})
    recorded = read_stream(stream_id=et.hand_stream(real.hand_id))
    assert recorded[-1].type == "poker.hand_ended"
    # The same hand as the code before commitments stored it: schema 1, the deck in the clear.
    legacy_id = f"{real.hand_id}-V1"
    v1 = NewEvent(et.SHUFFLED, {"deck": list(AA_VS_KK), "table_id": table.pk, "at": T0.isoformat()}, 1)
    # (Without the money legs: that code wrote none, and they are the ledger's to write.)
    copied = [NewEvent(e.type, without_legs(e.data), e.schema_version) for e in recorded[1:]]
    append_events(stream_id=et.hand_stream(legacy_id), expected_version=0, events=[v1, *copied],
                  metadata={"actor": "test"})  # fmt: skip
    # Its rows, as the projectors write them from its events (issue #24).
    apply_events(read_stream(stream_id=et.hand_stream(legacy_id)))
    legacy = PokerHand.objects.get(hand_id=legacy_id)
    stored = read_stream(stream_id=et.hand_stream(legacy.hand_id))[0]
    assert (stored.schema_version, stored.data["commitment"]) == (2, None)
    state, deck, _ = load_hand(legacy.hand_id)
    assert deck == list(AA_VS_KK)
    assert state is not None
    assert state.phase.value == "complete"
    history = get(players[2], f"hands/{legacy.hand_id}/")
    assert history.status_code == get(players[2], f"hands/{legacy.hand_id}/replay/").status_code == 200
    assert et.SHUFFLED not in {e["type"] for e in history.json()["events"]}  # no commitment to show
    refused = get(players[2], f"hands/{legacy.hand_id}/fairness/")
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "deal_not_committed")
