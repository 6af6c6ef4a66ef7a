"""Provably-fair deals of house rounds with their cards at rest sealed (issue
33; docs/fairness.md, docs/rounds.md) through the real services and ledger.

The deck is shuffled, committed per position (``merkle-sha256``) and sealed
under the round's deal key when the round opens, before any bet. Mid-round no
event of any stream holds the dealer's cards or a board card not yet revealed
(the raw ``ledger_event`` rows are scanned for the real cards, read by opening
the deck with the key as the dealer service does). At every end of a round
(settled, closed without bets, voided by an operator, voided by the sweeper
when its dealer is gone) the whole deck is revealed in ``house_round.deck_revealed``
and the deal key is destroyed; the fairness answer then checks with
``tools/verify_deal.py``'s primitives (the root from the 52 leaves, a full
permutation). A deck that does not open with its key, or is not the deck
committed, deals nothing. Rounds of the legacy ``plain`` scheme and rounds
opened before commitments still play, replay and answer."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection

from casino.errors import DomainError
from games.cards.vault import is_sealed, new_data_key, open_json, seal_json, wrap_key
from games.house.projectors import HouseRoundProjector
from games.house.realtime.presenters import deal_in_log, game_history, round_fairness, table_view
from games.house.round import dealer as house_dealer
from games.house.round.events import CARDS_DEALT, CARDS_REVEALED, DECK_REVEALED, OPENED, ROUND_CLOSED, SHUFFLED
from games.house.round.state import replay_round
from games.house.services import make_decision, place_chip, rounds, void_overdue_rounds, void_round
from games.house.services.rounds import deal_id_of
from games.house.store.streams import load_round, round_stream
from games.tables.dealkeys import DealKey, card_keyring, deal_key
from games.tables.fairness import CommittedDeck, new_salt, open_committed_deck, seal_deck
from ledger.services import NewEvent, append_events, read_stream
from tests.house.services.conftest import (
    betting_round,
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
from tools.verify_deal import FULL_DECK, MERKLE_ALGORITHM, commitment_of, leaf_of, merkle_root_of, shown_cards, verify

pytestmark = pytest.mark.django_db

SHOE = shoe("As Kd", dealer="2c 3c", board="Ah 7d 9s Jc 4h")
SALT = re.compile(r"[0-9a-f]{64}")


def chip(table_id: int, player: int, tick: Any, amount: int = 100) -> None:
    place_chip(table_id=table_id, player_id=player, spot="ante", amount=amount, idempotency_key=key(), now=later(tick))


def shuffled_of(round_id: str) -> Mapping[str, Any]:
    [shuffled] = [e.data for e in read_stream(stream_id=round_stream(round_id)) if e.type == SHUFFLED]
    return shuffled


def deck_of(round_id: str) -> list[str]:
    """The round's deck as the dealer service opens it: with its deal key, checked against the commitment."""
    shuffled = shuffled_of(round_id)
    deal_id = deal_id_of(round_id)
    opened = open_committed_deck(commitment=shuffled["commitment"], sealed_deck=shuffled["sealed_deck"],
                                 key=deal_key(deal_id=deal_id), deal_id=deal_id)  # fmt: skip
    return opened.deck


def has_key(round_id: str) -> bool:
    return DealKey.objects.filter(deal_id=deal_id_of(round_id)).exists()


