"""Tournaments over the websocket (docs/websocket.md, "Poker tournaments" and
"A moved player's table socket follows them"), against a real uvicorn process
on PostgreSQL and Redis while the deterministic driver plays a 6-player Sit &
Go on two tables of three in this process:

- ``ws/poker/tournaments/<id>/``: the snapshot is the REST state; then one
  ``state`` frame per event of the tournament's stream, gap-free by version,
  each with the state after it; the players an event concerns get their own
  ``me``; at the end the state says finished, with the places and prizes;
- ``ws/poker/<table_id>/``: a player moved to another table gets ``moved`` and
  then the new table's snapshot on the same socket, which from then on
  watches the new table (its deltas, its presence lease, its snapshots);
- ``act`` over the socket by an eliminated player: ``tournament_player_eliminated``."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import httpx
import pytest
from django.utils import timezone
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Origin

from games.poker import event_types as et
from games.poker.models import PokerHand, PokerSeat
from games.poker.tournament import services as tournament_services
from games.poker.tournament.driver import TournamentDriver
from games.poker.tournament.models import EntryState, Tournament, TournamentEntry
from games.tables.presence import TablePresence
from ledger.services import read_stream
from tests.db import wait_until_readable
from tests.house.live.test_asyncapi import validate_frames
from tests.poker.tables import key, make_player, make_tournament
from tests.ws_auth import token_for, ws_url

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


class Reader:
    """A socket read by its own thread into ``frames`` (the driver plays meanwhile)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []
        self.closed: int | None = None
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            while True:
                self.frames.append(json.loads(self.ws.recv()))
        except ConnectionClosed as closed:
            self.closed = closed.rcvd.code if closed.rcvd else 1006

    def wait(self, found: Callable[[list[dict[str, Any]]], Any], timeout: float = 20) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            answer = found(list(self.frames))
            if answer:
                return answer
            time.sleep(0.05)
        raise AssertionError(f"not received in {timeout} s; last frames: {self.frames[-5:]}")


@contextmanager
def socket(base: str, path: str, player: int) -> Iterator[Reader]:
    with connect(ws_url(base, path, token_for(player)), origin=Origin(base), open_timeout=20) as ws:
        yield Reader(ws)


def sit_and_go() -> tuple[Tournament, list[int]]:
    tournament = make_tournament(max_players=6, table_seats=3)
    players = [make_player() for _ in range(6)]
    for player in players:
        tournament_services.register(tournament_id=tournament.pk, player_id=player, idempotency_key=key("reg"),
                          now=timezone.now())  # fmt: skip
    tournament.refresh_from_db()
    assert tournament.state == "running"
    return tournament, players


def rest_state(base: str, tournament: Tournament, player: int) -> dict[str, Any]:
    response = httpx.get(f"{base}/api/poker/tournaments/{tournament.pk}/state/",
                         headers={"Authorization": f"Token {token_for(player)}"}, timeout=20)  # fmt: skip
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def asyncapi(base: str) -> dict[str, Any]:
    response = httpx.get(f"{base}/api/asyncapi.json", timeout=10)
    assert response.status_code == 200, response.text
    document: dict[str, Any] = response.json()
    return document


def stable(state: dict[str, Any]) -> dict[str, Any]:
    """A state without what moves with the wall clock."""
    return {k: v for k, v in state.items() if k not in ("server_time", "clock_seconds", "next_level_in")}


def of_type(kind: str) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    return lambda frames: [f for f in frames if f["type"] == kind]


def test_the_tournament_channel_pushes_the_state_until_the_finish(asgi_server: str) -> None:
    tournament, players = sit_and_go()
    outsider = make_player()
    with socket(asgi_server, f"/ws/poker/tournaments/{tournament.pk}/", players[0]) as mine, \
            socket(asgi_server, f"/ws/poker/tournaments/{tournament.pk}/", outsider) as watcher:  # fmt: skip
        [snapshot] = mine.wait(of_type("snapshot"))
        # The snapshot is the REST state, with the caller's own part.
        assert stable(snapshot["state"]) == stable(rest_state(asgi_server, tournament, players[0]))
        assert snapshot["state"]["me"]["state"] == "playing"
        [seen] = watcher.wait(of_type("snapshot"))
        assert seen["state"]["me"] is None
        assert seen["version"] == snapshot["version"] == len(read_stream(stream_id=et.tournament_stream(tournament.pk)))
        report = TournamentDriver(tournament.pk, start=timezone.now(), seed=3).run(max_rounds=5000)
        assert report.finished, report
        wait_until_readable()
        events = read_stream(stream_id=et.tournament_stream(tournament.pk))
        last = events[-1].version
        for reader in (mine, watcher):
            states = reader.wait(lambda frames: (s := of_type("state")(frames)) and s[-1]["version"] == last and s)
            # One frame per event after the snapshot, in order, no gap, none twice.
            assert [f["version"] for f in states] == list(range(snapshot["version"] + 1, last + 1))
            assert [f["event"]["type"] for f in states] == [e.type for e in events[snapshot["version"] :]]
            assert all("actor" not in f["event"] for f in states)
            final = states[-1]["state"]
            assert (final["state"], final["players_left"], final["tables"]) == ("finished", 1, [])
        # The outsider is concerned by nothing: never a ``me``.
        assert all("me" not in f["state"] for f in of_type("state")(watcher.frames))
        # The player gets their own part with the events that concern them: at the finish, place and prize.
        entry = TournamentEntry.objects.get(tournament=tournament, player_id=players[0])
        own = [f["state"]["me"] for f in of_type("state")(mine.frames) if "me" in f["state"]]
        assert own, "the player's own frames"
        assert (own[-1]["state"], own[-1]["place"], own[-1]["prize"]) == (entry.state, entry.place, entry.prize)
        eliminations = [f for f in of_type("state")(mine.frames) if f["event"]["type"] == et.TOURNAMENT_ELIMINATED]
        assert eliminations
        for frame in eliminations:
            assert frame["event"]["players_left"] >= frame["state"]["players_left"]
        # Every frame is as the AsyncAPI document says.
        document = asyncapi(asgi_server)
        for reader in (mine, watcher):
            assert validate_frames(document, "/ws/poker/tournaments/{tournament_id}/", reader.frames) == {
                "snapshot", "state"}  # fmt: skip


