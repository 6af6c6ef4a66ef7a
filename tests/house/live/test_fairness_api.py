"""``GET /api/rounds/<game number>/fairness/`` through the real DRF stack (issue
20, "Provably-fair deals"; docs/fairness.md): a round in play answers its
commitment alone, the same the table snapshot shows from the round's opening;
any player may ask; an unknown round is ``round_not_found``; once the round is
over the answer's 52 leaves rebuild the commitment and agree with the player's
game history (``tools/verify_deal.py``'s primitives), and fail with one card
changed. Before the end no player-facing read (REST views, websocket snapshot,
public and private deltas) shows the round's salt, its deck or a face-down card
(issue 33: the deck is sealed under the round's deal key)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from games.cards.vault import position_salts
from games.house.models import HouseTable
from games.house.realtime.consumers import _snapshot
from games.house.realtime.relay import messages_for
from games.house.round.events import SHUFFLED
from games.house.services import advance_table, start_table
from games.house.services.rounds import deal_id_of
from games.house.store import player_stream, round_stream
from games.tables.dealkeys import deal_key
from games.tables.fairness import open_committed_deck
from ledger.services import read_stream
from tests.conftest import ROOT
from tests.house.live.conftest import fast_table
from tests.house.live.test_bad_input import client_for, post
from tests.house.services.conftest import make_player
from tests.house.services.test_fairness import check_house_answer

VERIFY = ROOT / "tools" / "verify_deal.py"

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def advance(table: HouseTable) -> None:
    table.refresh_from_db()
    assert table.deadline is not None
    assert advance_table(table_id=table.pk, expected_seq=table.phase_seq, now=table.deadline) is not None
    table.refresh_from_db()


def secret_of(round_id: str) -> tuple[str, list[str]]:
    """The round's master salt and deck, opened with its deal key as the dealer
    service opens them (what must not show before the end)."""
    [shuffled] = [e.data for e in read_stream(stream_id=round_stream(round_id)) if e.type == SHUFFLED]
    deal_id = deal_id_of(round_id)
    opened = open_committed_deck(commitment=shuffled["commitment"], sealed_deck=shuffled["sealed_deck"],
                                 key=deal_key(deal_id=deal_id), deal_id=deal_id)  # fmt: skip
    assert opened.salt is not None
    return opened.salt, opened.deck


def leaks(payload: Any, salt: str, deck: list[str], face_down: Sequence[str] = ()) -> list[str]:
    """What of the sealed salt and deck ``payload`` shows: the salt, a
    position's salt, the field, the deck beyond its first nine cards (those a
    round deals) in order, or one of the ``face_down`` cards."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    undealt = deck[9:]
    forms = {
        "salt": salt,
        "field": "sealed_deck",
        "deck text": " ".join(undealt),
        "deck list": json.dumps(undealt)[1:-1],
        "compact deck list": json.dumps(undealt, separators=(",", ":"))[1:-1],
        **{f"salt of position {i}": salt_i for i, salt_i in enumerate(position_salts(salt, len(deck)))},
        **{f"face-down {card}": json.dumps(card) for card in face_down},
    }
    return [name for name, form in forms.items() if form in text]