def check_house_answer(answer: Mapping[str, Any], history: Mapping[str, Any] | None = None) -> list[str]:
    """A ``merkle-sha256`` house answer checked with ``tools/verify_deal.py``'s
    primitives, as a player would: the commitment is the Merkle root of the 52
    leaves rebuilt from (salt, position, card); the cards are the 52, each once;
    the deal order names the card at each position; and every card the history
    shows is the one its deck position holds."""
    leaves = answer.get("leaves") or []
    problems = []
    if answer.get("algorithm") != MERKLE_ALGORITHM or answer.get("deck_size") != 52:
        problems.append("not a merkle-sha256 answer of a 52-card deck")
    if [leaf["position"] for leaf in leaves] != list(range(52)):
        problems.append("the leaves are not positions 0..51 in order")
    if sorted(leaf["card"] for leaf in leaves) != sorted(FULL_DECK):
        problems.append("the leaves' cards are not a permutation of the 52 cards")
    if not all(SALT.fullmatch(str(leaf["salt"])) for leaf in leaves):
        problems.append("a salt is not 64 lowercase hex digits")
    if problems:
        return problems
    root = merkle_root_of([leaf_of(leaf["salt"], leaf["position"], leaf["card"]) for leaf in leaves])
    if root != answer["commitment"]:
        problems.append("the root of the leaves is not the commitment")
    deck = [leaf["card"] for leaf in leaves]
    for entry in answer["deal_order"]:
        if deck[entry["position"]] != entry["card"]:
            problems.append(f"deal_order puts {entry['card']} at position {entry['position']}")
    if history is not None:
        dealt = {(entry["to"], entry["slot"]): entry["position"] for entry in answer["deal_order"]}
        for to, slot, card in shown_cards(history):
            if (to, slot) not in dealt or deck[dealt[to, slot]] != card:
                problems.append(f"the history shows {card} at {to} slot {slot}")
    return problems


