"""Per-seat hole cards over the real websocket (issue 6; docs/websocket.md "What
never reaches a client early"): in a per-seat table each player's two cards go
to that player only; another seated player's socket and a mere watcher's never
see them before they are revealed, and the dealer's face-down cards reach nobody
before the dealer's reveal. A real uvicorn process, real websocket clients; the
round is dealt from this process with a known shoe so the cards are known."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import websockets
from websockets.typing import Origin

from games.house.models import HouseTable
from games.house.services import make_decision, place_chip
from games.tables.fairness import opened_from_reveal
from ledger.services import read_stream
from tests.house.services.conftest import key, later, make_player, make_table, open_round, play_out, shoe, step
from tests.ws_auth import token_for, ws_ticket

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ALICE_CARDS, BOB_CARDS, DEALER_CARDS = ["Ah", "5h"], ["4c", "5d"], ["Kd", "Qs"]
BOARD = "2h 7h 9h Kc 3d"


def quoted(cards: list[str]) -> list[str]:
    return [f'"{card}"' for card in cards]


def before(frames: list[str], predicate: Any) -> list[str]:
    """The frames received before the first one matching ``predicate``."""
    out = []
    for text in frames:
        if predicate(json.loads(text)):
            break
        out.append(text)
    return out


def reveals(message: dict[str, Any], owner: str) -> bool:
    return (
        message.get("type") == "delta"
        and message.get("event") == "house_round.cards_revealed"
        and any(card.get("to") == owner and card.get("card") for card in message["data"].get("cards", []))
    )


def test_hole_cards_reach_only_their_owner_and_dealer_cards_nobody_before_the_reveal(asgi_server: str) -> None:
    table = make_table("xtreme", hand_mode="per_seat")
    alice = make_player(table, name="hole-alice")
    bob = make_player(table, name="hole-bob")  # dealt after Alice (player-id order)
    carol = make_player(None, name="hole-carol")  # watches without a seat
    tokens = {pid: token_for(pid) for pid in (alice, bob, carol)}
    tick = open_round(table, shoe_cards=shoe(" ".join(ALICE_CARDS), " ".join(BOB_CARDS),
                                             dealer=" ".join(DEALER_CARDS), board=BOARD))  # fmt: skip
    for pid in (alice, bob):
        place_chip(table_id=table.pk, player_id=pid, spot="ante", amount=100, idempotency_key=key(), now=later(tick))

    def deal_and_play() -> None:
        current = step(table, tick)
        for pid in (alice, bob):
            make_decision(table_id=table.pk, player_id=pid, option="play4x", idempotency_key=key(), now=later(current))
        play_out(HouseTable.objects.get(pk=table.pk), current)

    async def scenario() -> dict[int, list[str]]:
        url = asgi_server.replace("http://", "ws://") + f"/ws/tables/{table.pk}/?ticket="
        frames: dict[int, list[str]] = {pid: [] for pid in tokens}
        sockets = {
            pid: await websockets.connect(
                url + ws_ticket(asgi_server, token), origin=Origin(asgi_server), open_timeout=20
            )
            for pid, token in tokens.items()
        }
        try:
            for pid, ws in sockets.items():
                frames[pid].append(str(await asyncio.wait_for(ws.recv(), 20)))  # the snapshot
            await asyncio.to_thread(deal_and_play)

            async def until_settled(pid: int) -> None:
                while True:
                    text = str(await asyncio.wait_for(sockets[pid].recv(), 20))
                    frames[pid].append(text)
                    message = json.loads(text)
                    if message.get("type") == "delta" and message.get("event") == "house_round.settled":
                        return

            await asyncio.gather(*(until_settled(pid) for pid in sockets))
        finally:
            for ws in sockets.values():
                await ws.close()
        return frames

    frames = asyncio.run(scenario())

    def private_hole_cards(pid: int) -> list[list[str]]:
        return [
            [c["card"] for c in m["data"]["cards"] if c["to"] == f"player:{pid}"]
            for m in map(json.loads, frames[pid])
            if m.get("type") == "private" and m.get("event") == "house_round.cards_dealt"
        ]

    # Each seated player got their own two cards, privately, exactly once.
    assert private_hole_cards(alice) == [ALICE_CARDS]
    assert private_hole_cards(bob) == [BOB_CARDS]
    assert private_hole_cards(carol) == []
    # Nobody else saw them before they were revealed.
    for viewer, owner, cards in ((bob, alice, ALICE_CARDS), (carol, alice, ALICE_CARDS), (alice, bob, BOB_CARDS),
                                 (carol, bob, BOB_CARDS)):  # fmt: skip
        early = before(frames[viewer], lambda m, owner=owner: reveals(m, f"player:{owner}"))
        assert [t for t in early if any(c in t for c in quoted(cards))] == [], (viewer, owner)
    # The dealer's face-down cards reached nobody before the dealer's reveal, but did reach everyone then.
    for pid in tokens:
        early = before(frames[pid], lambda m: reveals(m, "dealer"))
        assert len(early) < len(frames[pid]), "the dealer's reveal was delivered"
        assert [t for t in early if any(c in t for c in quoted(DEALER_CARDS))] == [], pid
    # The deal's commitment is in every snapshot from the round's opening; its salt and deck in no frame.
    round_events = read_stream(stream_id=f"round-{tick.round_id}")
    shuffled = next(e.data for e in round_events if e.type == "house_round.shuffled")
    # The round is over (its key shredded): the master salt is in its deck reveal, checked against the commitment.
    revealed = next(e.data for e in round_events if e.type == "house_round.deck_revealed")
    salt = opened_from_reveal(commitment=shuffled["commitment"], salt=revealed["salt"], deck=revealed["deck"]).salt
    for pid in tokens:
        assert json.loads(frames[pid][0])["table"]["round"]["commitment"] == shuffled["commitment"]
        assert [t for t in frames[pid] if str(salt) in t or "sealed_deck" in t] == [], pid
    # The public sequence stayed gap-free on every socket.
    for pid in tokens:
        seqs = [m["seq"] for m in map(json.loads, frames[pid]) if m["type"] in ("snapshot", "delta")]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
