"""Provably-fair deals of house rounds (issue 20, "Provably-fair deals";
docs/fairness.md) through the real services and ledger: the deck is shuffled
and committed when the round opens, before any bet; the deal comes from the
committed positions; the salt and deck are revealed once the round is over
(settled, voided or without bets) and never before; rounds recorded before
commitments still play, replay and show their history."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from casino.errors import DomainError
from games.fairness import committed_deck, open_deck, seal_deck
from games.house.realtime.presenters import game_history, round_fairness, table_view
from games.house.round import dealer as house_dealer
from games.house.round.events import CARDS_DEALT, OPENED, SHUFFLED
from games.house.services import make_decision, place_chip, rounds, void_round
from games.house.store import round_stream
from ledger.services import read_stream
from tests.house.services.conftest import (
    key,
    later,
    make_player,
    make_table,
    open_round,
    play_out,
    shoe,
    snapshot,
    step,
)
from tools.verify_deal import commitment_of, verify

pytestmark = pytest.mark.django_db

SHOE = shoe("As Kd", dealer="2c 3c", board="Ah 7d 9s Jc 4h")


def chip(table_id: int, player: int, tick: Any, amount: int = 100) -> None:
    place_chip(table_id=table_id, player_id=player, spot="ante", amount=amount, idempotency_key=key(), now=later(tick))


def shuffled_of(round_id: str) -> Mapping[str, Any]:
    [shuffled] = [e.data for e in read_stream(stream_id=round_stream(round_id)) if e.type == SHUFFLED]
    return shuffled


def test_a_round_is_shuffled_and_committed_when_it_opens_and_dealt_from_that_deck() -> None:
    table = make_table("uth")
    alice = make_player(table)
    tick = open_round(table)  # the secure generator's shuffle
    events = read_stream(stream_id=round_stream(tick.round_id))
    # Committed as the round opens: before the betting window takes any bet.
    assert [e.type for e in events] == [OPENED, SHUFFLED]
    commitment = events[1].data["commitment"]
    salt, deck = open_deck(events[1].data["sealed_deck"])
    assert commitment == commitment_of(str(salt), deck)
    assert table_view(table_id=table.pk, viewer_id=alice)["round"]["commitment"] == commitment
    assert round_fairness(game_number=tick.game_number) == {
        "game_number": tick.game_number, "algorithm": "sha256", "commitment": commitment,
    }  # fmt: skip
    chip(table.pk, alice, tick)
    tick = step(table, tick)
    [dealt] = [e.data for e in read_stream(stream_id=round_stream(tick.round_id)) if e.type == CARDS_DEALT]
    # Shared hand, dealer, board: the top nine cards of the committed deck, in order.
    assert [c["card"] for c in dealt["cards"]] == deck[:9]
    assert round_fairness(game_number=tick.game_number).keys() == {"game_number", "algorithm", "commitment"}
    tick = play_out(table, tick)
    answer = round_fairness(game_number=tick.game_number)
    assert (answer["salt"], answer["deck"], answer["commitment"]) == (salt, deck, commitment)
    assert answer["deal_order"] == [
        {"position": i, "card": deck[i], "to": to, "slot": slot}
        for i, (to, slot) in enumerate([("shared", 0), ("shared", 1), ("dealer", 0), ("dealer", 1),
                                         *(("board", n) for n in range(5))])
    ]  # fmt: skip
    history = game_history(game_number=tick.game_number, player_id=alice)
    assert verify(answer, history) == []


def test_a_scripted_shoe_gets_its_own_salt_and_commitment_and_deals_per_seat_from_it() -> None:
    table = make_table("xtreme", hand_mode="per_seat")
    alice, bob = make_player(table), make_player(table)  # dealt in player-id order
    tick = open_round(table, shoe_cards=shoe("Ah 5h", "4c 5d", dealer="Kd Qs", board="2h 7h 9h Kc 3d"))
    shuffled = shuffled_of(tick.round_id)
    salt, deck = open_deck(shuffled["sealed_deck"])
    assert deck == [str(card) for card in shoe("Ah 5h", "4c 5d", dealer="Kd Qs", board="2h 7h 9h Kc 3d")]
    assert salt is not None
    assert len(salt) == 64
    assert shuffled["commitment"] == commitment_of(salt, deck)
    for player in (alice, bob):
        chip(table.pk, player, tick)
    tick = play_out(table, step(table, tick))
    answer = round_fairness(game_number=tick.game_number)
    assert answer["deal_order"][:4] == [
        {"position": 0, "card": "Ah", "to": f"player:{alice}", "slot": 0},
        {"position": 1, "card": "5h", "to": f"player:{alice}", "slot": 1},
        {"position": 2, "card": "4c", "to": f"player:{bob}", "slot": 0},
        {"position": 3, "card": "5d", "to": f"player:{bob}", "slot": 1},
    ]
    for player in (alice, bob):
        assert verify(answer, game_history(game_number=tick.game_number, player_id=player)) == []
    # The same deck scripted again gets a fresh salt, so another commitment.
    again = open_round(make_table("uth"), shoe_cards=shoe("Ah 5h", "4c 5d", dealer="Kd Qs", board="2h 7h 9h Kc 3d"))
    assert shuffled_of(again.round_id)["commitment"] != shuffled["commitment"]


def test_one_card_changed_anywhere_fails_the_check() -> None:
    table = make_table("uth")
    alice = make_player(table)
    tick = open_round(table, shoe_cards=SHOE)
    chip(table.pk, alice, tick)
    tick = play_out(table, step(table, tick))
    answer = round_fairness(game_number=tick.game_number)
    history = game_history(game_number=tick.game_number, player_id=alice)
    assert verify(answer, history) == []
    swapped = copy.deepcopy(answer)  # the board's first card traded with an undealt one
    swapped["deck"][4], swapped["deck"][30] = swapped["deck"][30], swapped["deck"][4]
    assert any("commitment" in problem for problem in verify(swapped, history))
    relabelled = copy.deepcopy(answer)  # the deal claims another card at position 0
    relabelled["deal_order"][0]["card"] = "2s"
    assert any("position 0" in problem for problem in verify(relabelled, history))
    shown = copy.deepcopy(history)  # the history shows a card the committed deck did not put there
    shown["cards"]["board"][2] = "2s"
    assert verify(answer, shown) == [
        "the history shows 2s at board slot 2, but the committed deck dealt 9s there (position 6)"
    ]


def test_after_a_void_the_salt_and_deck_are_revealed() -> None:
    table = make_table("uth")
    alice = make_player(table)
    tick = open_round(table, shoe_cards=SHOE)
    chip(table.pk, alice, tick)
    tick = step(table, tick)  # dealt; the preflop decision is open
    assert "salt" not in round_fairness(game_number=tick.game_number)
    voided = void_round(table_id=table.pk, actor="operator:1", reason="card shoe jam", now=later(tick))
    answer = round_fairness(game_number=tick.game_number)
    assert answer["deck"] == [str(card) for card in SHOE]
    assert [d["card"] for d in answer["deal_order"]] == answer["deck"][:9]
    assert verify(answer, game_history(game_number=tick.game_number, player_id=alice)) == []
    # Voided before anything was dealt: revealed too, nothing in the deal order.
    tick = step(table, voided)  # the next round opens
    chip(table.pk, alice, tick)
    void_round(table_id=table.pk, actor="operator:1", reason="dealer unwell", now=later(tick))
    answer = round_fairness(game_number=tick.game_number)
    assert answer["deal_order"] == []
    assert verify(answer) == []


def test_a_round_without_bets_reveals_its_deck_when_it_closes() -> None:
    table = make_table("uth")
    tick = open_round(table)
    tick = step(table, tick)
    assert tick.phase == "between"
    answer = round_fairness(game_number=tick.game_number)
    assert answer["deal_order"] == []
    assert len(answer["deck"]) == 52
    assert verify(answer) == []


def test_a_shoe_for_a_step_that_opens_no_round_is_refused_and_changes_nothing() -> None:
    table = make_table("uth")
    alice = make_player(table)
    tick = open_round(table, shoe_cards=SHOE)
    chip(table.pk, alice, tick)
    before = snapshot()
    with pytest.raises(ValueError, match="scripted shoe"):
        step(table, tick, shoe_cards=shoe("Ah Ad", dealer="2c 3d", board="As Kh Kd 7c 4s"))
    assert snapshot() == before


def test_a_sealed_deck_other_than_the_committed_one_is_never_dealt(monkeypatch: pytest.MonkeyPatch) -> None:
    """A deck that does not match its published commitment (a wrong key once the
    seal is encrypted, a tampered row) stops the deal: ``deck_mismatch``, nothing dealt."""
    real_open = house_dealer.decide_open

    def tampered(config: Any, *, now: str, commitment: str, sealed_deck: Mapping[str, Any]) -> Any:
        salt, deck = open_deck(sealed_deck)
        return real_open(config, now=now, commitment=commitment, sealed_deck=seal_deck(salt=str(salt),
                                                                                       deck=deck[::-1]))  # fmt: skip

    monkeypatch.setattr(rounds, "decide_open", tampered)
    table = make_table("uth")
    alice = make_player(table)
    tick = open_round(table, shoe_cards=SHOE)
    chip(table.pk, alice, tick)
    before = snapshot()
    with pytest.raises(DomainError) as refused:
        step(table, tick)
    assert refused.value.code == "deck_mismatch"
    assert snapshot() == before
    shuffled = shuffled_of(tick.round_id)
    with pytest.raises(DomainError):
        committed_deck(commitment=shuffled["commitment"], sealed_deck=shuffled["sealed_deck"])


def test_a_round_opened_before_commitments_plays_replays_and_shows_its_history(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rounds stored before this change have no ``house_round.shuffled``: they
    are dealt at the close of betting as they always were, replay, show their
    history, and their fairness answer says there is nothing to verify."""
    real_open = house_dealer.decide_open
    monkeypatch.setattr(rounds, "decide_open", lambda config, **kwargs: real_open(config, **kwargs)[:1])
    table = make_table("uth")
    alice = make_player(table)
    tick = open_round(table)
    monkeypatch.undo()
    assert [e.type for e in read_stream(stream_id=round_stream(tick.round_id))] == [OPENED]
    assert table_view(table_id=table.pk, viewer_id=alice)["round"]["commitment"] is None
    chip(table.pk, alice, tick)
    tick = step(table, tick)
    make_decision(table_id=table.pk, player_id=alice, option="check", idempotency_key=key(), now=later(tick))
    tick = play_out(table, tick)
    history = game_history(game_number=tick.game_number, player_id=alice)
    assert history["status"] == "settled"
    assert all(history["cards"]["board"])
    assert all(history["cards"]["dealer"])
    with pytest.raises(DomainError) as refused:
        round_fairness(game_number=tick.game_number)
    assert refused.value.code == "deal_not_committed"
    # The next round is committed again.
    assert shuffled_of(step(table, tick).round_id)["commitment"]


def test_a_round_that_does_not_exist_is_not_found() -> None:
    with pytest.raises(DomainError) as refused:
        round_fairness(game_number="NOPE-20261122-000000")
    assert (refused.value.code, refused.value.http_status) == ("round_not_found", 404)