def events_holding(cards: list[str]) -> list[tuple[str, str, str]]:
    """Every stored event (all streams, data and metadata) whose raw JSON holds
    one of ``cards`` as a JSON string (``"Ah"``): (stream, type, card)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT stream_id, type, data::text, metadata::text FROM ledger_event ORDER BY id")
        stored = cursor.fetchall()
    return [(stream, kind, card) for stream, kind, data, meta in stored for card in cards
            if f'"{card}"' in data or f'"{card}"' in meta]  # fmt: skip


def test_a_round_opens_with_a_deal_key_and_a_sealed_per_position_commitment() -> None:
    table, alice, tick = betting_round("uth")  # the secure generator's shuffle
    events = read_stream(stream_id=round_stream(tick.round_id))
    assert [e.type for e in events] == [OPENED, SHUFFLED]  # committed before the betting window takes any bet
    shuffled = events[1].data
    assert is_sealed(shuffled["sealed_deck"])  # ciphertext at rest, not the plain scheme
    assert set(shuffled["sealed_deck"]) == {"scheme", "kid", "nonce", "ct"}
    assert has_key(tick.round_id)
    deck = deck_of(tick.round_id)
    assert sorted(deck) == sorted(FULL_DECK)
    assert events_holding(deck) == []  # not one card of the deck anywhere in the log yet
    assert table_view(table_id=table.pk, viewer_id=alice)["round"]["commitment"] == shuffled["commitment"]
    in_play = {"game_number": tick.game_number, "algorithm": MERKLE_ALGORITHM,
               "commitment": shuffled["commitment"], "deck_size": 52}  # fmt: skip
    assert round_fairness(game_number=tick.game_number) == in_play


def test_mid_round_no_event_holds_a_face_down_card_and_the_round_end_reveals_every_leaf() -> None:
    table, alice, tick = betting_round("uth")
    round_id = tick.round_id
    deck = deck_of(round_id)
    chip(table.pk, alice, tick)
    tick = step(table, tick)  # dealt; the preflop decision is open
    assert tick.phase == "preflop"
    dealer, board = deck[2:4], deck[4:9]
    assert events_holding(dealer + board) == []
    [dealt] = [e for e in read_stream(stream_id=round_stream(round_id)) if e.type == CARDS_DEALT]
    assert dealt.schema_version == 2
    assert dealt.data["cards"] == [
        {"to": "shared", "position": 0, "deck_position": 0, "face_up": True, "card": deck[0]},
        {"to": "shared", "position": 1, "deck_position": 1, "face_up": True, "card": deck[1]},
        *({"to": "dealer", "position": i, "deck_position": 2 + i, "face_up": False} for i in range(2)),
        *({"to": "board", "position": i, "deck_position": 4 + i, "face_up": False} for i in range(5)),
    ]
    assert round_fairness(game_number=tick.game_number).keys() == {"game_number", "algorithm", "commitment",
                                                                     "deck_size"}  # fmt: skip
    logged = deal_in_log(read_stream(stream_id=round_stream(round_id)))
    assert [d["card"] for d in logged] == [*deck[:2], *[None] * 7]
    # The flop is shown to the table: its three cards, and nothing else face down.
    make_decision(table_id=table.pk, player_id=alice, option="check", idempotency_key=key(), now=later(tick))
    tick = step(table, tick)
    assert tick.phase == "flop"
    assert {card for _, kind, card in events_holding(board)} == set(board[:3])
    assert {kind for kind, _ in {(k, c) for _, k, c in events_holding(board[:3])}} == {CARDS_REVEALED}
    assert events_holding(dealer + board[3:]) == []
    state = load_round(round_id)
    assert (state.board, state.dealer) == ((*board[:3], None, None), (None, None))
    logged = deal_in_log(read_stream(stream_id=round_stream(round_id)))
    assert [d["card"] for d in logged] == [*deck[:2], None, None, *board[:3], None, None]
    assert has_key(round_id)
    tick = play_out(table, tick)
    # Over: the whole deck revealed in the round's stream, the key destroyed.
    events = read_stream(stream_id=round_stream(round_id))
    assert [e.type for e in events][-2:] == [DECK_REVEALED, ROUND_CLOSED]
    assert events[-2].data == {"salt": events[-2].data["salt"], "deck": deck}
    assert not has_key(round_id)
    assert deal_in_log(events) == [{k: d[k] for k in ("position", "card", "to", "slot")} for d in
                                   round_fairness(game_number=tick.game_number)["deal_order"]]  # fmt: skip
    answer = round_fairness(game_number=tick.game_number)
    assert answer.keys() == {"game_number", "algorithm", "commitment", "deck_size", "leaves", "deal_order"}
    assert [leaf["card"] for leaf in answer["leaves"]] == deck
    assert answer["deal_order"] == [
        {"position": i, "card": deck[i], "to": to, "slot": slot}
        for i, (to, slot) in enumerate([("shared", 0), ("shared", 1), ("dealer", 0), ("dealer", 1),
                                         *(("board", n) for n in range(5))])
    ]  # fmt: skip
    history = game_history(game_number=tick.game_number, player_id=alice)
    assert history["cards"]["dealer"] == dealer
    assert history["cards"]["board"] == board
    assert check_house_answer(answer, history) == []
    # Replayed from the events alone, without the (shredded) key: the same state and answer.
    assert replay_round(events) == load_round(round_id)
    assert round_fairness(game_number=tick.game_number) == answer


def test_a_scripted_shoe_is_sealed_like_any_deck_and_deals_per_seat_from_it() -> None:
    table = make_table("xtreme", hand_mode="per_seat")
    alice, bob = make_player(table), make_player(table)  # dealt in player-id order
    scripted = shoe("Ah 5h", "4c 5d", dealer="Kd Qs", board="2h 7h 9h Kc 3d")
    tick = open_round(table, shoe_cards=scripted)
    assert is_sealed(shuffled_of(tick.round_id)["sealed_deck"])
    assert deck_of(tick.round_id) == [str(card) for card in scripted]
    for player in (alice, bob):
        chip(table.pk, player, tick)
    tick = step(table, tick)
    assert events_holding(["Kd", "Qs", "2h", "7h", "9h", "Kc", "3d"]) == []
    tick = play_out(table, tick)
    answer = round_fairness(game_number=tick.game_number)
    assert answer["deal_order"][:4] == [
        {"position": 0, "card": "Ah", "to": f"player:{alice}", "slot": 0},
        {"position": 1, "card": "5h", "to": f"player:{alice}", "slot": 1},
        {"position": 2, "card": "4c", "to": f"player:{bob}", "slot": 0},
        {"position": 3, "card": "5d", "to": f"player:{bob}", "slot": 1},
    ]
    for player in (alice, bob):
        assert check_house_answer(answer, game_history(game_number=tick.game_number, player_id=player)) == []
    # The same deck scripted again gets a fresh salt, so another commitment.
    again = open_round(make_table("uth"), shoe_cards=scripted)
    assert shuffled_of(again.round_id)["commitment"] != shuffled_of(tick.round_id)["commitment"]


def test_one_card_changed_anywhere_fails_the_check() -> None:
    table, alice, tick = betting_round("uth", shoe_cards=SHOE)
    chip(table.pk, alice, tick)
    tick = play_out(table, step(table, tick))
    answer = round_fairness(game_number=tick.game_number)
    history = game_history(game_number=tick.game_number, player_id=alice)
    assert check_house_answer(answer, history) == []
    swapped = copy.deepcopy(answer)  # the board's first card traded with an undealt one
    leaves = swapped["leaves"]
    leaves[4]["card"], leaves[30]["card"] = leaves[30]["card"], leaves[4]["card"]
    assert "the root of the leaves is not the commitment" in check_house_answer(swapped, history)
    doubled = copy.deepcopy(answer)  # one card twice: not a permutation
    doubled["leaves"][30]["card"] = doubled["leaves"][4]["card"]
    assert check_house_answer(doubled) == ["the leaves' cards are not a permutation of the 52 cards"]
    shown = copy.deepcopy(history)  # the history shows a card the committed deck did not put there
    shown["cards"]["board"][2] = "2s"
    assert check_house_answer(answer, shown) == ["the history shows 2s at board slot 2"]


@pytest.mark.parametrize("when", ["after the deal", "before the deal", "while paused"])
def test_a_voided_round_reveals_its_deck_and_destroys_its_key(when: str) -> None:
    table, alice, tick = betting_round("uth", shoe_cards=SHOE)
    chip(table.pk, alice, tick)
    if when != "before the deal":
        tick = step(table, tick)  # dealt; the preflop decision is open
        assert events_holding(["2c", "3c", "Ah", "7d", "9s", "Jc", "4h"]) == []
    if when == "while paused":
        rounds.pause_round(table_id=table.pk, actor="operator:1", reason="card shoe jam", now=later(tick))
    assert has_key(tick.round_id)
    void_round(table_id=table.pk, actor="operator:1", reason="card shoe jam", now=later(tick))
    assert not has_key(tick.round_id)
    answer = round_fairness(game_number=tick.game_number)
    assert [leaf["card"] for leaf in answer["leaves"]] == [str(card) for card in SHOE]
    assert len(answer["deal_order"]) == (0 if when == "before the deal" else 9)
    history = game_history(game_number=tick.game_number, player_id=alice)
    # Players see a voided round as they always did: the dealer's cards stay down, the board as far as it was shown.
    assert history["cards"]["dealer"] == ([] if when == "before the deal" else [None, None])
    assert check_house_answer(answer, history) == []


def test_a_round_without_bets_reveals_its_deck_and_destroys_its_key() -> None:
    table = make_table("uth")
    tick = open_round(table)
    tick = step(table, tick)
    assert tick.phase == "between"
    assert not has_key(tick.round_id)
    answer = round_fairness(game_number=tick.game_number)
    assert answer["deal_order"] == []
    assert check_house_answer(answer) == []


def test_a_round_whose_dealer_is_gone_is_voided_by_the_sweep_with_its_deck_revealed_and_key_destroyed() -> None:
    table, alice, tick = betting_round("uth")
    chip(table.pk, alice, tick)
    tick = step(table, tick)  # dealt; then no dealer task ever comes
    assert tick.deadline is not None
    [voided] = void_overdue_rounds(now=tick.deadline + timedelta(seconds=31), grace_seconds=30)
    assert voided.phase == "between"
    assert not has_key(tick.round_id)
    assert check_house_answer(round_fairness(game_number=tick.game_number)) == []


def test_a_shoe_for_a_step_that_opens_no_round_is_refused_and_changes_nothing() -> None:
    table, alice, tick = betting_round("uth", shoe_cards=SHOE)
    chip(table.pk, alice, tick)
    before = snapshot()
    with pytest.raises(ValueError, match="scripted shoe"):
        step(table, tick, shoe_cards=shoe("Ah Ad", dealer="2c 3d", board="As Kh Kd 7c 4s"))
    assert snapshot() == before


def _tamper_open(monkeypatch: pytest.MonkeyPatch, seal: Any) -> None:
    """Record the round's ``sealed_deck`` as ``seal(deal_id, sealed, commitment)`` makes it."""
    real_open = house_dealer.decide_open

    def tampered(config: Any, *, now: str, commitment: str, sealed_deck: Mapping[str, Any], **rest: Any) -> Any:
        return real_open(config, now=now, commitment=commitment,
                         sealed_deck=seal(f"house-round:{config.round_id}", sealed_deck), **rest)  # fmt: skip

    monkeypatch.setattr(rounds, "decide_open", tampered)