def test_a_moved_players_table_socket_follows_them(asgi_server: str) -> None:
    tournament, players = sit_and_go()
    seats = {s.player_id: s.table_id for s in PokerSeat.objects.filter(table__tournament=tournament)}
    with ExitStack() as stack:
        readers = {p: stack.enter_context(socket(asgi_server, f"/ws/poker/{seats[p]}/", p)) for p in players}
        for reader in readers.values():
            reader.wait(of_type("snapshot"))
        driver = TournamentDriver(tournament.pk, start=timezone.now(), seed=3)
        stream = et.tournament_stream(tournament.pk)
        moved: list[Any] = []
        for _ in range(5000):
            moved = [e for e in read_stream(stream_id=stream) if e.type == et.TOURNAMENT_MOVED]
            if moved:
                break
            driver.run(max_rounds=1)
        assert moved, "no player was moved"
        move = moved[0].data
        player, old, new = move["player_id"], move["from_table"], move["to_table"]
        reader = readers[player]
        frames = reader.wait(lambda f: [x for x in f if x["type"] == "moved"] and f)
        at = next(i for i, f in enumerate(frames) if f["type"] == "moved")
        assert {k: frames[at][k] for k in ("from_table", "to_table", "seat")} == {
            "from_table": old, "to_table": new, "seat": move["to_seat"]}  # fmt: skip
        assert frames[at]["tournament_id"] == tournament.pk
        # The other players are not told.
        others = [r for p, r in readers.items() if p != player]
        assert all(f["type"] != "moved" for r in others for f in r.frames)
        # Then the new table's snapshot, with the player in the seat they were moved to.
        frames = reader.wait(lambda f: len(f) > at + 1 and f)
        follow = frames[at + 1]
        assert follow["type"] == "snapshot", follow
        assert follow["table"]["table"]["id"] == new
        mine = [s for s in follow["table"]["seats"] if s["you"]]
        assert [s["seat"] for s in mine] == [move["to_seat"]], follow["table"]["seats"]
        # The socket now watches the new table: a hand dealt there reaches it.
        hands_before = set(PokerHand.objects.filter(table_id=new).values_list("hand_id", flat=True))
        for _ in range(200):
            if PokerHand.objects.filter(table_id=new).exclude(hand_id__in=hands_before).exists():
                break
            driver.run(max_rounds=1)
        wait_until_readable()
        new_hands = set(PokerHand.objects.filter(table_id=new).values_list("hand_id", flat=True)) - hands_before
        assert new_hands, "no hand dealt at the new table"
        reader.wait(lambda f: [x for x in f[at + 2 :] if x.get("hand_id") in new_hands])
        # No frame of the old table's hands after the move.
        old_hands = set(PokerHand.objects.filter(table_id=old).values_list("hand_id", flat=True))
        assert not [f for f in reader.frames[at + 1 :] if f.get("hand_id") in old_hands]
        # It holds the presence lease at the new table, no longer at the old one.
        lease = TablePresence.objects.get(family="poker", table_id=new, player_id=player)
        assert lease.socket_until is not None
        assert lease.socket_until > timezone.now()
        gone = TablePresence.objects.filter(family="poker", table_id=old, player_id=player).first()
        assert gone is None or gone.socket_until is None or gone.socket_until <= timezone.now()
        # And its snapshots are the new table's.
        reader.ws.send(json.dumps({"type": "snapshot"}))
        count = len(of_type("snapshot")(reader.frames))
        again = reader.wait(lambda f: len(s := of_type("snapshot")(f)) > count and s)[-1]
        assert again["table"]["table"]["id"] == new
        assert reader.closed is None
        assert "moved" in validate_frames(asyncapi(asgi_server), "/ws/poker/{table_id}/", list(reader.frames))


def test_an_eliminated_players_act_over_the_socket_is_refused(asgi_server: str) -> None:
    tournament, _ = sit_and_go()
    driver = TournamentDriver(tournament.pk, start=timezone.now(), seed=3)
    for _ in range(5000):
        if TournamentEntry.objects.filter(tournament=tournament, state=EntryState.ELIMINATED).exists():
            break
        driver.run(max_rounds=1)
    out = TournamentEntry.objects.filter(tournament=tournament, state=EntryState.ELIMINATED).first()
    assert out is not None
    table_id = PokerHand.objects.get(hand_id=out.bust_hand_id).table_id
    with socket(asgi_server, f"/ws/poker/{table_id}/", out.player_id) as reader:
        reader.wait(of_type("snapshot"))
        reader.ws.send(json.dumps({"type": "act", "id": key("act"), "action": "fold"}))
        [error] = reader.wait(of_type("error"))
        assert (error["code"], error["request"]) == ("tournament_player_eliminated", "act")
