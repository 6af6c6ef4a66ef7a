"""Provably-fair poker hands with the shuffled deck not kept (issue 33, items 3
and 4; seed 001 "Shuffling information"; RULES.md "The shuffled deck is not
kept"; docs/fairness.md "Poker hands").

The deck is shuffled, sealed under the hand's deal key and committed (Merkle
root) before the blinds; ``GET /api/poker/hands/<hand id>/fairness/`` answers
the commitment alone while the hand is played; once it is over (or voided):
``revealed`` (the board and the hands shown) for everyone and ``yours`` (their
own hole cards) for a player dealt in, each leaf proven against the
commitment by ``tools/verify_deal.py``. Folded and mucked hands, burn cards and
the undealt rest of the deck are revealed to nobody, and the deal key is gone.
Hands recorded before (legacy ``plain`` scheme, or no commitment at all) still
load, replay and answer in their old shape."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from games.cards.vault import player_key, seal_for_player
from games.poker import event_types as et
from games.poker import services
from games.poker.models import PokerHand, PokerTable
from games.poker.services.cards import deal_id, own_copy
from games.poker.services.tables import load_hand
from games.tables.dealkeys import DealKey, card_keyring
from games.tables.fairness import seal_deck
from ledger.legs import without_legs
from ledger.services import NewEvent, append_events, read_stream
from ledger.services.projectors import apply_events
from tests.poker.tables import T0, advance, make_player, make_table, sit
from tests.poker.test_api import get, post
from tests.poker.test_tables import AA_VS_KK
from tools.verify_deal import commitment_of, main, verify

pytestmark = pytest.mark.django_db

# From the button's left: seat 2 (2c 7d), seat 3 (As Ah), seat 1 (Ks Kh); burn 5c, flop 3h 8s 9d, burn 6c,
# turn Jc, burn 6d, river 4s. Seat 2 folds on the flop; at the showdown seat 3 shows aces, seat 1 mucks kings.
SCRIPT = [(0, "raise", 30), (1, "call", None), (2, "call", None), (1, "check", None), (2, "bet", 60),
          (0, "call", None), (1, "fold", None), (2, "check", None), (0, "check", None), (2, "check", None),
          (0, "check", None)]  # fmt: skip
FOLDED, SHOWN, MUCKED = ("2c", "7d"), ("As", "Ah"), ("Ks", "Kh")
BOARD = ("3h", "8s", "9d", "Jc", "4s")
BURNS = ("5c", "6c", "6d")
UNDEALT = tuple(AA_VS_KK[14:])


def three_seated() -> tuple[PokerTable, list[int]]:
    table = make_table()
    players = [make_player() for _ in range(3)]
    for seat, player in enumerate(players, start=1):
        sit(table, player, seat)
    PokerTable.objects.filter(pk=table.pk).update(button_seat=3)  # the hand's button: seat 1
    return table, players


def play_script(table: PokerTable, players: list[int]) -> None:
    for index, action, amount in SCRIPT:
        body = {"action": action} if amount is None else {"action": action, "amount": amount}
        assert post(players[index], f"tables/{table.pk}/act/", body).status_code == 200


def cards_in(value: Any) -> set[str]:
    """Every card code a JSON answer holds as a value."""
    text = json.dumps(value)
    return set(re.findall(r'"([2-9TJQKA][shdc])"', text))


def test_a_hand_with_a_fold_and_a_muck_proves_what_the_table_saw_and_each_player_their_own() -> None:
    table, players = three_seated()
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    recorded = read_stream(stream_id=et.hand_stream(hand_id))
    assert recorded[0].type == et.SHUFFLED  # before the blinds, before anything
    commitment = recorded[0].data["commitment"]
    assert get(players[0], f"tables/{table.pk}/").json()["hand"]["commitment"] == commitment
    in_play = {"game_number": hand_id, "algorithm": "merkle-sha256", "commitment": commitment, "deck_size": 52}
    stranger = make_player()  # any player may ask
    for asker in (*players, stranger):
        assert get(asker, f"hands/{hand_id}/fairness/").json() == in_play
    assert DealKey.objects.filter(deal_id=deal_id(hand_id)).exists()
    play_script(table, players)
    types = [e.type for e in read_stream(stream_id=et.hand_stream(hand_id))]
    assert types[-2:] == ["poker.hand_ended", et.CARDS_REVEALED]
    assert {"poker.hand_shown", "poker.hand_mucked"} <= set(types)
    # The deal key is shredded with the hand's end.
    assert not DealKey.objects.filter(deal_id=deal_id(hand_id)).exists()

    answer = get(stranger, f"hands/{hand_id}/fairness/").json()
    assert set(answer) == {"game_number", "algorithm", "commitment", "deck_size", "revealed"}
    assert verify(answer) == []
    board = [(e["position"], e["card"], e["to"], e["slot"]) for e in answer["revealed"] if e["to"] == "board"]
    assert board == [(7, "3h", "board", 0), (8, "8s", "board", 1), (9, "9d", "board", 2), (11, "Jc", "board", 3),
                     (13, "4s", "board", 4)]  # fmt: skip
    shown = [(e["position"], e["card"], e["to"], e["slot"]) for e in answer["revealed"] if e["to"] != "board"]
    assert shown == [(1, "As", "seat:3", 0), (4, "Ah", "seat:3", 1)]
    # A non-participant gets no folded or mucked card, no burn card, nothing of the undealt deck.
    assert cards_in(answer) == set(BOARD) | set(SHOWN)

    by_seat = {1: players[0], 2: players[1], 3: players[2]}
    for seat, own, positions in ((2, FOLDED, [0, 3]), (1, MUCKED, [2, 5]), (3, SHOWN, [1, 4])):
        mine = get(by_seat[seat], f"hands/{hand_id}/fairness/").json()
        assert [(e["position"], e["card"], e["to"], e["slot"]) for e in mine["yours"]] == [
            (positions[0], own[0], f"seat:{seat}", 0), (positions[1], own[1], f"seat:{seat}", 1)
        ]  # fmt: skip
        assert verify(mine) == []
        # Their own cards and what the table saw; nobody else's folded or mucked hand.
        assert cards_in(mine) == set(BOARD) | set(SHOWN) | set(own)
        history = get(by_seat[seat], f"hands/{hand_id}/").json()
        assert verify(mine, history) == []
        assert cards_in(history) <= set(BOARD) | set(SHOWN) | set(own)
        assert set(own) <= cards_in(history)  # their own history keeps their hole cards
        replay = get(by_seat[seat], f"hands/{hand_id}/replay/").json()
        assert cards_in(replay) <= set(BOARD) | set(SHOWN) | set(own)
        assert set(own) <= cards_in(replay)
    # A stranger's answer does not prove the folder's history (their cards are not in it).
    folder_history = get(players[1], f"hands/{hand_id}/").json()
    assert any("proves nothing of" in problem for problem in verify(answer, folder_history))

    turn = next(i for i, e in enumerate(answer["revealed"]) if e["position"] == 11)
    forged = copy.deepcopy(answer)  # the turn card traded with an undealt one
    forged["revealed"][turn]["card"] = "Qd"
    assert verify(forged) == [f"revealed {turn}: Qd at position 11 is not proven against the commitment"]
    moved = copy.deepcopy(answer)  # a true leaf claimed at another position
    moved["revealed"][turn]["position"] = 12
    assert "not proven" in verify(moved)[0]
    unknown = get(stranger, "hands/NOPE-20261122-000000/fairness/")
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "poker_hand_not_found")


def test_the_checker_runs_on_a_saved_answer_and_history(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    table, players = three_seated()
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    play_script(table, players)
    answer_file, history_file = tmp_path / "answer.json", tmp_path / "history.json"
    answer_file.write_text(json.dumps(get(players[1], f"hands/{hand_id}/fairness/").json()))
    history_file.write_text(json.dumps(get(players[1], f"hands/{hand_id}/").json()))
    assert main([str(answer_file), str(history_file)]) == 0
    assert "7 cards the table saw and 2 of your own" in capsys.readouterr().out
    forged = json.loads(answer_file.read_text())
    forged["yours"][0]["card"] = "Ac"
    answer_file.write_text(json.dumps(forged))
    assert main([str(answer_file)]) == 1
    assert "yours 0: Ac at position 0 is not proven against the commitment" in capsys.readouterr().out


def test_a_voided_hand_reveals_the_board_dealt_and_each_player_their_own_and_shreds_its_key() -> None:
    table, players = three_seated()
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    for index, action in ((0, "call"), (1, "call"), (2, "check")):  # to the flop
        assert post(players[index], f"tables/{table.pk}/act/", {"action": action}).status_code == 200
    assert "revealed" not in get(players[0], f"hands/{hand_id}/fairness/").json()
    services.void_hand(table_id=table.pk, actor="operator:7", reason="card reader fault", now=T0)
    assert not DealKey.objects.filter(deal_id=deal_id(hand_id)).exists()
    stranger = get(make_player(), f"hands/{hand_id}/fairness/").json()
    assert [(e["position"], e["card"]) for e in stranger["revealed"]] == [(7, "3h"), (8, "8s"), (9, "9d")]
    assert "yours" not in stranger
    assert verify(stranger) == []
    mine = get(players[0], f"hands/{hand_id}/fairness/").json()
    assert [e["card"] for e in mine["yours"]] == list(MUCKED)
    assert verify(mine, get(players[0], f"hands/{hand_id}/").json()) == []


def _legacy_copy(recorded: list[Any], legacy_id: str, first: NewEvent) -> None:
    """The hand's events as the code before sealed decks stored them: ``first``
    for the shuffle, hole cards in the clear (schema 1), no revealed leaves."""
    hole = iter([("2c", "7d"), ("As", "Ah"), ("Ks", "Kh")])
    copied = []
    for e in recorded[1:]:
        if e.type == et.CARDS_REVEALED:
            continue
        if e.type == "poker.hole_cards_dealt":
            copied.append(NewEvent(e.type, {"seat": e.data["seat"], "cards": list(next(hole))}, 1))
        else:  # without the money legs: that code wrote none, and they are the ledger's to write
            copied.append(NewEvent(e.type, without_legs(e.data), e.schema_version))
    append_events(stream_id=et.hand_stream(legacy_id), expected_version=0, events=[first, *copied],
                  metadata={"actor": "test"})  # fmt: skip
    apply_events(read_stream(stream_id=et.hand_stream(legacy_id)))  # its rows, as the projectors write them


def _played() -> tuple[PokerTable, list[int], PokerHand]:
    table, players = three_seated()
    table = advance(table, cards=AA_VS_KK)
    real = PokerHand.objects.get(hand_id=table.current_hand_id)
    post(players[0], f"tables/{table.pk}/act/", {"action": "fold"})
    post(players[1], f"tables/{table.pk}/act/", {"action": "fold"})
    return table, players, real


def test_a_legacy_plain_hand_answers_in_its_old_shape() -> None:
    table, players, real = _played()
    recorded = read_stream(stream_id=et.hand_stream(real.hand_id))
    legacy_id = f"{real.hand_id}-PLAIN"
    salt = "ab" * 32
    plain = {"commitment": commitment_of(salt, AA_VS_KK), "sealed_deck": seal_deck(salt=salt, deck=AA_VS_KK),
             "table_id": table.pk, "at": T0.isoformat()}  # fmt: skip
    _legacy_copy(recorded, legacy_id, NewEvent(et.SHUFFLED, plain, et.SHUFFLED_SCHEMA))
    answer = get(players[2], f"hands/{legacy_id}/fairness/").json()
    assert (answer["algorithm"], answer["salt"], answer["deck"]) == ("sha256", salt, list(AA_VS_KK))
    assert [(d["position"], d["to"]) for d in answer["deal_order"]][:3] == [(0, "seat:2"), (1, "seat:3"), (2, "seat:1")]
    assert verify(answer, get(players[2], f"hands/{legacy_id}/").json()) == []


def test_a_hand_recorded_before_commitments_loads_replays_and_says_there_is_nothing_to_verify() -> None:
    table, players, real = _played()
    recorded = read_stream(stream_id=et.hand_stream(real.hand_id))
    assert recorded[-1].type == et.CARDS_REVEALED
    legacy_id = f"{real.hand_id}-V1"
    v1 = NewEvent(et.SHUFFLED, {"deck": list(AA_VS_KK), "table_id": table.pk, "at": T0.isoformat()}, 1)
    _legacy_copy(recorded, legacy_id, v1)
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


def test_a_sealed_copy_moved_to_another_hand_or_seat_opens_for_nobody() -> None:
    """A forged row: a player's sealed hole cards copied into another seat's event
    (or another hand's) do not open there; the views show nothing for it."""
    _table, players, real = _played()
    recorded = read_stream(stream_id=et.hand_stream(real.hand_id))
    dealt = [e for e in recorded if e.type == "poker.hole_cards_dealt"]
    # Seat 2's sealed copy put into seat 1's place (the attacker holds seat 1).
    forged = {"seat": 1, "cards": [None, None], "sealed": dealt[0].data["sealed"]}
    assert own_copy(hand_id=real.hand_id, seat=1, player_id=players[0], data=forged) is None
    assert own_copy(hand_id=real.hand_id + "X", seat=2, player_id=players[1], data=dealt[0].data) is None
    assert own_copy(hand_id=real.hand_id, seat=2, player_id=players[1], data=dealt[0].data) is not None
    # Sealed for the right player, a wrong card key id: not opened either.
    other = seal_for_player(card_keyring(), players[0], {"cards": ["2c", "7d"]}, aad="elsewhere")
    assert own_copy(hand_id=real.hand_id, seat=1, player_id=players[0], data={"sealed": other}) is None
    assert len(player_key(card_keyring().current, players[0])) == 32