def _reordered(deal_id: str, sealed: Mapping[str, Any]) -> Mapping[str, Any]:
    """The same salt and cards in another order, sealed with the round's own key."""
    value = open_json(deal_key(deal_id=deal_id), sealed, aad=f"deck:{deal_id}")
    return seal_json(deal_key(deal_id=deal_id), {"salt": value["salt"], "deck": value["deck"][::-1]},
                     aad=f"deck:{deal_id}")  # fmt: skip


def _other_key(deal_id: str, sealed: Mapping[str, Any]) -> Mapping[str, Any]:
    """The round's deck sealed under a key that is not the round's."""
    return seal_json(new_data_key(), open_json(deal_key(deal_id=deal_id), sealed, aad=f"deck:{deal_id}"),
                     aad=f"deck:{deal_id}")  # fmt: skip


def _other_round(deal_id: str, sealed: Mapping[str, Any]) -> Mapping[str, Any]:
    """The round's own seal, but bound to another deal id (a seal moved between rounds)."""
    return seal_json(deal_key(deal_id=deal_id), {"salt": "0" * 64, "deck": [str(card) for card in SHOE]},
                     aad="deck:house-round:another")  # fmt: skip


@pytest.mark.parametrize("seal", [_reordered, _other_key, _other_round], ids=["reordered", "other key", "moved"])
def test_a_sealed_deck_other_than_the_committed_one_deals_nothing(monkeypatch: pytest.MonkeyPatch, seal: Any) -> None:
    _tamper_open(monkeypatch, seal)
    table, alice, tick = betting_round("uth", shoe_cards=SHOE)
    monkeypatch.undo()
    chip(table.pk, alice, tick)
    before = snapshot()
    with pytest.raises(DomainError) as refused:
        step(table, tick)
    assert refused.value.code == "deck_mismatch"
    assert snapshot() == before
    assert not [e for e in read_stream(stream_id=round_stream(tick.round_id)) if e.type == CARDS_DEALT]