def test_a_round_in_play_answers_its_commitment_alone_and_an_ended_one_verifies(tmp_path: Path) -> None:
    table = fast_table("uth", betting_seconds=60)
    player = make_player(table)
    client = client_for(player)
    start_table(table_id=table.pk, now=timezone.now())
    table.refresh_from_db()
    number = table.current_round_id
    path = f"/api/rounds/{number}/fairness/"
    commitment = client.get(f"/api/tables/{table.pk}/").json()["round"]["commitment"]
    in_play = {"game_number": number, "algorithm": "merkle-sha256", "commitment": commitment, "deck_size": 52}
    assert client.get(path).json() == in_play
    # Any player may ask, not only those who play the round.
    assert client_for(make_player()).get(path).json() == in_play
    assert post(client, f"/api/tables/{table.pk}/bets/chip/", {"spot": "ante", "amount": 100}).status_code == 200
    advance(table)  # betting closed, cards dealt
    assert table.phase == "preflop"
    assert client.get(path).json() == in_play
    unknown = client.get("/api/rounds/NOPE-20261122-000000/fairness/")
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "round_not_found")
    assert APIClient().get(path).status_code == 401
    while table.phase not in ("between", "idle"):
        advance(table)
    answer = client.get(path).json()
    assert answer["commitment"] == commitment
    assert answer.keys() == {"game_number", "algorithm", "commitment", "deck_size", "leaves", "deal_order"}
    history = client.get(f"/api/history/games/{number}/").json()
    assert len(answer["deal_order"]) == 9
    assert check_house_answer(answer, history) == []
    # One card changed: the river card traded with an undealt one.
    forged = json.loads(json.dumps(answer))
    forged["leaves"][8]["card"], forged["leaves"][40]["card"] = (
        answer["leaves"][40]["card"],
        answer["leaves"][8]["card"],
    )
    assert "the root of the leaves is not the commitment" in check_house_answer(forged, history)
    # The standalone checker, run as a player runs it (its own process, standard library only).
    answer_file, history_file = tmp_path / "answer.json", tmp_path / "history.json"
    answer_file.write_text(json.dumps(answer))
    history_file.write_text(json.dumps(history))
    checked = subprocess.run([sys.executable, str(VERIFY), str(answer_file), str(history_file)],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert (checked.returncode, checked.stdout.split(":")[0]) == (0, "deal verified"), checked.stdout
    answer_file.write_text(json.dumps(forged))
    refused = subprocess.run(
        [sys.executable, str(VERIFY), str(answer_file)], capture_output=True, text=True, timeout=60
    )
    assert refused.returncode == 1
    assert refused.stdout.startswith("FAILED:")


def test_no_player_read_shows_the_salt_or_deck_before_the_round_ends() -> None:
    table = fast_table("xtreme", betting_seconds=60)
    table.hand_mode = "per_seat"
    table.save()
    alice, bob = make_player(table), make_player(table)
    start_table(table_id=table.pk, now=timezone.now())
    table.refresh_from_db()
    round_id = table.current_round_id
    salt, deck = secret_of(round_id)
    face_down = deck[4:11]  # two seats, then the dealer's two and the board's five
    for player in (alice, bob):
        chip = post(client_for(player), f"/api/tables/{table.pk}/bets/chip/", {"spot": "ante", "amount": 100})
        assert chip.status_code == 200
    advance(table)  # dealt: each seat's hand, the dealer's and the board face down
    assert table.phase == "preflop"
    for player in (alice, bob):
        client = client_for(player)
        reads = {
            "table": client.get(f"/api/tables/{table.pk}/").json(),
            "history": client.get(f"/api/history/games/{round_id}/").json(),
            "account history": client.get("/api/history/").json(),
            "fairness": client.get(f"/api/rounds/{round_id}/fairness/").json(),
            "websocket snapshot": _snapshot(table.pk, player),
        }
        found = {name: leaks(read, salt, deck, face_down) for name, read in reads.items()}
        assert found == {name: [] for name in reads}
    recorded = [*read_stream(stream_id=round_stream(round_id))]
    for player in (alice, bob):
        recorded += read_stream(stream_id=player_stream(round_id, player))
    messages = [message for event in recorded for message in messages_for(event)]
    # The shuffle's delta goes out (its commitment), as every round-stream event does.
    assert [m["delta"]["data"] for _, m in messages if m["delta"]["type"] == SHUFFLED] == [
        {"commitment": client_for(alice).get(f"/api/tables/{table.pk}/").json()["round"]["commitment"]}
    ]
    assert [message for _, message in messages if leaks(message, salt, deck, face_down)] == []
    while table.phase not in ("between", "idle"):
        advance(table)
    revealed = client_for(alice).get(f"/api/rounds/{round_id}/fairness/").json()
    assert [(leaf["salt"], leaf["card"]) for leaf in revealed["leaves"]] == list(
        zip(position_salts(salt, 52), deck, strict=True)
    )
