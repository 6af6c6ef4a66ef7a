"""Poker cards at rest (issue 33, items 3 and 4; seed 001: "We do not keep the
shuffled deck in permanent storage"; docs/poker.md "Cards at rest").

Every table of the database is read as its owner (information_schema: every
text and JSON column) and every sealed value found is tried with every key
the process has: the card key ring, every deal key still stored, every
player's key. While the hand runs, the deck opens with its deal key (the
scanner finds it: it can see what it looks for) and no hole card is anywhere
in the clear. Once the hand is over: the undealt deck and the burn cards are
readable nowhere, a folded or mucked hand only through its own player's key.
Another player's REST and websocket views never hold your hole cards."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from games.cards.vault import CardKeyError, is_sealed, key_id, open_json, player_key, unwrap_key
from games.poker import event_types as et
from games.poker.models import PokerHand, PokerTable
from games.poker.realtime import presenters
from games.poker.realtime.consumers import frames_for, hand_info
from games.tables.dealkeys import DealKey, card_keyring
from ledger.services import read_stream
from tests.poker.tables import T0, advance
from tests.poker.test_api import get, post
from tests.poker.test_fairness import BOARD, BURNS, FOLDED, MUCKED, SHOWN, UNDEALT, play_script, three_seated
from tests.poker.test_tables import AA_VS_KK

pytestmark = pytest.mark.django_db

CARD = re.compile(r"[2-9TJQKA][shdc]")
TEXT_TYPES = ("text", "character varying", "character", "json", "jsonb")


def _walk(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def _cards_of(text: str) -> set[str]:
    """The cards a stored string holds: a card code, or card codes joined by spaces (a deck's text)."""
    parts = text.split()
    return set(parts) if parts and all(CARD.fullmatch(part) for part in parts) else set()


def every_stored_value() -> Iterator[tuple[str, Any]]:
    """(table.column, value) of every text and JSON column of every table, JSON parsed."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.table_schema, c.table_name, c.column_name FROM information_schema.columns c "
            "JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
            "WHERE t.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('pg_catalog', 'information_schema') "
            "AND c.data_type = ANY(%s)",
            [list(TEXT_TYPES)],
        )
        columns = cursor.fetchall()
        assert any(table == "ledger_event" for _, table, _ in columns)  # the event store is among them
        for schema, table, column in columns:
            quote = connection.ops.quote_name
            cursor.execute(f"SELECT {quote(column)}::text FROM {quote(schema)}.{quote(table)} "
                           f"WHERE {quote(column)} IS NOT NULL")  # fmt: skip
            for (text,) in cursor.fetchall():
                assert isinstance(text, str), (table, column, type(text))
                try:
                    value = json.loads(text)
                except ValueError:
                    value = text
                yield f"{table}.{column}", value


def every_key() -> list[tuple[str, bytes]]:
    """(label, key) of every key the process has or can derive: the card keys,
    every stored deal key unwrapped, every player's key of every card key."""
    ring = card_keyring()
    card_keys = [ring.current, *ring.retired]
    keys = [(f"card-key:{key_id(key)}", key) for key in card_keys]
    for row in DealKey.objects.all():
        keys.append((f"deal:{row.deal_id}", unwrap_key(ring, row.wrapped, aad=row.deal_id)))
    for player in get_user_model().objects.values_list("pk", flat=True):
        keys += [(f"player:{player}", player_key(key, player)) for key in card_keys]
    return keys


def every_aad() -> list[str]:
    """Every associated data the application binds a sealed value to, for every hand, player and seat."""
    hands = list(PokerHand.objects.values_list("hand_id", flat=True))
    deals = [f"poker-hand:{hand}" for hand in hands] + list(DealKey.objects.values_list("deal_id", flat=True))
    players = list(get_user_model().objects.values_list("pk", flat=True))
    aads = [f"deck:{deal}" for deal in deals] + [f"wrap:{deal}" for deal in deals]
    aads += [f"player:{p}:{deal}:seat:{seat}" for p in players for deal in deals for seat in range(1, 11)]
    return aads


def scan() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(card -> where it is stored in the clear, card -> the keys that read it from a sealed value)."""
    clear: dict[str, set[str]] = defaultdict(set)
    opened: dict[str, set[str]] = defaultdict(set)
    keys, aads = every_key(), every_aad()
    for where, value in every_stored_value():
        for item in _walk(value):
            if isinstance(item, str):
                for card in _cards_of(item):
                    clear[card].add(where)
            elif is_sealed(item):
                for label, key in keys:
                    for aad in aads:
                        try:
                            plain = open_json(key, item, aad=aad)
                        except CardKeyError:
                            continue
                        except ValueError:  # not JSON: a wrapped deal key (raw bytes), no card in it
                            continue
                        for inner in _walk(plain):
                            if isinstance(inner, str):
                                for card in _cards_of(inner):
                                    opened[card].add(label)
    return clear, opened


def test_the_database_holds_no_readable_undealt_deck_burn_or_other_players_folded_or_mucked_hand() -> None:
    table, players = three_seated()
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    hole = set(FOLDED) | set(SHOWN) | set(MUCKED)

    # While the hand runs: the deal key opens the deck (the scan finds sealed cards) and no hole card is in the clear.
    clear, opened = scan()
    assert not hole & clear.keys(), {card: clear[card] for card in hole & clear.keys()}
    assert all(f"deal:poker-hand:{hand_id}" in opened[card] for card in (*UNDEALT, *BURNS, *hole))
    for seat_player, own in ((players[1], FOLDED), (players[0], MUCKED), (players[2], SHOWN)):
        assert all(f"player:{seat_player}" in opened[card] for card in own)

    play_script(table, players)
    assert not DealKey.objects.exists()
    clear, opened = scan()
    # In the clear: exactly what the table saw (the board, the hand shown).
    assert set(clear) == set(BOARD) | set(SHOWN), {card: sorted(clear[card]) for card in clear}
    # Sealed: the undealt deck and the burn cards open with no key at all.
    assert not (set(UNDEALT) | set(BURNS)) & opened.keys()
    # The folded and the mucked hand: only through that player's own key.
    for seat_player, own in ((players[1], FOLDED), (players[0], MUCKED), (players[2], SHOWN)):
        for card in own:
            assert opened[card] == {f"player:{seat_player}"}, (card, opened[card])
    # Nor does the dealer service read them back: the hand's replay knows only what was shown.
    from games.poker.services.tables import load_hand

    state, deck, _ = load_hand(hand_id, dealer=True)
    assert state is not None
    assert deck == []
    assert {p.seat: p.hole for p in state.players} == {2: (None, None), 3: SHOWN, 1: (None, None)}


def test_mid_hand_no_event_and_no_other_players_view_holds_your_hole_cards() -> None:
    table, players = three_seated()
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    own = {players[0]: MUCKED, players[1]: FOLDED, players[2]: SHOWN}
    recorded = read_stream(stream_id=et.hand_stream(hand_id))
    for event in recorded:
        assert not {card for item in _walk(event.data) if isinstance(item, str) for card in _cards_of(item)}, event
    dealt = [e for e in recorded if e.type == "poker.hole_cards_dealt"]
    assert [(e.schema_version, e.data["cards"]) for e in dealt] == [(2, [None, None])] * 3
    assert all(is_sealed(e.data["sealed"]) for e in dealt)
    post(players[0], f"tables/{table.pk}/act/", {"action": "call"})  # an action after a fresh read of the hand
    for viewer, cards in own.items():
        others = set().union(*(set(c) for p, c in own.items() if p != viewer))
        for path in (f"tables/{table.pk}/", f"hands/{hand_id}/", f"hands/{hand_id}/replay/",
                     f"hands/{hand_id}/fairness/"):  # fmt: skip
            text = get(viewer, path).content.decode()
            seen = set(re.findall(r'"([2-9TJQKA][shdc])"', text))
            assert not seen & others, (path, seen & others)
            if path.startswith("tables/"):
                assert set(cards) <= seen  # their own, opened with their key
        view = presenters.table_view(table_id=table.pk, viewer_id=viewer)
        assert not set(re.findall(r'"([2-9TJQKA][shdc])"', json.dumps(view))) & others
    # The websocket: the public frame of each deal holds no card; the owner's own frame holds theirs only.
    info = hand_info(hand_id)
    assert info is not None
    for event in dealt:
        delta = frames_for(event, info)
        assert delta is not None
        assert delta.instead
        public = delta.public.decode() if isinstance(delta.public, bytes) else str(delta.public)
        assert not re.findall(r'"([2-9TJQKA][shdc])"', public)
        assert '"sealed"' not in public
        [(owner, frame)] = delta.private.items()
        text = frame.decode() if isinstance(frame, bytes) else str(frame)
        assert set(re.findall(r'"([2-9TJQKA][shdc])"', text)) == set(own[owner])
        assert '"sealed"' not in text
    assert PokerTable.objects.get(pk=table.pk).phase == "hand"


def test_live_play_after_a_restart_reopens_the_deck_with_the_deal_key_and_without_it_deals_nothing() -> None:
    """A process that lost its memory of the hand (cache miss, restart) deals on
    from the deck opened with the deal key; a deal key deleted mid-hand (a forged
    delete by a database insider) stops the hand, refused with ``deck_mismatch``,
    and nothing changes; the operator's void still returns every chip."""
    from games.poker import services
    from games.poker.services import tables

    table, players = three_seated()
    table = advance(table, cards=AA_VS_KK)
    hand_id = table.current_hand_id
    for index, action in ((0, "call"), (1, "call")):
        tables._HAND_CACHE.clear()  # as after a restart
        assert post(players[index], f"tables/{table.pk}/act/", {"action": action}).status_code == 200
    tables._HAND_CACHE.clear()
    assert post(players[2], f"tables/{table.pk}/act/", {"action": "check"}).status_code == 200
    # The flop came from the committed deck: the board is the deck's positions 7 to 9.
    assert get(players[0], f"tables/{table.pk}/").json()["hand"]["board"] == list(BOARD[:3])
    before = len(read_stream(stream_id=et.hand_stream(hand_id)))
    DealKey.objects.filter(deal_id=f"poker-hand:{hand_id}").delete()
    tables._HAND_CACHE.clear()
    refused = post(players[1], f"tables/{table.pk}/act/", {"action": "check"})
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "deck_mismatch")
    assert len(read_stream(stream_id=et.hand_stream(hand_id))) == before
    services.void_hand(table_id=table.pk, actor="operator:1", reason="deal key lost", now=T0)
    assert PokerHand.objects.get(hand_id=hand_id).status == "voided"
    assert [e.type for e in read_stream(stream_id=et.hand_stream(hand_id))][-1] == et.VOIDED  # nothing to prove