@pytest.mark.parametrize("forgery", ["another key", "no key"])
def test_a_forged_or_missing_deal_key_deals_nothing(forgery: str) -> None:
    """A deal key row replaced (an insider wraps a key of their own) or deleted:
    the deck does not open, ``deck_mismatch``, nothing dealt."""
    table, alice, tick = betting_round("uth", shoe_cards=SHOE)
    chip(table.pk, alice, tick)
    deal_id = deal_id_of(tick.round_id)
    rows = DealKey.objects.filter(deal_id=deal_id)
    if forgery == "no key":
        rows.delete()
    else:
        rows.update(wrapped=wrap_key(card_keyring(), new_data_key(), aad=deal_id))
    before = snapshot()
    with pytest.raises(DomainError) as refused:
        step(table, tick)
    assert refused.value.code == "deck_mismatch"
    assert snapshot() == before


def test_a_void_still_returns_every_wager_when_the_deck_no_longer_opens() -> None:
    """A malfunction void must refund even when the deck cannot be opened: it is
    voided without the reveal (the answer then shows the commitment alone)."""
    table, alice, tick = betting_round("uth", shoe_cards=SHOE)
    chip(table.pk, alice, tick)
    DealKey.objects.filter(deal_id=deal_id_of(tick.round_id)).delete()
    void_round(table_id=table.pk, actor="operator:1", reason="deal key lost", now=later(tick))
    events = read_stream(stream_id=round_stream(tick.round_id))
    assert events[-1].type == ROUND_CLOSED
    assert DECK_REVEALED not in [e.type for e in events]
    assert round_fairness(game_number=tick.game_number).keys() == {"game_number", "algorithm", "commitment",
                                                                     "deck_size"}  # fmt: skip


def test_a_legacy_plain_round_plays_and_answers_its_old_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    """A round opened before this change (``plain`` scheme: salt and deck in the
    clear in its shuffle event) still plays to its end and answers in the old shape."""

    def plain_commit(**kwargs: Any) -> CommittedDeck:  # as the code before sealed decks committed
        salt = new_salt()
        return CommittedDeck(commitment_of(salt, kwargs["deck"]), seal_deck(salt=salt, deck=kwargs["deck"]))

    monkeypatch.setattr(rounds, "shuffle_and_commit", plain_commit)
    table, alice, tick = betting_round("uth", shoe_cards=SHOE)
    monkeypatch.undo()
    assert shuffled_of(tick.round_id)["sealed_deck"]["scheme"] == "plain"
    chip(table.pk, alice, tick)
    tick = play_out(table, step(table, tick))
    events = read_stream(stream_id=round_stream(tick.round_id))
    assert DECK_REVEALED not in [e.type for e in events]
    answer = round_fairness(game_number=tick.game_number)
    assert answer["algorithm"] == "sha256"
    assert answer["deck"] == [str(card) for card in SHOE]
    assert verify(answer, game_history(game_number=tick.game_number, player_id=alice)) == []


def test_a_round_opened_before_commitments_plays_replays_and_shows_its_history(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rounds stored before commitments have no ``house_round.shuffled``: they
    are dealt at the close of betting as they always were, replay, show their
    history, and their fairness answer says there is nothing to verify."""
    real_open = house_dealer.decide_open
    monkeypatch.setattr(rounds, "decide_open", lambda config, **kwargs: real_open(config, **kwargs)[:1])
    table, alice, tick = betting_round("uth")
    monkeypatch.undo()
    assert [e.type for e in read_stream(stream_id=round_stream(tick.round_id))] == [OPENED]
    assert table_view(table_id=table.pk, viewer_id=alice)["round"]["commitment"] is None
    chip(table.pk, alice, tick)
    tick = step(table, tick)
    assert table_view(table_id=table.pk, viewer_id=alice)["round"]["cards"]["dealer"] == [None, None]
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
    assert is_sealed(shuffled_of(step(table, tick).round_id)["sealed_deck"])


def test_a_schema_1_deal_still_replays_with_its_cards_as_stored() -> None:
    """``cards_dealt`` schema 1 (every card in the clear) is read as schema 2:
    each card gets its deck position (its place in the list), the stored cards
    are kept, and the players' views hide the face-down ones as before."""
    table, alice, tick = betting_round("uth", shoe_cards=SHOE)
    cards = [("shared", 0, "As"), ("shared", 1, "Kd"), ("dealer", 0, "2c"), ("dealer", 1, "3c"),
             *(("board", i, c) for i, c in enumerate(["Ah", "7d", "9s", "Jc", "4h"]))]  # fmt: skip
    v1 = {"cards": [{"to": to, "position": slot, "card": card, "face_up": to == "shared"} for to, slot, card in cards]}
    stream = round_stream(tick.round_id)
    append_events(stream_id=stream, expected_version=2, events=[NewEvent(CARDS_DEALT, v1, 1)], metadata={})
    [dealt] = [e for e in read_stream(stream_id=stream) if e.type == CARDS_DEALT]
    HouseRoundProjector().apply_many([dealt])  # as the projections' catch-up would
    assert dealt.schema_version == 2
    assert [(c["deck_position"], c["card"]) for c in dealt.data["cards"]] == [(i, c) for i, (_, _, c) in
                                                                               enumerate(cards)]  # fmt: skip
    state = load_round(tick.round_id)
    assert (state.dealer, state.board_positions) == (("2c", "3c"), (4, 5, 6, 7, 8))
    view = table_view(table_id=table.pk, viewer_id=alice)["round"]["cards"]
    assert (view["dealer"], view["board"]) == ([None, None], [None] * 5)
    assert [d["card"] for d in deal_in_log(read_stream(stream_id=stream))] == ["As", "Kd", *[None] * 7]


def test_a_round_that_does_not_exist_is_not_found() -> None:
    with pytest.raises(DomainError) as refused:
        round_fairness(game_number="NOPE-20261122-000000")
    assert (refused.value.code, refused.value.http_status) == ("round_not_found", 404)
